"""LlamaIndex conventions (issue 12, item 7): ``similarity_top_k``, ``to_dict``/``from_dict``,
the store's own embed model for ``from_vector_store``, embeddings from another model, and the
old names kept as deprecated aliases."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.memory import Memory

import llama_index_openclaw_memory as pkg
from llama_index_openclaw_memory import (
    OpenClawMemoryBlock,
    OpenClawMemoryEmbedding,
    OpenClawMemoryRetriever,
    OpenClawVectorStore,
    create_memory_get_tool,
    create_memory_search_tool,
    create_memory_tools,
)
from openclaw_memory import MemoryIndex


def test_retriever_takes_similarity_top_k(memory: MemoryIndex) -> None:
    assert len(OpenClawMemoryRetriever(memory, similarity_top_k=1, min_score=0.0).retrieve("memory")) == 1
    assert len(OpenClawMemoryRetriever(memory, similarity_top_k=3, min_score=0.0).retrieve("memory")) == 3


def test_old_names_still_work_and_warn(memory: MemoryIndex) -> None:
    with pytest.warns(DeprecationWarning, match="similarity_top_k"):
        old = OpenClawMemoryRetriever(memory, max_results=1, min_score=0.0)
    assert len(old.retrieve("memory")) == 1
    with pytest.warns(DeprecationWarning, match="similarity_top_k"):
        block = OpenClawMemoryBlock(memory=memory, max_results=2)
    assert block.similarity_top_k == 2
    with pytest.warns(DeprecationWarning, match="OpenClawMemoryEmbedding"):
        assert pkg.OpenClawEmbedding is OpenClawMemoryEmbedding
    with pytest.warns(DeprecationWarning, match="create_memory_tools"):
        assert pkg.memory_tools is create_memory_tools


def test_tool_factories_are_named_as_in_langchain(memory: MemoryIndex) -> None:
    """One name per idea across the adapters: create_memory_search_tool / create_memory_get_tool, as in LangChain;
    the old LlamaIndex names still work and warn, from the package and from its tools module."""
    import langchain_openclaw_memory as lc
    import llama_index_openclaw_memory.tools as tools_module

    assert {"create_memory_search_tool", "create_memory_get_tool", "create_memory_tools"} <= set(lc.__all__) & set(pkg.__all__)
    assert create_memory_search_tool(memory).metadata.name == "memory_search"
    assert create_memory_get_tool(memory).metadata.name == "memory_get"
    with pytest.warns(DeprecationWarning, match="create_memory_search_tool"):
        assert pkg.memory_search_tool is create_memory_search_tool
    with pytest.warns(DeprecationWarning, match="create_memory_get_tool"):
        assert tools_module.memory_get_tool is create_memory_get_tool
    with pytest.raises(AttributeError):
        tools_module.OpenClawEmbedding  # noqa: B018 - a package-level alias, not a tools one


def test_session_kind_direct_and_the_old_private(memory: MemoryIndex) -> None:
    assert OpenClawMemoryBlock(memory=memory).session_kind == "direct"
    with pytest.warns(DeprecationWarning, match='"direct"'):
        old = OpenClawMemoryBlock(memory=memory, session_kind="private")
    assert old.session_kind == "direct"
    with pytest.raises(ValueError, match="session_kind"):
        OpenClawMemoryBlock(memory=memory, session_kind="public")


def test_vector_store_round_trips_through_to_dict(store: OpenClawVectorStore) -> None:
    data = store.to_dict()
    copy = OpenClawVectorStore.from_dict(data)
    try:
        assert copy.memory is not store.memory
        assert copy.memory.workspace == store.memory.workspace
        assert copy.append_path == store.append_path and copy.min_score == store.min_score
        assert copy.to_dict() == data
    finally:
        copy.close()


def test_from_dict_takes_back_an_embedding_model_given_as_an_object(store: OpenClawVectorStore) -> None:
    """A provider object is not serialised: from_dict takes it back (it silently opened the configured one, the
    bundled model, which rebuilds an index embedded with another), and refuses a keyword it does not know."""
    provider = store.memory.provider
    data = store.to_dict()
    copy = OpenClawVectorStore.from_dict(data, provider=provider)
    try:
        assert copy.memory.provider is provider
        before = provider.texts_embedded
        copy.memory.sync(force=False)
        assert provider.texts_embedded == before  # the same model: nothing embedded again
    finally:
        copy.close()
    copy = OpenClawVectorStore.from_dict(data, embed_model=MockEmbedding(embed_dim=8), append_path="MEMORY.md")
    try:
        assert copy.memory.provider.model == "MockEmbedding:unknown" and copy.append_path == "MEMORY.md"
    finally:
        copy.close()
    with pytest.raises(TypeError, match="embed_modle.*takes append_path, min_score, embed_model, provider"):
        OpenClawVectorStore.from_dict(data, embed_modle=MockEmbedding(embed_dim=8))


def test_from_vector_store_with_the_stores_own_embed_model(store: OpenClawVectorStore, corpus: Path) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
    index.insert(Document(text="The VPN certificate expires on June 2.", id_="vpn"))
    hits = index.as_retriever(similarity_top_k=1, vector_store_query_mode="hybrid").retrieve(
        "When does the VPN certificate expire?")
    assert hits[0].node.ref_doc_id == "vpn"


def test_nodes_embedded_with_another_dimension_are_refused(store: OpenClawVectorStore, corpus: Path) -> None:
    before = (corpus / "memory").iterdir()
    index = VectorStoreIndex.from_vector_store(store, embed_model=MockEmbedding(embed_dim=8))
    with pytest.raises(ValueError, match="8 dimensions.*embed_model=store.embed_model"):
        index.insert(Document(text="The VPN certificate expires on June 2.", id_="vpn"))
    assert not (corpus / "memory" / "llamaindex.md").exists()
    assert sorted(before) == sorted((corpus / "memory").iterdir())


def test_a_same_dimension_model_from_another_space_does_not_skew_results(
    store: OpenClawVectorStore, caplog: pytest.LogCaptureFixture
) -> None:
    dims = store.memory.provider.dims
    index = VectorStoreIndex.from_vector_store(store, embed_model=MockEmbedding(embed_dim=dims))
    right = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
    query = "Which region do deployments run in?"
    with caplog.at_level(logging.WARNING):
        wrong_hits = index.as_retriever(similarity_top_k=2).retrieve(query)
    assert "another vector space" in caplog.text
    right_hits = right.as_retriever(similarity_top_k=2).retrieve(query)
    assert [h.node.node_id for h in wrong_hits] == [h.node.node_id for h in right_hits]


def test_memory_with_the_block_and_new_names(memory: MemoryIndex) -> None:
    chat_memory = Memory.from_defaults(memory_blocks=[OpenClawMemoryBlock(memory=memory, similarity_top_k=2)])
    assert chat_memory.memory_blocks[0].similarity_top_k == 2
    assert [t.metadata.name for t in create_memory_tools(memory)] == ["memory_search", "memory_get"]
