"""The keyword index's row layout: FTS rows share their chunk's rowid; older indexes keep working and are rebuilt."""

from __future__ import annotations

import hashlib
from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage import StoredChunk
from openclaw_memory.types import MemoryFile


def _put(store: SQLiteStore, rel: str, texts: list[str], ids: list[str] | None = None) -> None:
    chunks = [
        StoredChunk(id=(ids[i] if ids else f"{rel}:{i}"), path=rel, source="memory", start_line=i + 1, end_line=i + 1,
                    hash=hashlib.sha256(t.encode()).hexdigest(), model="fts-only", text=t, embedding=None)
        for i, t in enumerate(texts)
    ]
    store.replace_file(MemoryFile(path=rel, abs_path=rel, mtime_ms=0.0, size=1, hash=str(texts)), chunks)


def _rows(store: SQLiteStore, sql: str) -> list[tuple]:
    return store._db().execute(sql).fetchall()


def test_fts_rows_follow_their_chunks_through_replaces_and_deletes(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "i.sqlite", vector_enabled=False)
    _put(store, "memory/a.md", ["alpha one", "alpha two"])
    _put(store, "memory/b.md", ["bravo one"])
    _put(store, "memory/a.md", ["alpha three"])  # replaced: two chunks become one
    _put(store, "memory/c.md", ["charlie moved here"], ids=["memory/b.md:0"])  # an id seen under another path
    store.delete_file("memory/a.md")
    assert _rows(store, "SELECT rowid, id FROM chunks ORDER BY rowid") == \
        _rows(store, "SELECT rowid, id FROM chunks_fts ORDER BY rowid")
    assert [c.path for c, _ in store.keyword_search('"charlie"', limit=5)] == ["memory/c.md"]
    assert store.keyword_search('"alpha"', limit=5) == [] and store.keyword_search('"bravo"', limit=5) == []
    store.close()


def test_an_index_from_before_the_rowid_layout_is_searched_then_rebuilt(
    tmp_path: Path, workspace: Path, write
) -> None:
    write({"MEMORY.md": "# Facts\n\nThe staging database lives in Frankfurt.\n",
           "memory/2026-01-02.md": "# Log\n\nRotated the Frankfurt database password.\n"})
    path = tmp_path / "old.sqlite"
    with MemoryIndex(workspace=str(workspace), store={"path": str(path)}, provider=None, watch=False) as idx:
        idx.sync()
    # rewrite it the way earlier versions stored it: FTS rows numbered on their own, no layout marker
    store = SQLiteStore(path, vector_enabled=False)
    db = store._db()
    rows = db.execute("SELECT text, id, path, source, model, start_line, end_line FROM chunks_fts").fetchall()
    db.execute("DELETE FROM chunks_fts")
    db.executemany("INSERT INTO chunks_fts(rowid, text, id, path, source, model, start_line, end_line) "
                   "VALUES (?,?,?,?,?,?,?,?)", [(1000 + i, *r) for i, r in enumerate(rows)])
    db.execute("DELETE FROM meta WHERE key = 'fts_rowids'")
    db.execute("UPDATE meta SET value = replace(value, '+rowid', '') WHERE key != 'generation'")
    store.close()

    old = SQLiteStore(path, vector_enabled=False)
    assert {c.path for c, _ in old.keyword_search('"frankfurt"', limit=5)} == {"MEMORY.md", "memory/2026-01-02.md"}
    old.close()
    with MemoryIndex(workspace=str(workspace), store={"path": str(path)}, provider=None, watch=False) as idx:
        report = idx.sync()
        assert report.full_rebuild and "keyword index" in (report.rebuild_reason or "")
        hits = idx.search("Frankfurt password", min_score=0).hits
        assert hits[0].path == "memory/2026-01-02.md"
        store = idx.store
        assert isinstance(store, SQLiteStore)
        assert _rows(store, "SELECT rowid, id FROM chunks ORDER BY rowid") == \
            _rows(store, "SELECT rowid, id FROM chunks_fts ORDER BY rowid")
