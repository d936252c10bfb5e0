"""The post-compaction trigger (spec §6.1): ``MemoryIndex.after_compaction`` indexes a session's
transcript right after a compaction, bypassing the ``sync.sessions`` delta thresholds, in the
``compaction.post_index_sync`` mode (``async`` / ``await`` / ``off``), gated by
``sync.sessions.post_compaction_force`` and the ``sessions`` source. Real files, real SQLite store."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex, SyncReport
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.files.sessions import TranscriptWriter

SESSIONS = {"sources": ["memory", "sessions"], "chunking": {"tokens": 16, "overlap": 0}}
PHRASE = "quokka ledger reconciliation"
TIMEOUT = 15.0


def build(make_index: Callable[..., MemoryIndex], write: Callable[..., Path], *, mode: str = "async",
          force: bool = True, sessions: bool = True, **overrides: Any) -> MemoryIndex:
    write({"MEMORY.md": "# Memory\n\n- The office plant is a fern.\n"})
    cfg: dict[str, Any] = dict(SESSIONS) if sessions else {"chunking": SESSIONS["chunking"]}
    cfg["compaction"] = {"post_index_sync": mode}
    cfg["sync"] = {"sessions": {"post_compaction_force": force}}
    cfg.update(overrides)
    return make_index(FakeEmbeddingProvider(), **cfg)


def session_hits(memory: MemoryIndex, query: str = PHRASE) -> list[str]:
    res = memory.search(query, sources=["sessions"], min_score=0.0, max_results=20)
    return [h.text for h in res.hits if h.source == "sessions"]


def found(memory: MemoryIndex) -> bool:
    return any("quokka" in t for t in session_hits(memory))


def grown_transcript(memory: MemoryIndex, session_id: str = "chat-1") -> Path:
    """A transcript that was indexed, then grew by two messages: far below the delta thresholds
    (100 000 bytes / 50 messages), so the normal triggers leave the new part unindexed."""
    writer = TranscriptWriter(memory.transcript_path(session_id))
    writer.append_messages([("user", "hello there"), ("assistant", "hi, how can I help?")])
    memory.sync()  # first sight: indexed whole
    writer.append_messages([("user", f"please note the {PHRASE} for March"), ("assistant", "noted")])
    report = memory.sync()
    assert report.files_indexed == 0 and not found(memory), "below the thresholds: not re-indexed"
    return writer.path


def test_await_mode_indexes_the_transcript_before_returning(make_index, write) -> None:
    memory = build(make_index, write, mode="await")
    grown_transcript(memory)
    fut = memory.after_compaction("chat-1")
    assert isinstance(fut, Future) and fut.done()
    report = fut.result()
    assert isinstance(report, SyncReport) and report.reason == "post-compaction"
    assert report.files_indexed == 1 and report.files_scanned == 1  # the transcript only
    assert found(memory)
    hit = next(h for h in memory.search(PHRASE, sources=["sessions"], min_score=0.0).hits if "quokka" in h.text)
    assert hit.path == "sessions/chat-1.jsonl"
    assert memory.after_compaction("chat-1").result().files_unchanged == 1  # again: nothing to do


def test_async_mode_indexes_in_the_background(make_index, write) -> None:
    memory = build(make_index, write)  # async is the default
    assert memory.config.compaction.post_index_sync == "async"
    grown_transcript(memory)
    fut = memory.after_compaction("chat-1")
    assert isinstance(fut, Future)
    assert fut.result(timeout=TIMEOUT).files_indexed == 1
    assert found(memory)


def test_async_mode_polling_search(make_index, write) -> None:
    import time

    memory = build(make_index, write)
    grown_transcript(memory)
    assert memory.after_compaction(transcript="chat-1.jsonl") is not None  # relative: in the sessions dir
    deadline = time.monotonic() + TIMEOUT
    while not found(memory):
        assert time.monotonic() < deadline, "the post-compaction sync never indexed the transcript"
        time.sleep(0.02)


async def test_async_twin(make_index, write) -> None:
    memory = build(make_index, write, mode="await")
    path = grown_transcript(memory)
    fut = await memory.async_after_compaction(transcript=path)
    assert fut is not None and fut.done() and fut.result().files_indexed == 1
    assert found(memory)
    memory.config.compaction.post_index_sync = "off"
    assert await memory.async_after_compaction(transcript=path) is None


@pytest.mark.parametrize("settings", [{"mode": "off"}, {"force": False}, {"mode": "off", "force": False}])
def test_off_mode_and_force_false_do_nothing(make_index, write, settings: dict[str, Any]) -> None:
    memory = build(make_index, write, **settings)
    path = grown_transcript(memory)
    assert memory.after_compaction("chat-1") is None
    assert memory.after_compaction(transcript=path) is None
    assert memory.after_compaction() is None
    memory.sync()  # anything queued would have run before this sync
    assert not found(memory)


def test_sessions_source_disabled_is_a_cheap_no_op(make_index, write) -> None:
    memory = build(make_index, write, sessions=False)
    writer = TranscriptWriter(memory.transcript_path("chat-1"))
    writer.append_message("user", f"the {PHRASE}")
    # Nothing is resolved or checked: not even an invalid path raises.
    assert memory.after_compaction("chat-1") is None
    assert memory.after_compaction(transcript="/not/the/sessions/dir/notes.txt") is None
    assert not memory.scheduler.busy and memory.scheduler.last_report is None  # nothing was queued
    memory.sync()
    assert memory.store.file_records("sessions") == {}


def test_missing_transcript_and_bad_paths(make_index, write, tmp_path: Path) -> None:
    memory = build(make_index, write, mode="await")
    assert memory.after_compaction("never-written") is None
    outside = tmp_path / "elsewhere" / "x.jsonl"
    outside.parent.mkdir()
    outside.write_text("")
    with pytest.raises(ValueError, match="sessions directory"):
        memory.after_compaction(transcript=outside)
    with pytest.raises(ValueError, match="transcript"):
        memory.after_compaction(transcript=memory.config.resolved_sessions_dir() / "notes.md")


def test_without_a_session_every_changed_transcript_is_indexed(make_index, write) -> None:
    memory = build(make_index, write, mode="await")
    grown_transcript(memory, "chat-1")
    other = TranscriptWriter(memory.transcript_path("chat-2"))
    other.append_message("user", "an untouched chat about the heron migration")
    memory.sync()
    report = memory.after_compaction().result()
    assert report.files_indexed == 1 and report.files_unchanged == 1  # chat-2 skipped by its stat
    assert found(memory)


def test_targeted_sync_neither_scans_memory_nor_prunes(make_index, write) -> None:
    memory = build(make_index, write, mode="await")
    grown_transcript(memory, "chat-1")
    gone = TranscriptWriter(memory.transcript_path("gone"))
    gone.append_message("user", "soon deleted")
    memory.sync()
    gone.path.unlink()
    write({"memory/2026-02-01.md": "# Note\n\n- The capybara budget was approved.\n"})
    report = memory.after_compaction("chat-1").result()
    assert report.files_deleted == 0 and report.files_scanned == 1 and not report.full_rebuild
    assert "sessions/gone.jsonl" in memory.store.file_records("sessions")
    assert "memory/2026-02-01.md" not in memory.store.file_records("memory")
    memory.sync()  # the normal sync does both
    assert "sessions/gone.jsonl" not in memory.store.file_records("sessions")
    assert "memory/2026-02-01.md" in memory.store.file_records("memory")


def test_requests_queued_behind_a_running_sync_are_merged(make_index, write) -> None:
    import threading

    memory = build(make_index, write)
    grown_transcript(memory, "chat-1")
    w2 = TranscriptWriter(memory.transcript_path("chat-2"))
    w2.append_message("user", "first")
    memory.sync()
    w2.append_message("assistant", "the walrus tariff")
    release = threading.Event()
    started = threading.Event()

    def progress(done: int, total: int, label: str) -> None:
        started.set()
        assert release.wait(TIMEOUT)

    write({"memory/extra.md": "# Extra\n\n- something new\n"})
    blocker = threading.Thread(target=memory.sync, kwargs={"force": True, "progress": progress})
    blocker.start()  # a forced sync, held at its first file
    assert started.wait(TIMEOUT)
    f1 = memory.after_compaction("chat-1")
    f2 = memory.after_compaction("chat-2")
    assert f1 is f2 and not f1.done()  # one queued targeted sync for both transcripts
    release.set()
    blocker.join(TIMEOUT)
    report = f1.result(timeout=TIMEOUT)
    assert report.files_scanned == 2
    assert found(memory) and any("walrus" in t for t in session_hits(memory, "walrus tariff"))


def test_on_an_empty_index_a_full_rebuild_runs_instead(make_index, write) -> None:
    memory = build(make_index, write, mode="await")
    TranscriptWriter(memory.transcript_path("chat-1")).append_message("user", f"the {PHRASE}")
    report = memory.after_compaction("chat-1").result()
    assert report.full_rebuild
    assert "MEMORY.md" in memory.store.file_records("memory") and found(memory)


def test_a_failed_transcript_sync_does_not_mark_the_memory_index_failed(make_index, write) -> None:
    from openclaw_memory.errors import IndexingError, ProviderError

    memory = build(make_index, write, mode="await")
    path = grown_transcript(memory)
    memory.provider.fail_with = ProviderError("HTTP 503 overloaded")  # type: ignore[attr-defined]
    with pytest.raises(IndexingError):
        memory.after_compaction("chat-1")
    memory.provider.fail_with = None  # type: ignore[attr-defined]
    res = memory.search("fern")
    assert res.hits and res.sync_error is None  # the memory files are indexed and searchable
    assert not memory.dirty and path.exists()
