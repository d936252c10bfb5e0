"""Public value types shared by the core, the store and the adapters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = [
    "Candidate",
    "Chunk",
    "EmptyReason",
    "FallbackInfo",
    "MemoryFile",
    "MemoryText",
    "SearchHit",
    "SearchMode",
    "SearchResult",
    "SearchState",
    "Source",
    "SyncReport",
]

Source = Literal["memory", "sessions"]
SearchMode = Literal["hybrid", "vector", "keyword"]
#: why a search returned no hits (see :class:`SearchResult`)
EmptyReason = Literal["sync_failed", "empty_index", "stale", "no_match"]


@dataclass(frozen=True)
class Chunk:
    """A slice of a Markdown file: 1-based inclusive line range, text and its sha256."""

    start_line: int
    end_line: int
    text: str
    hash: str


@dataclass(frozen=True)
class MemoryFile:
    """A discovered file: workspace-relative ``path`` (forward slashes) and its on-disk state."""

    path: str
    abs_path: str
    mtime_ms: float
    size: int
    hash: str
    source: Source = "memory"


@dataclass
class Candidate:
    """One chunk found by the vector side, the keyword side, or both, before final ranking.

    ``vector_score`` and ``text_score`` are in 0..1 (cosine similarity; BM25 mapped to 0..1).
    ``text_rank`` / ``vector_rank`` are 1-based ranks within their own list (None when absent),
    used by rank fusion.
    """

    id: str
    path: str
    start_line: int
    end_line: int
    text: str
    source: Source = "memory"
    vector_score: float = 0.0
    text_score: float = 0.0
    vector_rank: int | None = None
    text_rank: int | None = None
    score: float = 0.0
    embedding: Any = None  # numpy float32 vector when the vector side loaded it, else None
    exact_match: bool = False  # the keyword side matched an exact token/phrase of the query
    needle: bool = False  # it contains an identifier of the query that few chunks contain
    relevance: float = 0.0  # what ``min_score`` is compared with (the weighted score, also under RRF)
    file_bonus: float = 0.0  # what the file-coverage rule added to ``score`` (``query.hybrid.file_coverage_weight``)


@dataclass
class SearchHit:
    """A search result as tools and adapters return it."""

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: Source = "memory"
    vector_score: float = 0.0
    text_score: float = 0.0
    citation: str | None = None
    chunk_id: str = ""
    # the hit's full text (snippet may be truncated): for a Markdown note its lines start_line..end_line, except
    # a piece of a line longer than a chunk; for a transcript the text extracted from those JSON lines
    text: str = ""
    #: The hit's id: ``chunk_id`` when the hit holds its chunk's lines, else (``query.merge_overlapping`` folded or
    #: cut it) an id derived from ``chunk_id`` and the range (:func:`openclaw_memory.retrieval.result_ranges.range_id`).
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            self.id = self.chunk_id

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (used by the CLI ``--json`` output and tool payloads)."""
        return asdict(self)


@dataclass(frozen=True)
class FallbackInfo:
    """Why the configured provider is not the one in use."""

    from_provider: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"from": self.from_provider, "reason": self.reason}


@dataclass(frozen=True)
class SearchState:
    """What the index knows about itself when a search runs, reported on its :class:`SearchResult`.

    ``why_empty`` is asked only when the search finds nothing: the index's reason
    (``"stale"``, ``"sync_failed"``, ``"empty_index"``) or None for ``"no_match"``.
    """

    fallback: FallbackInfo | None = None
    sync_scheduled: bool = False
    sync_error: str | None = None
    why_empty: Callable[[], EmptyReason | None] | None = None


@dataclass(frozen=True)
class SearchResult:
    """What ``MemoryIndex.search`` returns: hits plus how they were found.

    ``empty_reason`` is set whenever ``hits`` is empty: ``"sync_failed"`` (the last sync of
    the memory files failed, so they may be missing from the index; ``sync_error`` says why),
    ``"empty_index"`` (no memory files written yet), ``"stale"`` (a sync is running and may add
    results) or ``"no_match"``.
    ``keyword_only_reason`` says why the vector side was not used in keyword mode.
    ``sync_scheduled`` is True when this search found the files changed and a background sync is
    scheduled or running (the hits may miss the latest edits).
    ``sync_error`` is the error of the last sync when it failed (None after a successful one): hits
    are still returned from what was indexed before, but recent edits may be missing.
    ``rerank_error`` is set when ``query.rerank`` was on but could not rerank (the hits keep their order).
    """

    query: str
    hits: list[SearchHit]
    mode: SearchMode
    provider: str
    model: str
    fallback: FallbackInfo | None = None
    keyword_only_reason: str | None = None
    empty_reason: str | None = None
    sync_scheduled: bool = False
    took_ms: float = 0.0
    sync_error: str | None = None
    rerank_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form with the hits as dicts."""
        return {
            "query": self.query,
            "results": [h.to_dict() for h in self.hits],
            "mode": self.mode,
            "provider": self.provider,
            "model": self.model,
            "fallback": self.fallback.to_dict() if self.fallback else None,
            "keyword_only_reason": self.keyword_only_reason,
            "empty_reason": self.empty_reason,
            "sync_scheduled": self.sync_scheduled,
            "sync_error": self.sync_error,
            "rerank_error": self.rerank_error,
            "took_ms": round(self.took_ms, 3),
        }


@dataclass(frozen=True)
class MemoryText:
    """What ``memory_get`` returns: the requested lines of one memory file.

    ``exists`` is False when the (allowed) file does not exist: the text is then empty, as
    OpenClaw's ``memory_get`` answers, and the CLI reports an error.
    """

    path: str
    text: str
    start_line: int
    end_line: int
    exists: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SyncReport:
    """What one sync did."""

    reason: str
    full_rebuild: bool = False
    rebuild_reason: str | None = None
    files_scanned: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    files_skipped: list[str] = field(default_factory=list)
    chunks_written: int = 0
    embedded: int = 0
    cache_hits: int = 0
    warnings: list[str] = field(default_factory=list)
    took_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
