"""A ``MemoryIndex`` on QMD dropped without ``close()`` (an adapter made per request, a notebook cell run again)
left its warm ``qmd mcp`` process (a Node process of its own session) running until the interpreter exited: one
more per index. The QMD processes of a backend that is garbage-collected are ended with it."""

from __future__ import annotations

import gc
from pathlib import Path

from openclaw_memory import MemoryIndex

from tests.helpers.waiting import wait_for


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_dropped_qmd_index_ends_its_qmd_mcp_process(memory_ws: Path, qmd_command: str, tmp_path: Path) -> None:
    def search_once() -> list[int]:
        memory = MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False,
                             backend="qmd", qmd={"command": qmd_command, "limits": {"timeoutMs": 30_000}})
        result = memory.search("pgbouncer")
        assert result.fallback is None and result.hits
        return memory.status().backend_info["daemon"]["running"] and memory._backend.primary._processes.pids

    pids = search_once()
    assert pids  # the warm session ran
    gc.collect()
    wait_for(lambda: not any(_running(pid) for pid in pids), timeout=5, what="the dropped index's qmd mcp to end")
