"""A node's ``start_char_idx`` / ``end_char_idx`` (where its text lies in its source document, as LlamaIndex's node
parsers set them) come back with it from ``get_nodes`` and from a query, as LlamaIndex's own stores keep the whole
node. The store dropped them: a node read back had None, so an app highlighting the retrieved passage in its
document (or anything reading the offsets) lost its place.

Hand-written Markdown chunks, and every hit of the memory search retriever, have their file as source document; the
core keeps line ranges (``start_line`` / ``end_line`` metadata), not character offsets, so their offsets stay None."""

from __future__ import annotations

from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_index_openclaw_memory import OpenClawMemoryEmbedding, OpenClawVectorStore

TEXT = " ".join(f"The lighthouse keeper logged storm number {i} on the northern cliffs." for i in range(12))


def test_parsed_nodes_keep_their_offsets_in_their_document(store: OpenClawVectorStore,
                                                           embed_model: OpenClawMemoryEmbedding) -> None:
    nodes = SentenceSplitter(chunk_size=64, chunk_overlap=0).get_nodes_from_documents([Document(text=TEXT, id_="log")])
    assert len(nodes) > 2 and all(n.start_char_idx is not None for n in nodes)
    VectorStoreIndex(nodes, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=embed_model)
    expected = {n.node_id: (n.start_char_idx, n.end_char_idx) for n in nodes}

    back = store.get_nodes(node_ids=list(expected))
    assert {n.node_id: (n.start_char_idx, n.end_char_idx) for n in back} == expected
    for node in back:
        assert TEXT[node.start_char_idx:node.end_char_idx] == node.get_content()  # type: ignore[misc]

    query = VectorStoreQuery(query_embedding=embed_model.get_query_embedding("storm number 7"), similarity_top_k=3)
    found = store.query(query).nodes or []
    assert found and all((n.start_char_idx, n.end_char_idx) == expected[n.node_id] for n in found)


def test_a_node_without_offsets_has_none(store: OpenClawVectorStore) -> None:
    store.add([TextNode(id_="plain", text="No offsets here.")])
    (node,) = store.get_nodes(node_ids=["plain"])
    assert node.start_char_idx is None and node.end_char_idx is None
    marker = next(line for line in (store.memory.workspace / "memory/llamaindex.md").read_text().splitlines()
                  if '"plain"' in line)
    assert "char_idx" not in marker  # nothing written for a node that has none


def test_a_node_edited_by_hand_loses_its_offsets(store: OpenClawVectorStore) -> None:
    """They would point at the text it was written with."""
    store.add([TextNode(id_="n1", text="Storm number 3 hit the cliffs.", start_char_idx=10, end_char_idx=40)])
    assert store.get_nodes(node_ids=["n1"])[0].start_char_idx == 10
    path = store.memory.workspace / "memory/llamaindex.md"
    path.write_text(path.read_text().replace("Storm number 3", "Storm number 4"))
    (node,) = store.get_nodes(node_ids=["n1"])
    assert node.get_content() == "Storm number 4 hit the cliffs."
    assert node.start_char_idx is None and node.end_char_idx is None
