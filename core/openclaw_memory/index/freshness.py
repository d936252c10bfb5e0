"""Keeping a MemoryIndex fresh: the sync triggers (spec §6.1) that run without an explicit sync.

:class:`Freshness` holds them for one index: the first-search and on-search checks (with a cheap
stat-only stale check when no watcher runs), the session-start trigger, the file watcher
(:mod:`openclaw_memory.index.watch`) and the ``sync.interval_minutes`` timer, the foreground
``watch_forever`` loop, and the post-compaction trigger. It decides *when* to sync; the
:class:`~openclaw_memory.index.scheduler.SyncScheduler` it shares with the index queues and runs them
and holds the sync state (dirty flag, last failure, the file comparison).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.index.scheduler import SyncScheduler
from openclaw_memory.storage import MemoryStore
from openclaw_memory.types import SyncReport

__all__ = ["Freshness"]

log = logging.getLogger(__name__)

_STALE_CHECK_INTERVAL_S = 2.0
# After a failed sync, searches (first-search, on-search and session-start triggers) run the next
# one no sooner than this: a sync failing on a bad API key costs the provider's retries each time.
# The watcher, the interval timer and explicit sync() calls are not held back.
_SYNC_RETRY_INTERVAL_S = 30.0
_MAX_WARMED_SESSIONS = 10_000


class Freshness:
    """The background triggers of one :class:`~openclaw_memory.index.MemoryIndex`, which owns it.

    ``scheduler`` is the index's sync scheduler (state and background syncs); ``sync`` runs a sync
    and waits for it, as an explicit ``MemoryIndex.sync(reason=...)`` does (the first-search build,
    ``watch_forever``); ``store`` and ``config`` are the index's. ``auto_start``: start the watcher
    on the first search, as ``MemoryIndex(watch=None)`` does. How the index uses it::

        self._freshness = Freshness(scheduler, store, config, sync=..., auto_start=watch is None)
        self._freshness.start(files=False)   # start_watching(files=False): only the interval timer
        self._freshness.stop()               # in close(), before the scheduler shuts down
    """

    def __init__(self, scheduler: SyncScheduler, store: MemoryStore, config: MemoryConfig, *,
                 sync: Callable[[str], SyncReport], auto_start: bool) -> None:
        self._scheduler = scheduler
        self._store = store
        self._config = config
        self._sync = sync
        # The watcher (sync.watch) starts on the first search, or right away with watch=True.
        self._auto_start = auto_start
        self._watcher: Any = None
        self._interval: threading.Event | None = None
        self._interval_thread: threading.Thread | None = None
        self._watch_lock = threading.Lock()
        self._warmed_sessions: set[str] = set()

    # ---- search-time triggers -----------------------------------------------------------------------

    def ensure_fresh(self, *, session_key: str | None = None) -> bool:
        """What every search does first (see :meth:`MemoryIndex.ensure_fresh`). Returns True when a
        sync is scheduled or running."""
        scheduler, config = self._scheduler, self._config
        scheduler.check_open()
        self._warm_session(session_key)
        if self._auto_start:
            self._auto_start = False
            if config.sync.watch or config.sync.interval_minutes > 0:
                self.start(files=config.sync.watch)
        built = scheduler.is_empty() and self._retry_due()
        if built:
            try:
                self._sync("search")
            except Exception as exc:  # the search still answers, and says why it is empty
                if scheduler.closed:  # closed meanwhile: the search cannot answer either
                    raise
                log.warning("first-search sync failed: %s", exc)
        scheduled = False
        if config.sync.on_search and not built:  # a sync just ran (or failed): not another one
            self._quick_stale_check()
            # dirty while a sync runs means a change since it started: it gets a follow-up sync
            if scheduler.dirty and self._retry_due():
                scheduler.sync_in_background("search")
                scheduled = True
        return scheduled or scheduler.syncing

    def _retry_due(self) -> bool:
        """False for ``_SYNC_RETRY_INTERVAL_S`` (30 s) after a failed sync, so searches do not re-run
        a failing sync on every call; a successful sync (e.g. an explicit ``sync()``) clears it."""
        failed_at = self._scheduler.last_failed_at
        return failed_at is None or time.monotonic() - failed_at >= _SYNC_RETRY_INTERVAL_S

    def _quick_stale_check(self) -> None:
        """Notice hand edits cheaply (stat only, at most every 2 s). Not while a file watcher runs: it
        compared the files when it started and reports every change since (one made while a sync read
        the file queues another sync), so a search does not stat every file of a large workspace."""
        self._scheduler.check_stale(_STALE_CHECK_INTERVAL_S, watched=self.watching)

    def _warm_session(self, session_key: str | None) -> None:
        """The session-start trigger (``sync.on_session_start``): the first search of each
        distinct session key schedules a background sync if memory files changed."""
        if not session_key or not self._config.sync.on_session_start:
            return
        with self._watch_lock:
            if session_key in self._warmed_sessions:
                return
            if len(self._warmed_sessions) >= _MAX_WARMED_SESSIONS:
                self._warmed_sessions.clear()
            self._warmed_sessions.add(session_key)
        self._quick_stale_check()
        if self._scheduler.dirty and self._retry_due():
            self._background_sync("session-start")

    # ---- watcher and interval timer -----------------------------------------------------------------

    def start(self, *, files: bool = True) -> None:
        """Start the file watcher (unless ``files`` is False) and the ``sync.interval_minutes``
        timer when set (see :meth:`MemoryIndex.start_watching`). Idempotent and thread-safe."""
        self._scheduler.check_open()
        with self._watch_lock:
            if self._scheduler.closed:
                return
            started = files and self._watcher is None
            if started:
                self._watcher = self._new_watcher(self._on_files_changed).start()
            minutes = self._config.sync.interval_minutes
            if minutes > 0 and self._interval_thread is None:
                self._interval = threading.Event()
                self._interval_thread = threading.Thread(
                    target=self._interval_loop, args=(minutes * 60, self._interval), daemon=True,
                    name="openclaw-memory-interval",
                )
                self._interval_thread.start()
        # writes made before the watcher started are not events it will see: compare now
        if started and self._scheduler.needs_catch_up():
            self._background_sync("watch")

    @property
    def watching(self) -> bool:
        """True while a file watcher keeps the index fresh."""
        return self._watcher is not None

    def _sessions_watch_dir(self) -> Path | None:
        config = self._config
        return config.resolved_sessions_dir() if config.sessions_enabled() else None

    def _new_watcher(self, on_change: Callable[[set[tuple[Any, str]]], None]) -> Any:
        from openclaw_memory.index.watch import MemoryWatcher

        config = self._config
        return MemoryWatcher(
            config.resolved_workspace(), config.resolved_extra_paths(), on_change,
            debounce_ms=config.sync.watch_debounce_ms, sessions_dir=self._sessions_watch_dir(),
        )

    def _interval_loop(self, seconds: float, stop: threading.Event) -> None:
        while not stop.wait(seconds):
            if self._scheduler.closed:
                return
            self._background_sync("interval")

    def _on_files_changed(self, changes: set[tuple[Any, str]]) -> None:
        """Watcher callback (one call per burst): schedule a background sync when it matters."""
        if self._scheduler.closed:
            return
        reason = self._change_reason(changes)
        if reason is not None:
            self._background_sync(reason)

    def _change_reason(self, changes: set[tuple[Any, str]]) -> str | None:
        """``"watch"`` when memory files changed (marks the index dirty), ``"session-delta"`` when
        only transcripts changed and one is due for re-indexing, else None."""
        sessions_dir = self._sessions_watch_dir()
        transcripts = {p for _, p in changes if sessions_dir is not None and Path(p).parent == sessions_dir}
        if any(p not in transcripts for _, p in changes):
            self._scheduler.mark_dirty()
            return "watch"
        if transcripts and self._transcripts_due(transcripts):
            return "session-delta"
        return None

    def _transcripts_due(self, paths: set[str]) -> bool:
        """True when one of these transcripts is new, gone, shrank, or grew past the thresholds."""
        from openclaw_memory.files.sessions import is_transcript_name, session_rel_path, transcript_delta

        known = self._store.file_records("sessions")
        limits = self._config.sync.sessions
        for path in sorted(paths):
            if not is_transcript_name(os.path.basename(path)):
                continue
            rec = known.get(session_rel_path(path))
            exists = os.path.isfile(path) and not os.path.islink(path)
            if rec is None or not exists:
                if exists or rec is not None:
                    return True
                continue
            if transcript_delta(path, rec.size, delta_bytes=limits.delta_bytes,
                                delta_messages=limits.delta_messages).hit:
                return True
        return False

    def _background_sync(self, reason: str) -> None:
        """Schedule a background sync (after a running one, which may have read the changed files
        before they changed, one more runs: see :meth:`SyncScheduler.submit`)."""
        try:
            self._scheduler.sync_in_background(reason)
        except RuntimeError:  # the executor shut down: close() raced with us
            if self._scheduler.closed:
                return
            raise

    def stop(self) -> None:
        """Stop the watcher and the interval timer and wait for their threads."""
        with self._watch_lock:
            watcher, self._watcher = self._watcher, None
            timer, self._interval_thread = self._interval_thread, None
            if self._interval is not None:
                self._interval.set()
        if watcher is not None:
            watcher.stop()
        if timer is not None and timer is not threading.current_thread():
            timer.join()

    def watch_forever(self, on_sync: Callable[[SyncReport], None] | None = None) -> None:
        """Watch in the foreground, syncing after each burst of relevant changes (see
        :meth:`MemoryIndex.watch_forever`)."""
        scheduler = self._scheduler
        scheduler.check_open()

        def changed(changes: set[tuple[Any, str]]) -> None:
            if scheduler.closed:
                return
            reason = self._change_reason(changes)
            if reason is None:
                return
            report = self._sync(reason)
            if on_sync is not None:
                on_sync(report)

        watcher = self._new_watcher(changed)
        with self._watch_lock:
            previous, self._watcher = self._watcher, watcher
        if previous is not None:
            previous.stop()
        try:
            watcher.run()
        finally:
            with self._watch_lock:
                if self._watcher is watcher:
                    self._watcher = None

    # ---- post-compaction trigger --------------------------------------------------------------------

    def after_compaction(
        self, session_id: str | None = None, *, transcript: str | os.PathLike[str] | None = None
    ) -> Future[SyncReport] | None:
        """Index a session's transcript after a compaction (see :meth:`MemoryIndex.after_compaction`)."""
        if not self._post_compaction_enabled():
            return None
        self._scheduler.check_open()
        fut = self._schedule_post_compaction(session_id, transcript)
        if fut is not None and self._config.compaction.post_index_sync == "await":
            fut.result()
        return fut

    async def async_after_compaction(
        self, session_id: str | None = None, *, transcript: str | os.PathLike[str] | None = None
    ) -> Future[SyncReport] | None:
        """Async twin of :meth:`after_compaction`."""
        if not self._post_compaction_enabled():
            return None
        self._scheduler.check_open()
        fut = await asyncio.to_thread(self._schedule_post_compaction, session_id, transcript)
        if fut is not None and self._config.compaction.post_index_sync == "await":
            await asyncio.shield(asyncio.wrap_future(fut))  # a cancelled caller leaves the merged sync to the others
        return fut

    def _post_compaction_enabled(self) -> bool:
        cfg = self._config
        return (cfg.sessions_enabled() and cfg.sync.sessions.post_compaction_force
                and cfg.compaction.post_index_sync != "off")

    def _schedule_post_compaction(
        self, session_id: str | None, transcript: str | os.PathLike[str] | None
    ) -> Future[SyncReport] | None:
        from openclaw_memory.files.sessions import is_transcript_name, list_session_files, transcript_file_name

        config = self._config
        directory = config.resolved_sessions_dir()
        if transcript is not None:
            path = Path(transcript).expanduser()
            path = path if path.is_absolute() else directory / path
            if os.path.realpath(path.parent) != os.path.realpath(directory) or not is_transcript_name(path.name):
                raise MemoryArgumentError(
                    f"{transcript!s} is not a transcript (*.jsonl) directly in the sessions directory {directory}; "
                    "only those are indexed"
                )
            targets = [directory / path.name]
        elif session_id is not None:
            targets = [directory / transcript_file_name(session_id)]
        else:
            targets = list_session_files(directory)  # the sync skips those whose stat matches the index
        targets = [p for p in targets if p.is_file()]
        if not targets:
            log.debug("post-compaction sync: no transcript to index (%s)", transcript or session_id or directory)
            return None
        try:
            return self._scheduler.submit_transcripts(
                [str(p) for p in targets], log_failures=config.compaction.post_index_sync != "await")
        except RuntimeError:  # the executor shut down: close() raced with us
            if self._scheduler.closed:
                return None
            raise
