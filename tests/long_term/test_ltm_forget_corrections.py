"""Forgetting a correction on a real LanceDB table: the memory it replaced is active again (and the caller is told),
and recall never hides a memory whose correction is gone."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import lancedb

from openclaw_memory.long_term import LongTermMemory
from openclaw_memory.long_term.mirror import mirror_marker
from openclaw_memory.long_term.tools import memory_forget
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.helpers.long_term_memory import MakeMemory

ROOM = "The quarterly planning meeting on Thursday is in room {} on the fourth floor"


def _corrected(ltm: LongTermMemory, *rooms: str) -> list[str]:
    """Store the room fact once per room (each a correction of the one before); the ids, oldest first."""
    ids = []
    for room in rooms:
        result = ltm.store(ROOM.format(room), category="fact")
        assert result.action == "created"
        ids.append(result.record.id)
    return ids


def test_forgetting_a_correction_makes_the_fact_it_replaced_active_again(ltm: LongTermMemory) -> None:
    old, new = _corrected(ltm, "4.12", "3.07")
    assert ltm.get(old).superseded_by == new
    result = ltm.forget(memory_id=new)
    assert result.action == "deleted" and [r.id for r in result.restored] == [old]
    assert result.to_dict()["restored"] == [{"id": old, "text": ROOM.format("4.12")}]
    assert ltm.get(old).superseded_by is None
    assert [h.record.id for h in ltm.recall("planning meeting room", min_score=0.0)] == [old]


def test_the_forget_tool_says_which_memory_is_active_again(ltm: LongTermMemory) -> None:
    old, new = _corrected(ltm, "4.12", "3.07")
    text, payload = memory_forget(ltm, memory_id=new)
    assert payload["restored"] == [{"id": old, "text": ROOM.format("4.12")}]
    assert f"active again (id {old})" in text and "4.12" in text


def test_forgetting_the_middle_of_a_chain_of_corrections_keeps_the_oldest_superseded(ltm: LongTermMemory) -> None:
    first, middle, last = _corrected(ltm, "4.12", "3.07", "5.19")
    assert ltm.get(middle).superseded_by == last and ltm.get(first).superseded_by == middle
    result = ltm.forget(memory_id=middle)
    assert result.restored == []  # the first fact is still corrected, by the last one
    assert ltm.get(first).superseded_by == last
    assert [h.record.id for h in ltm.recall("planning meeting room", min_score=0.0)] == [last]


def test_recall_shows_a_memory_whose_correction_was_deleted_by_another_tool(ltm: LongTermMemory, db_path: Path) -> None:
    """A row deleted straight from the table (an older version's forget, a LanceDB tool) leaves the memory it
    superseded pointing at nothing: that memory is active."""
    old, new = _corrected(ltm, "4.12", "3.07")
    lancedb.connect(db_path).open_table("memories").delete(f"id = '{new}'")
    hits = ltm.recall("planning meeting room", min_score=0.0)
    assert [h.record.id for h in hits] == [old] and hits[0].record.superseded_by is None
    assert ltm.get(old).superseded_by is None and [r.superseded_by for r in ltm.list()] == [None]
    again = ltm.store(ROOM.format("4.12"), category="fact")
    assert (again.action, again.record.id) == ("duplicate", old)  # the active fact is compared, not stored twice


def test_forgetting_a_correction_puts_the_replaced_line_back_in_the_daily_note(make_ltm: MakeMemory,
                                                                                workspace: Path) -> None:
    ltm = make_ltm(mirror_workspace=workspace, tz="UTC")
    old, new = _corrected(ltm, "4.12", "3.07")
    note = workspace / ltm.mirror.note_for(ltm.get(old).created_at)
    assert mirror_marker(old) not in note.read_text(encoding="utf-8")
    ltm.forget(memory_id=new)
    text = note.read_text(encoding="utf-8")
    assert mirror_marker(new) not in text and mirror_marker(old) in text and "room 4.12" in text


KILLED_FORGET = textwrap.dedent("""
    import os, signal, sys
    from openclaw_memory.long_term import LongTermMemory
    from openclaw_memory.long_term.mirror import MarkdownMirror
    from openclaw_memory.providers.fake import FakeEmbeddingProvider
    db, workspace, state, memory_id = sys.argv[1:5]
    memory = LongTermMemory(db, FakeEmbeddingProvider(), mirror_workspace=workspace, tz="UTC", state_dir=state)
    MarkdownMirror.append = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
    memory.forget(memory_id=memory_id)
""")


def test_a_forget_of_a_correction_killed_while_restoring_is_finished_by_the_next_open(tmp_path: Path,
                                                                                      workspace: Path) -> None:
    """``kill -9`` as the replaced memory's line is put back: the next open deletes the correction, makes the
    replaced memory active and puts its line back."""
    db, state = tmp_path / "lancedb", tmp_path / "state"
    with LongTermMemory(db, FakeEmbeddingProvider(), mirror_workspace=workspace, tz="UTC", state_dir=state) as ltm:
        old, new = _corrected(ltm, "4.12", "3.07")
    done = subprocess.run([sys.executable, "-c", KILLED_FORGET, str(db), str(workspace), str(state), new],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    with LongTermMemory(db, FakeEmbeddingProvider(), mirror_workspace=workspace, tz="UTC", state_dir=state) as ltm:
        assert [(r.id, r.superseded_by) for r in ltm.list()] == [(old, None)]
        notes = "".join(p.read_text(encoding="utf-8") for p in (workspace / "memory").glob("*.md"))
        assert mirror_marker(old) in notes and mirror_marker(new) not in notes
