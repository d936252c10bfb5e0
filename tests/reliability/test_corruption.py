"""A damaged index file is detected (quick_check at open, driver errors later), moved aside and
rebuilt from the Markdown; search, status, the memory_search tool and the CLI never surface a raw
driver error. Files are really damaged on disk, in several ways."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from openclaw_memory import MemoryIndex
from openclaw_memory.cli import main
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.agent.tools import memory_search
from tests.helpers.damaged_store import (
    DAMAGE,
    NOTES,
    chunks_pages_random,
    fts_pages_zeroed,
    header_garbage,
)
from tests.helpers.damaged_store import build_index as _build, damaged_copies as _damaged


@pytest.mark.parametrize("damage", DAMAGE, ids=lambda f: f.__name__)
def test_damaged_index_is_set_aside_and_rebuilt(tmp_path: Path, damage: Callable[[Path], None]) -> None:
    ws, store = tmp_path / "ws", tmp_path / "state" / "index.sqlite"
    _build(ws, store)
    before = {rel: (ws / rel).read_bytes() for rel in NOTES}
    damage(store)
    with MemoryIndex(workspace=str(ws), store={"path": str(store)}, provider=None, watch=False) as m:
        res = m.search("zephyr billing")
        assert res.hits and res.hits[0].path == "memory/2026-01-10.md"
        st = m.status()
        assert st.files == len(NOTES)
        assert any("damaged" in n and "moved aside" in n for n in st.notes), st.notes
    assert len(_damaged(store)) == 1  # kept for inspection, never deleted
    assert {rel: (ws / rel).read_bytes() for rel in NOTES} == before
    con = sqlite3.connect(store)
    assert con.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    con.close()


def test_damage_found_after_open_is_recovered_by_search_status_and_tool(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Damage quick_check did not see (or that happened after the open) surfaces as a driver error
    during a read: the index is set aside and rebuilt, and the read is answered."""
    ws, store = tmp_path / "ws", tmp_path / "state" / "index.sqlite"
    _build(ws, store)
    fts_pages_zeroed(store)
    monkeypatch.setattr(SQLiteStore, "_quick_check", lambda self: None)
    with MemoryIndex(workspace=str(ws), store={"path": str(store)}, provider=None, watch=False) as m:
        payload = memory_search(m, "marmalade")
        assert payload["results"], payload
        assert "error" not in payload
        assert m.status().files == len(NOTES)
    assert len(_damaged(store)) == 1


def test_status_on_damaged_pages_does_not_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, store = tmp_path / "ws", tmp_path / "state" / "index.sqlite"
    _build(ws, store)
    chunks_pages_random(store)
    monkeypatch.setattr(SQLiteStore, "_quick_check", lambda self: None)
    with MemoryIndex(workspace=str(ws), store={"path": str(store)}, provider=None, watch=False) as m:
        st = m.status()
        assert st.files == len(NOTES) and st.chunks > 0


@pytest.mark.parametrize("damage", [header_garbage, chunks_pages_random, fts_pages_zeroed], ids=lambda f: f.__name__)
@pytest.mark.parametrize("command", [["search", "zephyr billing"], ["index", "--force"], ["index"], ["status"]])
def test_cli_on_damaged_index(tmp_path: Path, damage: Callable[[Path], None], command: list[str]) -> None:
    ws, store = tmp_path / "ws", tmp_path / "state" / "index.sqlite"
    _build(ws, store)
    damage(store)
    res = CliRunner().invoke(main, ["-w", str(ws), "--store", str(store), "-p", "none", *command])
    assert res.exit_code == 0, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "Traceback" not in res.output and "DatabaseError" not in res.output
    if command[0] == "search":
        assert "2026-01-10.md" in res.output
    if command[0] == "status":  # status reads only: it says what happened, the next sync rebuilds
        assert "damaged" in res.output and "moved aside" in res.output, res.output
        return
    con = sqlite3.connect(store)
    assert con.execute("SELECT count(*) FROM files").fetchone()[0] == len(NOTES)
    con.close()


def test_status_deep_reports_inconsistent_rows(tmp_path: Path) -> None:
    """The integrity check of ``status --deep`` is what the kill and soak tests rely on: it must see
    rows that point at nothing and counts that disagree."""
    ws, store = tmp_path / "ws", tmp_path / "state" / "index.sqlite"
    _build(ws, store)
    with MemoryIndex(workspace=str(ws), store={"path": str(store)}, provider=None, watch=False) as m:
        assert m.status(deep=True).integrity["problems"] == []  # type: ignore[index]
    con = sqlite3.connect(store)
    con.execute("DELETE FROM files WHERE path = 'MEMORY.md'")  # its chunks now belong to no file
    con.execute("INSERT INTO chunks(id, path, source, start_line, end_line, hash, model, text, updated_at) "
                "VALUES ('stray', 'memory/gone.md', 'memory', 1, 1, 'h', 'fts-only', 'stray', 0)")
    con.commit()
    con.close()
    res = CliRunner().invoke(main, ["-w", str(ws), "--store", str(store), "-p", "none", "status", "--deep"])
    assert res.exit_code == 0, res.output
    assert "Integrity: PROBLEMS" in res.output
    assert "chunks without file: 2" in res.output and "chunks without fts: 1" in res.output, res.output


@pytest.mark.parametrize("damage", DAMAGE, ids=lambda f: f.__name__)
def test_large_index_opened_with_the_cheap_check_recovers_on_read(
        tmp_path: Path, damage: Callable[[Path], None], monkeypatch: pytest.MonkeyPatch) -> None:
    """Above ``_FULL_CHECK_BYTES`` only the small tables are checked at open; damage elsewhere is
    found by the first read that meets it, with the same recovery."""
    import openclaw_memory.storage.sqlite.store as store_mod

    monkeypatch.setattr(store_mod, "_FULL_CHECK_BYTES", 0)
    ws, store = tmp_path / "ws", tmp_path / "state" / "index.sqlite"
    _build(ws, store)
    damage(store)
    with MemoryIndex(workspace=str(ws), store={"path": str(store)}, provider=None, watch=False) as m:
        assert memory_search(m, "zephyr billing")["results"][0]["path"] == "memory/2026-01-10.md"
        assert m.status().files == len(NOTES)
        assert memory_search(m, "marmalade")["results"]


def test_status_deep_finds_damage_the_cheap_open_check_missed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import openclaw_memory.storage.sqlite.store as store_mod

    monkeypatch.setattr(store_mod, "_FULL_CHECK_BYTES", 0)
    ws, store = tmp_path / "ws", tmp_path / "state" / "index.sqlite"
    _build(ws, store)
    chunks_pages_random(store)
    with MemoryIndex(workspace=str(ws), store={"path": str(store)}, provider=None, watch=False) as m:
        st = m.status(deep=True)
        assert any("damaged" in n for n in st.notes), st.notes
        assert st.integrity is not None and st.integrity["problems"] == [] and st.files == len(NOTES)
    assert len(_damaged(store)) == 1


def test_a_store_path_that_is_not_an_index_is_never_moved_aside(tmp_path: Path) -> None:
    """A misconfigured store path pointing at a user's file: refused, the file untouched (only files
    with SQLite's header, or named like an index, are ever treated as a damaged index)."""
    from openclaw_memory.errors import StoreError

    notes = tmp_path / "MEMORY.md"
    text = "# My notes\n- precious\n" * 50
    notes.write_text(text, encoding="utf-8")
    with pytest.raises(StoreError, match="left untouched"):
        SQLiteStore(notes)
    assert notes.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]


def test_an_unchanged_index_gets_the_full_check_once_and_a_changed_one_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The full quick_check at open is not repeated on a file that has not changed since one passed
    (issue 17 left it running at every open up to 32 MB); any change (a write, damage) brings it back."""
    import time

    import openclaw_memory.storage.sqlite.store as store_mod

    ws, store = tmp_path / "ws", tmp_path / "state" / "index.sqlite"
    _build(ws, store)
    old = time.time() - 60  # an mtime older than the 2 s a write could hide in
    os.utime(store, (old, old))
    statements: list[str] = []
    real_connect = store_mod.connect

    def traced(*args: object, **kwargs: object) -> object:
        conn = real_connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(store_mod, "connect", traced)

    def full_checks() -> int:
        return sum(1 for s in statements if s.strip().lower() == "pragma quick_check")

    SQLiteStore(store).close()
    assert full_checks() == 1
    for _ in range(3):
        with SQLiteStore(store) as again:
            assert again.recovered is None
    assert full_checks() == 1  # unchanged file: only the small tables were checked

    fts_pages_zeroed(store)  # damage changes the file: checked in full again, found and set aside
    damaged = SQLiteStore(store)
    try:
        assert full_checks() == 2 and damaged.recovered is not None
    finally:
        damaged.close()
    assert len(_damaged(store)) == 1
