"""The fallback manager (spec §9.1): a primary backend (QMD) that hands over to the builtin index.

The first :class:`~openclaw_memory.errors.BackendError` from the primary (missing binary,
timeout, bad output, missing models, crash) closes it and switches this manager, for good, to the
builtin index, created on first need; results and status then carry
``fallback = {"from": "qmd", "reason": ...}``. The switch is per manager (per ``MemoryIndex``):
a new index tries QMD again, unless QMD remembers a recent failure in the state dir (it then fails at
once, see :data:`~openclaw_memory.backends.qmd.FAILURE_HOLD_S`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace

from openclaw_memory.backends.base import BackendStatus, SearchBackend
from openclaw_memory.errors import BackendError
from openclaw_memory.types import FallbackInfo, MemoryText, SearchResult, SyncReport

__all__ = ["FallbackBackend"]

log = logging.getLogger(__name__)


class FallbackBackend:
    """``primary`` until it fails, then ``builtin()`` (called once, on the first need)."""

    def __init__(self, primary: SearchBackend, builtin: Callable[[], SearchBackend]) -> None:
        self.primary = primary
        self.name = primary.name
        self._make_builtin = builtin
        self._builtin: SearchBackend | None = None
        self._fallback: FallbackInfo | None = None
        self._lock = threading.Lock()

    @property
    def fallback(self) -> FallbackInfo | None:
        """Why the builtin index serves instead of the primary; None while the primary does."""
        return self._fallback

    def _switch(self, exc: BackendError) -> SearchBackend:
        with self._lock:
            if self._fallback is None:
                self._fallback = FallbackInfo(from_provider=self.primary.name, reason=str(exc))
                log.warning("%s backend failed (%s); switching to the builtin index", self.primary.name, exc)
                self.primary.close()
            return self._builtin_backend()

    def _builtin_backend(self) -> SearchBackend:
        if self._builtin is None:
            self._builtin = self._make_builtin()
        return self._builtin

    def _active(self) -> SearchBackend | None:
        """The builtin once switched, else None (the primary serves)."""
        return self._builtin_backend() if self._fallback is not None else None

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
        """Search the primary; on its first failure, and from then on, the builtin index."""
        backend = self._active()
        if backend is None:
            try:
                return self.primary.search(query, max_results=max_results, min_score=min_score,
                                           session_key=session_key, sources=sources, as_found=as_found)
            except BackendError as exc:
                backend = self._switch(exc)
        result = backend.search(query, max_results=max_results, min_score=min_score,
                                session_key=session_key, sources=sources, as_found=as_found)
        return replace(result, fallback=self._fallback)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> MemoryText:
        """Read a file; the primary's path rules stay valid after a switch (paths it returned)."""
        try:
            return self.primary.get(path, from_line, lines)
        except BackendError as exc:
            return self._switch(exc).get(path, from_line, lines)

    def sync(self, *, force: bool = False, reason: str = "manual") -> SyncReport:
        """Update the active backend's index (a failing primary switches, then the builtin syncs)."""
        backend = self._active()
        if backend is None:
            try:
                return self.primary.sync(force=force, reason=reason)
            except BackendError as exc:
                backend = self._switch(exc)
        return backend.sync(force=force, reason=reason)

    def status(self) -> BackendStatus:
        """The primary's status, or after a switch the builtin's, with ``fallback`` and the primary's
        details marked ``disabled``."""
        if self._fallback is None:
            return self.primary.status()
        st = self._builtin_backend().status()
        details = {"disabled": True, "reason": self._fallback.reason}
        return replace(st, fallback=self._fallback.to_dict(), details=details)

    def close(self) -> None:
        """Close the primary (the builtin index belongs to its owner)."""
        self.primary.close()
