"""File watching (spec §6.2): changes to the memory files — and, when enabled, to session
transcripts — reach a callback once per burst of writes.

Only what discovery indexes is watched: ``MEMORY.md`` / ``memory.md`` / ``USER.md`` at the workspace root, the
``memory/`` tree, the extra paths (symlinked ones are not watched) and the sessions directory.
The rest of the workspace (which may hold repositories, ``node_modules`` or virtualenvs) is never
walked. Inside the watched trees, paths under ``.git``, ``node_modules``, ``.pnpm-store``,
``.venv``, ``venv``, ``.tox`` and ``__pycache__`` (which discovery does not walk either:
:func:`~openclaw_memory.files.discovery.is_ignored_dir`) and files with an extension other than ``.md``
(transcripts: ``.jsonl`` and their archives) are ignored.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from watchfiles import Change, watch

from openclaw_memory.files.discovery import IGNORED_DIRS, is_ignored_dir
from openclaw_memory.files.sessions import is_transcript_name

__all__ = ["IGNORED_DIRS", "MemoryWatcher", "is_relevant"]

log = logging.getLogger(__name__)

_ROOT_FILES = ("MEMORY.md", "memory.md", "USER.md")
#: how often the watched trees are scanned once the OS refused more notifications (the inotify watch limit)
POLL_DELAY_MS = 500

Changes = set[tuple[Change, str]]


def _is_dir(path: Path) -> bool:
    """A real directory (not a symlink to one)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _rel_parts(path: Path, root: Path) -> tuple[str, ...] | None:
    try:
        return path.relative_to(root).parts
    except ValueError:
        return None


def _ignored(parts: Sequence[str]) -> bool:
    """A path below a root that discovery does not walk to (a folder of :data:`IGNORED_DIRS` on the way)."""
    return any(is_ignored_dir(part) for part in parts)


def is_relevant(
    path: str | os.PathLike[str],
    workspace: Path,
    extra_paths: Sequence[Path],
    sessions_dir: Path | None = None,
    *,
    deleted: bool = False,
) -> bool:
    """True when a change at ``path`` can affect the index.

    That is a Markdown file (or a directory, or a name with no extension) that discovery would
    index — root ``MEMORY.md``/``memory.md``/``USER.md``, under ``memory/`` or an extra path, outside ignored
    directories — or a transcript directly in ``sessions_dir``. A ``deleted`` path there counts whatever its
    name: it may have been a folder of notes (``memory/project.v2``), which can no longer be told.
    """
    p = Path(path)
    if sessions_dir is not None and p.parent == sessions_dir:
        return is_transcript_name(p.name)
    suffix_ok = deleted or not p.suffix or p.suffix == ".md" or _is_dir(p)
    parts = _rel_parts(p, workspace)
    if parts is not None:
        if len(parts) == 1 and parts[0] in (*_ROOT_FILES, "memory"):
            return True
        if len(parts) > 1 and parts[0] == "memory" and suffix_ok and not _ignored(parts[1:]):
            return True  # else it may still lie in an extra path (one configured inside a tool folder is walked)
    for extra in extra_paths:
        if p == extra:
            return True
        rel = _rel_parts(p, extra)
        if rel and suffix_ok and not _ignored(rel):  # else another (nested) extra path may still hold it
            return True
    return False


def _watch_limit(exc: BaseException) -> bool:
    """Whether ``exc`` says the OS refuses more notifications: no watch left (watchfiles: "OS file watch limit
    reached") or no notifier (the inotify instances used up, or the process's open files: "Too many open files")."""
    text = str(exc).lower()
    return "watch limit" in text or "too many open files" in text


class MemoryWatcher:
    """Watch a workspace's memory files (and extra paths, and optionally a sessions directory)
    in a daemon thread, calling ``on_change`` once per burst of changes.

    ``on_change`` receives the set of ``(Change, path)`` seen during the burst, after
    ``debounce_ms`` without any further relevant change; a burst that never pauses is still
    delivered every ``max_wait_ms`` (default ``max(20 × debounce_ms, 10 s)``). A failing
    callback is logged and watching goes on. Trees created later (``memory/`` appearing, the
    sessions directory being created) are picked up. ``clock`` (seconds, monotonic) is what the
    debounce measures quiet with; a test can pass one it advances itself. When the OS refuses more
    notifications (Linux's ``fs.inotify.max_user_watches`` or ``max_user_instances`` reached, often by editors'
    own watchers), the trees are scanned every :data:`POLL_DELAY_MS` instead, with a warning (:attr:`polling`).
    """

    def __init__(
        self,
        workspace: Path,
        extra_paths: Sequence[Path],
        on_change: Callable[[Changes], None],
        *,
        debounce_ms: int = 1500,
        sessions_dir: Path | None = None,
        max_wait_ms: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.workspace = Path(workspace)
        self.extra_paths = [Path(p) for p in extra_paths]
        self.sessions_dir = Path(sessions_dir) if sessions_dir is not None else None
        self.on_change = on_change
        self.debounce_ms = max(0, int(debounce_ms))
        self.max_wait_ms = max(self.debounce_ms, max_wait_ms if max_wait_ms is not None
                               else max(20 * self.debounce_ms, 10_000))
        # How often the loop wakes up while idle: bounds the debounce's precision and stop latency.
        self._tick_ms = min(500, max(20, self.debounce_ms // 4))
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._clock = clock
        self._waiting: frozenset[str] = frozenset()
        self._last_change: float | None = None
        self.bursts = 0
        """How many times ``on_change`` was called."""
        self.polling = False
        """True once the OS refused notifications and the trees are scanned instead."""
        # folders that cannot be read are skipped once a watch failed on one (watchfiles then also keeps quiet
        # about the watch limit, so the first watch is made without skipping: it is how the limit is seen)
        self._skip_unreadable = False

    # ---- what to watch ------------------------------------------------------------------------

    def _roots(self) -> tuple[str, ...]:
        """Directories watched recursively with OS notifications (existing, not symlinked)."""
        candidates = [self.workspace / "memory", *self.extra_paths]
        if self.sessions_dir is not None:
            candidates.append(self.sessions_dir)
        dirs = [c for c in candidates if _is_dir(c)]
        roots = [d for d in dirs if not any(o != d and o in d.parents for o in dirs)]
        return tuple(sorted({str(r) for r in roots}))

    def _polled(self) -> list[Path]:
        """Single files checked by ``stat`` on every tick: the root files and extra files."""
        return [self.workspace / n for n in _ROOT_FILES] + [p for p in self.extra_paths if not _is_dir(p)]

    @staticmethod
    def _signature(path: Path) -> tuple[int, int, int, int] | None:
        try:
            st = os.lstat(path)
        except OSError:
            return None
        return (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns)

    def _poll(self, snapshot: dict[Path, tuple[int, int, int, int] | None]) -> Changes:
        """Changes of the polled files since ``snapshot`` (which is updated)."""
        out: Changes = set()
        for path in self._polled():
            sig = self._signature(path)
            old = snapshot.get(path)
            if sig != old:
                snapshot[path] = sig
                kind = Change.deleted if sig is None else Change.added if old is None else Change.modified
                out.add((kind, str(path)))
        return out

    def _relevant(self, changes: Changes) -> Changes:
        return {
            (c, p) for c, p in changes
            if is_relevant(p, self.workspace, self.extra_paths, self.sessions_dir, deleted=c == Change.deleted)
        }

    # ---- the loop -----------------------------------------------------------------------------

    def _events(self, roots: tuple[str, ...]) -> Iterator[Changes]:
        """Raw changes under ``roots`` (an empty set at least every tick) until stopped."""
        if not roots:
            while not self._stop.wait(self._tick_ms / 1000):
                yield set()
            return
        yield from watch(
            *roots,
            watch_filter=None,
            debounce=self._tick_ms,
            step=min(50, self._tick_ms),
            stop_event=self._stop,
            rust_timeout=self._tick_ms,
            yield_on_timeout=True,
            raise_interrupt=threading.current_thread() is threading.main_thread(),
            ignore_permission_denied=self._skip_unreadable or self.polling,
            force_polling=self.polling or None,  # None: watchfiles' own choice (its environment variable)
            poll_delay_ms=POLL_DELAY_MS,
        )

    def run(self) -> None:
        """Watch in the current thread until :meth:`stop` is called (or Ctrl-C in the main thread)."""
        snapshot: dict[Path, tuple[int, int, int, int] | None] = {p: self._signature(p) for p in self._polled()}
        pending: Changes = set()
        first = last = 0.0
        try:
            while not self._stop.is_set():
                roots = self._roots()
                events = self._events(roots)
                try:
                    for raw in events:
                        self._ready.set()  # the notifier exists once the first (timeout) tick is back
                        new = self._relevant(raw) | self._poll(snapshot)
                        restart = self._roots() != roots
                        if restart:  # a watched tree appeared or vanished: count it as a change
                            new.add((Change.modified, str(self.workspace)))
                        now = self._clock()
                        if new:
                            if not pending:
                                first = now
                            pending |= new
                            last = self._last_change = now
                            self._waiting = frozenset(p for _, p in pending)
                        if pending and (
                            (now - last) * 1000 >= self.debounce_ms or (now - first) * 1000 >= self.max_wait_ms
                        ):
                            burst, pending = pending, set()
                            self._waiting = frozenset()
                            self._deliver(burst)
                        if restart or self._stop.is_set():
                            break
                except (OSError, RuntimeError) as exc:  # e.g. a root vanished while being set up
                    if _watch_limit(exc) and not self.polling:
                        self.polling = True
                        log.warning("file watcher: the OS refuses more file notifications (%s); scanning %s every "
                                    "%.1f s instead. Raise fs.inotify.max_user_watches (or, for 'Too many open files', "
                                    "fs.inotify.max_user_instances) to watch with notifications",
                                    exc, ", ".join(roots), POLL_DELAY_MS / 1000)
                        continue  # scanning starts now; ready once its first look at the trees is back
                    if not self._skip_unreadable and not self.polling:
                        self._skip_unreadable = True  # e.g. a folder it may not read: watch the others
                        log.debug("file watcher skipping folders it cannot watch after: %s", exc)
                        continue
                    log.debug("file watcher restarting after: %s", exc)
                    self._ready.set()
                    self._stop.wait(self._tick_ms / 1000)
                finally:
                    events.close()
        finally:
            self._ready.set()

    def _deliver(self, burst: Changes) -> None:
        self.bursts += 1
        try:
            self.on_change(burst)
        except Exception:  # a failing sync must not kill the watcher
            log.exception("memory sync after a file change failed")

    def start(self) -> MemoryWatcher:
        """Start watching in a daemon thread; returns once changes are being observed."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name="openclaw-memory-watch", daemon=True)
            self._thread.start()
            self._ready.wait(timeout=5)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and wait for the thread to end (a callback in progress finishes first)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                log.warning("file watcher thread did not stop within %.1fs", timeout)

    @property
    def waiting(self) -> frozenset[str]:
        """The paths changed in the current burst, seen and not yet delivered (waiting for quiet)."""
        return self._waiting

    @property
    def last_change(self) -> float | None:
        """The clock's time when a relevant change was last seen (None before the first)."""
        return self._last_change

    @property
    def running(self) -> bool:
        """True while the watcher thread is alive."""
        return self._thread is not None and self._thread.is_alive()
