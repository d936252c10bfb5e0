"""VectorStoreIndex end to end over OpenClawVectorStore: from_documents, from_vector_store, memory blocks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.memory import VectorMemoryBlock

from llama_index_openclaw_memory import OpenClawMemoryEmbedding, OpenClawVectorStore

DOCS = [
    Document(text="Paris is the capital of France.", id_="doc-paris", metadata={"topic": "geography"}),
    Document(text="The deploy key rotates every 90 days.", id_="doc-keys", metadata={"topic": "ops"}),
]


@pytest.fixture
def mock_store(corpus: Path, tmp_path: Path) -> Iterator[OpenClawVectorStore]:
    """A store whose memory index embeds with LlamaIndex's MockEmbedding (8 dims)."""
    store = OpenClawVectorStore.from_workspace(
        corpus, embed_model=MockEmbedding(embed_dim=8), store={"path": str(tmp_path / "mock.sqlite")}, watch=False
    )
    yield store
    store.close()


def test_from_documents_with_mock_embedding_round_trip(mock_store: OpenClawVectorStore, corpus: Path) -> None:
    embed = MockEmbedding(embed_dim=8)
    index = VectorStoreIndex.from_documents(
        DOCS, storage_context=StorageContext.from_defaults(vector_store=mock_store), embed_model=embed
    )
    markdown = (corpus / "memory/llamaindex.md").read_text(encoding="utf-8")
    assert "Paris is the capital of France." in markdown and "The deploy key rotates every 90 days." in markdown

    hits = index.as_retriever(similarity_top_k=1, vector_store_query_mode="text_search").retrieve("capital France")
    assert len(hits) == 1
    assert hits[0].node.ref_doc_id == "doc-paris"
    assert hits[0].node.metadata["topic"] == "geography"
    assert hits[0].node.metadata["path"] == "memory/llamaindex.md"
    # DEFAULT mode embeds the query with MockEmbedding: same model, same space, no error
    dense = index.as_retriever(similarity_top_k=10).retrieve("anything")
    assert {"doc-paris", "doc-keys", "MEMORY.md"} <= {h.node.ref_doc_id for h in dense}

    response = index.as_query_engine(llm=MockLLM(), similarity_top_k=2, vector_store_query_mode="hybrid").query(
        "What is the capital of France?")
    assert any(n.node.ref_doc_id == "doc-paris" for n in response.source_nodes)

    index.delete_ref_doc("doc-paris")
    assert "Paris" not in (corpus / "memory/llamaindex.md").read_text(encoding="utf-8")
    left = index.as_retriever(similarity_top_k=10, vector_store_query_mode="text_search").retrieve("capital France")
    assert all(h.node.ref_doc_id != "doc-paris" for h in left)


def test_from_vector_store_over_existing_memory(store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding,
                                                corpus: Path) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=embed_model)
    top = index.as_retriever(similarity_top_k=1).retrieve("dark roast coffee in the morning")
    assert top[0].node.metadata["path"] == "MEMORY.md" and top[0].score is not None

    index.insert(Document(text="The cafeteria closes at 3 pm on Fridays.", id_="doc-cafe"))
    found = index.as_retriever(similarity_top_k=1, vector_store_query_mode="hybrid", alpha=0.5).retrieve(
        "When does the cafeteria close on Friday?")
    assert found[0].node.ref_doc_id == "doc-cafe"

    index.delete_nodes([found[0].node.node_id])
    assert not (corpus / "memory/llamaindex.md").exists()
    again = index.as_retriever(similarity_top_k=3, vector_store_query_mode="text_search").retrieve("cafeteria")
    assert all(h.node.ref_doc_id != "doc-cafe" for h in again)


async def test_async_index_round_trip(store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=embed_model)
    await index.ainsert(Document(text="Eve's birthday is on July 9.", id_="doc-eve"))
    hits = await index.as_retriever(similarity_top_k=1, vector_store_query_mode="hybrid").aretrieve("Eve birthday")
    assert hits[0].node.ref_doc_id == "doc-eve"
    await index.adelete_ref_doc("doc-eve")
    hits = await index.as_retriever(similarity_top_k=5, vector_store_query_mode="text_search").aretrieve("birthday")
    assert hits == []


def test_an_index_with_another_embed_model_gets_an_actionable_error(store: OpenClawVectorStore) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=MockEmbedding(embed_dim=8))
    with pytest.raises(ValueError, match="OpenClawMemoryEmbedding\\(store.memory.provider\\)"):
        index.as_retriever().retrieve("coffee")


async def test_vector_memory_block_uses_the_store_as_long_term_memory(
    store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding, corpus: Path
) -> None:
    block = VectorMemoryBlock(vector_store=store, embed_model=embed_model, similarity_top_k=2)
    await block.aput([ChatMessage(role="user", content="My cat is called Miso.")], session_id="s-1")
    await block.aput([ChatMessage(role="user", content="My cat is called Tofu.")], session_id="s-2")
    assert "Miso" in (corpus / "memory/llamaindex.md").read_text(encoding="utf-8")
    recalled = await block.aget([ChatMessage(role="user", content="What is my cat called?")], session_id="s-2")
    assert "Tofu" in str(recalled) and "Miso" not in str(recalled)


def test_hand_written_memory_survives_index_operations(
    store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding, hand_written_intact: Callable[[], None]
) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=embed_model)
    index.insert(Document(text="Temporary.", id_="tmp"))
    index.delete_ref_doc("tmp")
    index.delete_ref_doc("no-such-doc")
    hand_written_intact()


def test_nodes_inserted_one_after_another_are_scored_apart(
    store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding, corpus: Path
) -> None:
    """Issue 12 item 2: two short documents inserted in turn landed in one chunk, shared its score,
    and similarity_top_k=1 returned the wrong one."""
    index = VectorStoreIndex.from_vector_store(store, embed_model=embed_model)
    index.insert(Document(text="Q3 OKR: ship the billing migration and cut churn by 2 points.", id_="okr"))
    index.insert(Document(text="My gym membership renews on March 3 at the downtown club.", id_="gym"))
    for mode in ("default", "hybrid", "text_search"):
        hits = index.as_retriever(similarity_top_k=2, vector_store_query_mode=mode).retrieve(
            "When does my gym membership renew?")
        assert hits[0].node.ref_doc_id == "gym", mode
        if len(hits) > 1:
            assert hits[0].score != hits[1].score, mode
    chunks = [c for c in store.memory.store.iter_chunks() if c.path == "memory/llamaindex.md"]
    assert len(chunks) == 2  # one chunk per node
    assert not any("OKR" in c.text and "gym" in c.text for c in chunks)


_FILLER = ("The quarterly planning meeting covered hiring, the office move and the travel budget for the "
           "spring conference; everyone agreed to revisit the numbers in January. ")  # longer than a fast-tier head


@pytest.mark.local_model
def test_default_mode_right_after_from_documents_is_not_worse_than_keywords(workspace: Path, tmp_path: Path) -> None:
    """Right after ``from_documents`` the bundled model's fast first index is live: its vectors saw only each
    node's head (192 bytes), where this answer is not. A DEFAULT (vector) query ranks with the fast tier's
    hybrid weights then, so the node holding the answer comes first, as keyword-only search ranks it."""
    docs = [
        Document(text=_FILLER + "The staging database password rotates every ninety days and is kept in the vault.",
                 id_="doc-rotation"),
        Document(text="Notes about the database: we run PostgreSQL 16 on the staging cluster with nightly backups.",
                 id_="doc-postgres"),
        Document(text=_FILLER + "The new office is on the fourth floor of the harbour building.", id_="doc-office"),
    ]
    store = OpenClawVectorStore.from_workspace(workspace, provider="local", store={"path": str(tmp_path / "f.sqlite")},
                                               watch=False)
    try:
        index = VectorStoreIndex.from_documents(
            docs, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=store.embed_model)
        assert store.memory.status().embedding_upgrade["live"] == "fast"
        question = "How often does the staging database password rotate?"
        keyword = index.as_retriever(similarity_top_k=3, vector_store_query_mode="text_search").retrieve(question)
        dense = index.as_retriever(similarity_top_k=3).retrieve(question)  # DEFAULT mode
        assert keyword[0].node.ref_doc_id == "doc-rotation"
        assert [h.node.ref_doc_id for h in dense][:1] == ["doc-rotation"]
    finally:
        store.close()
