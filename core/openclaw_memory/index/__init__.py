"""The memory index: :class:`MemoryIndex` (:mod:`.memory_index`) and the parts it runs: what ``status()``
reports (:mod:`.status`), the sync worker and queue (:mod:`.scheduler`) and the syncs it runs
(:mod:`.sync_runner`), when to sync (:mod:`.freshness`, the file watcher :mod:`.watch`), the embedding
provider with its fallback (:mod:`.provider_access`), and one search's options (:mod:`.search_options`).

``openclaw_memory.index`` was the module :mod:`.memory_index` before 0.2: ``MemoryIndex`` and ``IndexStatus``
are re-exported here, and any other name of that module still resolves, with a DeprecationWarning
(pickles of earlier versions name ``openclaw_memory.index._reopen``).
"""

from __future__ import annotations

from openclaw_memory._moved import forward_to
from openclaw_memory.index.memory_index import IndexStatus, MemoryIndex

__all__ = ["IndexStatus", "MemoryIndex"]

__getattr__ = forward_to(__name__, "openclaw_memory.index.memory_index")
