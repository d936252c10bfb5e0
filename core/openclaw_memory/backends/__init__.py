"""Search backends: the interface ``MemoryIndex`` uses, and the QMD sidecar with its fallback.

``memory.backend = "builtin"`` (default) searches this library's SQLite index;
``"qmd"`` puts QMD in front of it (:func:`qmd_with_fallback`).
"""

from __future__ import annotations

from collections.abc import Callable

from openclaw_memory.backends.base import BackendStatus, SearchBackend
from openclaw_memory.backends.fallback import FallbackBackend
from openclaw_memory.config import MemoryConfig

__all__ = ["BackendStatus", "FallbackBackend", "SearchBackend", "qmd_with_fallback"]


def qmd_with_fallback(config: MemoryConfig, *, builtin: Callable[[], SearchBackend]) -> FallbackBackend:
    """A QMD backend for ``config`` that switches to ``builtin()`` on its first failure."""
    from openclaw_memory.backends.qmd import QmdBackend

    return FallbackBackend(QmdBackend(config), builtin)
