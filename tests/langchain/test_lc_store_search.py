"""``OpenClawMemoryStore.search`` keeps LangGraph's search contract, checked against LangGraph's own
``InMemoryStore`` given the same items and the same embeddings: the filter is applied before the limit, a
query ranks without a score floor, one item per key, and a namespace that cannot be a file is refused before
anything is written."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from langgraph.store.memory import InMemoryStore
from openclaw_memory import MemoryIndex, MemoryPathError
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.providers.fake import FakeEmbeddingProvider

from langchain_openclaw_memory import OpenClawMemoryEmbeddings, OpenClawMemoryStore

NS = ("users", "u1", "notes")


@pytest.fixture
def store(memory: MemoryIndex) -> OpenClawMemoryStore:
    return OpenClawMemoryStore(memory)


@pytest.fixture
def reference(fake_provider: FakeEmbeddingProvider) -> InMemoryStore:
    """LangGraph's InMemoryStore, embedding with the same provider as the memory."""
    return InMemoryStore(index={"dims": 64, "embed": OpenClawMemoryEmbeddings(provider=fake_provider)})


def _put_coffee_items(*stores: OpenClawMemoryStore | InMemoryStore) -> None:
    """70 tasting notes that say "coffee" often, 5 grocery runs that say it once among many words."""
    for target in stores:
        for i in range(70):
            target.put(NS, f"t{i}", {"kind": "tasting", "text": f"Coffee tasting {i}: coffee, coffee with cherry"})
        for i in range(5):
            target.put(NS, f"g{i}", {"kind": "grocery", "text": f"Grocery run {i}: milk, bread, eggs, butter, apples, "
                                                               "cheese, rice, pasta, tomatoes, onions, soap, coffee"})


def test_the_filter_is_applied_before_the_limit(store: OpenClawMemoryStore, reference: InMemoryStore) -> None:
    _put_coffee_items(store, reference)
    expected = {item.key for item in reference.search(NS, query="coffee", filter={"kind": "grocery"}, limit=5)}
    assert expected == {"g0", "g1", "g2", "g3", "g4"}
    found = store.search(NS, query="coffee", filter={"kind": "grocery"}, limit=5)
    assert {item.key for item in found} == expected
    assert all(item.value["kind"] == "grocery" and item.score is not None for item in found)
    # paging walks on through the filtered ranking
    paged = store.search(NS, query="coffee", filter={"kind": "grocery"}, limit=2, offset=3)
    assert [item.key for item in paged] == [item.key for item in found[3:5]]
    assert store.search(NS, query="coffee", limit=0) == reference.search(NS, query="coffee", limit=0) == []


def test_the_filter_applies_to_memory_files_before_the_limit(store: OpenClawMemoryStore, memory: MemoryIndex) -> None:
    for day in range(1, 10):
        store.put(("memory", "main"), f"memory/2026-02-0{day}.md", {"text": "- SQLite SQLite cache cache in SQLite."})
    wanted = {"path": "memory/projects/api.md"}
    found = store.search(("memory", "main"), query="SQLite cache", filter=wanted, limit=1)
    assert [item.key for item in found] == ["memory/projects/api.md"]


def test_a_query_ranks_without_a_score_floor(store: OpenClawMemoryStore, reference: InMemoryStore) -> None:
    values = {
        "a": {"text": "Prefers window seats and direct flights when travelling abroad."},
        "b": {"text": "Books hotels close to the old town, likes walking tours."},
        "c": {"text": "Allergic to peanuts; always asks restaurants about it."},
        "d": {"text": "Plays the cello in an amateur orchestra on Thursdays."},
        "e": {"text": "Travel budget is about 2000 euros per trip; prefers trains in Europe."},
    }
    for target in (store, reference):
        for key, value in values.items():
            target.put(NS, key, value)
    expected = {item.key for item in reference.search(NS, query="travel preferences") if item.score is not None}
    found = store.search(NS, query="travel preferences")
    assert expected == set(values)
    assert {item.key for item in found} == expected  # no item left out by a score floor
    assert all(isinstance(item.score, float) for item in found)
    assert [item.score for item in found] == sorted((item.score for item in found), reverse=True)


def test_a_floor_is_applied_only_when_asked(memory: MemoryIndex) -> None:
    floored = OpenClawMemoryStore(memory, min_score=0.99)
    floored.put(NS, "a", {"text": "Prefers window seats and direct flights."})
    assert floored.search(NS, query="orchestra cello rehearsal") == []


@pytest.mark.parametrize("min_score", [1.5, -0.1, "0.3"])
def test_a_floor_outside_0_to_1_is_refused_when_the_store_is_made(memory: MemoryIndex, min_score: object) -> None:
    # not at the first search, after the app has written its items
    with pytest.raises(ValueError, match="min_score must be between 0 and 1"):
        OpenClawMemoryStore(memory, min_score=min_score)  # type: ignore[arg-type]
    assert not (memory.workspace / "memory/store").exists()


def test_a_memory_file_is_one_item_per_key(store: OpenClawMemoryStore, memory: MemoryIndex) -> None:
    section = " ".join(["The espresso machine and coffee grinder were cleaned and descaled today."] * 40)
    text = "\n\n".join(f"## Coffee log {i}\n\n{section}" for i in range(6))
    (memory.workspace / "memory/2026-01-20.md").write_text(f"# 2026-01-20\n\n{text}\n", encoding="utf-8")
    memory.sync()
    chunks = [c for c in memory.iter_chunks("memory") if c.path == "memory/2026-01-20.md"]
    assert len(chunks) >= 3  # the note is several chunks, each a match
    found = store.search(("memory", "main"), query="coffee grinder descaled", limit=10)
    keys = [(tuple(item.namespace), item.key) for item in found]
    assert len(keys) == len(set(keys))
    assert keys[0] == (("memory", "main"), "memory/2026-01-20.md")


@pytest.mark.parametrize("namespace", [("a" * 80,) * 60, ("x" * 300,), ("users", "é" * 100)])
def test_a_namespace_too_long_for_a_file_is_refused_before_any_write(
        store: OpenClawMemoryStore, memory: MemoryIndex, namespace: tuple[str, ...]) -> None:
    store.put(("users",), "k1", {"text": "The user likes pizza."})
    before = sorted(p.relative_to(memory.workspace) for p in memory.workspace.rglob("*"))
    with pytest.raises(MemoryPathError, match="namespace") as refused:
        store.put(namespace, "k", {"text": "x"})
    assert isinstance(refused.value, OpenClawMemoryError)
    assert sorted(p.relative_to(memory.workspace) for p in memory.workspace.rglob("*")) == before
    assert ("users",) in store.list_namespaces()
    assert [item.key for item in store.search(("users",), query="pizza")] == ["k1"]


def test_a_folder_too_deep_to_open_does_not_break_listing_or_search(
        store: OpenClawMemoryStore, memory: MemoryIndex) -> None:
    store.put(("users",), "k1", {"text": "The user likes pizza."})
    folder = os.open(memory.workspace / "memory/store", os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(60):  # what an older version left behind: folders whose path exceeds PATH_MAX
        os.mkdir("a" * 80, dir_fd=folder)
        inner = os.open("a" * 80, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        os.close(folder)
        folder = inner
    os.close(folder)
    assert ("users",) in store.list_namespaces()
    assert [item.key for item in store.search(("users",), query="pizza")] == ["k1"]
    assert [item.key for item in store.search(("users",))] == ["k1"]


def test_a_nested_filter_matches_as_in_langgraphs_stores(store: OpenClawMemoryStore) -> None:
    # InMemoryStore (and PostgresStore's JSONB containment) match a nested object by the keys the filter names,
    # a list element by element, and operators inside a nested object
    reference = InMemoryStore()
    values = {
        "en": {"data": "likes pizza", "meta": {"lang": "en", "source": "chat"}, "tags": ["food", "italian"]},
        "fr": {"data": "aime les pâtes", "meta": {"lang": "fr"}, "tags": ["food"]},
        "flat": {"data": "no metadata", "meta": "en"},
    }
    for target in (store, reference):
        for key, value in values.items():
            target.put(NS, key, value)
    filters = [
        {"meta": {"lang": "en"}},
        {"meta": {"lang": {"$ne": "fr"}}},
        {"tags": ("food", "italian")},
        {"tags": ["food"]},
    ]
    for conditions in filters:
        expected = sorted(item.key for item in reference.search(NS, filter=conditions))
        assert expected, conditions
        assert sorted(item.key for item in store.search(NS, filter=conditions)) == expected, conditions
        ranked = store.search(NS, query="pizza pâtes metadata", filter=conditions)
        assert sorted(item.key for item in ranked) == expected, conditions


def test_a_query_finds_memory_files_not_session_transcripts(corpus: Path,
                                                            make_index: Callable[..., MemoryIndex]) -> None:
    """With the ``sessions`` source on, a memory-file namespace's search returned the transcript
    (``sessions/<id>.jsonl``) as an item whose ``get`` raised MemoryPathError and which no listing holds. The
    namespace holds memory files: a query returns only them, each one ``get`` reads."""
    from openclaw_memory.files.sessions import TranscriptWriter

    memory = make_index(None, sources=["memory", "sessions"])
    TranscriptWriter(memory.transcript_path("s1")).append_messages([("user", "the quokka ledger is due Friday")])
    (memory.workspace / "memory/2026-01-21.md").write_text("# 2026-01-21\n\n- Paid the quokka ledger.\n")
    memory.sync()
    assert any(h.source == "sessions" for h in memory.search("quokka ledger", min_score=0).hits)
    store = OpenClawMemoryStore(memory)
    namespace = ("memory", memory.config.agent_id)
    found = store.search(namespace, query="quokka ledger")
    assert found[0].key == "memory/2026-01-21.md" and found[0].score is not None
    listed = {item.key for item in store.search(namespace)}
    assert {item.key for item in found} <= listed
    assert all(store.get(namespace, item.key) is not None for item in found)
