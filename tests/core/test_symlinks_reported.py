"""A symlinked MEMORY.md, memory/ folder, note or extra path is not followed (OpenClaw does not either), and no
longer silently: the sync report and ``status().issues`` name it and say what to do."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.workspaces import plain_index, write_files


def _outside(tmp_path: Path) -> Path:
    return write_files(tmp_path / "vault", {"notes/2026-11-01.md": "The zebra migration is planned.\n",
                                            "MEMORY.md": "The okapi project is ours.\n"})


def test_a_symlinked_memory_folder_and_memory_md_are_reported(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.symlink(outside / "notes", workspace / "memory")
    os.symlink(outside / "MEMORY.md", workspace / "MEMORY.md")
    with plain_index(workspace, tmp_path / "state") as memory:
        report = memory.sync()
        assert memory.indexed_files() == []  # still not followed
        assert report.files_skipped == ["MEMORY.md"]
        assert any(w.startswith("memory: skipped (directory is a symbolic link") for w in report.warnings)
        issues = memory.status().issues
    assert any("MEMORY.md" in issue and "symbolic link" in issue for issue in issues)
    assert any(issue.startswith("not indexed: memory (directory is a symbolic link") for issue in issues)


def test_symlinks_inside_memory_and_a_symlinked_extra_path_are_reported(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "memory" / "real.md").write_text("A real note.\n")
    os.symlink(outside / "notes" / "2026-11-01.md", workspace / "memory" / "linked.md")
    os.symlink(outside / "notes", workspace / "memory" / "projects")
    os.symlink(outside / "notes", tmp_path / "docs-link")
    os.symlink(outside / "MEMORY.md", workspace / "memory" / "notes.txt")  # not a memory file: not reported
    with plain_index(workspace, tmp_path / "state", extra_paths=[str(tmp_path / "docs-link")]) as memory:
        report = memory.sync()
        assert memory.indexed_files() == ["memory/real.md"]
        issues = memory.status().issues
    assert report.files_skipped == ["memory/linked.md"]
    assert any("memory/projects" in w and "symbolic link" in w for w in report.warnings)
    assert any("docs-link" in issue and "symbolic link" in issue for issue in issues)
    assert not any("notes.txt" in issue for issue in issues)


def test_reported_symlinks_are_not_changes(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    os.symlink(outside / "notes" / "2026-11-01.md", workspace / "memory" / "linked.md")
    with plain_index(workspace, tmp_path / "state") as memory:
        memory.sync()
        assert memory.changed_files() == []
        assert not memory.status().dirty


def test_an_extra_path_that_is_not_markdown_is_reported(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "notes.txt").write_text("The zebra migration is planned.\n")
    with plain_index(workspace, tmp_path / "state", extra_paths=[str(tmp_path / "notes.txt")]) as memory:
        report = memory.sync()
        issues = memory.status().issues
    assert any("notes.txt" in w and "not a Markdown (.md) file" in w for w in report.warnings)
    assert any("notes.txt" in issue and "not a Markdown (.md) file" in issue for issue in issues)
