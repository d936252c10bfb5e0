"""A node's relationships to other nodes (parent, children, previous, next) come back with it, as LlamaIndex's
text-storing vector stores keep them (the whole node is stored), so the retrievers and postprocessors that
follow them work: ``AutoMergingRetriever`` merges retrieved leaves into their parent, and
``PrevNextNodePostprocessor`` adds the neighbouring nodes.

The store kept only the source document (``ref_doc_id``): every other relationship was dropped, so an
auto-merging retriever over a hierarchy (``HierarchicalNodeParser``) silently returned the leaves unmerged.
"""

from __future__ import annotations

from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.node_parser import HierarchicalNodeParser, get_leaf_nodes
from llama_index.core.retrievers import AutoMergingRetriever
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

from llama_index_openclaw_memory import OpenClawMemoryEmbedding, OpenClawVectorStore

SENTENCES = " ".join(f"The lighthouse keeper logged storm number {i} on the northern cliffs." for i in range(12))


def test_parent_child_and_neighbour_links_come_back(store: OpenClawVectorStore) -> None:
    parent = RelatedNodeInfo(node_id="chapter-1", hash="abc")
    nodes = [
        TextNode(id_="p1", text="The first paragraph.", relationships={
            NodeRelationship.SOURCE: RelatedNodeInfo(node_id="book"), NodeRelationship.PARENT: parent,
            NodeRelationship.NEXT: RelatedNodeInfo(node_id="p2")}),
        TextNode(id_="p2", text="The second paragraph.", relationships={
            NodeRelationship.SOURCE: RelatedNodeInfo(node_id="book"), NodeRelationship.PARENT: parent,
            NodeRelationship.PREVIOUS: RelatedNodeInfo(node_id="p1"),
            NodeRelationship.CHILD: [RelatedNodeInfo(node_id="s1"), RelatedNodeInfo(node_id="s2")]}),
    ]
    store.add(nodes)
    back = {n.node_id: n for n in store.get_nodes(node_ids=["p1", "p2"])}
    assert back["p1"].parent_node is not None and back["p1"].parent_node.node_id == "chapter-1"
    assert back["p1"].parent_node.hash == "abc"
    assert back["p1"].next_node is not None and back["p1"].next_node.node_id == "p2"
    assert back["p2"].prev_node is not None and back["p2"].prev_node.node_id == "p1"
    assert [c.node_id for c in back["p2"].child_nodes or []] == ["s1", "s2"]
    assert back["p2"].ref_doc_id == "book"


def test_auto_merging_retrieval_merges_leaves_into_their_parent(store: OpenClawVectorStore,
                                                                 embed_model: OpenClawMemoryEmbedding) -> None:
    parser = HierarchicalNodeParser.from_defaults(chunk_sizes=[512, 64])
    nodes = parser.get_nodes_from_documents([Document(text=SENTENCES, id_="log")])
    leaves = get_leaf_nodes(nodes)
    assert len(leaves) > 2
    storage = StorageContext.from_defaults(vector_store=store)
    storage.docstore.add_documents(nodes)
    index = VectorStoreIndex(leaves, storage_context=storage, embed_model=embed_model)
    retriever = AutoMergingRetriever(index.as_retriever(similarity_top_k=len(leaves)), storage, simple_ratio_thresh=0.3)
    found = retriever.retrieve("lighthouse keeper storm northern cliffs")
    parents = {n.node_id for n in nodes} - {n.node_id for n in leaves}
    assert {n.node.node_id for n in found} <= parents, "the leaves were not merged into their parent"


def test_a_search_snippet_shows_the_node_text_not_its_links(store: OpenClawVectorStore,
                                                            embed_model: OpenClawMemoryEmbedding) -> None:
    """A node's links live in its record's marker line (hundreds of characters for a hierarchy); a search hit's
    snippet, what ``memory_search`` shows a model, is the node's text, while the hit's text keeps the marker."""
    parser = HierarchicalNodeParser.from_defaults(chunk_sizes=[512, 64])
    nodes = parser.get_nodes_from_documents([Document(text=SENTENCES, id_="log")])
    VectorStoreIndex(get_leaf_nodes(nodes), storage_context=StorageContext.from_defaults(vector_store=store),
                     embed_model=embed_model)
    found = store.memory.search("lighthouse keeper storm northern cliffs", min_score=0).hits
    hits = [hit for hit in found if hit.path == "memory/llamaindex.md"]
    assert hits
    for hit in hits:
        assert hit.snippet.startswith("The lighthouse keeper"), hit.snippet[:80]
        assert "openclaw-memory:" in hit.text
