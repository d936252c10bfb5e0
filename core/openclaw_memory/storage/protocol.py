"""The storage interface the index needs: files, chunks, vectors, keyword search, cache, meta.

Discovery, sync, retrieval and status talk only to :class:`MemoryStore` (no other member of a
store is used), so another backend (a server database for multi-host use, LanceDB, …) can be added
without touching them; ``tests/backends/`` is the conformance suite it must pass.
``openclaw_memory.storage.sqlite.SQLiteStore`` is the embedded implementation.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from openclaw_memory.types import Candidate, MemoryFile

__all__ = ["CacheKeys", "FileRecord", "IndexMeta", "MemoryStore", "StoreInfo", "StoredChunk"]

#: Embedding-cache entries named by (provider, model, provider key) and the hashes under it.
CacheKeys = Mapping[tuple[str, str, str], Collection[str]]

META_KEY = "memory_index_meta_v1"


@dataclass(frozen=True)
class FileRecord:
    """What the index remembers about a file (to skip unchanged ones)."""

    path: str
    source: str
    hash: str
    mtime_ms: float
    size: int

    def matches_stat(self, st: os.stat_result) -> bool:
        """Same size and mtime as when indexed: the shortcut that skips reading (the hash stays the truth)."""
        return self.size == st.st_size and self.mtime_ms == st.st_mtime_ns / 1e6


@dataclass
class StoredChunk:
    """A chunk ready to be written: id, location, text, and its vector (None in keyword-only mode)."""

    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    hash: str
    model: str
    text: str
    embedding: np.ndarray | None = None


@dataclass(frozen=True)
class IndexMeta:
    """The index fingerprint: when any field differs from the config, the index is rebuilt."""

    model: str
    provider: str
    provider_key: str
    sources: tuple[str, ...]
    scope_hash: str
    chunk_tokens: int
    chunk_overlap: int
    fts_tokenizer: str
    vector_dims: int | None = None
    chunker: int = 1  # the chunking rules' version (``chunker.CHUNKER_VERSION``); absent in old indexes: 1
    line_units: int = 0  # the size of the line units embedded into the cache (``query.hybrid.unit_lines``); absent: 0

    def to_json(self) -> dict[str, Any]:
        """Camel-cased like the original's meta record."""
        out: dict[str, Any] = {
            "model": self.model,
            "provider": self.provider,
            "providerKey": self.provider_key,
            "sources": list(self.sources),
            "scopeHash": self.scope_hash,
            "chunkTokens": self.chunk_tokens,
            "chunkOverlap": self.chunk_overlap,
            "ftsTokenizer": self.fts_tokenizer,
            "chunker": self.chunker,
        }
        if self.vector_dims is not None:
            out["vectorDims"] = self.vector_dims
        if self.line_units:
            out["lineUnits"] = self.line_units
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IndexMeta:
        return cls(
            model=str(data.get("model", "")),
            provider=str(data.get("provider", "")),
            provider_key=str(data.get("providerKey", "")),
            sources=tuple(sorted(data.get("sources") or ["memory"])),
            scope_hash=str(data.get("scopeHash", "")),
            chunk_tokens=int(data.get("chunkTokens", 0)),
            chunk_overlap=int(data.get("chunkOverlap", 0)),
            fts_tokenizer=str(data.get("ftsTokenizer") or "unicode61"),
            vector_dims=data.get("vectorDims"),
            chunker=int(data.get("chunker", 1)),
            line_units=int(data.get("lineUnits", 0)),
        )


@dataclass
class StoreInfo:
    """How the store is running: driver, SQLite version, FTS5 and vector path, and why anything is degraded."""

    backend: str
    path: str
    driver: str
    sqlite_version: str
    fts_available: bool
    fts_error: str | None
    vector_path: str  # "sqlite-vec" | "numpy" | "disabled"
    vector_error: str | None
    vector_dims: int | None
    # the in-memory copy of the vectors: "warm (N vectors, X MB)" | "loading" | "cold" | "off"
    vector_cache: str | None = None
    # a server backend's keyword index copied into this process: "warm (N chunks)" | "loading" | "cold" | "off"
    keyword_cache: str | None = None
    notes: list[str] = field(default_factory=list)
    # server backends (PostgreSQL): the server's and pgvector's versions, the namespace, bytes on the server
    server_version: str | None = None
    pgvector_version: str | None = None
    namespace: str | None = None
    size_bytes: int | None = None


@runtime_checkable
class MemoryStore(Protocol):
    """Everything the index, sync, search and status use from a storage backend.

    Contract for every implementation (the shared suite in ``tests/backends/`` checks it):

    * safe to call from several threads, and from several processes on the same index;
    * every failure of the store itself (cannot open, read or write; closed; damaged) raises
      :class:`~openclaw_memory.errors.StoreError` (the driver's error as its ``__cause__``), never a
      driver-specific exception;
    * a reader never sees half of a write: :meth:`replace_file` and :meth:`delete_file` are atomic,
      and :meth:`rebuild` swaps the whole index at once.
    """

    # --- meta -------------------------------------------------------------------------------
    def read_meta(self) -> IndexMeta | None:
        """The fingerprint written by the last complete sync, or None (new or unreadable record)."""
    def write_meta(self, meta: IndexMeta) -> None:
        """Record the fingerprint of the index as it now is."""
    @property
    def fts_tokenizer_id(self) -> str:
        """Identity of the keyword index (tokenizer, text preparation, row layout), recorded as
        ``IndexMeta.fts_tokenizer``: when it changes, the next sync rebuilds."""

    # --- files and chunks ---------------------------------------------------------------------
    def file_records(self, source: str | None = None) -> dict[str, FileRecord]:
        """What is indexed per file path (of one ``source``, or all)."""
    def replace_file(self, file: MemoryFile, chunks: Sequence[StoredChunk]) -> None:
        """Atomically replace every row of ``file.path`` (chunks, keyword and vector rows, file row).
        A chunk id already stored under another path moves to this file. The keyword row of a chunk holds
        :func:`~openclaw_memory.text.chunker.indexed_text` of its text (no record marker lines)."""
    def delete_file(self, path: str, source: str | None = None) -> None:
        """Atomically remove a file and its chunks (only when stored under ``source``, if given)."""
    def touch_file(self, file: MemoryFile) -> None:
        """Record a new mtime/size for a file whose content hash did not change."""
    def iter_chunks(self, source: str | None = None) -> Iterator[StoredChunk]:
        """Every stored chunk (of one ``source``, or all), with its vector, by path and start line."""
    def get_chunks(self, ids: Sequence[str]) -> list[StoredChunk]:
        """The chunks with these ids, in the order of ``ids``; unknown ids are left out."""
    def counts(self) -> dict[str, dict[str, int]]:
        """``{source: {"files": n, "chunks": m}}``."""
    def is_empty(self) -> bool:
        """True when no chunk is indexed (cheap: called on every search)."""
    def generation(self) -> str:
        """A token that changes whenever the stored chunks may have changed: a write committed by this or
        another process, a rebuild's swap. Equal tokens mean the same chunks, so what was derived from them
        (the chunk count, in-memory vectors) can be reused (cheap: called on every search)."""
    def search_generation(self) -> str:
        """:meth:`generation` as the calling thread's last match counts read it, when a store behind a server
        (``round_trips``) reads it in those statements (no round trip of its own); else :meth:`generation`."""

    # --- search --------------------------------------------------------------------------------
    def keyword_search(
        self, match: str, *, limit: int, sources: Sequence[str] | None = None, like_terms: Sequence[str] = (),
        window: int | None = None, order: Literal["rank", "recent"] = "rank", newest: int | None = None,
        vectors: bool = True,
    ) -> list[tuple[Candidate, float]]:
        """FTS5 ``MATCH`` query; returns candidates with their raw bm25 rank (lower is better).

        ``match`` is built by :mod:`openclaw_memory.text.query_analysis` from text prepared by
        :func:`openclaw_memory.text.preparation.segment_for_fts` (CJK and Thai split into words). A query the
        keyword index rejects (syntax) returns no rows. With ``window``, only the ``window`` most
        recently indexed matching chunks are ranked (the same result as without it when the MATCH has
        no more rows than that). ``order="recent"`` skips BM25: the ``limit`` most recently indexed
        matches, each with rank 0. ``newest`` restricts the search to about that many most recently
        indexed chunks. ``like_terms`` (each a substring every hit contains) without ``match``
        selects chunks by substring alone. ``vectors`` False: the caller will not score the candidates by their
        stored vectors (a keyword-only search), so a store that reads those with the rows need not."""
    def keyword_search_many(self, queries: Sequence[Mapping[str, Any]]) -> list[list[tuple[Candidate, float]]]:
        """:meth:`keyword_search` of each of ``queries`` (its keyword arguments, ``match`` included), in their
        order; a store behind a server sends them in one round trip."""
    #: True when every call is a round trip to a server: a search then asks for more in one call (its counts,
    #: its first MATCH expressions) rather than for just what it needs next
    round_trips: bool
    def count_matches(self, match: str, *, cap: int) -> int:
        """How many chunks ``match`` selects, counting no further than ``cap`` (cheap for any MATCH)."""
    def count_matches_many(self, matches: Sequence[str], *, cap: int) -> list[int]:
        """:meth:`count_matches` of each of ``matches``, in their order, asked of the store at once (one
        statement, or one round trip to a server); a MATCH the keyword index rejects counts 0."""
    def match_sets_many(self, matches: Sequence[str], *, cap: int) -> list[tuple[int, frozenset[object] | None]]:
        """For each of ``matches``: its :meth:`count_matches` and, when the store can list them and they are
        fewer than ``cap``, the keys of the chunks it selects (opaque, comparable within one call; None
        otherwise), asked at once like :meth:`count_matches_many`. The search combines these sets to know how
        many chunks an AND/OR of the same phrases selects without asking the index again."""
    def vector_search(
        self, query: np.ndarray, *, limit: int, sources: Sequence[str] | None = None, model: str | None = None
    ) -> list[Candidate]:
        """Top ``limit`` chunks by cosine similarity (``Candidate.vector_score``), best first, equal scores
        in the order the chunks were indexed; only chunks of ``sources`` and, with ``model``, only chunks
        embedded by that model (never vectors of another model). A stored zero vector scores 0; a
        non-finite one is never returned; a zero or non-finite ``query`` matches nothing."""
    def vector_scores(self, query: np.ndarray, ids: Sequence[str], *, model: str | None = None) -> dict[str, float]:
        """The cosine similarity :meth:`vector_search` would give each of the chunks ``ids``, by chunk id,
        whether or not it ranks among the top: only chunks with a finite stored vector of the query's size
        and, with ``model``, of that model (others are left out; a zero vector scores 0). A zero or
        non-finite ``query`` scores nothing. (Hybrid search scores its keyword candidates with it.)"""

    # --- embedding cache -------------------------------------------------------------------------
    def cache_get(self, provider: str, model: str, provider_key: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors by chunk hash, for this provider, model and provider key only."""
    def cache_put(self, provider: str, model: str, provider_key: str, items: dict[str, np.ndarray]) -> None:
        """Store vectors by chunk hash (replacing, and refreshing the age of, existing entries)."""
    def cache_prune(self, max_entries: int, *, keep: CacheKeys | None = None) -> int:
        """Drop the least recently written entries beyond ``max_entries``, never one of ``keep`` (the vectors
        the live index still reads: its line units); returns how many were dropped. Kept entries count
        towards ``max_entries``: when they alone exceed it, every other entry goes."""
    def cache_count(self) -> int:
        """Entries in the embedding cache (every provider and model)."""

    # --- lifecycle --------------------------------------------------------------------------------
    def rebuild(self, *, swap_warnings: list[str] | None = None) -> AbstractContextManager[MemoryStore]:
        """A fresh store (seeded with this one's embedding cache) that replaces this one atomically on
        success; on failure or a crash the current index stays as it was. Readers of this store see
        the old index until the swap and the new one after it, never a mix. A failure after the swap, the new
        index live (tidying the old one), is not raised: it is logged and added to ``swap_warnings``."""
    def sync_lock(self, timeout: float = ..., *,
                  cancel: threading.Event | None = None) -> AbstractContextManager[None]:
        """A cross-process lock held for the duration of a sync (IndexLockedError after ``timeout``;
        SyncCancelled as soon as ``cancel`` is set while waiting for it, e.g. the index closing; StoreError
        when the index cannot be written here). The store may tidy leftovers of interrupted rebuilds once
        it holds it."""
    def recover_from_damage(self, exc: BaseException) -> str | None:
        """When ``exc`` (or an error in its ``__cause__`` chain) shows the stored index is damaged: set it
        aside, start an empty index (the next sync rebuilds it from the Markdown) and return a sentence
        saying so; otherwise None."""
    def integrity(self) -> dict[str, Any]:
        """A deep consistency check (counts, rows pointing at nothing, ``problems``: empty when sound)."""
    def info(self) -> StoreInfo:
        """How the store is running, for status (``path`` names the index for messages)."""
    def close(self) -> None:
        """Release the store; later calls raise StoreError."""
