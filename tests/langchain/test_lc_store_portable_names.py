"""LangGraph store names that would not be the same file on every system.

* A namespace label that Windows reserves for a device (``("users", "con")``, ``("nul", "x")``, ``com1``, any case)
  was a file or folder of that name (``memory/store/users/con.md``): on Windows its items are lost, and a workspace
  holding it cannot be checked out there. Such a label's first character is now percent-encoded, as a tool folder's
  is (``%63on.md``; decoding gives the label back), and items an earlier release wrote under the plain name are moved
  to it when the store opens.
* A memory-file key (``memory/topic.md``) differing only in letter case from an existing file (``memory/Topic.md``)
  made a second file on Linux and appended to the other on macOS and Windows; it is refused everywhere, as a device
  name (``memory/nul.md``) is. A key asked composed (``café.md``) where the file is stored decomposed (as macOS names
  files) is written to that file.
"""

from __future__ import annotations

import unicodedata

import pytest
from openclaw_memory import MemoryIndex, MemoryPathError

from langchain_openclaw_memory import OpenClawMemoryStore

MAIN = ("memory", "main")


@pytest.fixture
def store(memory: MemoryIndex) -> OpenClawMemoryStore:
    return OpenClawMemoryStore(memory)


def _store_files(memory: MemoryIndex) -> list[str]:
    return sorted(p.relative_to(memory.workspace / "memory/store").as_posix()
                  for p in (memory.workspace / "memory/store").rglob("*.md"))


@pytest.mark.parametrize("namespace", [("users", "con"), ("users", "NUL"), ("aux", "notes"), ("a", "Com1", "lpt9")])
def test_a_device_name_label_is_a_file_on_every_system(
        store: OpenClawMemoryStore, memory: MemoryIndex, namespace: tuple[str, ...]) -> None:
    store.put(namespace, "k", {"data": "The user's boat is named Albatross."})

    (written,) = _store_files(memory)
    names = written.removesuffix(".md").split("/")
    assert [n.lower() for n in names] != [label.lower() for label in namespace]  # no part is the device name
    item = store.get(namespace, "k")
    assert item is not None and item.value == {"data": "The user's boat is named Albatross."}
    assert namespace in store.list_namespaces()
    found = store.search(namespace[:1], query="boat Albatross")
    assert [(item.namespace, item.key, item.score is not None) for item in found] == [(namespace, "k", True)]


def test_items_written_under_the_plain_device_name_are_moved_and_found(memory: MemoryIndex) -> None:
    OpenClawMemoryStore(memory).put(("users", "con"), "k", {"data": "Albatross"})
    OpenClawMemoryStore(memory).put(("nul", "x"), "k", {"data": "Petrel"})
    base = memory.workspace / "memory/store"
    (base / "users/%63on.md").rename(base / "users/con.md")  # as an earlier release named them
    (base / "%6Eul").rename(base / "nul")

    store = OpenClawMemoryStore(memory)

    assert _store_files(memory) == ["%6Eul/x.md", "users/%63on.md"]
    assert store.get(("users", "con"), "k").value == {"data": "Albatross"}  # type: ignore[union-attr]
    assert store.get(("nul", "x"), "k").value == {"data": "Petrel"}  # type: ignore[union-attr]


def test_a_device_name_key_is_refused(store: OpenClawMemoryStore, memory: MemoryIndex) -> None:
    with pytest.raises(MemoryPathError, match="device name on Windows"):
        store.put(MAIN, "memory/nul.md", {"text": "- lost on Windows"})
    assert not (memory.workspace / "memory/nul.md").exists()


def test_a_key_differing_only_in_case_from_a_file_is_refused(store: OpenClawMemoryStore, memory: MemoryIndex) -> None:
    store.put(MAIN, "memory/Topic.md", {"text": "- first"})
    with pytest.raises(MemoryPathError, match=r"'memory/Topic\.md' exists.*letter case"):
        store.put(MAIN, "memory/topic.md", {"text": "- second"})
    assert not (memory.workspace / "memory/topic.md").exists()
    store.put(MAIN, "memory/Topic.md", {"text": "- third"})
    assert "- third" in (memory.workspace / "memory/Topic.md").read_text()


def test_a_composed_key_appends_to_the_decomposed_file(store: OpenClawMemoryStore, memory: MemoryIndex) -> None:
    decomposed = unicodedata.normalize("NFD", "café.md")
    (memory.workspace / "memory" / decomposed).write_text("- The user orders a flat white.\n")

    store.put(MAIN, unicodedata.normalize("NFC", "memory/café.md"), {"text": "- and a croissant"})

    assert [p.name for p in (memory.workspace / "memory").glob("caf*")] == [decomposed]
    assert "- and a croissant" in (memory.workspace / "memory" / decomposed).read_text()
