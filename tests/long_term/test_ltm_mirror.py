"""The Markdown mirror: each memory also lands in the daily note; forgetting removes exactly its line."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory import MemoryConfig, MemoryIndex
from openclaw_memory.consolidation import consolidate, undo
from openclaw_memory.long_term import AutoCapture, CaptureCandidate
from openclaw_memory.long_term.mirror import mirror_marker
from openclaw_memory.long_term.tools import memory_store
from openclaw_memory.text.provenance import origin_of
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.helpers.long_term_memory import MakeMemory


def test_store_appends_to_the_daily_note_and_forget_removes_only_that_line(make_ltm: MakeMemory, workspace: Path) -> None:
    ltm = make_ltm(mirror_workspace=workspace, tz="UTC")
    first = ltm.store("I prefer dark mode\nin every editor", category="preference")
    assert first.mirror_path is not None and first.mirror_path.startswith("memory/")
    note = workspace / first.mirror_path
    # the user's own notes in the same file stay untouched
    with note.open("a", encoding="utf-8") as fh:
        fh.write("## My own heading\nhand-written line\n")
    second = ltm.store("The deploy server is called atlas", category="entity")
    text = note.read_text(encoding="utf-8")
    assert f"- [preference] I prefer dark mode in every editor {mirror_marker(first.record.id)} <!-- origin: agent -->\n" in text
    assert mirror_marker(second.record.id) in text

    result = ltm.forget(memory_id=first.record.id)
    assert result.mirror_paths == [first.mirror_path]
    after = note.read_text(encoding="utf-8")
    assert after == text.replace(f"- [preference] I prefer dark mode in every editor {mirror_marker(first.record.id)} <!-- origin: agent -->\n", "")
    assert "hand-written line" in after and mirror_marker(second.record.id) in after


def test_duplicates_are_not_mirrored_twice(make_ltm: MakeMemory, workspace: Path) -> None:
    ltm = make_ltm(mirror_workspace=workspace)
    ltm.store("I prefer tea")
    ltm.store("I prefer tea")
    notes = list((workspace / "memory").glob("*.md"))
    assert len(notes) == 1 and notes[0].read_text(encoding="utf-8").count("ltm:") == 1


def test_forget_finds_the_line_in_another_daily_note(make_ltm: MakeMemory, workspace: Path) -> None:
    ltm = make_ltm(mirror_workspace=workspace, tz="UTC")
    stored = ltm.store("Lunch with Dana on Friday")
    note = workspace / str(stored.mirror_path)
    moved = workspace / "memory" / "2020-01-01.md"
    note.rename(moved)  # e.g. the user reorganised notes, or the time zone changed
    assert ltm.forget(memory_id=stored.record.id).mirror_paths == ["memory/2020-01-01.md"]
    assert not moved.exists()  # it held only the memory's line: the mirror leaves no empty note


def test_a_failing_mirror_still_stores_the_memory(make_ltm: MakeMemory, tmp_path: Path) -> None:
    blocked = tmp_path / "ws"
    blocked.mkdir()
    (blocked / "memory").write_text("a file where the memory folder should be")
    ltm = make_ltm(mirror_workspace=blocked)
    result = ltm.store("I prefer tea with lemon")
    assert result.action == "created" and result.mirror_error
    assert [r.text for r in ltm.list()] == ["I prefer tea with lemon"]


def test_mirrored_memories_are_found_by_memory_search(make_ltm: MakeMemory, workspace: Path) -> None:
    ltm = make_ltm(mirror_workspace=workspace)
    ltm.store("The staging cluster is named kestrel", category="entity")
    with MemoryIndex(workspace=workspace, provider=FakeEmbeddingProvider(), watch=False) as index:
        index.sync()
        hits = index.search("staging cluster kestrel").hits
    assert hits and "kestrel" in hits[0].snippet


def test_mirrored_lines_say_who_wrote_them(make_ltm: MakeMemory, workspace: Path) -> None:
    ltm = make_ltm(mirror_workspace=workspace, tz="UTC")
    _, stored = memory_store(ltm, "The deploy server is called atlas", category="entity")  # the agent's tool
    captured = AutoCapture(ltm).capture([CaptureCandidate("user", "I prefer answers in Czech please", "u1")])
    note = (workspace / captured[0].mirror_path).read_text(encoding="utf-8")  # type: ignore[operator]
    lines = {line.split(" <!--")[0]: line for line in note.splitlines()}
    assert origin_of(lines["- [entity] The deploy server is called atlas"]) == "agent"
    assert origin_of(lines["- [preference] I prefer answers in Czech please"]) == "owner"  # the user's own words
    assert stored["id"] in note


def test_forget_also_removes_the_copy_promoted_into_memory_md(make_ltm: MakeMemory, workspace: Path,
                                                              tmp_path: Path) -> None:
    state = tmp_path / "state"
    ltm = make_ltm(mirror_workspace=workspace, tz="UTC", state_dir=state)
    (workspace / "MEMORY.md").write_text("# Memory\n\n- The team lead is Dana.\n")
    kept = ltm.store("Backups of the billing database run nightly", category="fact")
    gone = ltm.store("The deploy server is called atlas", category="entity")
    config = MemoryConfig(workspace=workspace, state_dir=state, provider="none", timezone="UTC",
                          dreaming={"min_recall_count": 0, "min_unique_queries": 0})
    consolidate(config, lambda prompt: "not an answer")  # append-only: both lines promoted, with sources
    promoted = (workspace / "MEMORY.md").read_text()
    assert "atlas — Source: memory/" in promoted and "nightly — Source: memory/" in promoted

    ltm.forget(memory_id=gone.record.id)
    text = (workspace / "MEMORY.md").read_text()
    assert "atlas" not in text and "Backups of the billing database" in text and "Dana" in text
    assert mirror_marker(kept.record.id) in (workspace / kept.mirror_path).read_text()  # type: ignore[operator]
    undo(config)  # the removal is a consolidation change like any other: undoable
    assert "atlas" in (workspace / "MEMORY.md").read_text()


def test_forget_finds_the_line_in_a_note_archived_below_memory(make_ltm: MakeMemory, workspace: Path,
                                                              fake_provider: FakeEmbeddingProvider) -> None:
    """memory/**/*.md are memory files (memory_search finds their lines): a user who files old daily notes
    into memory/archive/ still forgets the memory, and memory_search no longer finds it."""
    ltm = make_ltm(mirror_workspace=workspace, tz="UTC")
    stored = ltm.store("The storage locker code is 4471")
    kept = ltm.store("Lunch with Dana on Friday")
    archive = workspace / "memory" / "archive" / "2026"
    archive.mkdir(parents=True)
    moved = archive / "old-days.md"
    (workspace / str(stored.mirror_path)).rename(moved)
    assert ltm.forget(memory_id=stored.record.id).mirror_paths == ["memory/archive/2026/old-days.md"]
    left = moved.read_text(encoding="utf-8")
    assert mirror_marker(stored.record.id) not in left and mirror_marker(kept.record.id) in left
    with MemoryIndex(workspace=workspace, provider=None, watch=False,
                     store={"path": str(workspace.parent / "index.sqlite")}) as index:
        index.sync()
        assert not index.search("storage locker code").hits
    assert ltm.forget(memory_id=kept.record.id).mirror_paths == ["memory/archive/2026/old-days.md"]
    assert not moved.exists()  # it held only the memories' lines
