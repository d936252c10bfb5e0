"""``OpenClawMemoryRetriever``: the hybrid memory search as a LangChain retriever."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from openclaw_memory.errors import MemoryArgumentError, MemoryArgumentTypeError
from openclaw_memory.index import MemoryIndex
from openclaw_memory.index.search_options import check_search_arguments
from openclaw_memory.types import SearchResult
from pydantic import ConfigDict, Field, ValidationError, field_validator

from langchain_openclaw_memory._convert import DocumentContent, SerialisedMemory, check_memory_index, hit_to_document

__all__ = ["SEARCH_OPTIONS", "SEARCH_TYPES", "OpenClawMemoryRetriever"]

#: What ``search_kwargs`` and ``invoke(query, **kwargs)`` accept (``score_threshold`` is LangChain's
#: name for ``min_score``).
SEARCH_OPTIONS = ("k", "min_score", "score_threshold", "sources", "session_key", "after", "before")
#: The ``search_type`` values of LangChain's ``VectorStoreRetriever`` that this retriever's search is.
SEARCH_TYPES = ("similarity", "similarity_score_threshold")
#: Appended to the error naming a ``filter`` argument.
_FILTER_HINT = " (metadata filters are not supported: restrict with sources=['memory'] or ['sessions'])"


def _check_fields(data: Mapping[str, Any], fields: Iterable[str]) -> None:
    """MemoryArgumentError naming the constructor arguments that are not fields (pydantic would drop them)."""
    unknown = sorted(set(data) - set(fields))
    if not unknown:
        return
    hint = _FILTER_HINT if "filter" in unknown else ""
    raise MemoryArgumentError(
        f"OpenClawMemoryRetriever does not take {', '.join(map(repr, unknown))}; its arguments are "
        f"{', '.join(sorted(fields))}{hint}"
    )


def _check_options(options: Mapping[str, Any], where: str) -> dict[str, Any]:
    unknown = sorted(set(options) - set(SEARCH_OPTIONS))
    if unknown:
        hint = _FILTER_HINT if "filter" in unknown else ""
        raise MemoryArgumentError(
            f"unknown search option(s) {', '.join(map(repr, unknown))} in {where}; "
            f"OpenClawMemoryRetriever accepts {', '.join(SEARCH_OPTIONS)}{hint}"
        )
    out = dict(options)
    if "score_threshold" in out:
        if "min_score" in out:
            raise MemoryArgumentError(f"pass min_score or score_threshold in {where}, not both")
        out["min_score"] = out.pop("score_threshold")
    check_search_arguments(max_results=out.get("k"), min_score=out.get("min_score"), sources=out.get("sources"),
                           max_results_name="k")
    return out


def _argument_error(exc: ValidationError) -> MemoryArgumentError:
    """The MemoryArgumentError for constructor values pydantic refused: the library's own check's error when one
    raised it, else each argument, what is wrong with it and what it got."""
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, MemoryArgumentError):
            return cause
    parts = [f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']} (got {e.get('input')!r})"
             for e in exc.errors()]
    return MemoryArgumentError("OpenClawMemoryRetriever: " + "; ".join(parts))


class OpenClawMemoryRetriever(BaseRetriever):
    """Retrieve memory snippets (``MEMORY.md``, ``memory/*.md``, optionally session transcripts).

    Each ``Document`` carries the snippet (or the whole chunk with ``content="text"``) and
    metadata ``path``, ``start_line``, ``end_line``, ``score``, ``vector_score``, ``text_score``,
    ``source``, ``citation`` and ``chunk_id``; ``Document.id`` is the hit's id (the chunk id, or one derived
    from it when ``query.merge_overlapping`` folded or cut the hit). ``k`` and ``min_score`` default
    to the memory configuration (``query.max_results`` / ``query.min_score``).

    As with LangChain's vector-store retrievers, search options can be given as fields, in
    ``search_kwargs`` (which win over the fields) or per call (``invoke(query, k=2,
    min_score=0.2)``, which win over both): ``k``, ``min_score`` (alias ``score_threshold``),
    ``sources``, ``session_key``, ``after`` and ``before``. Anything else (here or as a constructor
    argument, e.g. ``filter`` or ``search_type="mmr"``), or a bad value, raises MemoryArgumentError (a
    ValueError), so a typo is not silently ignored. The memory index may be passed positionally. A retriever
    pickles (the index is re-opened from its configuration when unpickled).

    Example:
        ```python
        memory = MemoryIndex(workspace="~/notes")
        retriever = OpenClawMemoryRetriever(memory, search_kwargs={"k": 4})
        docs = retriever.invoke("what did we decide about the cache?")
        docs = retriever.invoke("cache decision", k=2, min_score=0.2)
        ```
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: SerialisedMemory
    """The memory index to search (the caller owns it and closes it). Serialised to JSON (``model_dump_json``) as
    its workspace, agent, backend and store class, never with its configuration's secrets."""
    k: int | None = Field(default=None, ge=1)
    """How many documents to return (None: ``query.max_results`` of the memory config)."""
    min_score: float | None = Field(default=None, ge=0.0, le=1.0)
    """Score floor 0..1 (None: ``query.min_score`` of the memory config)."""
    sources: list[Literal["memory", "sessions"]] | None = None
    """Restrict to these sources (None: every configured source)."""
    session_key: str | None = None
    """Passed to the search for session-scoped filtering of transcript hits."""
    after: str | datetime | date | None = None
    """Only notes dated on or after this day (a date, an ISO date or words such as ``"last week"``; undated notes
    pass)."""
    before: str | datetime | date | None = None
    """Only notes dated before this day (a date, an ISO date or words such as ``"yesterday"``; undated notes
    pass)."""
    content: DocumentContent = "snippet"
    """``"snippet"`` (what the agent tools show) or ``"text"`` (the full chunk)."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Search options as LangChain's ``VectorStoreRetriever`` takes them (see the class docstring)."""
    search_type: str = "similarity"
    """As ``VectorStoreRetriever`` takes it: ``"similarity"`` and ``"similarity_score_threshold"`` are both this
    hybrid search (the threshold is ``min_score`` / ``score_threshold``); anything else (``"mmr"``) raises
    ValueError."""

    def __init__(self, memory: MemoryIndex | None = None, /, **data: Any) -> None:
        if memory is not None:
            if "memory" in data:
                raise MemoryArgumentTypeError("memory given both positionally and as memory=")
            data["memory"] = memory
        if "memory" in data:
            check_memory_index(data["memory"])  # before pydantic, which would wrap it in a ValidationError
        _check_fields(data, type(self).model_fields)
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _argument_error(exc) from None

    @field_validator("search_type")
    @classmethod
    def _valid_search_type(cls, value: str) -> str:
        if value not in SEARCH_TYPES:
            raise MemoryArgumentError(
                f"search_type {value!r} is not supported: OpenClawMemoryRetriever always runs the hybrid memory "
                f"search ({' or '.join(map(repr, SEARCH_TYPES))}); a score floor is min_score or "
                "search_kwargs={'score_threshold': ...}"
            )
        return value

    @field_validator("search_kwargs")
    @classmethod
    def _valid_search_kwargs(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _check_options(value, "search_kwargs")

    def _search_kwargs(self, call: Mapping[str, Any]) -> dict[str, Any]:
        options: dict[str, Any] = {"k": self.k, "min_score": self.min_score, "session_key": self.session_key,
                                   "sources": self.sources, "after": self.after, "before": self.before}
        options.update(self.search_kwargs)
        options.update(_check_options(call, "invoke()"))
        options["max_results"] = options.pop("k")
        return options

    def _documents(self, result: SearchResult) -> list[Document]:
        return [hit_to_document(hit, self.content) for hit in result.hits]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return self._documents(self.memory.search(query, **self._search_kwargs(kwargs)))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return self._documents(await self.memory.asearch(query, **self._search_kwargs(kwargs)))
