"""The Markdown exports of session transcripts for QMD (``memory.qmd.sessions``) are the only files their
export folder loses: a folder the user points ``exportDir`` at keeps every file it did not get from an export."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.backends.qmd_exports import SessionExports, export_header
from openclaw_memory.files.sessions import TranscriptWriter


def test_stale_exports_go_and_the_users_own_notes_stay(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str]
) -> None:
    export = tmp_path / "notes" / "sessions"
    export.mkdir(parents=True)
    own = export / "reading-list.md"
    own.write_text("# Reading list\n\n- Designing Data-Intensive Applications\n", encoding="utf-8")
    stale = export / "s-gone.md"
    stale.write_text("# Session s-gone\n\nUser: an old conversation whose transcript was deleted\n", encoding="utf-8")
    mem = MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False, backend="qmd",
                      qmd={"command": fake_qmd("hits"), "sessions": {"enabled": True, "exportDir": str(export)}})
    try:
        TranscriptWriter(mem.transcript_path("s-42")).append_messages(
            [("user", "Remember the launch codeword is marmalade."), ("assistant", "Noted: marmalade.")])
        mem.sync()
    finally:
        mem.close()
    assert sorted(p.name for p in export.iterdir()) == ["reading-list.md", "s-42.md"]
    assert own.read_text(encoding="utf-8").startswith("# Reading list")  # never an export: kept as written


def _export_one(memory_ws: Path, tmp_path: Path, command: str, export: Path, session: str) -> None:
    """Sync an index whose one transcript is ``session``, exporting transcripts into ``export``."""
    mem = MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False, backend="qmd",
                      qmd={"command": command, "sessions": {"enabled": True, "exportDir": str(export)}})
    try:
        TranscriptWriter(mem.transcript_path(session)).append_messages(
            [("user", "Remember the launch codeword is marmalade."), ("assistant", "Noted: marmalade.")])
        mem.sync()
    finally:
        mem.close()


def test_a_users_file_named_like_an_export_is_never_overwritten(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str]
) -> None:
    export = tmp_path / "notes"
    export.mkdir()
    own = export / "standup.md"  # the user's note, and a transcript that happens to be named "standup"
    own.write_text("# Standup\n\n- ship the exporter on Friday\n", encoding="utf-8")
    _export_one(memory_ws, tmp_path, fake_qmd("hits"), export, "standup")
    assert own.read_text(encoding="utf-8") == "# Standup\n\n- ship the exporter on Friday\n"


def test_an_export_never_writes_through_a_link_in_the_export_folder(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str]
) -> None:
    export = tmp_path / "notes"
    export.mkdir()
    elsewhere = tmp_path / "diary.md"
    elsewhere.write_text("# Session s-7\n\nDear diary: not a transcript.\n", encoding="utf-8")
    (export / "s-7.md").symlink_to(elsewhere)
    _export_one(memory_ws, tmp_path, fake_qmd("hits"), export, "s-7")
    assert elsewhere.read_text(encoding="utf-8") == "# Session s-7\n\nDear diary: not a transcript.\n"


def test_a_users_note_that_looks_like_an_export_is_never_removed(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str]
) -> None:
    export = tmp_path / "notes"
    export.mkdir()
    own = export / "12.md"  # a campaign's notes: it starts as an export does, but no export wrote it
    own.write_text("# Session 12\n\nThe party reached the lighthouse.\n", encoding="utf-8")
    _export_one(memory_ws, tmp_path, fake_qmd("hits"), export, "s-1")
    assert own.read_text(encoding="utf-8") == "# Session 12\n\nThe party reached the lighthouse.\n"


def test_an_export_edited_by_the_user_is_kept(memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str]) -> None:
    export = tmp_path / "notes"
    export.mkdir()
    _export_one(memory_ws, tmp_path, fake_qmd("hits"), export, "s-5")
    exported = export / "s-5.md"
    exported.write_text(exported.read_text(encoding="utf-8") + "\nMy own follow-up: order more marmalade.\n",
                        encoding="utf-8")
    edited = exported.read_text(encoding="utf-8")
    _export_one(memory_ws, tmp_path, fake_qmd("hits"), export, "s-5")  # the transcript grows: a new export is due
    assert exported.read_text(encoding="utf-8") == edited


def _export(name: str, turns: int) -> str:
    return export_header(name) + "\n" + "User: what is the codeword?\nAssistant: marmalade.\n" * turns


class _StoppedAfterTheFirst(dict[str, str]):
    """The exports of a sync stopped (Ctrl-C) once the first of them was written."""

    def items(self):  # type: ignore[no-untyped-def, override]
        yield next(iter(super().items()))
        raise KeyboardInterrupt


@pytest.mark.parametrize("private", [True, False], ids=["qmd-folder", "export-dir"])
def test_an_export_written_before_an_interruption_is_updated_afterwards(tmp_path: Path, private: bool) -> None:
    # its manifest record was left at the old text, so the file no longer matched it: frozen, "not an export"
    root = tmp_path / "exports"
    exports = SessionExports(root, tmp_path / "state" / "session-exports.json", private=private)
    exports.write({"s-1.md": _export("s-1", 1)})
    with pytest.raises(KeyboardInterrupt):
        exports.write(_StoppedAfterTheFirst({"s-1.md": _export("s-1", 2), "s-2.md": _export("s-2", 1)}))
    exports.write({"s-1.md": _export("s-1", 3), "s-2.md": _export("s-2", 1)})
    assert (root / "s-1.md").read_text(encoding="utf-8") == _export("s-1", 3)
