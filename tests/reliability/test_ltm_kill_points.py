"""``kill -9`` between a LanceDB long-term memory write and its Markdown mirror line (a real
subprocess killed at the seam): the next open finishes the write, so a forgotten memory's line
never stays in the daily note (``memory_search`` would still find it) and a stored memory always
gets its line."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from openclaw_memory.long_term import LongTermMemory
from openclaw_memory.long_term.mirror import mirror_marker
from openclaw_memory.providers.fake import FakeEmbeddingProvider

pytest.importorskip("lancedb")

WORKER = textwrap.dedent("""
    import os, signal, sys
    from openclaw_memory.long_term import LongTermMemory
    from openclaw_memory.long_term.mirror import MarkdownMirror
    from openclaw_memory.providers.fake import FakeEmbeddingProvider
    db, workspace, op, point, arg = sys.argv[1:6]
    memory = LongTermMemory(db, FakeEmbeddingProvider(dims=256), mirror_workspace=workspace)
    name = "append" if op == "store" else "remove"
    original = getattr(MarkdownMirror, name)

    def killed(self, *args, **kwargs):
        if point == "after":
            original(self, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    setattr(MarkdownMirror, name, killed)
    if op == "store":
        memory.store(arg, category="fact")
    else:
        memory.forget(memory_id=arg)
    print("not killed", flush=True)
""")
KEEPER = "The build server is called kestrel-7"
TARGET = "The guest Wi-Fi password is moonbeam7"


def _notes(workspace: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted((workspace / "memory").glob("*.md")))


def _memory(db: Path, workspace: Path | None) -> LongTermMemory:
    return LongTermMemory(db, FakeEmbeddingProvider(dims=256), mirror_workspace=workspace)


def _kill_during(db: Path, workspace: Path, op: str, point: str, arg: str) -> None:
    done = subprocess.run([sys.executable, "-c", WORKER, str(db), str(workspace), op, point, arg],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, (done.stdout, done.stderr)


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, Path, str, str]:
    db, workspace = tmp_path / "lancedb", tmp_path / "ws"
    workspace.mkdir()
    with _memory(db, workspace) as memory:
        keeper = memory.store(KEEPER, category="fact").record.id
        target = memory.store(TARGET, category="fact").record.id
    return db, workspace, keeper, target


@pytest.mark.parametrize("point", ["before", "after"], ids=["before-the-mirror", "after-the-mirror"])
@pytest.mark.parametrize("reopen_with_mirror", [True, False], ids=["mirrored", "no-mirror"])
def test_a_forget_killed_at_the_mirror_is_finished_by_the_next_open(
        stored: tuple[Path, Path, str, str], point: str, reopen_with_mirror: bool) -> None:
    db, workspace, keeper, target = stored
    _kill_during(db, workspace, "forget", point, target)
    with _memory(db, workspace if reopen_with_mirror else None) as memory:
        notes = _notes(workspace)
        assert mirror_marker(target) not in notes and "moonbeam7" not in notes  # nothing left to find
        assert notes.count(mirror_marker(keeper)) == 1
        assert [r.id for r in memory.list()] == [keeper]
        assert memory.recall(TARGET, limit=5, min_score=0.0, include_superseded=True)[0].record.id == keeper


@pytest.mark.parametrize("point", ["before", "after"], ids=["before-the-mirror", "after-the-mirror"])
def test_a_store_killed_at_the_mirror_gets_exactly_one_line_on_the_next_open(
        stored: tuple[Path, Path, str, str], point: str) -> None:
    db, workspace, keeper, target = stored
    text = "The quarterly report is due on 14 March"
    _kill_during(db, workspace, "store", point, text)
    with _memory(db, workspace) as memory:
        records = [r for r in memory.list() if r.text == text]
        assert len(records) == 1
    notes = _notes(workspace)
    assert notes.count(mirror_marker(records[0].id)) == 1
    assert notes.count(text) == 1
    assert notes.count(mirror_marker(keeper)) == 1 and notes.count(mirror_marker(target)) == 1


def test_an_interrupted_forget_is_finished_by_the_next_write_of_a_live_process(
        stored: tuple[Path, Path, str, str]) -> None:
    db, workspace, keeper, target = stored
    with _memory(db, workspace) as memory:  # opened before the crash: only its next write repairs
        _kill_during(db, workspace, "forget", "before", target)
        memory.store("My sister Anna lives in Vienna", category="entity")
        assert target not in [r.id for r in memory.list()]
    assert mirror_marker(target) not in _notes(workspace)


LOOP = textwrap.dedent("""
    import sys
    from openclaw_memory.long_term import LongTermMemory
    from openclaw_memory.providers.fake import FakeEmbeddingProvider
    memory = LongTermMemory(sys.argv[1], FakeEmbeddingProvider(dims=256), mirror_workspace=sys.argv[2])
    print("ready", flush=True)
    for i in range(10_000):
        stored = memory.store(f"Locker L{i}07 of employee {i} is in hall {i}", category="fact")
        if i % 2:
            memory.forget(memory_id=stored.record.id)
""")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_kill_at_a_random_moment_of_stores_and_forgets_leaves_rows_and_lines_in_step(tmp_path: Path, seed: int) -> None:
    import random
    import re
    import time

    db, workspace = tmp_path / "lancedb", tmp_path / "ws"
    workspace.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", LOOP, str(db), str(workspace)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(random.Random(seed).uniform(0.3, 2.0))
    finally:
        proc.kill()
        proc.wait(timeout=30)
    with _memory(db, workspace) as memory:
        rows = {r.id for r in memory.list()}
    lines = re.findall(r"<!-- ltm:([0-9a-f-]{36}) -->", _notes(workspace))
    assert sorted(lines) == sorted(rows)  # every memory has one line, no line outlives its memory
