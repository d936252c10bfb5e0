"""The Markdown exports of session transcripts for QMD (``memory.qmd.sessions``) are the only files their
export folder loses: a folder the user points ``exportDir`` at keeps every file it did not get from an export."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from openclaw_memory import MemoryIndex
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
