"""OpenClawVectorStore: the workspace view, Markdown writes, safe deletes, query modes and filters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from llama_index_openclaw_memory import OpenClawMemoryEmbedding, OpenClawVectorStore, ProtectedMemoryError
from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import today
from openclaw_memory.errors import MemoryPathError

pytestmark = pytest.mark.both_stores  # also on PostgreSQL (tests/conftest.py)

Mode = VectorStoreQueryMode


def node(text: str, node_id: str, doc: str | None = None, **metadata: Any) -> TextNode:
    rel = {NodeRelationship.SOURCE: RelatedNodeInfo(node_id=doc)} if doc else {}
    return TextNode(id_=node_id, text=text, metadata=metadata, relationships=rel)


def query(
    store: OpenClawVectorStore,
    text: str | None,
    embed: OpenClawMemoryEmbedding | None = None,
    *,
    mode: Mode = Mode.DEFAULT,
    k: int = 3,
    **kwargs: Any,
) -> list[tuple[str, str, float]]:
    """(path, node id, similarity) of the results."""
    vec = embed.get_query_embedding(text) if embed is not None and text else None
    res = store.query(VectorStoreQuery(query_str=text, query_embedding=vec, similarity_top_k=k, mode=mode, **kwargs))
    assert res.nodes is not None and res.similarities is not None and res.ids is not None
    assert res.ids == [n.node_id for n in res.nodes]
    return [(n.metadata["path"], n.node_id, s) for n, s in zip(res.nodes, res.similarities)]


def paths(rows: list[tuple[str, str, float]]) -> list[str]:
    return [p for p, _, _ in rows]


# ---- the view over hand-written memory --------------------------------------------------------------


def test_hand_written_chunks_are_nodes_with_location_metadata(store: OpenClawVectorStore, memory: MemoryIndex) -> None:
    nodes = store.get_nodes()
    by_path = {n.metadata["path"]: n for n in nodes}
    assert set(by_path) == {"MEMORY.md", "memory/2026-01-16.md", "memory/2026-01-20.md"}
    note = by_path["memory/2026-01-16.md"]
    chunk = next(c for c in memory.store.iter_chunks() if c.path == "memory/2026-01-16.md")
    assert note.node_id == chunk.id
    assert note.ref_doc_id == "memory/2026-01-16.md"
    assert note.get_content() == chunk.text
    assert note.metadata == {
        "path": "memory/2026-01-16.md", "source": "memory", "start_line": 1, "end_line": chunk.end_line,
        "date": "2026-01-16",
    }
    assert "date" not in by_path["MEMORY.md"].metadata
    # location is for the LLM, not for the embedding text
    assert "memory/2026-01-16.md" not in note.get_content(metadata_mode="embed")  # type: ignore[arg-type]
    assert "memory/2026-01-16.md" in note.get_content(metadata_mode="llm")  # type: ignore[arg-type]


def test_store_is_text_storing_and_exposes_the_memory(store: OpenClawVectorStore, memory: MemoryIndex) -> None:
    assert store.stores_text is True
    assert store.client is memory and store.memory is memory
    with pytest.raises(TypeError, match="MemoryIndex"):
        OpenClawVectorStore("not an index")  # type: ignore[arg-type]


# ---- add: Markdown is the source of truth ------------------------------------------------------------


def test_add_appends_markdown_sections_and_makes_them_searchable(
    store: OpenClawVectorStore, memory: MemoryIndex, corpus: Path, hand_written_intact: Callable[[], None]
) -> None:
    ids = store.add([
        node("The office wifi password is Tulip-77.", "n-wifi", "doc-office", topic="office"),
        node("Bob prefers green tea over coffee.", "n-tea", "doc-people", topic="people", rank=2),
    ])
    assert ids == ["n-wifi", "n-tea"]
    markdown = (corpus / "memory/llamaindex.md").read_text(encoding="utf-8")
    assert "The office wifi password is Tulip-77.\n" in markdown
    assert markdown.count("<!-- openclaw-memory:node ") == 2
    hand_written_intact()
    # every OpenClaw tool sees it: the core search finds it without any LlamaIndex code
    assert memory.search("Tulip-77").hits[0].path == "memory/llamaindex.md"

    got = {n.node_id: n for n in store.get_nodes(node_ids=["n-tea", "n-wifi"])}
    assert got["n-tea"].get_content() == "Bob prefers green tea over coffee."
    assert got["n-tea"].ref_doc_id == "doc-people"
    lines = markdown.split("\n")
    tea = got["n-tea"].metadata
    assert tea["topic"] == "people" and tea["rank"] == 2 and tea["path"] == "memory/llamaindex.md"
    assert lines[tea["start_line"] - 1] == "Bob prefers green tea over coffee."


def test_re_adding_an_id_replaces_its_section(store: OpenClawVectorStore, corpus: Path) -> None:
    store.add([node("Version one.", "n1", "doc")])
    store.add([node("Version two.", "n1", "doc")])
    markdown = (corpus / "memory/llamaindex.md").read_text(encoding="utf-8")
    assert "Version one." not in markdown and markdown.count("Version two.") == 1
    assert [n.get_content() for n in store.get_nodes(node_ids=["n1"])] == ["Version two."]


def test_add_to_todays_daily_note_appends_after_hand_written_text(memory: MemoryIndex, corpus: Path) -> None:
    daily = f"memory/{today('UTC').isoformat()}.md"
    (corpus / daily).write_text("# Today\n\nHand-written morning note.\n", encoding="utf-8")
    store = OpenClawVectorStore(memory, append_path="memory/{date}.md")
    store.add([node("Remember to renew the TLS certificate.", "n-tls")])
    text = (corpus / daily).read_text(encoding="utf-8")
    assert text.startswith("# Today\n\nHand-written morning note.\n\n<!-- openclaw-memory:node ")
    assert "Remember to renew the TLS certificate." in text


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ([node("   ", "empty")], "has no text"),
        ([node("ok", "bad-meta", when=object())], "JSON-serializable"),
        ([node("ok", "same"), node("again", "same")], "same node id twice"),
    ],
)
def test_add_rejects_bad_nodes_without_writing(store: OpenClawVectorStore, corpus: Path, nodes: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        store.add([node("A valid node first.", "valid"), *nodes])
    assert not (corpus / "memory/llamaindex.md").exists()


@pytest.mark.parametrize("bad", ["notes.md", "memory/notes.txt", "memory/{day}.md", "DREAMS.md"])
def test_append_path_must_be_an_indexed_memory_file(memory: MemoryIndex, bad: str) -> None:
    with pytest.raises(ValueError, match="append_path must be MEMORY.md or a Markdown file under memory/"):
        OpenClawVectorStore(memory, append_path=bad)


def test_append_path_outside_the_workspace_is_refused(memory: MemoryIndex) -> None:
    with pytest.raises(MemoryPathError, match=r"\.\."):
        OpenClawVectorStore(memory, append_path="../elsewhere.md")


def test_a_file_mixing_hand_written_text_and_sections_yields_separate_nodes(
    memory: MemoryIndex, corpus: Path
) -> None:
    daily = f"memory/{today('UTC').isoformat()}.md"
    (corpus / daily).write_text("# Today\n\nHand-written: the parking garage closes at 8 pm.\n", encoding="utf-8")
    store = OpenClawVectorStore(memory, append_path="memory/{date}.md")
    store.add([node("Garage access code is 4412.", "n-code", "doc-garage")])
    res = store.query(VectorStoreQuery(query_str="parking garage", similarity_top_k=5, mode=Mode.TEXT_SEARCH))
    texts = {n.node_id: n.get_content() for n in res.nodes or []}
    assert texts["n-code"] == "Garage access code is 4412."
    hand = next(n for n in res.nodes or [] if n.node_id != "n-code")
    assert hand.get_content() == "# Today\n\nHand-written: the parking garage closes at 8 pm."
    assert (hand.ref_doc_id, hand.metadata["start_line"], hand.metadata["end_line"]) == (daily, 1, 3)
    assert "openclaw-memory" not in "".join(texts.values())


def test_a_symlinked_append_target_is_refused(memory: MemoryIndex, corpus: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("not memory\n", encoding="utf-8")
    (corpus / "memory/llamaindex.md").symlink_to(outside)
    with pytest.raises(MemoryPathError, match="symlink"):
        OpenClawVectorStore(memory).add([node("Should not be written.", "n1")])
    assert outside.read_text(encoding="utf-8") == "not memory\n"


# ---- deletes never touch hand-written memory ---------------------------------------------------------


def test_delete_ref_doc_removes_only_that_documents_sections(
    store: OpenClawVectorStore, corpus: Path, embed_model: OpenClawMemoryEmbedding, hand_written_intact: Callable[[], None]
) -> None:
    store.add([
        node("Quarterly report is due on March 3.", "a1", "doc-a"),
        node("The report template lives in the wiki.", "a2", "doc-a"),
        node("Carol reviews every quarterly report.", "b1", "doc-b"),
    ])
    store.delete("doc-a")
    markdown = (corpus / "memory/llamaindex.md").read_text(encoding="utf-8")
    assert "Carol reviews" in markdown and "March 3" not in markdown and "template" not in markdown
    ids = {i for _, i, _ in query(store, "quarterly report", embed_model, mode=Mode.HYBRID, k=10)}
    assert "b1" in ids and not ids & {"a1", "a2"}
    hand_written_intact()
    store.delete("no-such-document")  # unknown ids are a no-op, as in other LlamaIndex stores


def test_delete_of_a_hand_written_file_is_refused(store: OpenClawVectorStore, hand_written_intact: Callable[[], None]) -> None:
    with pytest.raises(ProtectedMemoryError, match="refusing to delete 'MEMORY.md': it holds hand-written memory"):
        store.delete("MEMORY.md")
    hand_written_intact()


def test_delete_by_path_removes_the_stores_own_sections_of_a_shared_daily_note(
    memory: MemoryIndex, corpus: Path
) -> None:
    daily = f"memory/{today('UTC').isoformat()}.md"
    original = "# Today\n\nHand-written: call the bank.\n"
    (corpus / daily).write_text(original, encoding="utf-8")
    store = OpenClawVectorStore(memory, append_path="memory/{date}.md")
    store.add([node("A node without a source document.", "loose")])
    assert [n.ref_doc_id for n in store.get_nodes(node_ids=["loose"])] == [daily]
    store.delete(daily)
    assert (corpus / daily).read_text(encoding="utf-8") == original
    with pytest.raises(ProtectedMemoryError):
        store.delete(daily)  # only hand-written text is left


def test_delete_nodes_by_id_and_by_filter(store: OpenClawVectorStore, corpus: Path) -> None:
    store.add([node("Alpha fact.", "x1", topic="keep"), node("Beta fact.", "x2", topic="drop"),
               node("Gamma fact.", "x3", topic="drop")])
    store.delete_nodes(node_ids=["x1", "unknown-id"])
    store.delete_nodes(filters=MetadataFilters(filters=[MetadataFilter(key="topic", value="drop")]))
    assert not (corpus / "memory/llamaindex.md").exists()  # it only ever held the store's own sections


def test_delete_nodes_that_include_hand_written_chunks_deletes_nothing(
    store: OpenClawVectorStore, corpus: Path, hand_written_intact: Callable[[], None]
) -> None:
    store.add([node("Delta fact.", "d1")])
    chunk_id = next(n.node_id for n in store.get_nodes() if n.metadata["path"] == "MEMORY.md")
    with pytest.raises(ProtectedMemoryError, match=r"hand-written memory \(MEMORY.md#L1-L4\); nothing was deleted"):
        store.delete_nodes(node_ids=["d1", chunk_id])
    assert [n.node_id for n in store.get_nodes(node_ids=["d1"])] == ["d1"]
    with pytest.raises(ProtectedMemoryError):
        store.delete_nodes(filters=MetadataFilters(filters=[MetadataFilter(key="source", value="memory")]))
    with pytest.raises(ValueError, match="needs node_ids or filters"):
        store.delete_nodes()
    store.delete_nodes(node_ids=[])  # nothing to delete
    assert [n.node_id for n in store.get_nodes(node_ids=["d1"])] == ["d1"]
    hand_written_intact()


def test_delete_nodes_with_an_empty_id_list_and_a_filter_deletes_nothing(store: OpenClawVectorStore) -> None:
    """Both must match: no id matches an empty list (it deleted every node the filter matched, say a session's
    whole memory when the ids a caller computed came out empty)."""
    store.add([node("Session one: the user is vegetarian.", "s1", session_id="one"),
               node("Session one: the user lives in Oslo.", "s2", session_id="one")])
    store.delete_nodes(node_ids=[], filters=_filters(MetadataFilter(key="session_id", value="one")))
    assert [n.node_id for n in store.get_nodes(node_ids=["s1", "s2"])] == ["s1", "s2"]
    store.delete_nodes(node_ids=["s2"], filters=_filters(MetadataFilter(key="session_id", value="one")))
    assert [n.node_id for n in store.get_nodes(node_ids=["s1", "s2"])] == ["s1"]


def test_clear_removes_the_stores_sections_and_keeps_hand_written_text(
    memory: MemoryIndex, corpus: Path, hand_written_intact: Callable[[], None]
) -> None:
    daily = f"memory/{today('UTC').isoformat()}.md"
    original = "# Today\n\nHand-written: water the plants."
    (corpus / daily).write_text(original, encoding="utf-8")  # no trailing newline on purpose
    daily_store = OpenClawVectorStore(memory, append_path="memory/{date}.md")
    daily_store.add([node("Plant food is in the garage.", "p1")])
    store = OpenClawVectorStore(memory)
    store.add([node("Side file node.", "s1")])
    # a hand edit outside the sections of the store's own file is hand-written memory too
    with (corpus / "memory/llamaindex.md").open("a", encoding="utf-8") as fh:
        fh.write("\nHand-written addendum about the garage.\n")
    memory.mark_dirty()
    assert any("addendum" in n.get_content() for n in store.get_nodes())

    store.clear()
    assert (corpus / daily).read_text(encoding="utf-8") == original + "\n"  # append added the final newline
    assert (corpus / "memory/llamaindex.md").read_text(encoding="utf-8").strip() == (
        "Hand-written addendum about the garage."
    )
    assert not [n for n in store.get_nodes() if "fact" in n.get_content() or "Plant food" in n.get_content()]
    hand_written_intact()


# ---- query modes ------------------------------------------------------------------------------------


def test_default_mode_is_dense_similarity(store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding) -> None:
    rows = query(store, "dark roast coffee morning", embed_model)
    assert paths(rows)[0] == "MEMORY.md"
    assert [s for *_, s in rows] == sorted((s for *_, s in rows), reverse=True)
    # an embedding alone (no query text) is plain nearest-neighbour search
    vec = embed_model.get_query_embedding("dark roast coffee morning")
    res = store.query(VectorStoreQuery(query_embedding=vec, similarity_top_k=1))
    assert res.nodes[0].metadata["path"] == "MEMORY.md"  # type: ignore[index]
    assert res.similarities[0] == pytest.approx(rows[0][2], abs=1e-5)  # type: ignore[index]
    # query text alone: the memory's provider embeds it
    assert paths(query(store, "dark roast coffee morning"))[0] == "MEMORY.md"


def test_hybrid_alpha_is_the_vector_weight(store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding) -> None:
    text = "payments worker rate limiter error"
    dense = query(store, text, embed_model, k=3)
    keywords = query(store, text, mode=Mode.TEXT_SEARCH, k=3)
    hybrid_vec = query(store, text, embed_model, mode=Mode.HYBRID, alpha=1.0, k=3)
    hybrid_kw = query(store, text, embed_model, mode=Mode.HYBRID, alpha=0.0, k=3)
    assert {i: s for _, i, s in hybrid_vec} == pytest.approx({i: s for _, i, s in dense})
    hybrid_kw_scores = {i: s for _, i, s in hybrid_kw if s > 0}
    assert hybrid_kw_scores == pytest.approx({i: s for _, i, s in keywords})
    with pytest.raises(ValueError, match="alpha must be between 0"):
        query(store, text, embed_model, mode=Mode.HYBRID, alpha=1.5)


def test_hybrid_top_k_overrides_similarity_top_k(store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding) -> None:
    assert len(query(store, "memory", embed_model, mode=Mode.HYBRID, k=1, hybrid_top_k=3)) == 3


def test_text_search_needs_no_embedding_and_finds_exact_tokens(store: OpenClawVectorStore) -> None:
    rows = query(store, "E429-RL", mode=Mode.TEXT_SEARCH)
    assert paths(rows) == ["memory/2026-01-16.md"]
    assert query(store, "zebra", mode=Mode.TEXT_SEARCH) == []
    assert paths(query(store, "Stripe webhooks", mode=Mode.SPARSE, k=1)) == ["memory/2026-01-20.md"]
    with pytest.raises(ValueError, match="text_search query needs query_str"):
        store.query(VectorStoreQuery(query_embedding=[0.1] * 64, mode=Mode.TEXT_SEARCH))


def test_mmr_threshold_trades_relevance_for_diversity(
    write: Callable[[dict[str, str]], Path], make_index: Callable[..., MemoryIndex], fake_provider: Any,
    embed_model: OpenClawMemoryEmbedding,
) -> None:
    write({
        "memory/a.md": "# A\n\nThe staging database password rotates every week.\n",
        "memory/b.md": "# B\n\nThe staging database password rotates every week.\n",
        "memory/c.md": "# C\n\nThe staging database lives in Frankfurt.\n",
    })
    store = OpenClawVectorStore(make_index(fake_provider))
    text = "staging database password"
    assert set(paths(query(store, text, embed_model, mode=Mode.HYBRID))[:2]) == {"memory/a.md", "memory/b.md"}
    diverse = paths(query(store, text, embed_model, mode=Mode.MMR, mmr_threshold=0.3))
    assert diverse[0] in ("memory/a.md", "memory/b.md") and diverse[1] == "memory/c.md"
    with pytest.raises(ValueError, match="mmr_threshold"):
        query(store, text, embed_model, mode=Mode.MMR, mmr_threshold=2.0)


def test_mmr_threshold_in_vector_store_kwargs_as_llamaindex_passes_it(
    write: Callable[[dict[str, str]], Path], make_index: Callable[..., MemoryIndex], fake_provider: Any,
    embed_model: OpenClawMemoryEmbedding,
) -> None:
    """``as_retriever(vector_store_query_mode="mmr", vector_store_kwargs={"mmr_threshold": ...})`` (LlamaIndex's
    documented MMR call; its retriever leaves ``VectorStoreQuery.mmr_threshold`` unset) uses that lambda."""
    write({
        "memory/a.md": "# A\n\nThe staging database password rotates every week.\n",
        "memory/b.md": "# B\n\nThe staging database password rotates every week.\n",
        "memory/c.md": "# C\n\nThe staging database lives in Frankfurt.\n",
    })
    index = VectorStoreIndex.from_vector_store(OpenClawVectorStore(make_index(fake_provider)), embed_model=embed_model)

    def mmr(threshold: float) -> list[str]:
        retriever = index.as_retriever(similarity_top_k=3, vector_store_query_mode="mmr",
                                       vector_store_kwargs={"mmr_threshold": threshold})
        return [n.node.metadata["path"] for n in retriever.retrieve("staging database password")]

    assert mmr(1.0)[1] in ("memory/a.md", "memory/b.md")  # lambda 1: relevance only, the twin comes second
    assert mmr(0.3)[1] == "memory/c.md"  # was the twin: the default lambda ran
    with pytest.raises(ValueError, match="mmr_threshold"):
        mmr(2.0)


def test_unsupported_modes_and_bad_arguments_raise_clear_errors(
    store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding
) -> None:
    with pytest.raises(ValueError, match="'svm' is not supported.*default, hybrid, text_search, sparse, mmr"):
        query(store, "coffee", embed_model, mode=Mode.SVM)
    with pytest.raises(ValueError, match="similarity_top_k must be at least 1"):
        query(store, "coffee", embed_model, k=0)
    with pytest.raises(ValueError, match="hybrid query needs query_str"):
        store.query(VectorStoreQuery(query_embedding=embed_model.get_query_embedding("x"), mode=Mode.HYBRID))


def test_query_embedding_from_another_model_is_refused(store: OpenClawVectorStore) -> None:
    with pytest.raises(ValueError, match="8 dimensions but the memory index stores 64-dimensional.*same embedding model"):
        store.query(VectorStoreQuery(query_str="coffee", query_embedding=[0.5] * 8))


def test_keyword_only_memory_answers_text_and_refuses_embeddings(
    corpus: Path, make_index: Callable[..., MemoryIndex]
) -> None:
    store = OpenClawVectorStore(make_index(None))
    assert paths(query(store, "Stripe webhooks", k=1)) == ["memory/2026-01-20.md"]
    with pytest.raises(ValueError, match="no embedding provider"):
        store.query(VectorStoreQuery(query_str="coffee", query_embedding=[0.1] * 64))


def test_results_map_chunks_to_the_nodes_the_store_wrote(
    store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding
) -> None:
    store.add([node("The cafeteria serves espresso after lunch.", "n-espresso", "doc-cafe", topic="food")])
    rows = query(store, "espresso cafeteria lunch", embed_model, mode=Mode.HYBRID, k=1)
    assert rows[0][:2] == ("memory/llamaindex.md", "n-espresso")
    res = store.query(VectorStoreQuery(query_str="espresso", similarity_top_k=1, mode=Mode.TEXT_SEARCH))
    assert res.nodes[0].get_content() == "The cafeteria serves espresso after lunch."  # type: ignore[index]
    assert res.nodes[0].ref_doc_id == "doc-cafe" and res.nodes[0].metadata["topic"] == "food"  # type: ignore[index]


# ---- filters -----------------------------------------------------------------------------------------


def _filters(*items: MetadataFilter | MetadataFilters, condition: FilterCondition = FilterCondition.AND) -> MetadataFilters:
    return MetadataFilters(filters=list(items), condition=condition)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (_filters(MetadataFilter(key="path", value="memory/2026-01-20.md")), {"memory/2026-01-20.md"}),
        (_filters(MetadataFilter(key="source", value="memory")),
         {"MEMORY.md", "memory/2026-01-16.md", "memory/2026-01-20.md"}),
        (_filters(MetadataFilter(key="date", value="2026-01-17", operator=FilterOperator.GTE)), {"memory/2026-01-20.md"}),
        (_filters(MetadataFilter(key="date", value="2026-01-16"), MetadataFilter(key="path", value="MEMORY.md"),
                  condition=FilterCondition.OR), {"memory/2026-01-16.md", "MEMORY.md"}),
        (_filters(MetadataFilter(key="path", value="MEMORY.md"), condition=FilterCondition.NOT),
         {"memory/2026-01-16.md", "memory/2026-01-20.md"}),
        (_filters(_filters(MetadataFilter(key="date", value="2026-01-16"), MetadataFilter(key="date", value="2026-01-20"),
                           condition=FilterCondition.OR),
                  MetadataFilter(key="path", value="memory/2026-01-20.md", operator=FilterOperator.NE)),
         {"memory/2026-01-16.md"}),
    ],
    ids=["path", "source", "date-range", "or", "not", "nested"],
)
def test_metadata_filters(
    store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding, filters: MetadataFilters, expected: set[str]
) -> None:
    for mode in (Mode.DEFAULT, Mode.HYBRID):
        assert set(paths(query(store, "coffee database billing", embed_model, mode=mode, k=10, filters=filters))) == expected
    assert {n.metadata["path"] for n in store.get_nodes(filters=filters)} == expected


def test_a_filter_on_the_least_relevant_file_still_fills_top_k(
    store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding
) -> None:
    only = _filters(MetadataFilter(key="path", value="memory/2026-01-20.md"))
    assert paths(query(store, "dark roast coffee", embed_model, k=1, filters=only)) == ["memory/2026-01-20.md"]


def test_doc_ids_and_node_ids_restrict_and_empty_lists_do_not(
    store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding
) -> None:
    store.add([node("Dave likes cold brew coffee.", "n-dave", "doc-dave")])
    text = "coffee"
    everything = query(store, text, embed_model, mode=Mode.HYBRID, k=10)
    assert len(everything) == 4
    assert query(store, text, embed_model, mode=Mode.HYBRID, k=10, doc_ids=[], node_ids=[]) == everything
    assert paths(query(store, text, embed_model, mode=Mode.HYBRID, k=10, doc_ids=["MEMORY.md"])) == ["MEMORY.md"]
    assert [i for _, i, _ in query(store, text, embed_model, mode=Mode.HYBRID, k=10, doc_ids=["doc-dave"])] == ["n-dave"]
    assert [i for _, i, _ in query(store, text, embed_model, mode=Mode.HYBRID, k=10, node_ids=["n-dave"])] == ["n-dave"]


def test_filters_on_metadata_of_added_nodes(store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding) -> None:
    store.add([node("Session one: the user is vegetarian.", "s1", session_id="one"),
               node("Session two: the user is vegetarian too.", "s2", session_id="two")])
    only_two = _filters(MetadataFilter(key="session_id", value="two"))
    assert [i for _, i, _ in query(store, "vegetarian", embed_model, mode=Mode.HYBRID, filters=only_two)] == ["s2"]


# ---- async twins ----------------------------------------------------------------------------------------


async def test_async_twins(store: OpenClawVectorStore, corpus: Path, embed_model: OpenClawMemoryEmbedding) -> None:
    assert await store.async_add([node("Async note about kiwis.", "k1", "doc-k"), node("Another.", "k2", "doc-x")]) == [
        "k1", "k2"]
    res = await store.aquery(VectorStoreQuery(query_str="kiwis", similarity_top_k=1, mode=Mode.TEXT_SEARCH))
    assert res.ids == ["k1"]
    assert [n.node_id for n in await store.aget_nodes(node_ids=["k1"])] == ["k1"]
    await store.adelete("doc-k")
    assert await store.aget_nodes(node_ids=["k1"]) == []
    await store.adelete_nodes(node_ids=["k2"])
    assert not (corpus / "memory/llamaindex.md").exists()
    await store.async_add([node("Third.", "k3")])
    await store.aclear()
    assert not (corpus / "memory/llamaindex.md").exists()


def test_from_workspace_opens_and_closes_its_own_index(corpus: Path, tmp_path: Path, fake_provider: Any) -> None:
    store = OpenClawVectorStore.from_workspace(corpus, provider=fake_provider, store={"path": str(tmp_path / "x.sqlite")},
                                               watch=False)
    assert paths(query(store, "Stripe", mode=Mode.TEXT_SEARCH, k=1)) == ["memory/2026-01-20.md"]
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.memory.sync()
    with pytest.raises(ValueError, match="either embed_model or provider"):
        OpenClawVectorStore.from_workspace(corpus, provider=fake_provider, embed_model=object())  # type: ignore[arg-type]


def test_a_query_embedding_is_compared_with_the_memorys_model_once_not_on_every_query(
    store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding, fake_provider: Any
) -> None:
    """Checking that callers' query embeddings come from the memory's model costs one embedding call
    on the first query with text, not a second embedding of every query."""
    costs = []
    for text in ("dark roast coffee morning", "postgres decision", "gym membership renewal"):
        before = fake_provider.calls
        assert query(store, text, embed_model, k=1)
        costs.append(fake_provider.calls - before)
    assert costs[1:] == [costs[0] - 1, costs[0] - 1], costs


def test_node_scores_are_their_own_whatever_else_their_file_holds(corpus: Path, tmp_path: Path) -> None:
    """Nodes share a file (memory/llamaindex.md), but each is a record of its own: a hybrid query's similarities do
    not depend on how many better nodes that file holds (``query.hybrid.file_repeat_penalty`` leaves records out)."""
    from openclaw_memory.providers.fake import FakeEmbeddingProvider

    texts = ["Kayak trip on the lake.", "Kayak paddles were bought.", "Kayak lessons on Sunday.", "Kayak club fees."]
    rows = {}
    for penalty in (0.0, 0.3):
        with MemoryIndex(provider=FakeEmbeddingProvider(dims=64, model="fake-records"), workspace=corpus, watch=False,
                         store={"path": str(tmp_path / f"{penalty}.sqlite")},
                         query={"hybrid": {"file_repeat_penalty": penalty}}) as memory:
            store = OpenClawVectorStore(memory)
            if penalty == 0.0:
                store.add([node(t, f"k{i}") for i, t in enumerate(texts)])
            memory.sync()
            rows[penalty] = query(store, "kayak", mode=Mode.HYBRID, k=4)
    assert {p for p, _, _ in rows[0.0]} == {"memory/llamaindex.md"} and len(rows[0.0]) == 4  # the setup: one file
    assert [r[:2] for r in rows[0.3]] == [r[:2] for r in rows[0.0]]  # the same nodes in the same order
    assert [s for _, _, s in rows[0.3]] == pytest.approx([s for _, _, s in rows[0.0]])


def test_a_nodes_score_does_not_borrow_the_words_of_other_nodes_in_its_file(corpus: Path, tmp_path: Path) -> None:
    """``query.hybrid.file_coverage_weight`` rewards a note whose passages together hold the query's words; a node
    is a note of its own, so another node of memory/llamaindex.md saying the query's other word lends it nothing."""
    from openclaw_memory.providers.fake import FakeEmbeddingProvider

    scores = {}
    with MemoryIndex(provider=FakeEmbeddingProvider(dims=64, model="fake-records-cov"), workspace=corpus, watch=False,
                     store={"path": str(tmp_path / "cov.sqlite")},
                     query={"hybrid": {"file_repeat_penalty": 0.0}}) as memory:  # this rule alone
        store = OpenClawVectorStore(memory)
        for name, added in (("alone", "Kayak trip on the lake."), ("beside", "Paddles were bought for the club.")):
            store.add([node(added, f"k{len(scores)}")])
            memory.sync()
            rows = query(store, "kayak paddles", mode=Mode.HYBRID, k=5)
            scores[name] = next(s for _, nid, s in rows if nid == "k0")
    assert scores["beside"] == pytest.approx(scores["alone"])
