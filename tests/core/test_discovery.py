"""Discovery, reading and memory_get path rules (spec §1, §7.3; internal.test.ts, read-file tests)."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import pytest

from openclaw_memory.files.discovery import (
    UnreadableFileError,
    build_file_entry,
    is_memory_path,
    list_memory_files,
    read_lines,
    read_memory_text,
    relative_path,
    resolve_memory_path,
)
from openclaw_memory.errors import MemoryPathError


def write(path: Path, text: str = "# note\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def rels(ws: Path, files: list[Path]) -> list[str]:
    return [relative_path(ws, f) for f in files]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


# ---- list_memory_files -------------------------------------------------------------------


def test_lists_root_files_and_nested_memory_dirs(ws: Path) -> None:
    write(ws / "MEMORY.md")
    write(ws / "memory.md")
    write(ws / "memory" / "2026-01-01.md")
    write(ws / "memory" / "projects" / "deep" / "x.md")
    write(ws / "memory" / "NOTES.MD")
    write(ws / "memory" / "todo.txt")
    write(ws / "DREAMS.md")
    write(ws / "README.md")
    files = list_memory_files(ws, [])
    assert all(f.is_absolute() for f in files)
    assert rels(ws, files) == ["MEMORY.md", "memory.md", "memory/2026-01-01.md", "memory/projects/deep/x.md"]


def test_missing_workspace_content_gives_nothing(ws: Path) -> None:
    assert list_memory_files(ws, [ws / "nope", Path("/does/not/exist")]) == []


def test_extra_paths_file_dir_relative_and_missing(ws: Path, tmp_path: Path) -> None:
    write(ws / "MEMORY.md")
    team = tmp_path / "team"
    write(team / "a.md")
    write(team / "sub" / "b.md")
    write(team / "ignore.txt")
    single = write(tmp_path / "single.md")
    write(ws / "subdir" / "nested.md")
    write(tmp_path / "single.txt")
    files = list_memory_files(ws, [team, single, Path("subdir"), tmp_path / "single.txt", Path("missing")])
    assert rels(ws, files) == ["MEMORY.md", "../team/a.md", "../team/sub/b.md", "../single.md", "subdir/nested.md"]


def test_symlinked_files_and_dirs_are_skipped(ws: Path, tmp_path: Path) -> None:
    write(ws / "memory" / "real.md")
    target_file = write(tmp_path / "target.md")
    target_dir = tmp_path / "target-dir"
    write(target_dir / "nested.md")
    os.symlink(target_file, ws / "memory" / "linked.md")
    os.symlink(target_dir, ws / "memory" / "linked-dir")
    os.symlink(target_file, ws / "MEMORY.md")
    extra = tmp_path / "extra"
    write(extra / "note.md")
    os.symlink(target_file, extra / "linked.md")
    link_dir = tmp_path / "linked-extra"
    os.symlink(target_dir, link_dir)
    link_file = tmp_path / "linked-file.md"
    os.symlink(target_file, link_file)
    files = list_memory_files(ws, [extra, link_dir, link_file])
    assert rels(ws, files) == ["memory/real.md", "../extra/note.md"]


def test_symlinked_memory_dir_is_skipped(ws: Path, tmp_path: Path) -> None:
    write(tmp_path / "elsewhere" / "x.md")
    os.symlink(tmp_path / "elsewhere", ws / "memory")
    assert list_memory_files(ws, []) == []


def test_overlapping_extra_paths_are_deduplicated_by_realpath(ws: Path) -> None:
    write(ws / "MEMORY.md")
    write(ws / "memory" / "a.md")
    files = list_memory_files(ws, [ws, Path("."), ws / "MEMORY.md", ws / "memory"])
    names = rels(ws, files)
    assert names.count("MEMORY.md") == 1
    assert names.count("memory/a.md") == 1
    assert names[:2] == ["MEMORY.md", "memory/a.md"]  # first occurrence wins, order kept


# ---- reading -----------------------------------------------------------------------------


def test_non_utf8_file_is_read_with_replacement_chars(ws: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = ws / "memory" / "latin1.md"
    path.parent.mkdir()
    path.write_bytes("café\n".encode("latin-1"))
    with caplog.at_level(logging.WARNING, logger="openclaw_memory.files.discovery"):
        assert read_memory_text(path) == "caf\ufffd\n"
    assert "not valid UTF-8" in caplog.text


def test_utf8_bom_is_stripped(ws: Path) -> None:
    path = ws / "MEMORY.md"
    path.write_bytes(b"\xef\xbb\xbfhello")
    assert read_memory_text(path) == "hello"


def test_binary_file_raises(ws: Path) -> None:
    path = ws / "MEMORY.md"
    path.write_bytes(b"PK\x03\x04\x00\x00binary")
    with pytest.raises(UnreadableFileError, match="binary"):
        read_memory_text(path)


def test_missing_file_reads_as_none(ws: Path) -> None:
    assert read_memory_text(ws / "gone.md") is None


def test_symlink_is_not_opened(ws: Path, tmp_path: Path) -> None:
    os.symlink(write(tmp_path / "t.md"), ws / "MEMORY.md")
    with pytest.raises(UnreadableFileError, match="symbolic link"):
        read_memory_text(ws / "MEMORY.md")


def test_build_file_entry(ws: Path) -> None:
    path = write(ws / "memory" / "note.md", "héllo\n")
    result = build_file_entry(path, ws)
    assert result is not None
    entry, text = result
    assert text == "héllo\n"
    assert entry.path == "memory/note.md"
    assert entry.abs_path == str(path)
    assert entry.size == len("héllo\n".encode("utf-8"))
    assert entry.hash == hashlib.sha256("héllo\n".encode("utf-8")).hexdigest()
    assert entry.mtime_ms == path.stat().st_mtime_ns / 1e6
    assert entry.source == "memory"
    assert build_file_entry(path, ws, source="sessions")[0].source == "sessions"  # type: ignore[index]


def test_build_file_entry_for_vanished_file(ws: Path) -> None:
    path = write(ws / "ghost.md")
    path.unlink()
    assert build_file_entry(path, ws) is None


# ---- is_memory_path ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("MEMORY.md", True),
        ("memory.md", True),
        ("DREAMS.md", True),
        ("memory/2026-01-01.md", True),
        ("./memory/a/b.md", True),
        ("/memory/a.md", True),
        ("memory\\a.md", True),
        ("memory/../MEMORY.md", True),
        ("memory/../secret.md", False),
        ("../memory/a.md", False),
        ("README.md", False),
        ("memory", False),
        ("memoryx/a.md", False),
        ("", False),
    ],
)
def test_is_memory_path(rel: str, expected: bool) -> None:
    assert is_memory_path(rel) is expected


# ---- resolve_memory_path -----------------------------------------------------------------


@pytest.fixture
def layout(ws: Path, tmp_path: Path) -> Path:
    write(ws / "MEMORY.md")
    write(ws / "memory" / "2026-01-01.md")
    write(ws / "memory" / "notes.txt")
    write(ws / "secret.md")
    outside = tmp_path / "outside"
    write(outside / "x.md")
    os.symlink(outside / "x.md", ws / "memory" / "link.md")
    os.symlink(outside, ws / "memory" / "linkdir")
    return ws


@pytest.mark.parametrize(
    ("requested", "message"),
    [
        ("", "path is required"),
        ("   ", "path is required"),
        ("../etc/passwd", "outside the workspace"),
        ("/etc/passwd", "outside the workspace"),
        ("memory/../../x.md", "outside the workspace"),
        ("secret.md", "not a memory file"),
        ("memory/link.md", "symbolic link"),
        ("memory/linkdir/x.md", "symbolic link"),
        ("memory/notes.txt", r"not a Markdown \(.md\) file"),
        ("memory", "not a memory file"),
    ],
)
def test_resolve_rejects(layout: Path, requested: str, message: str) -> None:
    with pytest.raises(MemoryPathError, match=message) as info:
        resolve_memory_path(layout, [], requested)
    assert "allowed" in str(info.value) or "symbolic link" in str(info.value)


def test_resolve_rejects_directory_named_like_markdown(layout: Path) -> None:
    (layout / "memory" / "dir.md").mkdir()
    with pytest.raises(MemoryPathError, match="is a directory"):
        resolve_memory_path(layout, [], "memory/dir.md")


@pytest.mark.parametrize(
    ("requested", "rel"),
    [
        ("MEMORY.md", "MEMORY.md"),
        ("./memory/2026-01-01.md", "memory/2026-01-01.md"),
        ("memory\\2026-01-01.md", "memory/2026-01-01.md"),
        ("memory/not-yet-written.md", "memory/not-yet-written.md"),
        ("memory/new-dir/x.md", "memory/new-dir/x.md"),
    ],
)
def test_resolve_allows(layout: Path, requested: str, rel: str) -> None:
    abs_path, got_rel = resolve_memory_path(layout, [], requested)
    assert got_rel == rel
    assert abs_path == layout / rel


def test_resolve_allows_absolute_path_of_allowed_file(layout: Path) -> None:
    target = layout / "memory" / "2026-01-01.md"
    assert resolve_memory_path(layout, [], str(target)) == (target, "memory/2026-01-01.md")


def test_resolve_extra_paths(ws: Path, tmp_path: Path) -> None:
    team = tmp_path / "team"
    write(team / "sub" / "a.md")
    single = write(tmp_path / "single.md")
    other = write(tmp_path / "other.md")
    linked_extra = tmp_path / "linked-team"
    os.symlink(team, linked_extra)
    extras = [team, single, linked_extra]
    assert resolve_memory_path(ws, extras, str(team / "sub" / "a.md")) == (team / "sub" / "a.md", "../team/sub/a.md")
    assert resolve_memory_path(ws, extras, "../team/sub/a.md")[1] == "../team/sub/a.md"
    assert resolve_memory_path(ws, extras, str(single)) == (single, "../single.md")
    with pytest.raises(MemoryPathError, match="outside the workspace"):
        resolve_memory_path(ws, extras, str(other))
    with pytest.raises(MemoryPathError, match="outside the workspace"):
        resolve_memory_path(ws, extras, str(linked_extra / "sub" / "a.md"))
    with pytest.raises(MemoryPathError, match="outside the workspace"):
        resolve_memory_path(ws, extras, str(team))


def test_resolve_rejects_symlink_inside_extra_dir(ws: Path, tmp_path: Path) -> None:
    team = tmp_path / "team"
    team.mkdir()
    os.symlink(write(tmp_path / "private.md"), team / "leak.md")
    with pytest.raises(MemoryPathError, match="symbolic link"):
        resolve_memory_path(ws, [team], str(team / "leak.md"))


# ---- read_lines --------------------------------------------------------------------------


def test_read_lines_slices(ws: Path) -> None:
    path = write(ws / "MEMORY.md", "l1\nl2\nl3\nl4\n")
    assert read_lines(path, None, None) == ("l1\nl2\nl3\nl4\n", 1, 5)
    assert read_lines(path, 2, 2) == ("l2\nl3", 2, 3)
    assert read_lines(path, 3, None) == ("l3\nl4\n", 3, 5)
    assert read_lines(path, 0, 1) == ("l1", 1, 1)
    assert read_lines(path, 2, 0) == ("l2", 2, 2)
    assert read_lines(path, 4, 100) == ("l4\n", 4, 5)


def test_read_lines_past_eof_and_missing(ws: Path) -> None:
    path = write(ws / "MEMORY.md", "only\n")
    assert read_lines(path, 10, 5) == ("", 10, 9)
    assert read_lines(ws / "memory" / "missing.md", 3, 2) == ("", 3, 2)


@pytest.mark.parametrize("ws, path", [
    ("/w/ws", "/w/ws/memory/2026-01-01.md"),
    ("/w/ws", "/w/ws/MEMORY.md"),
    ("/w/ws", "/w/ws2/memory/a.md"),          # a sibling sharing the prefix: not below the workspace
    ("/w/ws", "/w/other/notes/a.md"),          # an extra path outside the workspace
    ("/w/ws", "/w/ws/memory/../MEMORY.md"),    # not normalised
    ("/w/ws", "/w/ws/memory//a.md"),
    ("/w/ws", "/w/ws/./memory/a.md"),
    ("/w/ws/", "/w/ws/memory/a.md"),           # a workspace with a trailing separator
    ("/w/./ws", "/w/./ws/memory/a.md"),
    ("/", "/memory/a.md"),
    ("/w/ws", "/w/ws/.."),
    ("/w/ws", "/w/ws/../b/c.md"),
])
def test_relative_path_is_relpath_with_slashes(ws: str, path: str) -> None:
    assert relative_path(Path(ws), Path(path)) == os.path.relpath(path, ws).replace(os.sep, "/")
    assert relative_path(ws, path) == os.path.relpath(path, ws).replace(os.sep, "/")  # type: ignore[arg-type]
