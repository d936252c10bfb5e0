"""close() while the index's sync waits for another process's sync lock: close returns within seconds (not after
the sync's lock_timeout, ten minutes by default), the waiting sync ends as a cancelled one, and the other process
keeps its lock."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from openclaw_memory import IndexClosedError, MemoryIndex
from openclaw_memory.errors import IndexLockedError, SyncCancelled

pytestmark = pytest.mark.both_stores

#: a second process holding the index's sync lock until its stdin closes
HOLDER = """
import sys
kind, where, namespace, schema = sys.argv[1:5]
if kind == "sqlite":
    from openclaw_memory.storage.sqlite.store import SQLiteStore
    store = SQLiteStore(where)
else:
    from openclaw_memory.storage.postgres import PostgresStore
    store = PostgresStore(where, namespace=namespace, schema=schema, memory_cache=False)
with store.sync_lock(timeout=5):
    print("held", flush=True)
    sys.stdin.read()
    print("still held", flush=True)
"""


@pytest.fixture
def lock_holder(store_backend: str, request: pytest.FixtureRequest) -> Iterator[Callable[[MemoryIndex], Any]]:
    """``lock_holder(index)``: start a process holding ``index``'s sync lock (stopped after the test)."""
    started: list[subprocess.Popen[str]] = []

    def _hold(index: MemoryIndex) -> subprocess.Popen[str]:
        store: Any = index.store
        if store_backend == "postgresql":
            args = ["postgresql", store.url, store.namespace, store.schema]
        else:
            args = ["sqlite", str(store.path), "-", "-"]
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, *args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        started.append(holder)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        return holder

    yield _hold
    for holder in started:
        holder.kill()
        holder.wait(10)


def test_close_returns_promptly_while_a_sync_waits_for_another_processs_lock(
        make_index: Callable[..., MemoryIndex], write: Any, lock_holder: Callable[[MemoryIndex], Any]) -> None:
    write({"MEMORY.md": "# Memory\n\nThe heron count was three.\n"})
    memory = make_index()
    holder = lock_holder(memory)
    outcome: dict[str, BaseException] = {}

    def sync() -> None:
        try:
            memory.sync(lock_timeout=600)
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome["error"] = exc

    syncing = threading.Thread(target=sync, daemon=True)
    syncing.start()
    time.sleep(1.0)  # the sync is waiting for the lock
    assert syncing.is_alive()
    started = time.monotonic()
    memory.close()
    took = time.monotonic() - started
    syncing.join(10)
    assert took < 5, f"close() took {took:.1f}s"
    assert not syncing.is_alive()
    assert isinstance(outcome.get("error"), (SyncCancelled, IndexClosedError)), outcome
    assert holder.poll() is None  # the other process's sync is unaffected: it still holds its lock
    holder.stdin.close()
    assert holder.stdout.readline().strip() == "still held"
    assert holder.wait(10) == 0


def test_a_sync_lock_wait_without_a_cancel_still_times_out(
        make_index: Callable[..., MemoryIndex], lock_holder: Callable[[MemoryIndex], Any]) -> None:
    memory = make_index()
    lock_holder(memory)
    with pytest.raises(IndexLockedError, match="another process has been indexing"):
        with memory.store.sync_lock(timeout=0.3, cancel=threading.Event()):
            pass


def test_a_sync_lock_wait_ends_at_once_when_already_cancelled(
        make_index: Callable[..., MemoryIndex], lock_holder: Callable[[MemoryIndex], Any]) -> None:
    memory = make_index()
    lock_holder(memory)
    cancel = threading.Event()
    cancel.set()
    started = time.monotonic()
    with pytest.raises(SyncCancelled):
        with memory.store.sync_lock(timeout=600, cancel=cancel):
            pass
    assert time.monotonic() - started < 5


def test_a_sub_second_lock_timeout_is_named_as_it_was_given(
        make_index: Callable[..., MemoryIndex], lock_holder: Callable[[MemoryIndex], Any]) -> None:
    memory = make_index()
    lock_holder(memory)
    with pytest.raises(IndexLockedError, match=r"for more than 0\.4s;"):  # was "more than 0s"
        memory.sync(lock_timeout=0.4)
