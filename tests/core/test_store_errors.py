"""The SQLite store reports its own failures as StoreError, never as the driver's exceptions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import IndexingError, StoreError
from openclaw_memory.storage.sqlite.store import SQLiteStore


def _drop(db: Path, table: str) -> None:
    con = sqlite3.connect(db)
    con.execute(f"DROP TABLE {table}")
    con.commit()
    con.close()


def test_a_driver_error_surfaces_as_store_error_with_the_driver_error_as_cause(tmp_path: Path) -> None:
    db = tmp_path / "i.sqlite"
    store = SQLiteStore(db)
    try:
        _drop(db, "embedding_cache")
        with pytest.raises(StoreError, match="no such table") as info:
            store.cache_count()
        assert info.value.__cause__ is not None and not isinstance(info.value.__cause__, StoreError)
        with pytest.raises(StoreError, match="no such table"):
            store.cache_prune(0)
    finally:
        store.close()


def test_memory_index_reports_store_failures_as_store_and_indexing_errors(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("A note about the harbour.\n", encoding="utf-8")
    db = tmp_path / "i.sqlite"
    with MemoryIndex(workspace=ws, provider=None, store={"path": str(db)}, watch=False) as mem:
        mem.sync()
        _drop(db, "files")
        with pytest.raises(IndexingError, match="no such table") as info:
            mem.sync()
        assert isinstance(info.value.__cause__, StoreError)
        with pytest.raises(StoreError, match="no such table"):
            mem.status()
