"""The file watcher notices a folder of notes moved out of ``memory/`` even when its name has a dot
(``memory/project.v2``): the move reports only the folder's path, which is no longer a folder and does not end in
``.md``; its notes stayed in the index (and in search results) before."""

from __future__ import annotations

import os
import time
from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.index.watch import is_relevant


def _wait_for(predicate, timeout: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_a_dotted_folder_moved_out_of_memory_leaves_the_index(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "memory" / "project.v2").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("The billing database is PostgreSQL.\n")
    (workspace / "memory" / "project.v2" / "plan.md").write_text("The giraffe plan.\n")
    with MemoryIndex(workspace=workspace, state_dir=str(tmp_path / "state"), provider=None, watch=True,
                     sync={"watch_debounce_ms": 50}) as memory:
        memory.sync()
        os.rename(workspace / "memory" / "project.v2", tmp_path / "archived.v2")
        assert _wait_for(lambda: memory.indexed_files() == ["MEMORY.md"])
        assert memory.search("giraffe", min_score=0).hits == []


def test_a_deleted_path_under_memory_counts_whatever_its_name(tmp_path: Path) -> None:
    gone = tmp_path / "memory" / "project.v2"
    assert is_relevant(str(gone), tmp_path, [], deleted=True)
    assert not is_relevant(str(gone), tmp_path, [])  # an existing file of another type still does not
    assert not is_relevant(str(tmp_path / "memory" / "node_modules" / "x.v2"), tmp_path, [], deleted=True)
