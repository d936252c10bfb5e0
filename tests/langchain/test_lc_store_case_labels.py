"""LangGraph store namespaces that differ only in letter case (``("users", "Alice")`` / ``("users", "alice")``) map
to item files whose names differ only in case, which a case-insensitive file system (macOS's default, Windows)
opens as one file: one namespace's ``get`` would return the other's items, its ``delete`` remove them, its ``put``
write among them. The store refuses to create a namespace whose file or folder differs only in case from an existing
one (on every system, so a workspace behaves the same wherever it is opened), and a read or delete of such a
namespace finds nothing. Namespaces that already exist side by side (on a case-sensitive system) keep working."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openclaw_memory import MemoryIndex, MemoryPathError
from openclaw_memory.files.records import RecordFiles, RecordText

from langchain_openclaw_memory import OpenClawMemoryStore

ALICE = ("users", "Alice")
LOWER = ("users", "alice")


@pytest.fixture
def store(memory: MemoryIndex) -> OpenClawMemoryStore:
    return OpenClawMemoryStore(memory)


def _files(memory: MemoryIndex) -> list[str]:
    return sorted(p.relative_to(memory.workspace).as_posix() for p in (memory.workspace / "memory/store").rglob("*"))


def test_a_new_namespace_differing_only_in_case_is_refused_naming_the_existing_one(
        store: OpenClawMemoryStore, memory: MemoryIndex) -> None:
    store.put(ALICE, "k", {"data": "Alice likes tea"})
    before = _files(memory)
    with pytest.raises(MemoryPathError, match=r"\('users', 'alice'\).*\('users', 'Alice'\).*case-insensitive"):
        store.put(LOWER, "k", {"data": "alice likes coffee"})
    assert _files(memory) == before
    assert store.get(ALICE, "k").value == {"data": "Alice likes tea"}  # type: ignore[union-attr]
    assert store.get(LOWER, "k") is None
    store.put(("users", "bob"), "k", {"data": "Bob"})  # another label is fine


def test_a_folder_differing_only_in_case_is_refused(store: OpenClawMemoryStore, memory: MemoryIndex) -> None:
    store.put(("Team", "a"), "k", {"data": "x"})
    with pytest.raises(MemoryPathError, match=r"\('team', 'b'\).*\('Team',\)"):
        store.put(("team", "b"), "k", {"data": "y"})
    assert [ns for ns in store.list_namespaces()] == [("Team", "a"), ("memory", "main")]


def test_namespaces_already_side_by_side_keep_working(store: OpenClawMemoryStore, memory: MemoryIndex) -> None:
    """Written by an earlier release on a case-sensitive file system: neither file is moved or refused."""
    store.put(ALICE, "k", {"data": "Alice"})
    folder = memory.workspace / "memory/store/users"
    (folder / "alice.md").write_text((folder / "Alice.md").read_text().replace("Alice", "alice"))
    store.put(ALICE, "k", {"data": "Alice"})
    store.put(LOWER, "k2", {"data": "alice again"})
    assert store.get(LOWER, "k").value == {"data": "alice"}  # type: ignore[union-attr]
    assert store.get(ALICE, "k").value == {"data": "Alice"}  # type: ignore[union-attr]
    assert store.get(LOWER, "k2").value == {"data": "alice again"}  # type: ignore[union-attr]
    store.delete(LOWER, "k2")
    assert store.get(LOWER, "k2") is None and store.get(ALICE, "k") is not None


def _case_insensitive(workspace: Path) -> Callable[[str], str]:
    """``rel`` as a case-insensitive file system opens it: each missing component by a name differing in case."""
    def resolve(rel: str) -> str:
        folder, parts = workspace, []
        for name in rel.split("/"):
            names = os.listdir(folder) if folder.is_dir() else []
            name = name if name in names else next((n for n in names if n.lower() == name.lower()), name)
            parts.append(name)
            folder = folder / name
        return "/".join(parts)
    return resolve


@pytest.fixture
def insensitive(monkeypatch: pytest.MonkeyPatch, memory: MemoryIndex) -> None:
    """Simulate a case-insensitive file system where the store reads and rewrites item files."""
    resolve = _case_insensitive(memory.workspace)
    read, edit = RecordFiles.read, RecordFiles.edit

    def read_folded(self: RecordFiles, rel: str) -> RecordText | None:
        return read(self, resolve(rel))

    def edit_folded(self: RecordFiles, rel: str, change: Callable[[RecordText], str | None], **kw: Any) -> bool:
        return edit(self, resolve(rel), change, **kw)

    monkeypatch.setattr(RecordFiles, "read", read_folded)
    monkeypatch.setattr(RecordFiles, "edit", edit_folded)


@pytest.mark.usefixtures("insensitive")
def test_on_a_case_insensitive_system_one_namespace_never_reads_or_deletes_the_others_items(
        store: OpenClawMemoryStore) -> None:
    store.put(ALICE, "k", {"data": "Alice likes tea"})
    assert store.get(LOWER, "k") is None
    store.delete(LOWER, "k")
    assert store.get(ALICE, "k").value == {"data": "Alice likes tea"}  # type: ignore[union-attr]
    with pytest.raises(MemoryPathError):
        store.put(LOWER, "k", {"data": "alice likes coffee"})
    assert store.get(ALICE, "k").value == {"data": "Alice likes tea"}  # type: ignore[union-attr]
    assert [i.namespace for i in store.search(("users",))] == [ALICE]


def test_an_existing_namespace_is_used_without_listing_its_folders(store: OpenClawMemoryStore,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The check costs a folder listing only where a file system folds case, or for a new namespace: a store of
    many namespaces is not listed on each put and get (here, a case-sensitive file system)."""
    store.put(ALICE, "k", {"data": "Alice"})
    listed: list[str] = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path=".": listed.append(str(path)) or real(path))
    store.put(ALICE, "k2", {"data": "Alice again"})
    assert store.get(ALICE, "k2") is not None
    assert not [p for p in listed if "memory/store" in p]
