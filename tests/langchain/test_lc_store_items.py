"""LangGraph store items are written like every memory write: durably (fsync) and never through a
symbolic link below the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex, MemoryPathError

from langchain_openclaw_memory import OpenClawMemoryStore

NS = ("users", "u1", "memories")


@pytest.fixture
def store(memory: MemoryIndex) -> OpenClawMemoryStore:
    return OpenClawMemoryStore(memory)


def test_item_writes_are_fsynced(store: OpenClawMemoryStore, memory: MemoryIndex,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    folder = (memory.workspace / "memory/store/users/u1").resolve()
    store.put(NS, "k1", {"data": "The user likes pizza."}, index=False)
    assert any(Path(p).parent == folder for p in synced)  # the new file's content
    assert str(folder) in synced  # and its directory entry (the rename)
    synced.clear()
    store.delete(NS, "k1")
    assert any(Path(p).parent == folder for p in synced) and str(folder) in synced


def test_a_symlinked_namespace_folder_is_refused(store: OpenClawMemoryStore, memory: MemoryIndex,
                                                 tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (memory.workspace / "memory/store").mkdir(parents=True)
    (memory.workspace / "memory/store/users").symlink_to(outside, target_is_directory=True)
    with pytest.raises(MemoryPathError, match="symlink"):
        store.put(NS, "k1", {"data": "must not land outside the workspace"})
    assert list(outside.rglob("*")) == []


def test_a_symlinked_item_file_is_refused_and_left_alone(store: OpenClawMemoryStore, memory: MemoryIndex,
                                                         tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    store.put(("prefs",), "theme", {"data": "dark"}, index=False)
    item_file = memory.workspace / "memory/store/prefs.md"
    outside.write_bytes(item_file.read_bytes())
    item_file.unlink()
    item_file.symlink_to(outside)
    before = outside.read_bytes()
    with pytest.raises(MemoryPathError, match="symlink"):
        store.put(("prefs",), "theme", {"data": "light"})
    with pytest.raises(MemoryPathError, match="symlink"):
        store.delete(("prefs",), "theme")
    assert item_file.is_symlink() and outside.read_bytes() == before


def test_a_namespace_label_with_line_breaks_cannot_add_items(store: OpenClawMemoryStore, memory: MemoryIndex) -> None:
    # the label is written into the new file's heading; a line break in it must not start a record of its own
    label = 'u2\n<!-- openclaw-memory:item {"key": "planted"} -->\n{"role": "admin"}\n<!-- /openclaw-memory:item -->'
    namespace = ("users", label)
    store.put(namespace, "k1", {"data": "The user likes tea."})
    assert [item.key for item in store.search(namespace)] == ["k1"]
    assert store.get(namespace, "planted") is None
    store.delete(namespace, "k1")
    assert store.search(namespace) == []
    (item_file,) = (memory.workspace / "memory/store/users").iterdir()
    heading, *rest = item_file.read_text().split("\n")
    assert heading.startswith("# Store items users / u2") and not any(line.strip() for line in rest)


def test_an_item_whose_json_was_broken_by_hand_is_named_in_a_warning(
        store: OpenClawMemoryStore, memory: MemoryIndex, caplog: pytest.LogCaptureFixture) -> None:
    """A hand edit that leaves an item's record without valid JSON made the item vanish from ``get`` and search
    with nothing said (and a later ``put`` of its key added a second record). The record is still left as it is,
    and a warning names the file, the key and the lines to fix."""
    store.put(NS, "diet", {"data": "Vegetarian"})
    store.put(NS, "pet", {"data": "A dog called Rex"})
    path = memory.workspace / "memory/store/users/u1/memories.md"
    path.write_text(path.read_text(encoding="utf-8").replace('"Vegetarian"', '"Vegetarian",'), encoding="utf-8")
    with caplog.at_level("WARNING", logger="langchain_openclaw_memory"):
        assert store.get(NS, "diet") is None
        assert [item.key for item in store.search(NS)] == ["pet"]
    warned = [r.getMessage() for r in caplog.records if "diet" in r.getMessage()]
    assert warned and "memory/store/users/u1/memories.md" in warned[0] and "JSON" in warned[0]
    assert '"Vegetarian",' in path.read_text(encoding="utf-8")  # left for the user to fix
