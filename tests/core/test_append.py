"""Append-only memory writes: allowed paths, newline boundary, no truncation, concurrency."""

from __future__ import annotations

import multiprocessing
import os
import sys
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from openclaw_memory.files.append import (
    append_memory,
    daily_note_path,
    is_default_append_path,
    local_now,
    normalize_rel_path,
    today,
)
from openclaw_memory.errors import ConfigError, MemoryPathError


def test_daily_note_path_and_today_in_timezone() -> None:
    assert daily_note_path(date(2026, 1, 16)) == "memory/2026-01-16.md"
    late_utc = datetime(2026, 1, 16, 23, 30, tzinfo=timezone.utc)
    assert today("UTC", now=late_utc) == date(2026, 1, 16)
    assert today("Asia/Tokyo", now=late_utc) == date(2026, 1, 17)
    assert today("America/Los_Angeles", now=late_utc) == date(2026, 1, 16)
    # a naive "now" is wall-clock time in the given zone
    assert local_now("Asia/Tokyo", datetime(2026, 1, 16, 1, 0)).utcoffset().total_seconds() == 9 * 3600
    assert isinstance(today(None), date)


def test_unknown_timezone_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="Mars/Olympus"):
        today("Mars/Olympus")


def test_default_allowed_paths() -> None:
    assert is_default_append_path("MEMORY.md")
    assert is_default_append_path("memory/2026-01-16.md")
    assert not is_default_append_path("memory/2026-02-30.md")  # not a real date
    assert not is_default_append_path("memory/2026-01-16-slug.md")
    assert not is_default_append_path("memory/notes.md")
    assert not is_default_append_path("SOUL.md")
    assert not is_default_append_path("AGENTS.md")


def test_creates_memory_dir_and_appends(tmp_path: Path) -> None:
    p = append_memory(tmp_path, "memory/2026-01-16.md", "- first")
    assert p == tmp_path.resolve() / "memory" / "2026-01-16.md"
    append_memory(tmp_path, "memory/2026-01-16.md", "- second\n")
    assert p.read_text() == "- first\n- second\n"


def test_half_an_emoji_is_appended_as_a_replacement_character(tmp_path: Path) -> None:
    """A lone surrogate (half of an emoji, as a model's tool arguments may decode) is written as U+FFFD by every
    appender (it raised UnicodeEncodeError, and the note was lost), and the lines around it are kept."""
    append_memory(tmp_path, "memory/2026-01-16.md", "- Gift idea: \ud83c for Sam\n- Call the vet")
    written = (tmp_path / "memory/2026-01-16.md").read_text(encoding="utf-8")
    assert written == "- Gift idea: \ufffd for Sam\n- Call the vet\n"


def test_newline_boundary_preserves_existing_content(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_text("# Memory\nexisting line without newline")
    append_memory(tmp_path, "MEMORY.md", "new fact")
    assert target.read_text() == "# Memory\nexisting line without newline\nnew fact\n"


def test_empty_text_is_a_noop(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_text("keep")
    append_memory(tmp_path, "MEMORY.md", "")
    assert target.read_text() == "keep"


@pytest.mark.parametrize(
    "bad",
    [
        "../outside.md",
        "memory/../../outside.md",
        "memory/../MEMORY.md",
        "/etc/passwd",
        "SOUL.md",
        "AGENTS.md",
        "memory/notes.md",
        "memory/2026-01-16.txt",
        "memory/sub/2026-01-16.md",
        "",
    ],
)
def test_refused_paths(tmp_path: Path, bad: str) -> None:
    (tmp_path / "SOUL.md").write_text("soul")
    with pytest.raises(MemoryPathError):
        append_memory(tmp_path, bad, "x")
    assert (tmp_path / "SOUL.md").read_text() == "soul"
    assert not (tmp_path.parent / "outside.md").exists()


def test_absolute_path_inside_workspace_is_accepted(tmp_path: Path) -> None:
    p = append_memory(tmp_path, str(tmp_path / "MEMORY.md"), "abs ok")
    assert p.read_text() == "abs ok\n"
    assert normalize_rel_path(tmp_path, "./memory\\2026-01-16.md") == "memory/2026-01-16.md"


def test_symlinked_file_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").symlink_to(outside)
    with pytest.raises(MemoryPathError, match="symlink"):
        append_memory(ws, "MEMORY.md", "pwned")
    assert outside.read_text() == "secret\n"


def test_symlinked_memory_dir_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "memory").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(MemoryPathError, match="symlink"):
        append_memory(ws, "memory/2026-01-16.md", "x")
    assert list(elsewhere.iterdir()) == []


def test_custom_allowed_policies(tmp_path: Path) -> None:
    append_memory(tmp_path, "memory/projects.md", "ok", allowed={"memory/projects.md"})
    append_memory(tmp_path, "memory/x.md", "ok", allowed=lambda rel: rel.startswith("memory/"))
    with pytest.raises(MemoryPathError, match="allowed"):
        append_memory(tmp_path, "MEMORY.md", "no", allowed={"memory/projects.md"})
    # '..' is refused even when the policy would accept everything
    with pytest.raises(MemoryPathError):
        append_memory(tmp_path / "memory", "../MEMORY.md", "no", allowed=lambda rel: True)


def test_directory_target_is_refused(tmp_path: Path) -> None:
    (tmp_path / "memory" / "2026-01-16.md").mkdir(parents=True)
    with pytest.raises((MemoryPathError, OSError)):
        append_memory(tmp_path, "memory/2026-01-16.md", "x")


def _writer(args: tuple[str, str, int]) -> None:
    ws, tag, n = args
    for i in range(n):
        append_memory(ws, "memory/2026-01-16.md", f"{tag}-{i:04d} " + "x" * 50)


@pytest.mark.skipif(sys.platform == "win32", reason="fork start method")
def test_concurrent_appends_from_two_processes_lose_no_line(tmp_path: Path) -> None:
    target = tmp_path / "memory" / "2026-01-16.md"
    target.parent.mkdir()
    target.write_text("header without newline")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=((str(tmp_path), tag, 200),)) for tag in ("A", "B")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    lines = target.read_text().split("\n")
    assert lines[0] == "header without newline"
    assert lines[-1] == ""
    body = lines[1:-1]
    assert len(body) == 400
    expected = {f"{t}-{i:04d} " + "x" * 50 for t in "AB" for i in range(200)}
    assert set(body) == expected
    # each writer's lines stay in order
    for tag in "AB":
        mine = [ln for ln in body if ln.startswith(tag)]
        assert mine == sorted(mine)


def test_lock_file_is_hidden_sidecar(tmp_path: Path) -> None:
    append_memory(tmp_path, "MEMORY.md", "x")
    visible = [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert visible == ["MEMORY.md"]
    assert os.path.getsize(tmp_path / "MEMORY.md") == 2


def test_absolute_path_through_symlinked_workspace_prefix(tmp_path: Path) -> None:
    real_ws = tmp_path / "real"
    real_ws.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real_ws, target_is_directory=True)
    p = append_memory(real_ws, str(alias / "MEMORY.md"), "via alias")
    assert p == real_ws / "MEMORY.md" and p.read_text() == "via alias\n"


def test_concurrent_appends_from_threads(tmp_path: Path) -> None:
    import threading

    def work(tag: str) -> None:
        for i in range(100):
            append_memory(tmp_path, "MEMORY.md", f"{tag}{i}")

    threads = [threading.Thread(target=work, args=(t,)) for t in "ABCD"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / "MEMORY.md").read_text().splitlines()
    assert sorted(lines) == sorted(f"{t}{i}" for t in "ABCD" for i in range(100))
