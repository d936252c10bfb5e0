"""``memory.qmd.paths`` may name the workspace itself (``{"path": "."}``: every Markdown file of it): its hits are
workspace paths (``README.md``, ``notes/a.md``), but ``memory_get`` refused them ("not a memory file"), so an agent
could find a note and never read it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import MemoryPathError


@pytest.mark.parametrize("folder", [".", "absolute"])
def test_hits_of_a_qmd_path_naming_the_workspace_can_be_read(
    qmd_index: Callable[..., MemoryIndex], memory_ws: Path, folder: str,
) -> None:
    (memory_ws / "notes").mkdir()
    (memory_ws / "notes" / "birds.md").write_text("# Birds\n\nThe heron count was three.\n", encoding="utf-8")
    memory = qmd_index(paths=[{"path": str(memory_ws) if folder == "absolute" else folder}])
    result = memory.search("heron")
    assert result.fallback is None
    assert [hit.path for hit in result.hits] == ["notes/birds.md"]
    assert "heron count" in memory.get("notes/birds.md").text


def test_a_qmd_path_naming_the_workspace_still_keeps_reads_inside_it(
    qmd_index: Callable[..., MemoryIndex], memory_ws: Path, tmp_path: Path,
) -> None:
    (tmp_path / "outside.md").write_text("# Outside\n", encoding="utf-8")
    memory = qmd_index(paths=[{"path": "."}])
    with pytest.raises(MemoryPathError):
        memory.get("../outside.md")
    (memory_ws / ".env").write_text("API_KEY=sk-not-for-memory\n", encoding="utf-8")
    with pytest.raises(MemoryPathError):
        memory.get(".env")
