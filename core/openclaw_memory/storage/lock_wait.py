"""The wait for another process's sync lock, shared by the stores: tries that back off, a deadline and a cancel."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from openclaw_memory.errors import IndexLockedError, SyncCancelled

__all__ = ["wait_for_lock"]

#: the longest pause between two tries (seconds): a cancel is seen within it at the latest
_MAX_DELAY_S = 0.25


def wait_for_lock(try_lock: Callable[[], bool], timeout: float, cancel: threading.Event | None, *, busy: str,
                  cancelled: str) -> None:
    """Call ``try_lock`` (True: the lock is taken) until it takes the lock, pausing 20 ms, then twice as long each
    time, up to a quarter of a second: IndexLockedError(``busy``) after ``timeout`` seconds, SyncCancelled
    (``cancelled``) as soon as ``cancel`` is set."""
    deadline = time.monotonic() + max(0.0, timeout)
    delay, stop = 0.02, cancel or threading.Event()
    while not try_lock():
        if time.monotonic() >= deadline:
            raise IndexLockedError(busy)
        if stop.wait(min(delay, max(0.0, deadline - time.monotonic()))):
            raise SyncCancelled(cancelled)
        delay = min(delay * 2, _MAX_DELAY_S)
