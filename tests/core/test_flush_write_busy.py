"""``apply_flush_writes`` never raises for a write that fails (the adapters report the result back to the agent):
a daily note whose lock another writer held past the lock timeout used to raise OpenClawMemoryError out of it."""

from __future__ import annotations

import fcntl
import os
from datetime import date
from pathlib import Path

import pytest

from openclaw_memory.agent.flush import apply_flush_writes
from openclaw_memory.files import memory_writes

DAY = date(2026, 11, 28)


def test_a_busy_note_is_a_failed_write_not_an_exception(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "memory").mkdir()
    note = tmp_path / "memory" / "2026-11-28.md"
    note.write_text("- earlier\n")
    monkeypatch.setattr(memory_writes, "LOCK_TIMEOUT_S", 0.3)
    holder = os.open(note, os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)  # another writer holds the note
        results = apply_flush_writes(tmp_path, [("memory/2026-11-28.md", "- decided: ship on Friday")], day=DAY)
    finally:
        os.close(holder)
    assert [(r.ok, "could not lock" in (r.error or "")) for r in results] == [(False, True)]
    assert note.read_text() == "- earlier\n"
    assert apply_flush_writes(tmp_path, [("memory/2026-11-28.md", "- decided: ship on Friday")], day=DAY)[0].ok
