"""Progress of a running sync: live counters with an ETA (for ``status``) and a progress bar
(terminal or notebook) to pass as ``sync(progress=...)``."""

from __future__ import annotations

import threading
import time
from typing import IO, Any

__all__ = ["ProgressBar", "SyncProgress", "progress_bar"]


class SyncProgress:
    """Live counters of one running sync: files processed out of the files to consider, chunks
    embedded so far, and an ETA from the file rate. Thread-safe (the sync thread writes, any
    thread reads a :meth:`snapshot`)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._files_done = 0
        self._files_total: int | None = None
        self._embedded = 0
        self._waiting_for: str | None = None

    def waiting_for(self, what: str | None) -> None:
        """Record what the sync waits for before it can start (another process's sync lock), None once it runs."""
        with self._lock:
            self._waiting_for = what

    def files(self, done: int, total: int) -> None:
        """Record that ``done`` of ``total`` files are processed (the sync ``progress`` callback)."""
        with self._lock:
            self._files_done, self._files_total = done, total

    def add_embedded(self, n: int) -> None:
        """Record ``n`` more chunks embedded."""
        with self._lock:
            self._embedded += n

    def snapshot(self) -> dict[str, Any]:
        """``reason``, ``files_done``, ``files_total`` (None until the first file is done),
        ``chunks_embedded``, ``chunks_estimate`` (chunks the sync will have embedded when done, from
        the rate so far; None before the first file), ``elapsed_s``, ``eta_s`` (None until known) and
        ``waiting_for`` (what the sync waits for before it can start, e.g. "another process's sync of <index>"; None
        once it runs)."""
        with self._lock:
            done, total, embedded = self._files_done, self._files_total, self._embedded
            waiting = self._waiting_for
        elapsed = time.monotonic() - self._started
        eta = estimate = None
        if total and done:
            eta = elapsed / done * (total - done)
            estimate = round(embedded / done * total)
        return {
            "reason": self.reason, "files_done": done, "files_total": total, "chunks_embedded": embedded,
            "chunks_estimate": estimate, "elapsed_s": round(elapsed, 1),
            "eta_s": None if eta is None else round(eta, 1), "waiting_for": waiting,
        }


class ProgressBar:
    """A sync ``progress`` callback that draws a bar with an ETA: a widget in Jupyter (with
    ``ipywidgets``), text elsewhere (``tqdm.auto``). Created lazily on the first file, so a sync
    with nothing to do draws nothing. Close it when the sync ends (or use ``with``)."""

    def __init__(self, desc: str = "Indexing memory files", *, file: IO[str] | None = None,
                 disable: bool | None = False) -> None:
        self.desc, self.file, self.disable = desc, file, disable
        self._bar: Any = None

    def __call__(self, done: int, total: int, label: str) -> None:
        if self._bar is None:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=self.desc, unit="file", file=self.file,
                             disable=True if total == 0 else self.disable)
        self._bar.update(done - self._bar.n)
        self._bar.set_postfix_str(label[-40:], refresh=False)

    def close(self) -> None:
        """Finish the bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_bar(desc: str = "Indexing memory files", *, file: IO[str] | None = None,
                 disable: bool | None = False) -> ProgressBar:
    """A progress bar with an ETA for ``MemoryIndex.sync(progress=...)``; in a notebook::

        with progress_bar() as bar:
            memory.sync(progress=bar)

    ``disable=None`` draws it only on a terminal (tqdm's rule)."""
    return ProgressBar(desc, file=file, disable=disable)
