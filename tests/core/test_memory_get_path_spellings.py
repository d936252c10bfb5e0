"""``memory_get`` finds a memory file by the path a user or a model gives, spelled as they spell it.

* A decomposed file name (``cafe\\u0301.md``: as macOS stores names, and as they stay when copied or synced from a
  Mac to Linux) was missed when asked for composed (``café.md``, as a model writes text and as the user types it):
  ``exists=False``, though memory_search had just returned the file. Now the one file whose name is the same text in
  another Unicode normalization is read.
* An absolute path through the workspace as it was configured (a symlink to it; ``/tmp`` for ``/private/tmp`` on
  macOS) was refused as "outside the workspace", as the index keeps the resolved path. It is now read, and a symlink
  below the workspace is still refused.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex, MemoryPathError
from openclaw_memory.agent.tools import memory_get

COMPOSED = unicodedata.normalize("NFC", "memory/café.md")
DECOMPOSED = unicodedata.normalize("NFD", "memory/café.md")


@pytest.fixture
def decomposed(workspace: Path) -> Path:
    (workspace / "memory").mkdir()
    (workspace / DECOMPOSED).write_text("# Café\n\n- The user orders a flat white.\n")
    return workspace


def test_a_decomposed_name_is_read_when_asked_composed(decomposed: Path,
                                                       make_index: Callable[..., MemoryIndex]) -> None:
    got = memory_get(make_index(None), COMPOSED)
    assert got["text"] == "# Café\n\n- The user orders a flat white.\n"
    assert got["path"] == DECOMPOSED  # the file's own name, as memory_search cites it


def test_a_decomposed_folder_is_read_when_asked_composed(workspace: Path,
                                                         make_index: Callable[..., MemoryIndex]) -> None:
    folder = workspace / unicodedata.normalize("NFD", "memory/Zürich")
    folder.mkdir(parents=True)
    (folder / "office.md").write_text("- Desk 4\n")
    got = memory_get(make_index(None), unicodedata.normalize("NFC", "memory/Zürich/office.md"))
    assert got["text"] == "- Desk 4\n"


def test_a_missing_name_is_still_missing(decomposed: Path, make_index: Callable[..., MemoryIndex]) -> None:
    got = memory_get(make_index(None), "memory/cafe.md")
    assert got["text"] == "" and got["exists"] is False


def test_an_absolute_path_through_a_symlink_to_the_workspace_is_read(
        workspace: Path, tmp_path: Path, make_index: Callable[..., MemoryIndex]) -> None:
    (workspace / "memory").mkdir()
    (workspace / "memory/2026-01-16.md").write_text("- Chose SQLite.\n")
    link = tmp_path / "ws-link"
    os.symlink(workspace, link)
    memory = make_index(None, workspace=link)

    got = memory_get(memory, str(link / "memory/2026-01-16.md"))

    assert got["text"] == "- Chose SQLite.\n" and got["path"] == "memory/2026-01-16.md"


def test_a_symlink_below_the_workspace_reached_by_that_path_is_still_refused(
        workspace: Path, tmp_path: Path, make_index: Callable[..., MemoryIndex]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("- secret\n")
    (workspace / "memory").mkdir()
    os.symlink(outside, workspace / "memory/linked")
    link = tmp_path / "ws-link"
    os.symlink(workspace, link)
    memory = make_index(None, workspace=link)

    got = memory_get(memory, str(link / "memory/linked/secret.md"))

    assert got["text"] == "" and "symbolic link" in got["error"]


def test_a_name_too_long_is_a_path_error(workspace: Path, make_index: Callable[..., MemoryIndex]) -> None:
    """A name over 255 bytes raised a bare ``OSError`` (errno 36) from ``MemoryIndex.get`` (and from the LangGraph
    store's ``get``/``put``); it is a MemoryPathError saying the name is too long."""
    (workspace / "memory").mkdir()
    memory = make_index(None)
    with pytest.raises(MemoryPathError, match=r"too long for the file system \(a name of 303 bytes, at most 255\)"):
        memory.get("memory/" + "a" * 300 + ".md")
    got = memory_get(memory, "memory/" + "a" * 300 + ".md")
    assert got["text"] == "" and "a name of 303 bytes" in got["error"]
