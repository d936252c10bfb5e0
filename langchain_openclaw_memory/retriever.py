"""``OpenClawMemoryRetriever``: the hybrid memory search as a LangChain retriever."""

from __future__ import annotations

from typing import Literal

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from openclaw_memory.index import MemoryIndex
from openclaw_memory.types import SearchResult
from pydantic import ConfigDict, Field

from langchain_openclaw_memory._convert import DocumentContent, hit_to_document

__all__ = ["OpenClawMemoryRetriever"]


class OpenClawMemoryRetriever(BaseRetriever):
    """Retrieve memory snippets (``MEMORY.md``, ``memory/*.md``, optionally session transcripts).

    Each ``Document`` carries the snippet (or the whole chunk with ``content="text"``) and
    metadata ``path``, ``start_line``, ``end_line``, ``score``, ``vector_score``, ``text_score``,
    ``source`` and ``citation``; ``Document.id`` is the chunk id. ``k`` and ``min_score`` default
    to the memory configuration (``query.max_results`` / ``query.min_score``); ``k`` can also be
    passed per call.

    Example:
        ```python
        memory = MemoryIndex(workspace="~/notes")
        retriever = OpenClawMemoryRetriever(memory=memory, k=4)
        docs = retriever.invoke("what did we decide about the cache?")
        docs = retriever.invoke("cache decision", k=2)
        ```
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: MemoryIndex
    """The memory index to search (the caller owns it and closes it)."""
    k: int | None = Field(default=None, ge=1)
    """How many documents to return (None: ``query.max_results`` of the memory config)."""
    min_score: float | None = Field(default=None, ge=0.0, le=1.0)
    """Score floor 0..1 (None: ``query.min_score`` of the memory config)."""
    sources: list[Literal["memory", "sessions"]] | None = None
    """Restrict to these sources (None: every configured source)."""
    session_key: str | None = None
    """Passed to the search for session-scoped filtering of transcript hits."""
    content: DocumentContent = "snippet"
    """``"snippet"`` (what the agent tools show) or ``"text"`` (the full chunk)."""

    def _search_kwargs(self, k: int | None) -> dict[str, object]:
        return {
            "max_results": k if k is not None else self.k,
            "min_score": self.min_score,
            "session_key": self.session_key,
            "sources": self.sources,
        }

    def _documents(self, result: SearchResult) -> list[Document]:
        return [hit_to_document(hit, self.content) for hit in result.hits]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        return self._documents(self.memory.search(query, **self._search_kwargs(k)))  # type: ignore[arg-type]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        return self._documents(await self.memory.asearch(query, **self._search_kwargs(k)))
