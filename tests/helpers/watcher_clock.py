"""A simulated clock for the file watcher's debounce, and helpers that drive a watcher with it."""

from __future__ import annotations

import time

from openclaw_memory.index.watch import MemoryWatcher
from tests.helpers.waiting import wait_for


class SimClock:
    """The watcher's clock in a test: it moves only when the test advances it, so a pause of a loaded
    machine between two writes never reads as the quiet that ends a burst."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.reads = 0  # one per loop iteration of the watcher

    def __call__(self) -> float:
        self.reads += 1
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def seen_now(w: MemoryWatcher, clock: SimClock, paths: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    """Wait until the watcher has seen a change at the clock's present time and holds ``paths``:
    then advancing the clock by less than the debounce cannot end the burst."""
    wait_for(lambda: w.last_change == clock.now and paths <= w.waiting, timeout=30,
             what=f"the watcher to see {sorted(paths)} (it holds {sorted(w.waiting)})")


def settle(w: MemoryWatcher, clock: SimClock, paths: set[str]) -> None:
    """:func:`seen_now`, then two more loop iterations (for the OS to hand over any event still in flight)."""
    seen_now(w, clock, paths)
    reads = clock.reads
    wait_for(lambda: clock.reads >= reads + 2, timeout=30, what="two more watcher iterations")

