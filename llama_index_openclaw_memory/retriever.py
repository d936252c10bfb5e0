"""OpenClawMemoryRetriever: the memory's hybrid search as a LlamaIndex retriever."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory import MemoryIndex, SearchResult
from openclaw_memory.index.search_options import check_search_arguments

from llama_index_openclaw_memory._convert import check_memory_index, hit_node
from llama_index_openclaw_memory._deprecated import warn_renamed

__all__ = ["OpenClawMemoryRetriever"]


class OpenClawMemoryRetriever(BaseRetriever):
    """Retrieve memory chunks with OpenClaw's hybrid (vector + BM25) search.

    Each result is a ``NodeWithScore`` whose score is the hybrid score and whose node is the
    chunk: ``id_`` = the hit's id (the chunk id, or one derived from it when ``query.merge_overlapping``
    folded or cut the hit), ``ref_doc_id`` = file path, metadata ``path``, ``start_line``, ``end_line``,
    ``source``, ``vector_score``, ``text_score``, ``chunk_id`` (and ``citation`` when citations are on).
    ``similarity_top_k`` (LlamaIndex's name; ``max_results`` is a deprecated alias) and
    ``min_score`` default to the memory's configuration; ``after`` / ``before`` keep only notes dated in that
    period (see :meth:`MemoryIndex.search <openclaw_memory.MemoryIndex.search>`).
    ``last_result`` keeps the last :class:`~openclaw_memory.SearchResult`, which says how the
    search ran (``mode``) and why it came back empty (``empty_reason``).

    Example:
        >>> retriever = OpenClawMemoryRetriever(MemoryIndex(workspace="~/notes"), similarity_top_k=4)  # doctest: +SKIP
        >>> RetrieverQueryEngine.from_args(retriever, llm=llm).query("what did we decide?")   # doctest: +SKIP
    """

    def __init__(
        self,
        memory: MemoryIndex,
        *,
        similarity_top_k: int | None = None,
        min_score: float | None = None,
        session_key: str | None = None,
        sources: Sequence[str] | None = None,
        after: str | date | datetime | None = None,
        before: str | date | datetime | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        max_results: int | None = None,
    ) -> None:
        check_memory_index(memory)
        if max_results is not None:
            warn_renamed("OpenClawMemoryRetriever(max_results=...)", "similarity_top_k=...")
            if similarity_top_k is not None:
                raise MemoryArgumentError("pass similarity_top_k only (max_results is its deprecated alias)")
            similarity_top_k = max_results
        check_search_arguments(max_results=similarity_top_k, min_score=min_score, sources=sources,
                               max_results_name="similarity_top_k")
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self.memory = memory
        self.similarity_top_k = similarity_top_k
        self.min_score = min_score
        self.session_key = session_key
        self.sources = list(sources) if sources is not None else None
        self.after, self.before = after, before
        self.last_result: SearchResult | None = None

    def _search_kwargs(self) -> dict[str, Any]:
        return {
            "max_results": self.similarity_top_k,
            "min_score": self.min_score,
            "session_key": self.session_key,
            "sources": self.sources,
            "after": self.after,
            "before": self.before,
        }

    def _to_nodes(self, result: SearchResult) -> list[NodeWithScore]:
        self.last_result = result
        return [NodeWithScore(node=hit_node(h), score=h.score) for h in result.hits]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._to_nodes(self.memory.search(query_bundle.query_str, **self._search_kwargs()))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._to_nodes(await self.memory.asearch(query_bundle.query_str, **self._search_kwargs()))
