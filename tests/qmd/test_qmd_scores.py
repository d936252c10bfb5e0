"""What a QMD hit's score is, against the real QMD 2.8.3: each path reports QMD's own score as is (spec §9.3),
and the two paths score differently, so ``min_score`` means a different thing on each (README, QMD section)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex

pytestmark = pytest.mark.slow  # each index starts QMD (node) a few times

# "the" is in all three files of MEMORY_FILES, "Zephyr" in one
EVERYWHERE, RARE = "the", "Zephyr"


def _raw_cli_scores(qmd_command: str, workspace: Path, home: Path, query: str) -> list[float]:
    """The scores the real ``qmd search --json`` prints over ``workspace``, with no openclaw-memory in between."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache"), "NO_COLOR": "1"}

    def qmd(*args: str) -> str:
        return subprocess.run([*shlex.split(qmd_command), *args], env=env, cwd=workspace, capture_output=True,
                              text=True, timeout=120, check=True).stdout

    qmd("collection", "add", str(workspace), "--name", "ws", "--glob", "**/*.md")
    qmd("update")
    return [row["score"] for row in json.loads(qmd("search", "--json", "-n", "6", "-c", "ws", "--", query))]


def test_process_per_query_reports_qmd_search_bm25_scores_as_is(
    qmd_index: Callable[..., MemoryIndex], memory_ws: Path, qmd_command: str, tmp_path: Path
) -> None:
    # QMD's own CLI: BM25 as |s|/(1+|s|); a word in half the files or more has an IDF of ~0, so its hits score 0.0
    assert _raw_cli_scores(qmd_command, memory_ws, tmp_path / "raw", EVERYWHERE) == [0, 0, 0]
    rare_raw = _raw_cli_scores(qmd_command, memory_ws, tmp_path / "raw2", RARE)
    assert len(rare_raw) == 1 and 0 < rare_raw[0] < 1

    mem = qmd_index(daemon=False)
    everywhere = mem.search(EVERYWHERE)
    assert len(everywhere.hits) == 3 and [h.score for h in everywhere.hits] == [0.0, 0.0, 0.0]  # read as printed
    assert mem.search(EVERYWHERE, min_score=0.01).hits == []  # so any min_score above 0 drops them all
    rare = mem.search(RARE).hits
    assert [(h.path, h.score) for h in rare] == [("memory/projects/zephyr.md", rare_raw[0])]
    assert mem.search(RARE, min_score=rare_raw[0] + 0.01).hits == []
    assert mem.status().backend_info["daemon"]["running"] is False


def test_the_mcp_daemon_reports_rank_scores(qmd_index: Callable[..., MemoryIndex]) -> None:
    # QMD's MCP `query` tool without reranking scores the n-th document 1/n, whatever its BM25
    mem = qmd_index(daemon=True)
    hits = mem.search(EVERYWHERE).hits
    assert [h.score for h in hits] == [1.0, 0.5, 0.33]
    assert [h.score for h in mem.search(RARE).hits] == [1.0]
    assert len(mem.search(EVERYWHERE, min_score=0.4).hits) == 2
