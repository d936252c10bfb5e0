"""A note whose file name holds a "#" (``memory/c#-notes.md``, ``memory/issue-#42.md``): the citation a search gives
its hits used to be unreadable by ``memory_get`` and ``forget`` (the path was cut at the first "#")."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.agent.tools import memory_get
from openclaw_memory.text.citations import parse_citation


@pytest.mark.parametrize(("citation", "parsed"), [
    ("memory/c#-notes.md#L2-L3", ("memory/c#-notes.md", 2, 3)),
    ("memory/issue-#42.md#L7", ("memory/issue-#42.md", 7, 7)),
    ("memory/a b.md#L1-L2", ("memory/a b.md", 1, 2)),
    ("memory/2026-01-16.md#L3-L7", ("memory/2026-01-16.md", 3, 7)),
])
def test_a_citation_names_its_whole_path(citation: str, parsed: tuple[str, int, int]) -> None:
    assert parse_citation(citation) == parsed


def test_memory_get_reads_the_lines_a_search_cites(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "c#-notes.md").write_text("# C# notes\n\nAsync streams need C# 8.\n")
    with MemoryIndex(workspace=ws, state_dir=str(tmp_path / "state"), provider=None, watch=False) as memory:
        memory.sync()
        hit = memory.search("async streams", min_score=0).hits[0]
        got = memory_get(memory, hit.citation)
        assert got.get("error") is None, got
        assert got["path"] == "memory/c#-notes.md" and "Async streams need C# 8." in got["text"]
