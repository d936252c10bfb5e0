"""``kill -9`` at random points of a first index, an incremental sync and a forced rebuild (a real
subprocess, many seeds): search keeps working on what was there, and the next sync repairs
everything (``status(deep=True)`` finds no orphan rows, count mismatch or quick_check error)."""

from __future__ import annotations

import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider

WORKER = Path(__file__).with_name("_worker.py")
N_FILES = 120
#: seconds after the worker is ready within which the kill lands (about each operation's length here)
WINDOW = {"first": 1.5, "incremental": 1.0, "force": 2.5}


def _write_notes(ws: Path) -> None:
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("# Prefs\n\nThe user prefers tea over coffee; zephyr billing.\n")
    for i in range(N_FILES):
        body = "\n\n".join(f"Entry {i}.{j}: walrus ledger {i} line {j} " + "y" * 200 for j in range(8))
        (ws / "memory" / f"note-{i:03d}.md").write_text(f"# Note {i}\n\n{body}\n")


def _open(ws: Path, store: Path) -> MemoryIndex:
    return MemoryIndex(workspace=str(ws), store={"path": str(store)}, provider=FakeEmbeddingProvider(), watch=False,
                       sync={"on_search": False, "on_session_start": False, "watch": False})


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("kill-base")
    ws, store = root / "ws", root / "index.sqlite"
    _write_notes(ws)
    with _open(ws, store) as m:
        m.sync()
    return ws, store


def _edit(ws: Path, rng: random.Random) -> int:
    """Change, delete and add files; return the number of memory files afterwards."""
    names = sorted((ws / "memory").glob("note-*.md"))
    for p in rng.sample(names, 30):
        p.write_text(p.read_text() + f"\n\nUpdate: kestrel {p.stem}\n")
    for p in rng.sample([n for n in names if "kestrel" not in n.read_text()], 10):
        p.unlink()
    for i in range(10):
        (ws / "memory" / f"added-{i}.md").write_text(f"# Added {i}\n\nThe osprey {i} nest moved.\n")
    return len(list((ws / "memory").glob("*.md"))) + 1


def _move_index(store: Path, ws: Path) -> None:
    """Record the copied index as the copied workspace's (an index refuses another workspace)."""
    con = sqlite3.connect(store)
    con.execute("UPDATE meta SET value = ? WHERE key = 'workspace'", (str(ws.resolve()),))
    con.commit()
    con.close()


def _run_and_kill(ws: Path, store: Path, mode: str, delay: float) -> bool:
    """Start the worker, kill -9 it ``delay`` s after it is ready; True when it finished first."""
    proc = subprocess.Popen([sys.executable, str(WORKER), str(ws), str(store), mode],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(delay)
    finished = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return finished


def _one(kind: str, seed: int, base: tuple[Path, Path], tmp: Path) -> None:
    rng = random.Random(seed)
    ws, store = tmp / "ws", tmp / "index.sqlite"
    shutil.copytree(base[0], ws)
    if kind == "first":
        expected = N_FILES + 1
    else:
        shutil.copy(base[1], store)
        _move_index(store, ws)
        expected = _edit(ws, rng) if kind == "incremental" else N_FILES + 1
    _run_and_kill(ws, store, "force" if kind == "force" else "sync", rng.uniform(0, WINDOW[kind]))
    with _open(ws, store) as m:
        if kind != "first":  # the index as it was (or partly updated) answers before any repair
            res = m.search("walrus ledger 5")
            assert res.hits, f"{kind} seed {seed}: no hits after the kill"
        m.sync()
        st = m.status(deep=True)
        assert st.integrity is not None and st.integrity["problems"] == [], (kind, seed, st.integrity)
        assert st.files == expected, (kind, seed, st.files, expected)
        assert st.integrity["chunks_with_vector"] == st.chunks
        assert m.search("zephyr billing").hits[0].path == "MEMORY.md"
        if kind == "incremental":
            assert m.search("osprey 3 nest").hits[0].path == "memory/added-3.md"
            assert any("kestrel" in h.text for h in m.search("kestrel").hits)
    assert not list(tmp.glob("index.sqlite.tmp-*")), "a killed rebuild's temp file was not cleaned up"


@pytest.mark.parametrize("kind", ["first", "incremental", "force"])
def test_kill_9_then_search_and_repair(kind: str, base: tuple[Path, Path], tmp_path: Path) -> None:
    for seed in range(1):
        _one(kind, seed, base, tmp_path / f"s{seed}")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["first", "incremental", "force"])
def test_kill_9_many_seeds(kind: str, base: tuple[Path, Path], tmp_path: Path) -> None:
    for seed in range(1, 9):
        _one(kind, seed, base, tmp_path / f"s{seed}")
