"""The safe-open rules hold on both paths: by directory descriptor (POSIX) and, where ``os.open``
takes no ``dir_fd`` (Windows), by lstat checks before a path-based open (issue 20, item 3)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from openclaw_memory.files import safe_fs
from openclaw_memory.files.append import append_memory
from openclaw_memory.files.discovery import UnreadableFileError, list_memory_files, read_lines, read_memory_text
from openclaw_memory.errors import MemoryPathError


@pytest.fixture(params=["dir_fd", "lstat-fallback"])
def mode(request, monkeypatch) -> str:
    if request.param == "lstat-fallback":
        monkeypatch.setattr(safe_fs, "DIR_FD_SUPPORTED", False)
    elif not safe_fs.DIR_FD_SUPPORTED:
        pytest.skip("no dir_fd support on this platform")
    return request.param


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "memory" / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "x.md").write_text("SECRET\n", encoding="utf-8")
    (ws / "memory" / "sub" / "x.md").write_text("# inside\n", encoding="utf-8")
    (ws / "memory" / "link").symlink_to(outside)
    (ws / "memory" / "file.md").symlink_to(outside / "x.md")
    return ws, outside


def test_reads_refuse_a_symlink_at_any_component(mode, tree):
    ws, _ = tree
    assert safe_fs.read_file(ws, "memory/sub/x.md")[1] == b"# inside\n"
    for rel in ("memory/link/x.md", "memory/file.md"):
        with pytest.raises(OSError) as info:
            safe_fs.read_file(ws, rel)
        assert info.value.errno == errno.ELOOP
        with pytest.raises(UnreadableFileError, match="symbolic link"):
            read_memory_text(ws / rel, ws)
    assert safe_fs.read_file(ws, "memory/sub/missing.md") is None
    assert safe_fs.read_file(ws, "memory/nodir/x.md") is None
    assert read_lines(ws / "memory/sub/x.md", 1, 1, root=ws) == ("# inside", 1, 1)


def test_a_fifo_is_refused_without_blocking(mode, tree):
    ws, _ = tree
    os.mkfifo(ws / "memory" / "pipe.md")
    with pytest.raises(OSError) as info:
        safe_fs.read_file(ws, "memory/pipe.md")
    assert info.value.errno in (errno.EINVAL, errno.ENXIO)


def test_paths_that_leave_the_root_are_refused(mode, tree):
    ws, _ = tree
    for rel in ("../outside/x.md", "/etc/passwd", "", "memory/../../x.md", "a\x00b"):
        with pytest.raises(ValueError):
            safe_fs.read_file(ws, rel)


def test_appends_refuse_symlinked_directories_and_make_missing_ones(mode, tree):
    ws, outside = tree
    append_memory(ws, "memory/sub/new/deeper.md", "- made", allowed=lambda rel: True)
    assert (ws / "memory/sub/new/deeper.md").read_text(encoding="utf-8") == "- made\n"
    for rel in ("memory/link/x.md", "memory/file.md"):
        with pytest.raises(MemoryPathError, match="symlink|symbolic link"):
            append_memory(ws, rel, "- no", allowed=lambda rel: True)
    assert (outside / "x.md").read_text(encoding="utf-8") == "SECRET\n"
    assert sorted(p.name for p in outside.iterdir()) == ["x.md"]


def test_append_creates_a_missing_workspace(mode, tmp_path):
    ws = tmp_path / "fresh" / "ws"
    append_memory(ws, "memory/2026-01-16.md", "- first note")
    assert (ws / "memory" / "2026-01-16.md").read_text(encoding="utf-8") == "- first note\n"


def test_discovery_lists_the_same_files_either_way(mode, tree):
    ws, _ = tree
    assert [p.relative_to(ws).as_posix() for p in list_memory_files(ws, [])] == ["memory/sub/x.md"]
