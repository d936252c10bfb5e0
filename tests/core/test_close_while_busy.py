"""close() from another thread while calls are under way: each of them ends with IndexClosedError (what a call made
after closing gets), never a bare CancelledError (which an awaiting asyncio task takes for its own cancellation),
the executor's "cannot schedule new futures" or the store's own error."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import IndexClosedError, MemoryIndex
from openclaw_memory.errors import SyncCancelled
from openclaw_memory.providers.base import EmbedKind
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.helpers.waiting import wait_for

WAIT = 10.0


class GatedProvider(FakeEmbeddingProvider):
    """The fake provider, holding embeddings of ``kind`` until :attr:`gate` is set (:attr:`entered` says one waits)."""

    def __init__(self, kind: EmbedKind | None) -> None:
        super().__init__(dims=16)
        self.kind = kind
        self.gate = threading.Event()
        self.entered = threading.Event()

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        if kind == self.kind:
            self.entered.set()
            self.gate.wait(WAIT)
        return super()._embed(texts, kind)


def _index(tmp_path: Path, provider: GatedProvider) -> MemoryIndex:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for day in range(1, 4):
        (ws / "memory" / f"2026-01-0{day}.md").write_text(f"# Day {day}\n\nThe heron count was {day}.\n")
    return MemoryIndex(workspace=ws, provider=provider, watch=False, store={"path": str(tmp_path / "i.sqlite")})


def _in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def _queued(memory: MemoryIndex) -> bool:
    """Whether a sync waits behind the running one (the sync worker's queue is not empty)."""
    return memory.scheduler._executor._work_queue.qsize() > 0  # type: ignore[attr-defined]


def _close_releasing(memory: MemoryIndex, provider: GatedProvider) -> None:
    """Close from another thread, then let the held embedding go on (close waits for the running sync)."""
    closer, _ = _in_thread(memory.close)
    while not memory.scheduler.closed:
        closer.join(0.01)
    provider.gate.set()
    closer.join(WAIT)
    assert not closer.is_alive()


def test_a_sync_waiting_in_the_queue_when_the_index_closes_raises_index_closed(tmp_path: Path) -> None:
    provider = GatedProvider("document")
    memory = _index(tmp_path, provider)
    running, first = _in_thread(memory.sync)
    assert provider.entered.wait(WAIT)
    waiting, queued = _in_thread(memory.sync)  # runs after the running one, which may have read files before a change
    while not _queued(memory):
        waiting.join(0.01)
    _close_releasing(memory, provider)
    running.join(WAIT)
    waiting.join(WAIT)
    assert isinstance(first.get("error"), SyncCancelled)
    assert isinstance(queued.get("error"), IndexClosedError), queued  # was concurrent.futures.CancelledError('')


def test_async_sync_waiting_when_the_index_closes_raises_index_closed_not_cancelled(tmp_path: Path) -> None:
    provider = GatedProvider("document")
    memory = _index(tmp_path, provider)
    memory.sync_in_background()
    assert provider.entered.wait(WAIT)

    async def main() -> BaseException | None:
        waiting = asyncio.create_task(memory.async_sync())
        while not _queued(memory):
            await asyncio.sleep(0.01)
        await asyncio.to_thread(_close_releasing, memory, provider)
        try:
            await waiting
        except asyncio.CancelledError as exc:  # the task was never cancelled: this would stop the caller's task
            return exc
        except Exception as exc:
            return exc
        return None

    error = asyncio.run(main())
    assert isinstance(error, IndexClosedError), repr(error)


def test_a_search_under_way_when_the_index_closes_raises_index_closed(tmp_path: Path) -> None:
    provider = GatedProvider(None)
    memory = _index(tmp_path, provider)
    memory.sync()
    provider.kind = "query"  # the next search waits for its query embedding
    searching, search = _in_thread(lambda: memory.search("heron count"))
    assert provider.entered.wait(WAIT)
    memory.close()  # it does not wait for a query embedding
    provider.gate.set()
    searching.join(WAIT)
    assert isinstance(search.get("error"), IndexClosedError), search  # was StoreError: "the memory index ... is closed"


def test_the_scheduler_of_a_closed_index_refuses_a_sync_with_index_closed(tmp_path: Path) -> None:
    memory = _index(tmp_path, GatedProvider(None))
    scheduler = memory.scheduler
    memory.close()
    with pytest.raises(IndexClosedError):  # was RuntimeError: cannot schedule new futures after shutdown
        scheduler.submit(reason="late")
    with pytest.raises(IndexClosedError):
        scheduler.sync_in_background("late")


def test_cancelling_an_async_sync_leaves_the_sync_it_joined_to_its_other_callers(tmp_path: Path) -> None:
    provider = GatedProvider("document")
    memory = _index(tmp_path, provider)
    try:
        memory.sync_in_background()
        assert provider.entered.wait(WAIT)
        shared = memory.scheduler.submit(reason="watch")  # queued behind the running one: later calls join it

        async def main() -> None:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(memory.async_sync(), 0.2)  # this caller gives up; it joined the queued sync

        asyncio.run(main())
        provider.gate.set()
        assert not shared.cancelled()  # it was: the watcher's sync (and any other caller's) was dropped
        assert shared.result(WAIT).reason == "watch"
    finally:
        provider.gate.set()
        memory.close()


def test_aclose_closes_without_blocking_the_event_loop_while_a_sync_stops(tmp_path: Path) -> None:
    provider = GatedProvider("document")
    memory = _index(tmp_path, provider)
    memory.sync_in_background()
    assert provider.entered.wait(WAIT)

    async def main() -> int:
        ticks = 0
        closing = asyncio.create_task(memory.aclose())  # waits for the running sync, held until the gate opens
        while not memory.scheduler.closed:
            await asyncio.sleep(0.01)
        provider.gate.set()
        while not closing.done():
            ticks += 1  # the loop keeps running meanwhile
            await asyncio.sleep(0)
        await closing
        return ticks

    assert asyncio.run(main()) >= 1
    with pytest.raises(IndexClosedError):
        memory.search("heron")


def test_close_from_a_syncs_progress_callback_stops_that_sync_and_closes(tmp_path: Path) -> None:
    memory = _index(tmp_path, GatedProvider(None))

    def progress(done: int, total: int, label: str) -> None:
        if done == 1:
            memory.close()  # e.g. a "stop" button wired to the progress callback

    with pytest.raises(SyncCancelled):  # was RuntimeError: cannot join current thread (and the store stayed open)
        memory.sync(progress=progress)
    wait_for(lambda: memory.store._conn is None, timeout=WAIT)  # type: ignore[attr-defined]
    with pytest.raises(IndexClosedError):
        memory.search("heron")
