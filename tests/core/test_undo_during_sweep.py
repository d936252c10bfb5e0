"""Undo while a sweep of another process is writing MEMORY.md (real files, a real child process held at the rename
of MEMORY.md). Undo used to take the running sweep's preimage for the one of a sweep killed before its write and
delete it: the sweep's change then could not be undone at all."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from openclaw_memory.consolidation import consolidate, undo
from openclaw_memory.errors import OpenClawMemoryError
from tests.helpers.consolidation import MEMORY, TODAY, config_for, make_workspace, scripted

ROOT = Path(__file__).resolve().parents[2]

_HELD_SWEEP = textwrap.dedent("""
    import json, os, sys, time
    from datetime import date
    from openclaw_memory.config import MemoryConfig
    from openclaw_memory.consolidation import consolidate

    ws, state, marker, go = sys.argv[1:5]
    real_replace = os.replace

    def replace(src, dst, **kwargs):  # held just before MEMORY.md is replaced, its preimage written
        if str(dst).endswith("MEMORY.md"):
            open(marker, "w").write("at the rename")
            deadline = time.monotonic() + 60
            while not os.path.exists(go) and time.monotonic() < deadline:
                time.sleep(0.02)
        return real_replace(src, dst, **kwargs)

    os.replace = replace
    config = MemoryConfig(workspace=ws, state_dir=state, provider="none",
                          dreaming={"min_recall_count": 0, "min_unique_queries": 0})
    answer = json.dumps({"decisions": [{"op": "add", "candidate": "C3"}]})
    report = consolidate(config, lambda prompt: answer, today=date(2026, 11, 27))
    assert report.applied, report
""")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


def _held_sweep(ws: Path, tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """A sweep in a child process, held at the rename of MEMORY.md until the returned file exists."""
    marker, go = tmp_path / "marker", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "core"), str(ROOT)])}
    child = subprocess.Popen([sys.executable, "-c", _HELD_SWEEP, str(ws), str(ws.parent / "state"), str(marker),
                              str(go)], env=env)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None, "the sweep ended before reaching its write"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return child, go


def _undo_in_a_thread(ws: Path) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            undo(config_for(ws))
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


def test_undo_waits_for_a_running_sweep_and_then_undoes_it(ws: Path, tmp_path: Path) -> None:
    child, go = _held_sweep(ws, tmp_path)
    thread, errors = _undo_in_a_thread(ws)
    thread.join(1.0)  # undo has had its chance to run into the sweep's write
    go.write_text("go")
    assert child.wait(60) == 0
    thread.join(60)
    assert not errors, errors
    assert (ws / "MEMORY.md").read_text() == MEMORY  # the sweep wrote, then undo restored what it replaced
    assert "## Undone" in (ws / "DREAMS.md").read_text()


def test_a_sweep_written_during_an_undo_can_still_be_undone(ws: Path, tmp_path: Path) -> None:
    consolidate(config_for(ws), scripted({"decisions": [{"op": "add", "candidate": "C2"}]}), today=TODAY)
    first = (ws / "MEMORY.md").read_text()
    child, go = _held_sweep(ws, tmp_path)
    thread, errors = _undo_in_a_thread(ws)
    thread.join(1.0)
    go.write_text("go")
    child.wait(60)
    thread.join(60)
    # whichever came first, every change written can be undone back to the start
    while (ws / "MEMORY.md").read_text() != MEMORY:
        try:
            undo(config_for(ws))
        except OpenClawMemoryError as exc:
            pytest.fail(f"MEMORY.md reads {(ws / 'MEMORY.md').read_text()!r}, not restorable: {exc}")
    assert first != MEMORY
