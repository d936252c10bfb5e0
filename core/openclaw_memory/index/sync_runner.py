"""The syncs of one :class:`~openclaw_memory.index.MemoryIndex`, run for its scheduler: damaged-index
recovery, the switch to the fallback provider, and the bundled model's background upgrade."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import IndexingError, IndexLockedError, OpenClawMemoryError
from openclaw_memory.indexing.progress import SyncProgress
from openclaw_memory.index.provider_access import ProviderAccess
from openclaw_memory.providers.base import EmbeddingProvider
from openclaw_memory.index.scheduler import SyncRequest, SyncScheduler
from openclaw_memory.storage import MemoryStore
from openclaw_memory.indexing.sync import SessionIndexStats, SyncPlan, run_sync
from openclaw_memory.types import SyncReport

__all__ = ["READ_PATH_LOCK_TIMEOUT_S", "SyncRunner"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")
#: how long a read (search, status) that must rebuild a damaged index waits for another process's sync
READ_PATH_LOCK_TIMEOUT_S = 0.5


def _check_workspace_present(config: MemoryConfig) -> None:
    """IndexingError when the workspace folder is gone (moved, deleted, a drive not mounted): a sync would find no
    file and remove every one from the index; refused, the index stays searchable as it was."""
    workspace = config.resolved_workspace()
    if not workspace.is_dir():
        raise IndexingError(f"the workspace {workspace} is missing (moved, deleted, or on a drive that is not "
                            "mounted); nothing was removed from the index. Restore the folder, or open the index "
                            "with the workspace's new path")


class SyncRunner:
    """Runs one index's syncs (:meth:`run`, the scheduler's job) and guards its reads (:meth:`guarded`).

    ``sync`` is the index's own :meth:`~openclaw_memory.index.MemoryIndex.sync` (a read that finds the
    index damaged rebuilds through it). ``background`` is False for an index opened with ``watch=False``,
    which starts no upgrade thread of its own.
    """

    def __init__(self, store: MemoryStore, config: MemoryConfig, access: ProviderAccess, scheduler: SyncScheduler,
                 session_stats: SessionIndexStats, *, sync: Callable[..., SyncReport], background: bool) -> None:
        self.store = store
        self.config = config
        self.access = access
        self.scheduler = scheduler
        self.session_stats = session_stats
        self._sync = sync
        self._background = background
        #: the running sync's counters, for status()
        self.live: SyncProgress | None = None
        self._upgrade_thread: threading.Thread | None = None

    def _embed_documents(self, provider: EmbeddingProvider, texts: list[str]) -> list[np.ndarray]:
        vectors = self.access.embed_documents(provider, texts)
        live = self.live
        if live is not None:
            live.add_embedded(len(vectors))
        return vectors

    def plan(self) -> SyncPlan:
        """What the next sync writes with: the settings, the provider of the tier it writes, how to embed."""
        access = self.access
        provider = access.tier_provider(access.ensure(), query=False)
        return SyncPlan(
            config=self.config,
            provider=provider,
            embed=self._embed_documents,
            fts_tokenizer_id=self.store.fts_tokenizer_id,
            session_stats=self.session_stats,
            cancel=self.scheduler.cancel_event,
            cache_floor=access.upgrade.cache_floor() if access.upgrade is not None else 0,
            # the fast tier embeds heads to be quick: its line units would cost more than its chunks
            line_units=access.upgrade is None or provider is not access.upgrade.fast,
        )

    def run(self, request: SyncRequest) -> SyncReport:
        """Run one sync for the scheduler (in its worker thread): a damaged index is set aside and
        rebuilt, an embedding failure switches to the fallback provider (once); both keep the
        request's lock_timeout."""
        reason, lock_timeout = request.reason, request.lock_timeout
        if not request.targeted:  # a transcript-only sync does not read the workspace
            _check_workspace_present(self.config)
        self.live = SyncProgress(reason)
        caller_progress = request.progress

        def waiting(what: str | None) -> None:
            if (live := self.live) is not None:
                live.waiting_for(what)

        def tracked(done: int, total: int, label: str) -> None:
            if (live := self.live) is not None:
                live.files(done, total)
            if caller_progress is not None:
                caller_progress(done, total, label)

        try:
            try:
                report = run_sync(self.store, self.plan(), force=request.force, reason=reason, progress=tracked,
                                  session_files=request.session_files, lock_timeout=lock_timeout, lock_wait=waiting)
            except Exception as exc:
                if self.recover_from_damage(exc) is None:
                    raise
                self.live = SyncProgress(f"{reason} (damaged index rebuilt)")
                report = run_sync(self.store, self.plan(), force=True, reason=f"{reason} (damaged index rebuilt)",
                                  progress=tracked, lock_timeout=lock_timeout, lock_wait=waiting)
        except IndexingError as exc:
            if not self.access.activate_fallback(exc):
                raise
            self.live = SyncProgress(f"{reason} (fallback)")
            report = run_sync(self.store, self.plan(), force=True, reason=f"{reason} (fallback)",
                              progress=tracked, lock_timeout=lock_timeout, lock_wait=waiting)
        finally:
            self.live = None
        self.start_upgrade()
        return report

    def start_upgrade(self) -> None:
        """After a sync that left fast vectors live: embed the full vectors in a background thread,
        then sync once more to swap them in. Only for an index that runs in the background anyway
        (not ``watch=False``, which :meth:`~openclaw_memory.index.MemoryIndex.upgrade_embeddings` serves)."""
        upgrade = self.access.upgrade
        if upgrade is None or not self._background or self.scheduler.closed:
            return
        with self.access.lock:
            if self._upgrade_thread is not None and self._upgrade_thread.is_alive():
                return
            if not upgrade.needs_upgrade():
                return

            def work() -> None:
                try:
                    if upgrade.run() and not self.scheduler.closed:
                        self.scheduler.sync_in_background("embedding upgrade")
                except Exception as exc:  # recorded in status()["embedding_upgrade"]["error"]
                    # closing, or the interpreter exiting (its executors refuse work): the vectors embedded so
                    # far stay cached, and the next process's upgrade goes on from there
                    quiet = self.scheduler.closed or not threading.main_thread().is_alive()
                    log.log(logging.DEBUG if quiet else logging.WARNING, "embedding upgrade failed: %s", exc)

            self._upgrade_thread = threading.Thread(target=work, name="openclaw-memory-upgrade", daemon=True)
            self._upgrade_thread.start()

    def join_upgrade(self) -> None:
        """Wait for a background upgrade to stop (it stops after the model call in progress, a few chunks)."""
        if (upgrading := self._upgrade_thread) is not None:
            upgrading.join()

    def recover_from_damage(self, exc: BaseException) -> str | None:
        """When ``exc`` (or the driver error behind it) says the index file is damaged, let the store
        set it aside and start empty; return what was done (None: not damage)."""
        cause = exc.__cause__ if isinstance(exc, OpenClawMemoryError) else exc
        if cause is None:
            return None
        note = self.store.recover_from_damage(cause)
        if note is not None:
            self.scheduler.mark_dirty()
        return note

    def guarded(self, fn: Callable[[], _T]) -> _T:
        """Run a read of the store; a damaged index file is set aside, rebuilt from the Markdown and
        the read retried once; any other error propagates (the store's own are StoreError)."""
        try:
            return fn()
        except Exception as exc:
            if self.recover_from_damage(exc) is None:
                raise  # the store raises StoreError for its own failures
        try:  # a search or status must not wait behind another process's sync: its rebuild serves
            self._sync(force=True, reason="damaged index", lock_timeout=READ_PATH_LOCK_TIMEOUT_S)
        except (IndexingError, IndexLockedError) as exc:
            log.warning("rebuilding the damaged index failed: %s", exc)
        return fn()
