"""A small indexed workspace and copies of its SQLite store damaged in different ways."""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.cli import main


NOTES = {
    "MEMORY.md": "# Preferences\n\nThe user prefers tea over coffee.\n",
    "memory/2026-01-10.md": "# Deploy\n\nWe deployed the zephyr billing service on Tuesday.\n",
    "memory/2026-01-11.md": "# Vendor\n\nThe quokka contract renews in March.\n" + "filler line\n" * 200,
    "memory/projects/alpha.md": "# Alpha\n\n" + "\n\n".join(f"Alpha note {i}: marmalade {i}" for i in range(300)),
}


def build_index(workspace: Path, store: Path) -> None:
    for rel, text in NOTES.items():
        p = workspace / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    with MemoryIndex(workspace=str(workspace), store={"path": str(store)}, provider=None, watch=False) as m:
        m.sync()
    con = sqlite3.connect(store)  # fold the WAL into the main file so damage to it is what is read
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    assert not Path(str(store) + "-wal").exists() or Path(str(store) + "-wal").stat().st_size == 0


def _page_size(store: Path) -> int:
    return int.from_bytes(store.read_bytes()[16:18], "big")


def _table_pages(store: Path, name: str) -> list[int]:
    con = sqlite3.connect(store)
    try:
        return [r[0] for r in con.execute("SELECT pageno FROM dbstat WHERE name = ?", (name,))]
    except sqlite3.OperationalError:  # dbstat not compiled in: the root page at least
        return [con.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]]
    finally:
        con.close()


def _overwrite(store: Path, offset: int, data: bytes) -> None:
    with open(store, "r+b") as fh:
        fh.seek(offset)
        fh.write(data)


def header_garbage(store: Path) -> None:
    _overwrite(store, 0, os.urandom(100))


def header_zeroed(store: Path) -> None:
    _overwrite(store, 0, b"\0" * 16)


def truncated(store: Path) -> None:
    size = store.stat().st_size
    os.truncate(store, size // 3)


def chunks_pages_random(store: Path) -> None:
    ps = _page_size(store)
    rng = random.Random(7)
    for page in rng.sample(_table_pages(store, "chunks"), k=3):
        _overwrite(store, (page - 1) * ps, bytes(rng.getrandbits(8) for _ in range(ps)))


def fts_pages_zeroed(store: Path) -> None:
    ps = _page_size(store)
    for page in _table_pages(store, "chunks_fts_data")[:4]:
        _overwrite(store, (page - 1) * ps, b"\0" * ps)


def root_page_type(store: Path) -> None:
    ps = _page_size(store)
    con = sqlite3.connect(store)
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'files'").fetchone()[0]
    con.close()
    _overwrite(store, (root - 1) * ps + (100 if root == 1 else 0), b"\x07\xff\xff")


def schema_page(store: Path) -> None:
    _overwrite(store, 100, os.urandom(200))  # page 1's b-tree header and cell pointers: sqlite_master


DAMAGE: list[Callable[[Path], None]] = [
    header_garbage, header_zeroed, truncated, chunks_pages_random, fts_pages_zeroed, root_page_type, schema_page,
]


def damaged_copies(store: Path) -> list[Path]:
    return [p for p in store.parent.iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm"))]

