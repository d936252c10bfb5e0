"""A memory file name a user or an agent gives must be the same file on every system a workspace is opened on.

* Windows opens a device for ``CON``, ``PRN``, ``AUX``, ``NUL``, ``COM1``-``COM9``, ``LPT1``-``LPT9`` (any case, with
  any extension): a write to ``memory/nul.md`` is lost there, while Linux and macOS made a file of it. It drops a
  trailing period or space (``memory/proj./a.md`` is ``memory/proj/a.md``) and makes ``a:b.md`` a hidden stream.
* macOS and Windows keep ``memory/Topic.md`` and ``memory/topic.md`` (or a composed and a decomposed ``café.md``) in
  one file: an append to one went into the other there, and into a second file on Linux.

A write that may make a file or folder now refuses such a name with MemoryPathError on every system, naming the
existing spelling of a twin; nothing is written. Reads are not refused, and files that already exist side by side
keep being written.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime
from pathlib import Path

import pytest
from openclaw_memory import MemoryPathError
from openclaw_memory.agent.session_hook import save_session_memory
from openclaw_memory.config import MemoryConfig
from openclaw_memory.files.append import append_memory
from openclaw_memory.files.memory_writes import create_file, rewrite_file


def _names(workspace: Path) -> list[str]:
    return sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*"))


def _allow_all(rel: str) -> bool:
    return True


@pytest.mark.parametrize("rel", [
    "memory/nul.md", "memory/NUL.md", "memory/con.md", "memory/Aux.md", "memory/prn.notes.md", "memory/com1.md",
    "memory/LPT9.md", "memory/com\u00b9.md", "memory/nul/2026-01-16.md", "memory/con .md",
])
def test_a_windows_device_name_is_refused_and_nothing_is_written(workspace: Path, rel: str) -> None:
    before = _names(workspace)
    with pytest.raises(MemoryPathError, match=r"device name on Windows.*add a word"):
        append_memory(workspace, rel, "- a note that Windows would lose", allowed=_allow_all)
    assert _names(workspace) == before


@pytest.mark.parametrize(("rel", "reason"), [
    ("memory/projects./a.md", "ends with a period or a space"),
    ("memory/projects /a.md", "ends with a period or a space"),
    ("memory/meeting 10:30.md", "does not allow"),
    ("memory/what?.md", "does not allow"),
    ("memory/boat \ud83d.md", "lone UTF-16 surrogate"),  # half an emoji: no UTF-8 name, never indexed
])
def test_a_name_windows_changes_is_refused(workspace: Path, rel: str, reason: str) -> None:
    with pytest.raises(MemoryPathError, match=reason):
        append_memory(workspace, rel, "- note", allowed=_allow_all)
    assert not (workspace / "memory").exists() or _names(workspace) == ["memory"]


def test_names_that_only_contain_a_device_name_are_written(workspace: Path) -> None:
    for rel in ("memory/console.md", "memory/nullable.md", "memory/com10.md", "memory/aux-notes.md"):
        append_memory(workspace, rel, "- fine", allowed=_allow_all)
    assert (workspace / "memory/console.md").read_text() == "- fine\n"


def test_a_new_file_differing_only_in_case_is_refused_naming_the_existing_one(workspace: Path) -> None:
    append_memory(workspace, "memory/Topic.md", "- first", allowed=_allow_all)
    with pytest.raises(MemoryPathError, match=r"'memory/Topic\.md' exists and differs from it only in letter case"):
        append_memory(workspace, "memory/topic.md", "- second", allowed=_allow_all)
    assert _names(workspace) == ["memory", "memory/Topic.md"]
    assert (workspace / "memory/Topic.md").read_text() == "- first\n"


def test_a_new_folder_differing_only_in_case_is_refused(workspace: Path) -> None:
    append_memory(workspace, "memory/Projects/api.md", "- first", allowed=_allow_all)
    with pytest.raises(MemoryPathError, match=r"'memory/Projects' exists"):
        append_memory(workspace, "memory/projects/web.md", "- second", allowed=_allow_all)
    assert _names(workspace) == ["memory", "memory/Projects", "memory/Projects/api.md"]


def test_a_rewrite_that_creates_a_case_twin_is_refused(workspace: Path) -> None:
    append_memory(workspace, "memory/Topic.md", "- first", allowed=_allow_all)
    with pytest.raises(MemoryPathError, match="letter case"):
        rewrite_file(workspace, "memory/TOPIC.md", lambda old: "- replaced\n", create=True)
    assert (workspace / "memory/Topic.md").read_text() == "- first\n"


def test_a_new_file_in_another_unicode_normalization_is_refused(workspace: Path) -> None:
    decomposed = unicodedata.normalize("NFD", "memory/café.md")
    (workspace / "memory").mkdir()
    (workspace / decomposed).write_text("- espresso\n")
    with pytest.raises(MemoryPathError, match=r"another Unicode normalization.*cafe\\u0301"):
        append_memory(workspace, unicodedata.normalize("NFC", "memory/café.md"), "- latte", allowed=_allow_all)
    assert _names(workspace) == ["memory", decomposed]


def test_files_already_side_by_side_keep_being_written(workspace: Path) -> None:
    """Made by hand on a case-sensitive system: each is written under its own name, none is refused or moved."""
    (workspace / "memory").mkdir()
    (workspace / "memory/Topic.md").write_text("- upper\n")
    (workspace / "memory/topic.md").write_text("- lower\n")
    append_memory(workspace, "memory/topic.md", "- lower again", allowed=_allow_all)
    append_memory(workspace, "memory/Topic.md", "- upper again", allowed=_allow_all)
    assert (workspace / "memory/topic.md").read_text() == "- lower\n- lower again\n"
    assert (workspace / "memory/Topic.md").read_text() == "- upper\n- upper again\n"


def test_memory_md_beside_the_lower_case_file_is_written(workspace: Path) -> None:
    """OpenClaw's two spellings of the long-term memory file are both memory: MEMORY.md is no twin of memory.md."""
    (workspace / "memory.md").write_text("- lower-case long-term\n")
    append_memory(workspace, "MEMORY.md", "- promoted")
    assert (workspace / "MEMORY.md").read_text() == "- promoted\n"


def test_the_workspace_layout_names_are_written_beside_their_twins(workspace: Path) -> None:
    """``memory/`` and the root files are OpenClaw's names, not given ones: a hand-made ``Memory/`` folder (which
    macOS opens as ``memory/``) or ``Memory.md`` never stops the daily notes or MEMORY.md being written."""
    (workspace / "Memory").mkdir()
    (workspace / "Memory.md").write_text("- hand-written\n")
    append_memory(workspace, "memory/2026-01-16.md", "- daily")
    append_memory(workspace, "MEMORY.md", "- long-term")
    assert (workspace / "memory/2026-01-16.md").read_text() == "- daily\n"


def test_create_file_takes_a_case_twin_as_taken(workspace: Path) -> None:
    (workspace / "memory").mkdir()
    (workspace / "memory/2026-01-16-API.md").write_text("- hand-written\n")
    assert create_file(workspace, "memory/2026-01-16-api.md", "- session\n") is False
    assert _names(workspace) == ["memory", "memory/2026-01-16-API.md"]


def test_a_session_memory_beside_a_case_twin_gets_the_next_name(workspace: Path) -> None:
    (workspace / "memory").mkdir()
    (workspace / "memory/2026-01-16-API-Design.md").write_text("- hand-written\n")
    config = MemoryConfig(workspace=workspace, timezone="UTC")
    rel = save_session_memory(config, [{"role": "user", "content": "Let us design the API."}],
                              now=datetime(2026, 1, 16, 9, 0), slug_fn=lambda prompt: "api-design")
    assert rel is not None and rel.relative_to(workspace).as_posix() == "memory/2026-01-16-api-design-2.md"
    assert (workspace / "memory/2026-01-16-API-Design.md").read_text() == "- hand-written\n"
