"""A workspace folder that disappears (moved, deleted, a drive not mounted) makes a sync fail with IndexingError and
leaves the index searchable as it was; the sync used to find no file and remove every one from the index."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openclaw_memory import IndexingError, MemoryIndex


def test_a_sync_without_the_workspace_keeps_the_index(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("The billing database is PostgreSQL.\n")
    (workspace / "memory" / "2026-11-20.md").write_text("We moved the billing database.\n")
    with MemoryIndex(workspace=workspace, state_dir=str(tmp_path / "state"), provider=None, watch=False) as memory:
        memory.sync()
        os.rename(workspace, tmp_path / "unmounted")
        with pytest.raises(IndexingError, match="is missing .* nothing was removed from the index"):
            memory.sync()
        assert memory.indexed_files() == ["MEMORY.md", "memory/2026-11-20.md"]
        assert {hit.path for hit in memory.search("billing database", min_score=0).hits} == \
            {"MEMORY.md", "memory/2026-11-20.md"}
        assert "is missing" in (memory.status().last_sync or {}).get("error", "") or \
            any("is missing" in note for note in memory.status().notes)
        os.rename(tmp_path / "unmounted", workspace)
        assert memory.sync().files_deleted == 0
