"""What a LlamaIndex user expects of a text-storing vector store, checked on OpenClawVectorStore next to
LlamaIndex's own ``SimpleVectorStore``: a node comes back with the metadata it was added with, whatever its
keys are named, and the source-document keys LlamaIndex stores keep (``ref_doc_id``, ``doc_id``,
``document_id``) can be filtered on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.schema import MetadataMode, NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from llama_index_openclaw_memory import OpenClawMemoryEmbedding, OpenClawVectorStore

Mode = VectorStoreQueryMode
# keys a reader or a user commonly sets that the adapter also derives for a node's location
OWN = {"source": "slack", "date": "2024-05-01", "path": "ops/outages", "citation": "postmortem #12", "chunk_id": "c-7"}


def _node(node_id: str, text: str, doc: str, **metadata: Any) -> TextNode:
    return TextNode(id_=node_id, text=text, metadata=metadata,
                    relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=doc)})


def _only(key: str, value: Any, operator: FilterOperator = FilterOperator.EQ) -> MetadataFilters:
    return MetadataFilters(filters=[MetadataFilter(key=key, value=value, operator=operator)])


def test_a_nodes_own_metadata_named_like_a_location_key_comes_back(store: OpenClawVectorStore, corpus: Path) -> None:
    store.add([_node("n-outage", "The outage came from a cache stampede.", "doc-outage", author="bob", **OWN)])
    (got,) = store.get_nodes(node_ids=["n-outage"])
    assert {k: got.metadata.get(k) for k in (*OWN, "author")} == {**OWN, "author": "bob"}  # was: source "memory"
    assert (got.metadata["start_line"], got.metadata["end_line"]) == (2, 2)  # the location it has no key of its own for
    # the node's own keys take part in its embedding, as LlamaIndex embeds them; the derived ones do not
    embedded = got.get_content(metadata_mode=MetadataMode.EMBED)
    assert "source: slack" in embedded and "date: 2024-05-01" in embedded and "start_line" not in embedded
    hit = store.query(VectorStoreQuery(query_str="stampede", similarity_top_k=1, mode=Mode.TEXT_SEARCH,
                                       filters=_only("source", "slack"))).nodes
    assert [n.node_id for n in hit or []] == ["n-outage"]
    assert [n.node_id for n in store.get_nodes(filters=_only("date", "2024-05-01"))] == ["n-outage"]
    # re-adding the node read back writes the same section: its own keys stay, the derived ones are not stored
    markdown = (corpus / "memory/llamaindex.md").read_text(encoding="utf-8")
    store.add([got])
    assert (corpus / "memory/llamaindex.md").read_text(encoding="utf-8") == markdown


def test_a_node_read_back_from_a_query_re_adds_as_it_was(store: OpenClawVectorStore, corpus: Path) -> None:
    store.add([_node("n-plain", "The outage came from a cache stampede.", "doc-outage", author="bob")])
    markdown = (corpus / "memory/llamaindex.md").read_text(encoding="utf-8")
    (hit,) = store.query(VectorStoreQuery(query_str="stampede", similarity_top_k=1, mode=Mode.TEXT_SEARCH)).nodes or []
    assert hit.metadata["source"] == "memory"  # derived: the node has no source of its own
    store.add([hit])
    assert (corpus / "memory/llamaindex.md").read_text(encoding="utf-8") == markdown


@pytest.mark.parametrize("key", ["ref_doc_id", "doc_id", "document_id"])
def test_filters_on_the_source_document_keys_match_as_in_simple_vector_store(
        store: OpenClawVectorStore, embed_model: OpenClawMemoryEmbedding, key: str) -> None:
    docs = [Document(text="Bob likes green tea.", id_="doc-tea"), Document(text="Bob likes cold brew.", id_="doc-brew")]
    simple = SimpleVectorStore()
    expected: dict[str, list[str]] = {}
    for vector_store in (simple, store):
        index = VectorStoreIndex.from_documents(
            docs, storage_context=StorageContext.from_defaults(vector_store=vector_store), embed_model=embed_model)
        retriever = index.as_retriever(similarity_top_k=5, filters=_only(key, "doc-tea"))
        expected[type(vector_store).__name__] = [n.node.ref_doc_id for n in retriever.retrieve("Bob likes")]
    assert expected["SimpleVectorStore"] == ["doc-tea"]
    assert expected["OpenClawVectorStore"] == ["doc-tea"]  # was []: the key was looked up in the metadata only
    assert [n.ref_doc_id for n in store.get_nodes(filters=_only(key, "doc-brew"))] == ["doc-brew"]
    none = _only(key, ["doc-tea", "doc-brew"], FilterOperator.NIN)
    assert {n.metadata["path"] for n in store.get_nodes(filters=none)} == {
        "MEMORY.md", "memory/2026-01-16.md", "memory/2026-01-20.md"}  # hand-written chunks: their file is the doc
