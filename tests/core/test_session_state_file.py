"""The session state file (``sessions.json`` field names, possibly shared with OpenClaw): an unreadable file is
set aside before a write replaces it, never overwritten with one entry; odd stored counts read as 0."""

from __future__ import annotations

import json
from pathlib import Path

from openclaw_memory.files.session_state import SessionStateStore


def test_an_unreadable_state_file_is_kept_aside_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"
    damaged = '{"agent:main:main": {"compactionCount": 4, "sessionId": "abc"}, "agent:main:other": {'  # cut short
    path.write_text(damaged)
    store = SessionStateStore(path)
    assert store.get("agent:main:main").compaction_count == 0  # read as empty ...
    assert path.read_text() == damaged  # ... and a read changes nothing
    store.record_compaction("agent:main:new")
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("sessions.json.unreadable-")]
    assert len(kept) == 1 and kept[0].read_text() == damaged
    assert json.loads(path.read_text())["agent:main:new"]["compactionCount"] == 1


def test_a_stored_count_that_is_not_a_number_reads_as_zero(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"
    path.write_text(json.dumps({"a": {"compactionCount": "lots"}, "b": {"compactionCount": [1]},
                                "c": {"compactionCount": "3"}}))
    store = SessionStateStore(path)
    assert [store.get(key).compaction_count for key in "abc"] == [0, 0, 3]
    assert store.record_compaction("a") == 1
