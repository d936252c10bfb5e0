"""The search backend interface: what ``MemoryIndex`` needs from an engine that serves search."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from openclaw_memory.types import MemoryText, SearchResult, SyncReport

__all__ = ["BackendStatus", "SearchBackend"]


@dataclass
class BackendStatus:
    """What a backend reports for ``MemoryIndex.status()``.

    ``files``/``chunks`` are None when the backend does not know them (the index's own counts
    are shown then); ``fallback`` is ``{"from": "qmd", "reason": ...}`` once it switched to the
    builtin index; ``details`` is the backend's own section (``IndexStatus.qmd`` for QMD).
    """

    backend: str
    provider: str
    model: str
    search_mode: str
    files: int | None = None
    chunks: int | None = None
    fallback: dict[str, str] | None = None
    details: dict[str, Any] = field(default_factory=dict)


class SearchBackend(Protocol):
    """An engine that serves ``memory_search`` / ``memory_get`` for one agent's memory.

    Errors of the engine itself surface as :class:`~openclaw_memory.errors.BackendError`;
    a refused path as :class:`~openclaw_memory.errors.MemoryPathError`.
    """

    name: str

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        session_key: str | None = None,
        sources: Sequence[str] | None = None,
        as_found: bool = False,
    ) -> SearchResult:
        """Search; hits carry workspace-relative paths, line ranges, snippets and citations.

        ``as_found``: return the indexed chunks as found, none folded together with another
        (``query.merge_overlapping`` off), as a search filtered after the fact (``where``, ``collapse``) needs:
        it asks for more hits until enough pass, and reads fewer hits than asked as "nothing more to find"."""
        ...

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> MemoryText:
        """Read lines of a file a search result pointed to (``memory_get`` path rules)."""
        ...

    def sync(self, *, force: bool = False, reason: str = "manual") -> SyncReport:
        """Bring the backend's index up to date with the Markdown files."""
        ...

    def status(self) -> BackendStatus:
        """What the backend is, what it indexed, and whether it is degraded."""
        ...

    def close(self) -> None:
        """Release processes and files; idempotent."""
        ...
