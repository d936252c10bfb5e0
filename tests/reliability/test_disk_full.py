"""A full disk and a read-only index directory.

Disk full: the index lives on a real tiny tmpfs when this process may mount one (root), and
otherwise on a database capped with SQLite's ``max_page_count`` (the same SQLITE_FULL error). A
sync that runs out of space fails with IndexingError, the index stays searchable, and once there
is room the next sync completes. Read-only: a directory mounted read-only (root) or without write
permission (other users) still serves searches from the existing index."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import openclaw_memory.storage.sqlite.store as store_mod
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import IndexingError, OpenClawMemoryError


def _notes(ws: Path, n: int, start: int = 0) -> None:
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    for i in range(start, start + n):
        body = "\n\n".join(f"Entry {i}.{j}: the walrus {i} ledger line {j} " + "x" * 300 for j in range(20))
        (ws / "memory" / f"note-{i:04d}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    (ws / "MEMORY.md").write_text("# Prefs\n\nThe user prefers tea over coffee; zephyr billing.\n")


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@contextlib.contextmanager
def _small_disk(path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """``path`` with about 1 MB of room; yields a function that makes room."""
    path.mkdir(parents=True)
    if kind == "tmpfs":
        if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", "size=1200k", "tmpfs", str(path)):
            pytest.skip("cannot mount a tmpfs here (not root); the max_page_count variant covers it")
        try:
            yield lambda: _mount("-o", "remount,size=64m", str(path))
        finally:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)
        return
    limit = {"pages": 300}  # 300 x 4 KiB

    real_connect = store_mod.connect
    opened: list[object] = []

    def capped(*a: object, **kw: object) -> object:
        conn = real_connect(*a, **kw)  # type: ignore[arg-type]
        conn.execute(f"PRAGMA max_page_count = {limit['pages']}")
        opened.append(conn)
        return conn

    monkeypatch.setattr(store_mod, "connect", capped)

    def make_room() -> None:
        limit["pages"] = 1_000_000
        for conn in opened:
            with contextlib.suppress(Exception):  # closed ones
                conn.execute(f"PRAGMA max_page_count = {limit['pages']}")  # type: ignore[attr-defined]

    yield make_room


@pytest.mark.parametrize("kind", ["tmpfs", "max_page_count"])
def test_disk_full_fails_cleanly_and_the_next_sync_completes(tmp_path: Path, kind: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ws, disk = tmp_path / "ws", tmp_path / "disk"
    _notes(ws, 3)
    with _small_disk(disk, kind, monkeypatch) as make_room:
        store = {"path": str(disk / "index.sqlite")}
        with MemoryIndex(workspace=str(ws), store=store, provider=None, watch=False) as m:
            m.sync()
            assert m.search("zephyr billing").hits
            _notes(ws, 60, start=3)  # far more than fits
            with pytest.raises(IndexingError):
                m.sync()
            res = m.search("zephyr billing")  # what was indexed still answers, no raw error
            assert res.hits and res.hits[0].path == "MEMORY.md"
            with pytest.raises(IndexingError):
                m.sync(force=True)  # a rebuild that does not fit leaves the old index in place
            assert m.search("walrus 1 ledger").hits
            make_room()  # type: ignore[operator]
            report = m.sync()
            assert report.files_indexed > 0  # the files that did not fit before
            assert m.status().files == 64
            assert m.search("walrus 61 ledger").hits


@contextlib.contextmanager
def _read_only(path: Path) -> Iterator[None]:
    """``path`` (a folder or a file) read-only: a read-only bind mount as root (who may write anyway), else its
    mode. A file's folder stays writable (a file mounted read-only into a container)."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if not (_mount("--bind", str(path), str(path)) and _mount("-o", "remount,bind,ro", str(path))):
        subprocess.run(["umount", str(path)], capture_output=True)
        pytest.skip("cannot make a read-only mount here")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)  # lazily: an index left open is busy


def test_read_only_index_directory_still_serves_searches(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    _notes(ws, 3)
    state.mkdir()
    store = {"path": str(state / "index.sqlite")}
    with MemoryIndex(workspace=str(ws), store=store, provider=None, watch=False) as m:
        m.sync()
    (ws / "memory" / "note-0009.md").write_text("# New\n\nThe heron migration starts in May.\n")
    with _read_only(state):
        with MemoryIndex(workspace=str(ws), store=store, provider=None, watch=False) as m:
            res = m.search("zephyr billing")
            assert res.hits and res.hits[0].path == "MEMORY.md"
            st = m.status()
            assert any("cannot be written" in n for n in st.notes), st.notes
            with pytest.raises(OpenClawMemoryError, match="cannot be written"):
                m.sync()
            assert m.search("walrus 2 ledger").hits


def test_read_only_index_file_in_a_writable_directory_still_serves_searches(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    _notes(ws, 3)
    state.mkdir()
    index_file = state / "index.sqlite"
    with MemoryIndex(workspace=str(ws), store={"path": str(index_file)}, provider=None, watch=False) as m:
        m.sync()
    (ws / "memory" / "note-0009.md").write_text("# New\n\nThe heron migration starts in May.\n")
    with _read_only(index_file):
        with MemoryIndex(workspace=str(ws), store={"path": str(index_file)}, provider=None, watch=False) as m:
            res = m.search("zephyr billing")
            assert res.hits and res.hits[0].path == "MEMORY.md"
            assert any("cannot be written" in n for n in m.status().notes)
            with pytest.raises(OpenClawMemoryError, match="cannot be written"):
                m.sync()
