"""The session bootstrap context reads its notes as ``memory_get`` does: a ``memory/`` folder that is a symlink to
another folder, or a ``MEMORY.md`` hard-linked to a file elsewhere, used to be read and put in the agent's prompt
(only a symlinked note itself was skipped), although the library never reads outside the workspace."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from openclaw_memory.agent.bootstrap import build_session_context
from openclaw_memory.config import MemoryConfig

NOW = datetime(2026, 1, 16, 10, 0, tzinfo=timezone.utc)


def _context(ws: Path) -> str:
    return build_session_context(MemoryConfig(workspace=ws, timezone="UTC"), now=NOW)


def test_a_symlinked_memory_folder_is_not_read(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "2026-01-16.md").write_text("the deploy key is in the outside folder\n")
    os.symlink(outside, ws / "memory")
    (ws / "MEMORY.md").write_text("# Long term\n- prefers tea\n")
    out = _context(ws)
    assert "prefers tea" in out and "outside folder" not in out


def test_a_hard_linked_memory_md_is_not_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (tmp_path / "elsewhere.md").write_text("a file that belongs to someone else\n")
    os.link(tmp_path / "elsewhere.md", ws / "MEMORY.md")
    (ws / "memory" / "2026-01-16.md").write_text("today: shipped v1\n")
    out = _context(ws)
    assert "today: shipped v1" in out and "someone else" not in out
