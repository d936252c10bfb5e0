"""Running one index's syncs: the worker thread, the requests waiting for it, and the sync state.

:class:`SyncScheduler` decides nothing about *when* to sync (that is
:class:`~openclaw_memory.index.freshness.Freshness`, the triggers) nor *how* (that is the runner the
:class:`~openclaw_memory.index.MemoryIndex` gives it: ``run_sync`` with damaged-index recovery and
the provider fallback). It holds what both share:

* one worker thread, so syncs of one index never overlap;
* the queue: a request joins a sync that is queued and has not started yet (it will see every change
  made before it starts); a request made while a sync *runs* gets one more sync after it, because the
  running one may have read the files before they changed (no write is ever left unindexed);
* targeted (post-compaction) syncs of transcripts, merged while one waits;
* the dirty flag, the last report, the last failure and when it happened;
* the cheap stat-only comparison of the files with the index (stale checks, the watcher's start);
* cancel and shutdown.

    >>> from openclaw_memory import MemoryIndex
    >>> with MemoryIndex(workspace="~/notes") as memory:     # doctest: +SKIP
    ...     scheduler = memory.scheduler
    ...     report = scheduler.submit(reason="manual").result()
    ...     scheduler.dirty, scheduler.last_error
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import IndexClosedError, IndexLockedError, OpenClawMemoryError
from openclaw_memory.redaction import redact
from openclaw_memory.storage import MemoryStore
from openclaw_memory.indexing.sync import Progress, stat_scan_and_kept, would_index
from openclaw_memory.types import SyncReport

__all__ = ["SyncRequest", "SyncRunner", "SyncScheduler"]

log = logging.getLogger(__name__)

#: the default wait for another process's sync of the same index (seconds), then IndexLockedError
DEFAULT_LOCK_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class SyncRequest:
    """One sync for the runner to run.

    ``session_files`` set makes it *targeted*: only those transcripts are re-read, the memory
    files are neither scanned nor pruned (and their dirty flag and last failure are left alone).
    ``lock_timeout`` is how long to wait for another process's sync before IndexLockedError.
    """

    reason: str
    force: bool = False
    progress: Progress | None = None
    session_files: tuple[str, ...] | None = None
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S

    @property
    def targeted(self) -> bool:
        """True for a transcript-only (post-compaction) sync."""
        return self.session_files is not None


#: What runs a sync: called in the worker thread, returns its report or raises.
SyncRunner = Callable[[SyncRequest], SyncReport]


class SyncScheduler:
    """The sync worker of one index and the state its syncs leave: thread-safe.

    ``run`` runs one sync (in the worker thread); ``store`` and ``config`` are the index's, read
    for the stat-only comparison of the files with the index (:meth:`changed_files`). The runner
    may call :meth:`mark_dirty` (e.g. after setting a damaged index aside) and should stop at the
    next file once :attr:`cancel_event` is set.
    """

    def __init__(self, run: SyncRunner, store: MemoryStore, config: MemoryConfig) -> None:
        self._run = run
        self._store = store
        self._config = config
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="openclaw-memory-sync")
        self._sync_future: Future[SyncReport] | None = None
        # targeted syncs: transcripts waiting for the next one, and that run's future
        self._pending_transcripts: dict[str, None] = {}
        self._targeted_future: Future[SyncReport] | None = None
        self._cancel = threading.Event()
        self._closed = False
        self._dirty: bool | None = None  # unknown (None) until the first sync or comparison
        self._last_report: SyncReport | None = None
        self._last_error: str | None = None
        self._last_failed_at: float | None = None
        self._last_stale_check = 0.0
        self._worker: int | None = None  # the sync worker thread's ident, once it ran a sync

    # ---- state --------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once :meth:`cancel` (or :meth:`shutdown`) was called: the index is closed."""
        return self._closed

    def check_open(self) -> None:
        """Raise IndexClosedError (a RuntimeError) when closed."""
        if self._closed:
            raise IndexClosedError("this MemoryIndex is closed; create a new one")

    def _check_accepting(self) -> None:
        """:meth:`check_open` for a new request (called holding the lock, so none slips in after :meth:`shutdown`)."""
        if self._closed:
            raise IndexClosedError("this MemoryIndex is closed; create a new one (no sync was queued)")

    @property
    def cancel_event(self) -> threading.Event:
        """Set when closing: a running sync stops at its next file, or in its wait for another process's sync
        (the index stays as it was)."""
        return self._cancel

    @property
    def dirty(self) -> bool:
        """True when the memory files may have changed since the last sync (True before the first sync
        or comparison)."""
        return self._dirty is not False

    def mark_dirty(self) -> None:
        """Record that the memory files (may have) changed: the next trigger syncs."""
        self._dirty = True

    @property
    def syncing(self) -> bool:
        """True while a sync of the memory files is queued or running (targeted syncs aside)."""
        fut = self._sync_future
        return fut is not None and not fut.done()

    @property
    def busy(self) -> bool:
        """True while any sync, a targeted one included, is queued or running."""
        fut = self._targeted_future
        return self.syncing or (fut is not None and not fut.done())

    @property
    def last_report(self) -> SyncReport | None:
        """The report of the last sync that succeeded (targeted ones included); None before one."""
        return self._last_report

    @property
    def last_error(self) -> str | None:
        """Why the last sync of the memory files failed; None once one succeeds. Another process
        holding the index lock (IndexLockedError) is no failure."""
        return self._last_error

    @property
    def last_failed_at(self) -> float | None:
        """``time.monotonic()`` of that failure; None when :attr:`last_error` is None."""
        return self._last_failed_at

    # ---- requests -----------------------------------------------------------------------------------

    def submit(self, *, force: bool = False, reason: str = "manual", progress: Progress | None = None,
               lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> Future[SyncReport]:
        """The sync that answers this request: a queued one that has not started yet (it will see
        every change made before it starts), else a new one, also when one is running (it may
        have read the files before they changed). ``force`` always queues its own forced sync.
        IndexClosedError (a RuntimeError) once closed; a sync still queued when the index closes ends with it too."""
        request = SyncRequest(reason=reason, force=force, progress=progress, lock_timeout=lock_timeout)
        with self._lock:
            self._check_accepting()
            fut = self._sync_future
            if fut is not None and not fut.done() and not force and not fut.running():
                return fut
            fut = self._executor.submit(self._execute, request)
            self._sync_future = fut
            return fut

    def sync_in_background(self, reason: str = "background") -> Future[SyncReport]:
        """:meth:`submit` without waiting: a failure is logged (a warning; after closing, debug),
        not raised. RuntimeError once shut down."""
        fut = self.submit(reason=reason)

        def _log(f: Future[SyncReport]) -> None:
            exc = None if f.cancelled() else f.exception()
            if exc is not None:  # a sync stopped by close() is no failure worth a warning
                log.log(logging.DEBUG if self._closed else logging.WARNING,
                        "background sync (%s) failed: %s", reason, exc)

        fut.add_done_callback(_log)
        return fut

    def submit_transcripts(self, paths: Iterable[str], *, reason: str = "post-compaction",
                           log_failures: bool = True) -> Future[SyncReport]:
        """Queue a targeted sync of these transcripts, merged into one that is queued and has not
        started yet; one running gets another after it. ``log_failures``: nobody waits for the
        future, so a failure is logged as a warning. RuntimeError once shut down."""
        with self._lock:
            self._check_accepting()
            self._pending_transcripts.update(dict.fromkeys(paths))
            fut = self._targeted_future
            if fut is not None and not fut.running() and not fut.done():
                return fut  # it takes the pending paths when it starts
            fut = self._executor.submit(self._execute_targeted, reason)
            self._targeted_future = fut
        if log_failures:
            def _log(f: Future[SyncReport]) -> None:
                exc = None if f.cancelled() else f.exception()
                if exc is not None:  # one stopped or dropped by close() is no failure worth a warning
                    log.log(logging.DEBUG if self._closed else logging.WARNING, "%s sync failed: %s", reason, exc)

            fut.add_done_callback(_log)
        return fut

    @property
    def pending_transcripts(self) -> tuple[str, ...]:
        """Transcripts queued for the next targeted sync (taken when it starts)."""
        with self._lock:
            return tuple(self._pending_transcripts)

    # ---- the files compared with the index ---------------------------------------------------------

    def is_empty(self) -> bool:
        """True when the index holds nothing yet (it is built by the first sync)."""
        return self._store.is_empty()

    def changed_files(self) -> list[str]:
        """Memory files added, changed (size or mtime) or removed since the last sync, sorted,
        by a stat of each file (no reads). Files a sync skips (binary, unreadable, a name that
        is not UTF-8) are left out; transcripts are not compared."""
        known = self._store.file_records("memory")
        scan, kept = stat_scan_and_kept(self._config, known)
        changed = known.keys() - {f.rel for f in scan} - kept  # removed (not those a sync keeps: a drive unmounted)
        # added or changed, unless a sync would skip it (binary, unreadable): that is no pending change
        changed |= {f.rel for f in scan if not f.unchanged and would_index(f)}
        return sorted(changed)

    def check_stale(self, min_interval: float, *, watched: bool = False) -> bool:
        """The cheap stale check: unless already dirty, compare the files with the index (at most
        once per ``min_interval`` seconds; never while ``watched``, a file watcher reporting changes,
        once the state is known) and mark it dirty when they differ. The first check of a new
        scheduler always compares (transcripts too, with sessions enabled): files unchanged since the
        last sync of an earlier process leave it clean. Returns :attr:`dirty`."""
        if self._dirty:
            return True
        now = time.monotonic()
        if self._dirty is None:
            self._last_stale_check = now
            changed = bool(self.changed_files()) or self._transcripts_changed()
            if self._dirty is None:  # no sync or mark_dirty() meanwhile
                self._dirty = changed
            return self.dirty
        if watched or now - self._last_stale_check < min_interval:
            return False
        self._last_stale_check = now
        if self.changed_files():
            self._dirty = True
        return self.dirty

    def _transcripts_changed(self) -> bool:
        """With sessions enabled: whether a transcript appeared, vanished or changed size since it was indexed."""
        if not self._config.sessions_enabled():
            return False
        from openclaw_memory.files.sessions import list_session_files, session_rel_path

        known = self._store.file_records("sessions")
        sizes = {}
        for path in list_session_files(self._config.resolved_sessions_dir()):
            try:
                sizes[session_rel_path(path)] = path.stat().st_size
            except OSError:
                continue
        return sizes != {rel: rec.size for rel, rec in known.items()}

    def needs_catch_up(self) -> bool:
        """The comparison a file watcher makes when it starts (writes made before are events it
        will not see): when the files differ from the index, mark it dirty and return True if a
        sync should run now, i.e. the index exists or is being built (an empty one is built by the
        first search)."""
        if not self.changed_files():
            if self._dirty is None and not self._transcripts_changed():
                self._dirty = False
            return False
        self._dirty = True
        return self.syncing or not self.is_empty()

    # ---- lifecycle ----------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Close: no new requests (:meth:`check_open` raises), and a running sync stops at its next
        file. Queued syncs stay queued until :meth:`shutdown`."""
        self._closed = True
        self._cancel.set()

    def shutdown(self) -> None:
        """:meth:`cancel`, end queued syncs with IndexClosedError (their callers learn why; a cancelled future would
        raise a bare CancelledError, which an awaiting task takes for its own cancellation) and wait for the running
        one to stop. Idempotent."""
        with self._lock:
            self.cancel()
        self._executor.shutdown(wait=True)

    def _check_not_closed_before_start(self) -> None:
        """IndexClosedError for a sync that was still queued when the index closed (it does not run)."""
        if self._closed:
            raise IndexClosedError("this MemoryIndex was closed before the sync ran; nothing was indexed by it")

    # ---- the worker ---------------------------------------------------------------------------------

    def in_worker(self) -> bool:
        """True when called from the sync worker thread (a sync's ``progress`` callback): it cannot wait for itself."""
        return self._worker == threading.get_ident()

    def _execute(self, request: SyncRequest) -> SyncReport:
        self._worker = threading.get_ident()
        self._check_not_closed_before_start()
        targeted = request.targeted
        if not targeted:  # a targeted run does not look at the memory files
            self._dirty = False
        try:
            report = self._run(request)
        except BaseException as exc:
            if not targeted:  # a transcript-only run leaves the memory files' state alone
                self._dirty = True
                if isinstance(exc, Exception) and not isinstance(exc, IndexLockedError):
                    self._failed(exc)  # another process's sync holding the lock is no failure
            raise
        self._last_report = report
        if not targeted:  # the memory files are indexed again
            self._last_error = self._last_failed_at = None
        return report

    def _execute_targeted(self, reason: str) -> SyncReport:
        self._check_not_closed_before_start()
        with self._lock:
            paths, self._pending_transcripts = tuple(self._pending_transcripts), {}
        if not paths:  # an earlier run took them already
            return SyncReport(reason=reason)
        return self._execute(SyncRequest(reason=reason, session_files=paths))

    def _failed(self, exc: Exception) -> None:
        self._last_error = str(exc) if isinstance(exc, OpenClawMemoryError) else redact(f"{type(exc).__name__}: {exc}")
        self._last_failed_at = time.monotonic()
