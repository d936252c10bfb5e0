"""status() while a sync waits for another process's sync lock said "Indexing (...): starting" for as long as the
other process indexed (up to ``lock_timeout``, ten minutes by default): it now says the sync waits for another
process's sync, and of which index."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.cli import _indexing_line
from tests.core.test_close_while_waiting_for_the_lock import HOLDER
from tests.helpers.waiting import wait_for


def test_status_says_the_sync_waits_for_another_process(tmp_path: Path) -> None:
    (tmp_path / "ws" / "memory").mkdir(parents=True)
    (tmp_path / "ws" / "MEMORY.md").write_text("# Memory\n\nThe heron count was three.\n")
    index_file = tmp_path / "index.sqlite"
    memory = MemoryIndex(workspace=tmp_path / "ws", provider=None, watch=False, store={"path": str(index_file)})
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, "sqlite", str(index_file), "-", "-"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        syncing = threading.Thread(target=lambda: memory.sync(lock_timeout=60), daemon=True)
        syncing.start()
        wait_for(lambda: memory.status().indexing is not None, timeout=10, what="the sync to start")
        wait_for(lambda: (memory.status().indexing or {}).get("waiting_for"), timeout=10, what="the lock wait")
        live = memory.status().indexing
        assert live is not None and live["waiting_for"] == f"another process's sync of {index_file}"
        line = _indexing_line(live)
        assert "waiting for another process's sync of" in line and "starting" not in line, line
        holder.communicate("", timeout=10)  # the other process lets go of the lock
        syncing.join(30)
        assert not syncing.is_alive() and memory.status().indexing is None
        assert memory.search("heron", min_score=0).hits
    finally:
        holder.kill()
        holder.wait(10)
        memory.close()
