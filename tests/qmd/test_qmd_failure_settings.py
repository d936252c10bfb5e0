"""A QMD failure is remembered in the state dir for a while (each CLI call then falls back at once), but only for
the QMD settings that failed: a user who fixes ``memory.qmd.command`` (or the search mode) after reading the fallback's
reason saw the old failure again, "remembered", for five minutes, with QMD now working."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from openclaw_memory import MemoryIndex


def test_a_fixed_qmd_command_is_tried_at_once_not_the_remembered_failure(
    memory_ws: Path, qmd_command: str, tmp_path: Path, qmd_index: Callable[..., MemoryIndex],
) -> None:
    with MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False,
                     backend="qmd", qmd={"command": str(tmp_path / "no-such-qmd")}) as broken:
        first = broken.search("pgbouncer")
    assert first.fallback is not None and "not found" in first.fallback.reason
    fixed = qmd_index()  # the same state dir, the real QMD as the command
    assert fixed.status().fallback is None
    result = fixed.search("pgbouncer")
    assert result.fallback is None, result.fallback
    assert result.hits[0].path == "memory/2026-01-02.md"


def test_the_same_failing_command_is_still_remembered(memory_ws: Path, tmp_path: Path) -> None:
    settings = {"command": str(tmp_path / "no-such-qmd")}
    for _ in range(2):
        with MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False,
                         backend="qmd", qmd=settings) as broken:
            result = broken.search("pgbouncer")
    assert result.fallback is not None and "remembered from" in result.fallback.reason
