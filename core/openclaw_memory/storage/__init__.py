"""Where an index lives: the store protocol a :class:`~openclaw_memory.MemoryIndex` needs
(:mod:`.protocol`), the embedded SQLite store (:mod:`.sqlite`) and the PostgreSQL store (:mod:`.postgres`).

``openclaw_memory.storage`` was the module :mod:`.protocol` before 0.2; its names are re-exported here.
"""

from __future__ import annotations

from openclaw_memory.storage.protocol import (
    META_KEY,
    CacheKeys,
    FileRecord,
    IndexMeta,
    MemoryStore,
    StoredChunk,
    StoreInfo,
)

__all__ = ["META_KEY", "CacheKeys", "FileRecord", "IndexMeta", "MemoryStore", "StoreInfo", "StoredChunk"]
