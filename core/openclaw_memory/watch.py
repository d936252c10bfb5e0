"""File watching (watchfiles): Markdown changes in the workspace mark the index dirty and
trigger one debounced sync per burst of writes."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from watchfiles import Change, watch

__all__ = ["IGNORED_DIRS", "MemoryWatcher", "is_relevant"]

log = logging.getLogger(__name__)

IGNORED_DIRS = frozenset({".git", "node_modules", ".pnpm-store", ".venv", "venv", ".tox", "__pycache__"})


def is_relevant(path: str, workspace: Path, extra_paths: Sequence[Path]) -> bool:
    """True for a Markdown file that discovery would index (or a directory that may hold one)."""
    p = Path(path)
    if any(part.lower() in IGNORED_DIRS for part in p.parts):
        return False
    if p.suffix and p.suffix != ".md":
        return False
    try:
        rel = p.relative_to(workspace)
    except ValueError:
        rel = None
    if rel is not None:
        parts = rel.parts
        if len(parts) == 1 and parts[0] in ("MEMORY.md", "memory.md", "memory"):
            return True
        if parts and parts[0] == "memory":
            return True
    for extra in extra_paths:
        if p == extra or extra in p.parents:
            return True
    return False


class MemoryWatcher:
    """Watch a workspace (and extra paths) in a daemon thread; call ``on_change`` once per burst.

    ``debounce_ms`` is the quiet time after the last write before ``on_change`` runs, so many
    writes in a row cause one call.
    """

    def __init__(
        self,
        workspace: Path,
        extra_paths: Sequence[Path],
        on_change: Callable[[set[tuple[Change, str]]], None],
        *,
        debounce_ms: int = 1500,
    ) -> None:
        self.workspace = workspace
        self.extra_paths = list(extra_paths)
        self.on_change = on_change
        self.debounce_ms = max(50, int(debounce_ms))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    def _roots(self) -> list[Path]:
        roots = [self.workspace]
        for extra in self.extra_paths:
            target = extra if extra.is_dir() else extra.parent
            if target.exists() and not extra.is_symlink() and self.workspace not in [target, *target.parents]:
                roots.append(target)
        return [r for r in roots if r.exists()]

    def run(self) -> None:
        """Watch in the current thread until :meth:`stop` is called."""
        roots = self._roots()
        if not roots:
            log.warning("nothing to watch: %s does not exist", self.workspace)
            self._ready.set()
            self._stop.wait()
            return
        self._ready.set()
        for changes in watch(
            *roots,
            watch_filter=lambda _c, path: is_relevant(path, self.workspace, self.extra_paths),
            debounce=max(self.debounce_ms * 20, 10_000),
            step=self.debounce_ms,
            stop_event=self._stop,
            rust_timeout=500,
            yield_on_timeout=False,
            raise_interrupt=True,
        ):
            if self._stop.is_set():
                break
            try:
                self.on_change(changes)
            except Exception:  # a failing sync must not kill the watcher
                log.exception("memory sync after a file change failed")

    def start(self) -> MemoryWatcher:
        """Start watching in a daemon thread."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name="openclaw-memory-watch", daemon=True)
            self._thread.start()
            self._ready.wait(timeout=5)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and join the thread."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()
