"""Session transcripts in the index: JSONL line citations end to end, re-index thresholds,
truncation/rotation, malformed-line counts in status, the watcher on the sessions directory,
transcript paths; and the atomic once-per-cycle flush claim shared by processes."""

from __future__ import annotations

import json
import multiprocessing
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import openclaw_memory.index.sync_runner as runner_mod
from openclaw_memory import MemoryConfig, MemoryIndex, SyncReport
from openclaw_memory.agent.flush import FlushPolicy
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.files.session_state import SessionStateStore
from openclaw_memory.files.sessions import TranscriptWriter, transcript_delta, transcript_file_name
from tests.helpers.waiting import wait_for

SESSIONS = {"sources": ["memory", "sessions"], "chunking": {"tokens": 16, "overlap": 0}}


def indexed_text(memory: MemoryIndex, source: str = "sessions") -> str:
    return "\n".join(c.text for c in memory.store.iter_chunks(source))


def write_jsonl(path: Path, records: list[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))


def msg(role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": role, "content": text, "timestamp": 1_760_000_000_000}}


@pytest.fixture
def memory(make_index, write) -> MemoryIndex:
    write({"MEMORY.md": "# Memory\n"})
    return make_index(FakeEmbeddingProvider(), **SESSIONS)


# ---- line mapping end to end -----------------------------------------------------------------------


def test_hits_cite_jsonl_line_numbers(memory: MemoryIndex) -> None:
    path = memory.transcript_path("chat-1")
    write_jsonl(path, [
        {"type": "session", "id": "chat-1"},                                            # L1
        msg("user", "where is the walrus file?"),                                        # L2
        {"type": "message", "message": {"role": "assistant", "content": [
            {"type": "toolCall", "name": "read"}]}},                                      # L3
        "{not json",                                                                      # L4
        {"type": "message", "message": {"role": "toolResult", "content": "walrus.txt"}},  # L5
        "",                                                                               # L6
        msg("assistant", "The walrus file is in the archive folder."),                    # L7
        msg("user", "thanks, and the narwhal budget?"),                                   # L8
    ])
    memory.sync()
    lines = {(c.start_line, c.end_line) for c in memory.store.iter_chunks("sessions")}
    assert lines == {(2, 2), (7, 7), (8, 8)}

    res = memory.search("narwhal budget", sources=["sessions"])
    hit = next(h for h in res.hits if "narwhal" in h.text)
    assert (hit.path, hit.start_line, hit.end_line, hit.source) == ("sessions/chat-1.jsonl", 8, 8, "sessions")
    assert hit.citation == "sessions/chat-1.jsonl#L8"
    line = path.read_text().split("\n")[hit.start_line - 1]
    assert "narwhal" in json.loads(line)["message"]["content"]
    assert not any("toolResult" in h.text or "walrus.txt" == h.text for h in res.hits)


def test_writer_output_is_indexed_and_secrets_redacted(memory: MemoryIndex) -> None:
    w = TranscriptWriter(memory.transcript_path("s2"))
    w.append_messages([("user", "my key is sk-abcdefghijklmnopqrstuvwx"), ("assistant", "noted, stored")])
    memory.sync()
    text = indexed_text(memory)
    assert "sk-abcdefghijklmnopqrstuvwx" not in text and "[REDACTED]" in text


def test_transcript_path_is_sanitised(memory: MemoryIndex) -> None:
    base = memory.config.resolved_sessions_dir()
    uuid = "0b9e7c2a-1f2e-4c1d-9a8b-7f6e5d4c3b2a"
    assert memory.transcript_path(uuid) == base / f"{uuid}.jsonl"
    evil = memory.transcript_path("../../etc/passwd")
    assert evil.parent == base and evil.name.endswith(".jsonl") and ".." not in evil.name
    assert transcript_file_name("a/b") != transcript_file_name("a_b")  # distinct ids, distinct files
    assert transcript_file_name("x" * 500) != transcript_file_name("x" * 501)
    assert len(transcript_file_name("x" * 500)) < 150
    with pytest.raises(ValueError):
        memory.transcript_path("  ")


# ---- thresholds ---------------------------------------------------------------------------------------


def test_reindexed_only_after_message_threshold(make_index, write) -> None:
    write({"MEMORY.md": "# Memory\n"})
    memory = make_index(FakeEmbeddingProvider(), **SESSIONS,
                        sync={"sessions": {"delta_bytes": 10**9, "delta_messages": 3}})
    w = TranscriptWriter(memory.transcript_path("t"))
    w.append_message("user", "first sight apple")
    memory.sync()
    assert "apple" in indexed_text(memory)  # first sight indexes it
    w.append_messages([("assistant", "banana"), ("user", "cherry")])
    report = memory.sync()
    assert "banana" not in indexed_text(memory) and report.files_indexed == 0
    assert "sessions/t.jsonl" in memory.store.file_records("sessions")  # kept, not dropped
    w.append_message("assistant", "damson")  # the third new line
    memory.sync()
    assert all(word in indexed_text(memory) for word in ("banana", "cherry", "damson"))
    w.append_message("user", "elderberry")  # counters start again from the indexed size
    memory.sync()
    assert "elderberry" not in indexed_text(memory)
    memory.sync(force=True)  # a forced sync reads every transcript
    assert "elderberry" in indexed_text(memory)


def test_reindexed_only_after_byte_threshold(make_index, write) -> None:
    write({"MEMORY.md": "# Memory\n"})
    memory = make_index(FakeEmbeddingProvider(), **SESSIONS,
                        sync={"sessions": {"delta_bytes": 400, "delta_messages": 10**6}})
    w = TranscriptWriter(memory.transcript_path("b"))
    w.append_message("user", "hello")
    memory.sync()
    w.append_message("assistant", "short fig")
    memory.sync()
    assert "fig" not in indexed_text(memory)
    w.append_message("user", "grape " + "padding " * 60)
    memory.sync()
    assert "fig" in indexed_text(memory) and "grape" in indexed_text(memory)


def test_truncation_rotation_and_deletion(make_index, write) -> None:
    write({"MEMORY.md": "# Memory\n"})
    memory = make_index(FakeEmbeddingProvider(), **SESSIONS,
                        sync={"sessions": {"delta_bytes": 10**9, "delta_messages": 10**6}})
    path = memory.transcript_path("r")
    write_jsonl(path, [msg("user", "old kiwi talk"), msg("assistant", "old lime reply")])
    memory.sync()
    assert "kiwi" in indexed_text(memory)

    path.write_text(json.dumps(msg("user", "mango after reset")) + "\n")  # truncated in place
    memory.sync()
    assert "mango" in indexed_text(memory) and "kiwi" not in indexed_text(memory)

    archive = path.with_name("r.jsonl.reset.2026-01-01T00-00-00Z")
    path.rename(archive)  # rotation: archived, and a new, shorter transcript starts
    path.write_text(json.dumps(msg("user", "nectarine")) + "\n")
    memory.sync()
    recs = memory.store.file_records("sessions")
    assert set(recs) == {"sessions/r.jsonl", f"sessions/{archive.name}"}
    assert "nectarine" in indexed_text(memory) and "mango" in indexed_text(memory)

    archive.unlink()
    path.write_text("")  # truncated to nothing
    memory.sync()
    assert indexed_text(memory) == ""
    path.unlink()
    memory.sync()
    assert memory.store.file_records("sessions") == {}


def test_transcript_delta_function(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text("a\n" * 10)
    assert not transcript_delta(p, 20, delta_bytes=100, delta_messages=5).hit  # unchanged
    assert transcript_delta(p, 10, delta_bytes=100, delta_messages=5).hit  # 5 new lines
    assert not transcript_delta(p, 12, delta_bytes=100, delta_messages=5).hit  # 4 new lines
    assert transcript_delta(p, 12, delta_bytes=8, delta_messages=10**6).hit  # 8 new bytes
    assert transcript_delta(p, 999, delta_bytes=10**9, delta_messages=10**9).truncated
    assert transcript_delta(p, 999, delta_bytes=10**9, delta_messages=10**9).hit
    assert not transcript_delta(tmp_path / "gone.jsonl", 5).hit


# ---- status -------------------------------------------------------------------------------------------


def test_malformed_lines_are_counted_in_status(make_index, write) -> None:
    write({"MEMORY.md": "# Memory\n"})
    memory = make_index(FakeEmbeddingProvider(), **SESSIONS)
    path = memory.transcript_path("bad")
    write_jsonl(path, [msg("user", "fine"), "{oops", "[1, 2]", msg("assistant", "still fine"), "nope"])
    report = memory.sync()
    assert any("3 malformed" in w for w in report.warnings)
    st = memory.status()
    assert st.sessions is not None
    assert st.sessions["malformed_lines"] == {"sessions/bad.jsonl": 3} and st.sessions["malformed_total"] == 3
    assert any("malformed" in n and "bad.jsonl" in n for n in st.notes)
    assert st.to_dict()["sessions"]["delta_messages"] == 50

    fresh = make_index(FakeEmbeddingProvider(), **SESSIONS)  # another process: nothing read yet
    assert fresh.status().sessions["malformed_total"] == 0
    assert fresh.status(deep=True).sessions["malformed_lines"] == {"sessions/bad.jsonl": 3}

    write_jsonl(path, [msg("user", "repaired")])  # shrank: re-read at the next sync
    memory.sync()
    assert memory.status().sessions["malformed_total"] == 0


def test_status_without_sessions(make_index, write) -> None:
    write({"MEMORY.md": "x\n"})
    st = make_index(FakeEmbeddingProvider()).status()
    assert st.sessions is None


# ---- the watcher on the sessions directory -------------------------------------------------------------


def test_growing_transcript_triggers_a_sync_past_the_threshold(make_index, write, monkeypatch, tmp_path) -> None:
    reasons: list[str] = []
    real = runner_mod.run_sync

    def counting(store: Any, plan: Any, **kw: Any) -> SyncReport:
        reasons.append(kw.get("reason", "?"))
        return real(store, plan, **kw)

    monkeypatch.setattr(runner_mod, "run_sync", counting)
    write({"MEMORY.md": "# Memory\n"})
    (tmp_path / "transcripts").mkdir()
    memory = make_index(FakeEmbeddingProvider(), **SESSIONS, watch=True, sessions_dir=tmp_path / "transcripts",
                        sync={"watch_debounce_ms": 200, "on_search": False,
                              "sessions": {"delta_bytes": 10**9, "delta_messages": 3}})
    memory.sync()
    reasons.clear()
    w = TranscriptWriter(memory.transcript_path("live"))
    w.append_message("user", "opening quince")  # a new transcript: indexed on first sight
    wait_for(lambda: "quince" in indexed_text(memory), what="first sight")
    assert reasons == ["session-delta"]

    w.append_message("assistant", "raspberry")  # below the threshold: the watcher sees it, no sync
    wait_for(lambda: memory._freshness._watcher.bursts >= 2, what="the watcher noticing the growth")
    assert reasons == ["session-delta"] and "raspberry" not in indexed_text(memory)

    w.append_messages([("user", "strawberry"), ("assistant", "tangerine")])  # third new line
    wait_for(lambda: "tangerine" in indexed_text(memory), what="the threshold sync")
    assert reasons == ["session-delta", "session-delta"]
    assert "raspberry" in indexed_text(memory)


def test_sessions_dir_not_watched_when_sessions_disabled(make_index, write) -> None:
    write({"MEMORY.md": "# Memory\n"})
    memory = make_index(FakeEmbeddingProvider(), watch=True, sync={"watch_debounce_ms": 200})
    assert memory._freshness._watcher.sessions_dir is None


# ---- the flush claim ------------------------------------------------------------------------------------


def test_reexports_are_the_same_classes() -> None:
    import openclaw_memory.agent.flush as flush
    import openclaw_memory.files.session_state as state
    import openclaw_memory.files.sessions as sessions

    assert sessions.SessionStateStore is state.SessionStateStore is flush.SessionStateStore
    assert sessions.SessionFlushState is state.SessionFlushState is flush.SessionFlushState


def test_claim_flush_once_per_cycle(tmp_path: Path) -> None:
    store = SessionStateStore(tmp_path / "s.json")
    assert store.claim_flush("k", 0)
    assert not store.claim_flush("k", 0)
    assert not store.claim_flush("k")  # default: the stored current cycle, already flushed
    assert store.record_compaction("k") == 1
    assert not store.claim_flush("k", 0)  # stale: cycle 1 is the current one
    assert SessionStateStore(tmp_path / "s.json").claim_flush("k")  # survives a restart
    state = store.get("k")
    assert (state.compaction_count, state.flushed_at_count) == (1, 1) and state.flushed_at
    assert store.claim_flush("k", 5)  # a caller ahead of the store: its count is saved
    assert store.get("k").compaction_count == 5
    with pytest.raises(ValueError):
        store.claim_flush("k", -1)


def test_policy_claim_records_a_lost_claim(tmp_path: Path) -> None:
    cfg = MemoryConfig(state_dir=tmp_path, workspace=tmp_path / "ws")
    (tmp_path / "ws").mkdir()
    a, b = FlushPolicy(cfg), FlushPolicy(cfg)
    da, db = a.should_flush("k", 10**6), b.should_flush("k", 10**6)
    assert da.flush and db.flush  # both decided before either ran the turn
    assert a.claim_flush("k", compaction_count=da.compaction_count)
    assert not b.claim_flush("k", compaction_count=db.compaction_count)
    assert b.decisions[-1].reason == "already_claimed" and not b.decisions[-1].flush
    assert not a.should_flush("k", 10**6).flush  # the claim recorded the flush


def _claimer(args: tuple[str, str, int, Any, Any]) -> None:
    state_dir, workspace, n_keys, barrier, results = args
    cfg = MemoryConfig(state_dir=state_dir, workspace=workspace)
    policy = FlushPolicy(cfg)
    barrier.wait(10)
    won = []
    for i in range(n_keys):
        d = policy.should_flush(f"agent:main:s{i}", 10**6)
        if d.flush and policy.claim_flush(f"agent:main:s{i}", compaction_count=d.compaction_count):
            won.append(i)
    results.put(won)


@pytest.mark.skipif(sys.platform == "win32", reason="fork start method")
def test_two_processes_never_both_flush_a_cycle(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    n_keys, n_procs = 40, 3
    (tmp_path / "ws").mkdir()
    barrier, results = ctx.Barrier(n_procs), ctx.Queue()
    args = (str(tmp_path), str(tmp_path / "ws"), n_keys, barrier, results)
    procs = [ctx.Process(target=_claimer, args=(args,)) for _ in range(n_procs)]
    for p in procs:
        p.start()
    won = [results.get(timeout=30) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    flat = sorted(i for w in won for i in w)
    assert flat == list(range(n_keys))  # every cycle flushed exactly once


def test_threads_never_both_claim(tmp_path: Path) -> None:
    store = SessionStateStore(tmp_path / "s.json")
    wins: list[int] = []
    start = threading.Barrier(6)

    def run() -> None:
        start.wait(5)
        for cycle in range(15):
            if store.claim_flush("k", cycle):
                wins.append(cycle)

    threads = [threading.Thread(target=run) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(wins) == list(range(15))


def test_transcript_only_changes_do_not_mark_memory_dirty(make_index, write) -> None:
    from watchfiles import Change

    write({"MEMORY.md": "# Memory\n"})
    memory = make_index(FakeEmbeddingProvider(), **SESSIONS,
                        sync={"sessions": {"delta_bytes": 10**9, "delta_messages": 3}})
    path = memory.transcript_path("quiet")
    TranscriptWriter(path).append_message("user", "hello")
    memory.sync()
    assert not memory.dirty
    TranscriptWriter(path).append_message("assistant", "one more line")
    p = str(path)
    assert memory._freshness._change_reason({(Change.added, p), (Change.modified, p)}) is None
    assert not memory.dirty
    TranscriptWriter(path).append_messages([("user", "a"), ("assistant", "b")])
    assert memory._freshness._change_reason({(Change.modified, p)}) == "session-delta"
    root_file = str(memory.workspace / "MEMORY.md")
    assert memory._freshness._change_reason({(Change.modified, p), (Change.modified, root_file)}) == "watch"
    assert memory.dirty
