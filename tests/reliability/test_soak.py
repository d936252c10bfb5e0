"""Several processes on one index at once: searches, appends, syncs and forced rebuilds for a
bounded time with no error, then an integrity check (``status --deep``) that finds nothing wrong;
and a CLI search that does not wait behind another process's sync."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from openclaw_memory import MemoryIndex
from openclaw_memory.cli import main
from openclaw_memory.providers.fake import FakeEmbeddingProvider

WORKER = Path(__file__).with_name("_worker.py")


def _workspace(root: Path, n: int = 40) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Prefs\n\nThe user prefers tea over coffee; zephyr billing.\n")
    for i in range(n):
        body = "\n\n".join(f"Entry {i}.{j}: walrus ledger {i} line {j} " + "y" * 200 for j in range(6))
        (ws / "memory" / f"note-{i:03d}.md").write_text(f"# Note {i}\n\n{body}\n")
    return ws


def _soak(tmp_path: Path, processes: int, seconds: float) -> dict[str, int]:
    ws, store = _workspace(tmp_path), tmp_path / "index.sqlite"
    procs = [subprocess.Popen([sys.executable, str(WORKER), str(ws), str(store), "soak", str(seconds)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(processes)]
    totals: dict[str, int] = {}
    for p in procs:
        out, err = p.communicate(timeout=seconds + 90)
        assert p.returncode == 0, err[-2000:]
        report = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
        assert report["counts"]["errors"] == 0, report["errors"]
        for k, v in report["counts"].items():
            totals[k] = totals.get(k, 0) + v
    with MemoryIndex(workspace=str(ws), store={"path": str(store)}, provider=FakeEmbeddingProvider(),
                     watch=False) as m:
        m.sync()
        st = m.status(deep=True)
        assert st.integrity is not None and st.integrity["problems"] == [], st.integrity
        assert st.files == len(list((ws / "memory").glob("*.md"))) + 1
        assert st.integrity["chunks_with_vector"] == st.chunks
        if totals.get("append"):
            assert m.search("soak note heron").hits
    res = CliRunner().invoke(main, ["-w", str(ws), "--store", str(store), "-p", "none", "status", "--deep"])
    assert res.exit_code == 0 and "Integrity: ok" in res.output, res.output
    return totals


def test_soak_short(tmp_path: Path) -> None:
    totals = _soak(tmp_path, processes=3, seconds=5)
    assert totals["search"] > 0 and totals["sync"] > 0


@pytest.mark.slow
def test_soak_four_processes(tmp_path: Path) -> None:
    totals = _soak(tmp_path, processes=4, seconds=15)
    print("soak totals", totals)


def test_cli_search_does_not_wait_behind_another_process(tmp_path: Path) -> None:
    ws, store = _workspace(tmp_path, n=5), tmp_path / "index.sqlite"
    assert CliRunner().invoke(main, ["-w", str(ws), "--store", str(store), "-p", "none", "index"]).exit_code == 0
    (ws / "memory" / "note-001.md").write_text("# Changed\n\nThe heron count was 14.\n")
    holder = subprocess.Popen(  # what another process's sync or rebuild holds for its whole run
        [sys.executable, "-c", "import sys, time; from filelock import FileLock; l = FileLock(sys.argv[1]); "
         "l.acquire(); print('locked', flush=True); time.sleep(40)", f"{store}.lock"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        start = time.monotonic()
        res = CliRunner().invoke(main, ["-w", str(ws), "--store", str(store), "-p", "none", "search", "walrus ledger 3"])
        took = time.monotonic() - start
    finally:
        holder.kill()
        holder.wait()
    assert res.exit_code == 0, res.output
    assert took < 10, took
    assert "note-003.md" in res.output
    assert "another process is updating the index" in res.output  # stderr is mixed in
    assert "out of date" in res.output and "note-001.md" in res.output
