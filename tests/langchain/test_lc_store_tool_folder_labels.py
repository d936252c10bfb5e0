"""A store namespace may use any label, also one named like a tool folder (``venv``, ``node_modules``; LangGraph refuses
labels with a period, so not ``.git``).

Each namespace label but the last becomes a folder of ``memory/store/``. Discovery and the watcher skip tool
folders (``.git``, ``node_modules``, ``venv``, ...), so an item under ``("users", "venv", "memories")`` was written
and read back by ``get`` but never ranked by a query (a search listed it after the ranked items, unscored). Such a
label's folder now has its first character percent-encoded (decoding gives the label back), so the item is indexed
like any other.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex

from langchain_openclaw_memory import OpenClawMemoryStore


@pytest.mark.parametrize("label", ["venv", "node_modules", "VENV", "__pycache__"])
def test_an_item_under_a_tool_folder_label_is_found_by_a_query(
    label: str, corpus: Path, make_index: Callable[..., MemoryIndex]
) -> None:
    memory = make_index(None)
    store = OpenClawMemoryStore(memory)
    namespace = ("users", label, "memories")
    store.put(namespace, "boat", {"data": "The user's sailboat is named Albatross."})
    memory.sync()  # a sync indexes what discovery lists

    found = store.search(("users",), query="sailboat Albatross")

    assert [(item.namespace, item.key) for item in found] == [(namespace, "boat")]
    assert found[0].score is not None  # ranked by the query, not listed after the ranked items
    assert store.get(namespace, "boat") is not None
    assert namespace in store.list_namespaces(prefix=("users",))


def test_items_written_under_the_plain_folder_name_are_moved_and_found(
    corpus: Path, make_index: Callable[..., MemoryIndex]
) -> None:
    """A release before this one wrote ``("users", "venv", "memories")`` to ``memory/store/users/venv/``: opening
    the store moves that folder to the encoded name, so ``get`` reads the items and a query ranks them."""
    memory = make_index(None)
    namespace = ("users", "venv", "memories")
    OpenClawMemoryStore(memory).put(namespace, "boat", {"data": "The user's sailboat is named Albatross."})
    users = corpus / "memory" / "store" / "users"
    (encoded,) = [p for p in users.iterdir() if p.is_dir()]
    encoded.rename(users / "venv")  # the folder as the earlier release named it

    store = OpenClawMemoryStore(memory)
    memory.sync()

    assert store.get(namespace, "boat") is not None
    found = store.search(("users",), query="sailboat Albatross")
    assert [(item.namespace, item.key, item.score is not None) for item in found] == [(namespace, "boat", True)]
    assert not (users / "venv").exists()


def test_a_folder_that_holds_no_items_or_cannot_be_a_label_is_left_where_it_is(
    corpus: Path, make_index: Callable[..., MemoryIndex]
) -> None:
    """Only item folders move: a ``.git`` folder (a label cannot hold a period) or a ``node_modules`` folder
    without Markdown below ``memory/store`` stays as it is."""
    store_dir = corpus / "memory" / "store"
    (store_dir / ".git").mkdir(parents=True)
    (store_dir / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (store_dir / "node_modules" / "pkg").mkdir(parents=True)
    (store_dir / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n")

    OpenClawMemoryStore(make_index(None))

    assert (store_dir / ".git" / "HEAD").exists()
    assert (store_dir / "node_modules" / "pkg" / "index.js").exists()
