"""Session transcripts: listing, extraction with line mapping, redaction, delta tracking, writer."""

from __future__ import annotations

import json
import multiprocessing
import sys
from pathlib import Path

import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.files.sessions import (
    SessionStateStore,
    TranscriptWriter,
    extract_session,
    list_session_files,
    redact_secrets,
    session_rel_path,
    transcript_delta,
)


def _rec(role: str, content, ts=None, type_: str = "message") -> str:
    msg = {"role": role, "content": content}
    if ts is not None:
        msg["timestamp"] = ts
    return json.dumps({"type": type_, "message": msg})


def test_list_session_files_includes_archives_and_excludes_others(tmp_path: Path) -> None:
    for name in [
        "a.jsonl",
        "b.jsonl.reset.2026-01-16T14-30-00.123Z",
        "c.jsonl.deleted.2026-01-16T14-30-00Z",
        "sessions.json",
        "d.jsonl.bak",
        "e.jsonl.reset.notadate",
        ".a.jsonl.lock",
        "notes.md",
    ]:
        (tmp_path / name).write_text("")
    (tmp_path / "dir.jsonl").mkdir()
    names = [p.name for p in list_session_files(tmp_path)]
    assert names == ["a.jsonl", "b.jsonl.reset.2026-01-16T14-30-00.123Z", "c.jsonl.deleted.2026-01-16T14-30-00Z"]
    assert list_session_files(tmp_path / "missing") == []
    assert session_rel_path(tmp_path / "a.jsonl") == "sessions/a.jsonl"


def test_extract_maps_lines_and_skips_non_text(tmp_path: Path) -> None:
    lines = [
        json.dumps({"type": "session", "id": "abc"}),  # 1: header record
        _rec("user", "Hello   there\n\n  friend", ts=1_700_000_000),  # 2
        "",  # 3: blank
        "{not json",  # 4: malformed
        _rec(
            "assistant",
            [
                {"type": "text", "text": "Part one."},
                {"type": "toolCall", "name": "x"},
                {"type": "text", "text": "Part\ttwo."},
            ],
            ts=1_700_000_001_000,
        ),  # 5
        _rec("toolResult", "tool output"),  # 6
        _rec("system", "system text"),  # 7
        _rec("user", "   "),  # 8: empty after collapsing
        json.dumps([1, 2, 3]),  # 9: JSON but not an object -> malformed
        _rec("user", "custom", type_="custom"),  # 10
        json.dumps(
            {"type": "message", "timestamp": "2026-01-16T14:30:00Z", "message": {"role": "user", "content": "last one"}}
        ),  # 11
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    doc = extract_session(path)
    assert doc.content.split("\n") == [
        "User: Hello there friend",
        "Assistant: Part one. Part two.",
        "User: last one",
    ]
    assert doc.line_map == [2, 5, 11]
    assert doc.malformed_lines == 2
    assert doc.timestamps[0] == 1_700_000_000.0
    assert doc.timestamps[1] == pytest.approx(1_700_000_001.0)
    assert doc.timestamps[2] == pytest.approx(1768573800.0)
    assert doc.path == "sessions/s.jsonl"
    assert len(doc.hash) == 64


def test_hash_changes_with_content_and_line_positions(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    a.write_text(_rec("user", "hi") + "\n")
    b.write_text("\n" + _rec("user", "hi") + "\n")  # same text, different JSONL line
    c.write_text(_rec("user", "hi!") + "\n")
    ha, hb, hc = (extract_session(p).hash for p in (a, b, c))
    assert len({ha, hb, hc}) == 3
    assert extract_session(a).hash == ha


def test_empty_and_garbage_files_do_not_crash(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_bytes(b"")
    assert extract_session(p).content == ""
    p.write_bytes(b'\xff\xfe garbage\n{"type":"message"}\n')
    doc = extract_session(p)
    assert doc.content == "" and doc.malformed_lines == 1


@pytest.mark.parametrize(
    "secret",
    [
        "sk-abcdefghijklmnopqrstuvwxyz123456",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "xoxb-1234567890-abcdefghijkl",
        "AKIAIOSFODNN7EXAMPLE",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ],
)
def test_redacts_api_keys(secret: str) -> None:
    out = redact_secrets(f"my key is {secret} ok")
    assert secret not in out
    assert out == "my key is [REDACTED] ok"


def test_redacts_bearer_and_generic_assignments() -> None:
    out = redact_secrets(
        "Authorization: Bearer abc.DEF-123_xyz~456 and api_key=0123456789abcdef0123 token: 'ZmFrZXNlY3JldDEyMzQ1Njc4OQ=='"
    )
    assert "abc.DEF-123_xyz~456" not in out
    assert "Bearer [REDACTED]" in out
    assert "api_key=[REDACTED]" in out
    assert "ZmFrZXNlY3JldDEyMzQ1Njc4OQ" not in out
    pem = "-----BEGIN RSA PRIVATE KEY----- MIIEow IBAAKCAQEA -----END RSA PRIVATE KEY-----"
    assert redact_secrets(pem) == "[REDACTED]"


def test_redaction_leaves_ordinary_text_alone() -> None:
    text = "The token budget is 400; ask-me later; the secret is out; skip-list and key=value are fine"
    assert redact_secrets(text) == text


def test_extraction_redacts(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(_rec("user", "use sk-abcdefghijklmnopqrstuvwxyz123456 please") + "\n")
    assert extract_session(p).content == "User: use [REDACTED] please"
    assert "sk-abc" in extract_session(p, redact=False).content


def _grow(path: Path, n_lines: int, width: int = 10) -> None:
    with path.open("a") as fh:
        for _ in range(n_lines):
            fh.write("x" * (width - 1) + "\n")


def test_delta_message_threshold(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    _grow(p, 4)
    r = transcript_delta(p, 0, delta_bytes=10**9, delta_messages=5)
    assert not r.hit and r.pending_messages == 4 and r.delta_bytes == 40  # a new file counts whole
    _grow(p, 1)
    r = transcript_delta(p, 0, delta_bytes=10**9, delta_messages=5)
    assert r.hit and r.pending_messages == 0
    assert not transcript_delta(p, 50, delta_bytes=10**9, delta_messages=5).hit  # no growth


def test_delta_bytes_threshold_and_remainder(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    _grow(p, 9)
    assert not transcript_delta(p, 0, delta_bytes=100, delta_messages=10**6).hit  # 90 bytes
    _grow(p, 3)
    r = transcript_delta(p, 0, delta_bytes=100, delta_messages=10**6)
    assert r.hit and r.pending_bytes == 20  # threshold subtracted, remainder kept


def test_delta_zero_threshold_means_any_growth(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    _grow(p, 1)
    assert transcript_delta(p, 0, delta_bytes=0, delta_messages=0).hit
    assert not transcript_delta(p, 10, delta_bytes=0, delta_messages=0).hit


def test_delta_truncation_counts_whole_new_size(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    _grow(p, 4)
    indexed = p.stat().st_size
    p.write_text("")  # rotation
    _grow(p, 3)  # smaller than before
    r = transcript_delta(p, indexed, delta_bytes=1000, delta_messages=5)
    assert r.truncated and r.delta_bytes == 30 and r.pending_messages == 3 and r.hit  # the indexed text is stale


def test_delta_counts_from_the_indexed_size(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    _grow(p, 4)
    indexed = p.stat().st_size
    _grow(p, 4)
    r = transcript_delta(p, indexed, delta_bytes=10**9, delta_messages=5)
    assert not r.hit and r.pending_messages == 4


def test_delta_defaults_match_config() -> None:
    s = MemoryConfig().sync.sessions
    assert (s.delta_bytes, s.delta_messages) == (100_000, 50)
    custom = MemoryConfig(sync={"sessions": {"delta_bytes": 7, "delta_messages": 3}}).sync.sessions
    assert (custom.delta_bytes, custom.delta_messages) == (7, 3)


def test_delta_default_thresholds(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    _grow(p, 49)
    assert not transcript_delta(p, 0).hit  # 49 messages, 490 bytes
    _grow(p, 1)
    assert transcript_delta(p, 0).hit  # the 50th message


def test_writer_round_trips_through_extractor(tmp_path: Path) -> None:
    p = tmp_path / "sessions" / "w.jsonl"
    w = TranscriptWriter(p)
    w.append_message("user", "What is\nthe plan?", timestamp=1_700_000_000.5)
    n = w.append_messages(
        [
            {"role": "assistant", "content": [{"type": "text", "text": "Ship it."}]},
            ("tool", "ignored by the extractor"),
            ("user", "Thanks"),
        ]
    )
    assert n == 3
    raw = p.read_text().splitlines()
    assert len(raw) == 4
    first = json.loads(raw[0])
    assert first == {
        "type": "message",
        "message": {"role": "user", "content": "What is\nthe plan?", "timestamp": 1_700_000_000_500},
    }
    doc = extract_session(p)
    assert doc.content.split("\n") == ["User: What is the plan?", "Assistant: Ship it.", "User: Thanks"]
    assert doc.line_map == [1, 2, 4]
    assert doc.timestamps[0] == pytest.approx(1_700_000_000.5)


def test_writer_rejects_bad_messages(tmp_path: Path) -> None:
    w = TranscriptWriter(tmp_path / "w.jsonl")
    with pytest.raises(ValueError, match="role"):
        w.append_message("", "x")
    with pytest.raises(TypeError, match="content"):
        w.append_message("user", 42)  # type: ignore[arg-type]
    assert not (tmp_path / "w.jsonl").exists()


def test_writer_repairs_partial_last_line(tmp_path: Path) -> None:
    p = tmp_path / "w.jsonl"
    p.write_text('{"type":"message","message":{"role":"user","content":"cut')  # crashed writer
    TranscriptWriter(p).append_message("user", "after crash")
    doc = extract_session(p)
    assert doc.content == "User: after crash" and doc.line_map == [2] and doc.malformed_lines == 1


def _transcript_writer(args: tuple[str, str, int]) -> None:
    path, tag, n = args
    w = TranscriptWriter(path)
    for i in range(n):
        w.append_message("user", f"{tag}-{i}")


@pytest.mark.skipif(sys.platform == "win32", reason="fork start method")
def test_writer_concurrent_processes(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_transcript_writer, args=((str(p), t, 200),)) for t in "AB"]
    for pr in procs:
        pr.start()
    for pr in procs:
        pr.join(60)
        assert pr.exitcode == 0
    doc = extract_session(p)
    assert doc.malformed_lines == 0
    assert sorted(doc.content.split("\n")) == sorted(f"User: {t}-{i}" for t in "AB" for i in range(200))


def test_session_state_store_atomic_and_preserves_unknown_fields(tmp_path: Path) -> None:
    path = tmp_path / "state" / "main.sessions.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"agent:main:main": {"compactionCount": 2, "sessionFile": "x.jsonl"}}))
    store = SessionStateStore(path)
    assert store.get("agent:main:main").compaction_count == 2
    assert store.record_compaction("agent:main:main") == 3
    s = store.mark_flushed("agent:main:main")
    assert s.flushed_at_count == 3 and s.flushed_at is not None
    data = json.loads(path.read_text())
    assert data["agent:main:main"]["sessionFile"] == "x.jsonl"
    assert data["agent:main:main"]["memoryFlushCompactionCount"] == 3
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []
    assert SessionStateStore(path).get("unknown").compaction_count == 0


def test_session_state_store_recovers_from_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text("{broken")
    store = SessionStateStore(path)
    assert store.get("k").compaction_count == 0
    assert store.record_compaction("k") == 1
    assert json.loads(path.read_text())["k"]["compactionCount"] == 1


def test_session_state_store_default_location(tmp_path: Path) -> None:
    cfg = MemoryConfig(state_dir=tmp_path, agent_id="ops")
    assert SessionStateStore.for_config(cfg).path == tmp_path / "memory" / "ops.sessions.json"


def test_writer_accepts_datetime_and_millisecond_timestamps(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    p = tmp_path / "t.jsonl"
    w = TranscriptWriter(p)
    w.append_message("user", "a", timestamp=datetime(2026, 1, 16, tzinfo=timezone.utc))
    w.append_message("user", "b", timestamp=1_768_521_600_000)  # already milliseconds
    stamps = extract_session(p).timestamps
    assert stamps == [pytest.approx(1_768_521_600.0), pytest.approx(1_768_521_600.0)]
