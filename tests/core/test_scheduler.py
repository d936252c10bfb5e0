"""The public interface of SyncScheduler, through a real MemoryIndex on real files: how requests
queue and merge, the follow-up sync a request made during a running sync gets, targeted transcript
syncs, the dirty flag, the last report and failure, the stale checks and cancel/shutdown.

A sync is held in the middle of its run by its own ``progress`` callback (called in the worker
thread after each file), so nothing of the library is replaced."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex, SyncReport
from openclaw_memory.errors import IndexClosedError, IndexLockedError, ProviderError
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.index.scheduler import SyncScheduler
from openclaw_memory.files.sessions import TranscriptWriter
from openclaw_memory.indexing.sync import SyncCancelled

TIMEOUT = 10.0


class Gate:
    """A ``progress`` callback that holds the sync at its first file until :meth:`open`."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.released = threading.Event()

    def __call__(self, done: int, total: int, label: str) -> None:
        self.entered.set()
        assert self.released.wait(TIMEOUT), "the test never opened the gate"

    def open(self) -> None:
        self.released.set()


@pytest.fixture
def held() -> Iterator[Gate]:
    gate = Gate()
    yield gate
    gate.open()  # never leave a worker blocked


def wait_until(cond: Callable[[], bool]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not cond():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def texts(memory: MemoryIndex, query: str, **kw: object) -> list[str]:
    return [h.text for h in memory.search(query, min_score=0.0, **kw).hits]  # type: ignore[arg-type]


def running(memory: MemoryIndex, gate: Gate, reason: str = "held") -> Future[SyncReport]:
    """Start a sync that stops after its first file until ``gate`` opens; return its future."""
    fut = memory.scheduler.submit(reason=reason, progress=gate)
    assert gate.entered.wait(TIMEOUT), "the held sync never started"
    return fut


def test_index_and_freshness_share_one_scheduler(make_index, write) -> None:
    write({"MEMORY.md": "# Memory\nThe user prefers oolong tea.\n"})
    memory = make_index(FakeEmbeddingProvider())
    scheduler = memory.scheduler
    assert isinstance(scheduler, SyncScheduler)
    assert scheduler.dirty and scheduler.last_report is None  # nothing known before the first sync
    report = memory.sync()
    assert scheduler.last_report is report and not scheduler.dirty and scheduler.last_error is None
    memory.mark_dirty()
    assert scheduler.dirty and memory.dirty  # one flag, whichever side sets it


def test_requests_while_one_is_queued_share_it_and_force_gets_its_own(make_index, write, held: Gate) -> None:
    write({"MEMORY.md": "# Memory\nalpha\n", "memory/a.md": "beta\n"})
    memory = make_index(FakeEmbeddingProvider())
    scheduler = memory.scheduler
    first = running(memory, held)
    queued = scheduler.submit(reason="one")
    assert scheduler.submit(reason="two") is queued  # not started yet: it will see both requests' files
    assert memory.sync_in_background("three") is queued
    forced = scheduler.submit(force=True, reason="forced")
    assert forced is not queued and scheduler.syncing
    held.open()
    assert first.result(TIMEOUT).reason == "held"
    assert queued.result(TIMEOUT).reason == "one"
    report = forced.result(TIMEOUT)
    assert report.full_rebuild and report.reason == "forced"
    assert not scheduler.syncing and scheduler.last_report is report


def test_a_note_written_during_a_sync_is_indexed_by_the_follow_up(make_index, write, workspace: Path,
                                                                   held: Gate) -> None:
    write({"memory/2026-01-15.md": "# Notes\nkickoff meeting\n", "memory/2026-01-16.md": "retro\n"})
    memory = make_index(FakeEmbeddingProvider())
    scheduler = memory.scheduler
    first = running(memory, held)  # it has read the files
    with (workspace / "memory" / "2026-01-15.md").open("a") as fh:
        fh.write("The staging database moved to Postgres 17.\n")
    follow_up = scheduler.submit(reason="flush")
    assert follow_up is not first  # the running sync may have read the file before the write
    held.open()
    follow_up.result(TIMEOUT)
    assert scheduler.changed_files() == [] and not scheduler.dirty
    assert any("Postgres 17" in t for t in texts(memory, "Postgres staging"))


def test_failure_is_kept_until_a_sync_succeeds(make_index, write) -> None:
    write({"MEMORY.md": "# Memory\nkiwi orchard\n"})
    provider = FakeEmbeddingProvider()
    memory = make_index(provider)
    scheduler = memory.scheduler
    memory.sync()
    provider.fail_with = ProviderError("HTTP 401 invalid api key")
    (memory.workspace / "memory").mkdir()
    (memory.workspace / "memory" / "new.md").write_text("lychee\n")
    before = time.monotonic()
    with pytest.raises(Exception, match="401"):
        scheduler.submit(reason="manual").result(TIMEOUT)
    assert "401" in (scheduler.last_error or "")
    assert scheduler.last_failed_at is not None and scheduler.last_failed_at >= before
    assert scheduler.dirty  # the failed sync's files still wait
    res = memory.search("kiwi")
    assert res.hits and "401" in (res.sync_error or "") and res.empty_reason is None
    with pytest.raises(dataclasses.FrozenInstanceError):  # built once, complete
        res.sync_error = None  # type: ignore[misc]
    provider.fail_with = None
    memory.sync()
    assert scheduler.last_error is None and scheduler.last_failed_at is None and not scheduler.dirty


def test_another_process_holding_the_lock_is_no_failure(make_index, write, held: Gate) -> None:
    write({"MEMORY.md": "# Memory\nfig\n", "memory/a.md": "date palm\n"})
    holder = make_index(FakeEmbeddingProvider())
    running(holder, held)  # holds the index's sync lock
    other = make_index(FakeEmbeddingProvider())  # same store path: another "process"
    with pytest.raises(IndexLockedError):
        other.scheduler.submit(reason="manual", lock_timeout=0.2).result(TIMEOUT)
    assert other.scheduler.last_error is None and other.scheduler.last_failed_at is None
    assert other.scheduler.dirty  # it did not sync: still to do
    held.open()


def test_stale_check_marks_dirty_and_is_rate_limited(make_index, write, workspace: Path) -> None:
    write({"MEMORY.md": "# Memory\nx\n"})
    memory = make_index(FakeEmbeddingProvider())
    scheduler = memory.scheduler
    memory.sync()
    assert scheduler.check_stale(0.0) is False  # compared: nothing changed
    (workspace / "MEMORY.md").write_text("# Memory\nx plus yuzu\n")
    assert scheduler.check_stale(3600.0) is False and not scheduler.dirty  # compared a moment ago
    assert scheduler.check_stale(0.0) is True and scheduler.dirty
    assert scheduler.changed_files() == ["MEMORY.md"]
    (workspace / "MEMORY.md").write_text("# Memory\nx\n")  # dirty stays until a sync
    assert scheduler.check_stale(0.0) is True


def test_changed_files_skips_what_a_sync_skips(make_index, write, workspace: Path) -> None:
    write({"MEMORY.md": "# Memory\nx\n", "memory/a.md": "a\n"})
    memory = make_index(FakeEmbeddingProvider())
    memory.sync()
    (workspace / "memory" / "a.md").unlink()
    (workspace / "memory" / "b.md").write_text("b\n")
    (workspace / "memory" / "blob.md").write_bytes(b"\x00\x01binary\x00")
    assert memory.scheduler.changed_files() == ["memory/a.md", "memory/b.md"]


def test_watcher_start_comparison(make_index, write, workspace: Path) -> None:
    write({"MEMORY.md": "# Memory\nx\n"})
    memory = make_index(FakeEmbeddingProvider())
    scheduler = memory.scheduler
    assert scheduler.needs_catch_up() is False and scheduler.dirty  # empty index: the first search builds it
    memory.sync()
    assert scheduler.needs_catch_up() is False and not scheduler.dirty  # up to date
    (workspace / "MEMORY.md").write_text("# Memory\nwritten before the watcher\n")
    assert scheduler.needs_catch_up() is True and scheduler.dirty


SESSIONS = {"sources": ["memory", "sessions"], "chunking": {"tokens": 16, "overlap": 0}}


def test_targeted_syncs_merge_and_leave_the_memory_state_alone(make_index, write, held: Gate) -> None:
    write({"MEMORY.md": "# Memory\nfern\n", "memory/a.md": "cactus\n"})
    memory = make_index(FakeEmbeddingProvider(), **SESSIONS)
    scheduler = memory.scheduler
    paths = []
    for sid, word in (("one", "quokka"), ("two", "wombat")):
        w = TranscriptWriter(memory.transcript_path(sid))
        w.append_message("user", f"the {word} ledger")
        paths.append(str(memory.transcript_path(sid)))
    first = running(memory, held)
    fut = scheduler.submit_transcripts(paths[:1])
    assert scheduler.submit_transcripts(paths[1:]) is fut  # queued: it takes both
    assert scheduler.pending_transcripts == tuple(paths) and scheduler.busy
    memory.mark_dirty()
    held.open()
    first.result(TIMEOUT)
    report = fut.result(TIMEOUT)
    assert report.reason == "post-compaction" and scheduler.pending_transcripts == ()
    assert scheduler.dirty  # a transcript-only sync does not look at the memory files
    assert not scheduler.busy
    found = texts(memory, "ledger", sources=["sessions"], max_results=10)
    assert any("quokka" in t for t in found) and any("wombat" in t for t in found)


def test_close_cancels_a_running_sync_and_refuses_new_requests(make_index, write, held: Gate) -> None:
    write({"MEMORY.md": "# Memory\nx\n", "memory/a.md": "a\n", "memory/b.md": "b\n"})
    memory = make_index(FakeEmbeddingProvider())
    scheduler = memory.scheduler
    fut = running(memory, held)
    queued = scheduler.submit(reason="queued")
    closer = threading.Thread(target=memory.close)
    closer.start()
    wait_until(lambda: scheduler.closed)
    assert scheduler.cancel_event.is_set()
    with pytest.raises(RuntimeError, match="closed"):
        scheduler.check_open()
    held.open()  # the held sync goes on to its next file and stops there
    closer.join(TIMEOUT)
    assert not closer.is_alive()
    assert isinstance(fut.exception(TIMEOUT), SyncCancelled)
    # the queued sync ends with the library's IndexClosedError, so its caller learns why (a cancelled future raised a
    # bare CancelledError, which an awaiting asyncio task takes for its own cancellation)
    assert isinstance(queued.exception(TIMEOUT), IndexClosedError)
    with pytest.raises(IndexClosedError):
        scheduler.submit(reason="late")
    scheduler.shutdown()  # idempotent


def test_background_failures_are_logged_not_raised(make_index, write, caplog: pytest.LogCaptureFixture) -> None:
    write({"MEMORY.md": "# Memory\nx\n"})
    provider = FakeEmbeddingProvider()
    provider.fail_with = ProviderError("HTTP 500 upstream")
    memory = make_index(provider)
    fut = memory.scheduler.sync_in_background("test-bg")
    assert fut.exception(TIMEOUT) is not None
    wait_until(lambda: any("background sync (test-bg) failed" in r.getMessage() for r in caplog.records))
    assert "500" in (memory.scheduler.last_error or "")
