"""Two threads closing one index at once: the second close() used to return at once, while the first was still
waiting for the running sync to stop and the store was still open, so a caller deleting the index folder after its
close() could pull it from under the open database. Both now return once the index is closed."""

from __future__ import annotations

import threading
from pathlib import Path

from openclaw_memory import MemoryIndex
from tests.core.test_close_while_busy import WAIT, GatedProvider, _in_thread, _index


def _store_open(memory: MemoryIndex) -> bool:
    return memory.store._conn is not None  # type: ignore[attr-defined]


def test_the_second_close_waits_for_the_first_to_finish(tmp_path: Path) -> None:
    provider = GatedProvider("document")
    memory = _index(tmp_path, provider)
    try:
        memory.sync_in_background()
        assert provider.entered.wait(WAIT)
        first, _ = _in_thread(memory.close)  # waits for the sync, whose embedding is held
        while not memory.scheduler.closed:
            first.join(0.01)
        seen_open_after_close: list[bool] = []

        def second_close() -> None:
            memory.close()
            seen_open_after_close.append(_store_open(memory))

        second = threading.Thread(target=second_close, daemon=True)
        second.start()
        second.join(0.3)
        assert second.is_alive(), "the second close() returned while the first was still closing"
        provider.gate.set()
        first.join(WAIT)
        second.join(WAIT)
        assert seen_open_after_close == [False]
    finally:
        provider.gate.set()
        memory.close()


def test_close_from_the_syncs_progress_callback_while_another_thread_closes_does_not_hang(tmp_path: Path) -> None:
    provider = GatedProvider(None)
    memory = _index(tmp_path, provider)
    closer: list[threading.Thread] = []

    def progress(done: int, total: int, label: str) -> None:
        if done == 1:
            thread, _ = _in_thread(memory.close)  # another thread closes: it waits for this sync to stop
            closer.append(thread)
            while not memory.scheduler.closed:
                thread.join(0.01)
            memory.close()  # the sync's own callback closes too: it must not wait for itself

    syncing, outcome = _in_thread(lambda: memory.sync(progress=progress))
    syncing.join(WAIT)
    assert not syncing.is_alive()
    closer[0].join(WAIT)
    assert not closer[0].is_alive() and not _store_open(memory)
