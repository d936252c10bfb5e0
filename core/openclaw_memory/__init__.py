"""openclaw-memory: OpenClaw's Markdown agent memory, as a Python library.

Markdown files in a workspace (``MEMORY.md``, ``memory/YYYY-MM-DD.md``, ``memory/**/*.md``) are
the source of truth; a SQLite index (FTS5 + sqlite-vec) makes them searchable with hybrid
vector + keyword retrieval. Start with :class:`MemoryIndex`.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from openclaw_memory import _moved
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import (
    ConfigError,
    IndexClosedError,
    IndexingError,
    IndexLockedError,
    MemoryArgumentError,
    MemoryArgumentTypeError,
    MemoryPathError,
    MissingDependencyError,
    OpenClawMemoryError,
    ProviderError,
    ProviderRequestError,
    ProviderUnavailableError,
    StoreError,
    StoreUnavailableError,
)
from openclaw_memory.index import IndexStatus, MemoryIndex
from openclaw_memory.types import Chunk, FallbackInfo, MemoryFile, MemoryText, SearchHit, SearchResult, SyncReport

_moved.install()  # the module paths before 0.2's stage folders, for one release

try:
    __version__ = version("openclaw-memory")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "Chunk",
    "ConfigError",
    "FallbackInfo",
    "IndexClosedError",
    "IndexLockedError",
    "IndexStatus",
    "IndexingError",
    "MemoryArgumentError",
    "MemoryArgumentTypeError",
    "MemoryConfig",
    "MemoryFile",
    "MemoryIndex",
    "MemoryPathError",
    "MemoryText",
    "MissingDependencyError",
    "OpenClawMemoryError",
    "ProviderError",
    "ProviderRequestError",
    "ProviderUnavailableError",
    "SearchHit",
    "SearchResult",
    "StoreError",
    "StoreUnavailableError",
    "SyncReport",
    "__version__",
]
