"""QMD hits widened to the builtin index's chunks (real QMD 2.8.3): a QMD snippet is about two lines, a
``memory_search`` result is the chunk around it, as the builtin backend returns it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.backends.qmd_results import ChunkSpans
from openclaw_memory.text.chunker import chunk_markdown
from openclaw_memory.agent.tools import memory_get

pytestmark = pytest.mark.slow  # each index starts QMD (node) a few times


def _long_note() -> str:
    lines = ["# 2026-02-01", ""]
    for i in range(1, 121):
        lines.append(f"Entry {i}: routine standup notes about the weekly sprint, nothing unusual happened today.")
        if i == 64:
            lines.append("The capybara mascot was approved by the board for the spring campaign.")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("daemon", [True, False], ids=["mcp-daemon", "process-per-query"])
def test_a_hit_is_the_builtin_chunk_around_the_snippet(
    qmd_index: Callable[..., MemoryIndex], memory_ws: Path, daemon: bool
) -> None:
    note = memory_ws / "memory" / "2026-02-01.md"
    note.write_text(_long_note(), encoding="utf-8")
    target = note.read_text(encoding="utf-8").splitlines().index(
        "The capybara mascot was approved by the board for the spring campaign.") + 1
    mem = qmd_index(daemon=daemon, citations="off")

    hits = mem.search("capybara mascot").hits
    assert [h.path for h in hits] == ["memory/2026-02-01.md"]
    hit = hits[0]
    chunks = chunk_markdown(note.read_text(encoding="utf-8"))  # the builtin's default size: 400 tokens, 80 overlap
    assert len(chunks) > 3
    holding = [(c.start_line, c.end_line) for c in chunks if c.start_line <= target <= c.end_line]
    assert (hit.start_line, hit.end_line) in holding  # a whole chunk of the builtin index, not QMD's 2-line hunk
    assert hit.end_line - hit.start_line + 1 > 10
    assert "capybara mascot" in hit.snippet and hit.text == next(
        c.text for c in chunks if (c.start_line, c.end_line) == (hit.start_line, hit.end_line))
    got = memory_get(mem, hit.path, hit.start_line, hit.end_line - hit.start_line + 1)
    assert got["text"] == hit.text  # the range reads back as the hit's text


@pytest.mark.parametrize("daemon", [True, False], ids=["mcp-daemon", "process-per-query"])
def test_a_multi_line_query_is_searched_as_one_line(
    qmd_index: Callable[..., MemoryIndex], memory_ws: Path, daemon: bool
) -> None:
    # an agent's query can span lines (a pasted message); QMD's query tool rejects newlines and its CLI reads
    # each line as a structured search, so the backend must not fall back or fail on one
    (memory_ws / "memory" / "2026-02-01.md").write_text(_long_note(), encoding="utf-8")
    mem = qmd_index(daemon=daemon, citations="off")

    result = mem.search("capybara\nmascot\r\n  campaign")
    assert [h.path for h in result.hits] == ["memory/2026-02-01.md"]
    assert result.provider == "qmd"  # QMD answered: no fallback to the builtin search


def test_chunk_spans_follow_edits_and_keep_qmd_lines_when_the_file_is_gone(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_text(_long_note(), encoding="utf-8")
    spans = ChunkSpans(tokens=400, overlap=80)
    first = spans.around(note, tmp_path, 67, 68)
    assert first is not None and first[0] <= 67 and 68 <= first[1] and first[1] - first[0] > 10
    note.write_text("# short\n\nOne line now.\n", encoding="utf-8")  # edited: its new chunks, none at line 67
    assert spans.around(note, tmp_path, 67, 68) is None
    assert spans.around(note, tmp_path, 3, 3) == (1, 3, "# short\n\nOne line now.")
    note.unlink()
    assert spans.around(note, tmp_path, 3, 3) is None
