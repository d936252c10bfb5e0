"""A query that matches nothing still returns the namespace's items, as LangGraph's ``InMemoryStore`` does.

``InMemoryStore`` (with or without an ``index``) never drops an item for not matching a query: without an
index the query is ignored, with one every embedded item gets a score and items it cannot score (``index=False``)
follow with ``score=None``. ``OpenClawMemoryStore`` on a keyword-only memory (no embedding provider) returned
``[]`` for a query whose words are in no item. Now the ranked items come first and the others follow, listed,
with ``score=None`` (filter, ``limit`` and ``offset`` applied); a score floor (``min_score``) keeps them out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from openclaw_memory import MemoryIndex

from langchain_openclaw_memory import OpenClawMemoryStore

NS = ("users", "u1", "memories")
ITEMS = {
    "pizza": {"data": "The user likes pepperoni pizza.", "kind": "food"},
    "dog": {"data": "The user's dog is called Rex.", "kind": "pet"},
    "tea": {"data": "Drinks green tea in the morning.", "kind": "food"},
}


@pytest.fixture
def keyword_only(corpus: Path, make_index: Callable[..., MemoryIndex]) -> Iterator[MemoryIndex]:
    """The corpus' memory with no embedding provider: search is keyword (FTS) only."""
    memory = make_index(None)
    memory.sync()
    assert memory.provider is None
    yield memory


def _filled(*stores: OpenClawMemoryStore | InMemoryStore) -> None:
    for store in stores:
        for key, value in ITEMS.items():
            store.put(NS, key, value)


def _found(store: OpenClawMemoryStore | InMemoryStore, **search: Any) -> list[tuple[str, float | None]]:
    return [(item.key, item.score) for item in store.search(NS, **search)]


def test_a_query_matching_nothing_lists_the_items_as_in_memory_store(keyword_only: MemoryIndex) -> None:
    store, reference = OpenClawMemoryStore(keyword_only), InMemoryStore()
    _filled(store, reference)
    expected = _found(reference, query="weather forecast")
    assert expected == [("pizza", None), ("dog", None), ("tea", None)]
    assert _found(store, query="weather forecast") == expected
    assert _found(store, query="weather forecast", filter={"kind": "food"}) == _found(
        reference, query="weather forecast", filter={"kind": "food"})
    assert _found(store, query="weather forecast", limit=1, offset=1) == _found(
        reference, query="weather forecast", limit=1, offset=1)


def test_the_ranked_items_come_first_and_the_others_follow_unscored(keyword_only: MemoryIndex) -> None:
    store = OpenClawMemoryStore(keyword_only)
    _filled(store)
    found = _found(store, query="pepperoni pizza")
    assert found[0][0] == "pizza" and found[0][1] is not None
    assert sorted(found[1:]) == [("dog", None), ("tea", None)]
    assert [key for key, _ in _found(store, query="pepperoni pizza", limit=2, offset=1)] == [k for k, _ in found[1:]]
    assert _found(store, query="pepperoni pizza", limit=1) == found[:1]


def test_an_item_put_with_index_false_follows_the_ranked_ones(keyword_only: MemoryIndex) -> None:
    store, reference = OpenClawMemoryStore(keyword_only), InMemoryStore()
    for target in (store, reference):
        target.put(NS, "secret", {"data": "pepperoni pizza"}, index=False)
        target.put(NS, "dog", {"data": "The user's dog is called Rex."})
    assert [key for key, _ in _found(store, query="dog Rex")] == ["dog", "secret"]
    assert _found(store, query="dog Rex")[1] == ("secret", None)


def test_a_score_floor_keeps_unmatched_items_out(keyword_only: MemoryIndex) -> None:
    store = OpenClawMemoryStore(keyword_only, min_score=0.3)
    _filled(store)
    assert _found(store, query="weather forecast") == []
    assert [key for key, _ in _found(store, query="pepperoni pizza")] == ["pizza"]
    assert _found(store) == [("pizza", None), ("dog", None), ("tea", None)]  # listing is unchanged


def test_memory_files_matching_nothing_are_listed_too(keyword_only: MemoryIndex) -> None:
    store = OpenClawMemoryStore(keyword_only)
    namespace = ("memory", keyword_only.config.agent_id)
    listed = [item.key for item in store.search(namespace)]
    assert listed, "the corpus has memory files"
    found = store.search(namespace, query="zebra quasar")
    assert [item.key for item in found] == listed and all(item.score is None for item in found)


def test_the_unmatched_listing_stops_once_the_page_is_full(keyword_only: MemoryIndex,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import langchain_openclaw_memory.store as store_module

    store = OpenClawMemoryStore(keyword_only)
    for label in ("a", "b", "c"):
        store.put(("users", label), "k", {"data": f"note {label}"})
    read: list[str] = []
    real = store_module.read_items
    monkeypatch.setattr(store_module, "read_items", lambda ws, rel: read.append(rel) or real(ws, rel))
    found = store.search(("users",), query="zebra quasar", limit=1)
    assert [(item.namespace, item.score) for item in found] == [(("users", "a"), None)]
    assert len(read) == 1, f"one item file is enough for one result, read {read}"
