"""An ``IndexNode`` added through the store comes back as an ``IndexNode``, so LlamaIndex's recursive retrieval
follows it.

LlamaIndex's retriever takes the nodes a text-storing vector store returns as they are, except those that are not
text nodes: it replaces them with the docstore's copy (``VectorIndexRetriever._determine_nodes_to_fetch``), which
keeps the ``IndexNode``'s ``index_id`` / ``obj``; ``RecursiveRetriever`` (and a retriever's ``object_map``) then
follows an ``IndexNode`` to the retriever or object it names. The store returned every node as a ``TextNode``: the
``IndexNode`` reached the caller as its summary text and recursive retrieval ("node references",
``VectorStoreIndex(objects=...)``) stopped there. The section now keeps the node's ``index_id``.
"""

from __future__ import annotations

from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.retrievers import RecursiveRetriever
from llama_index.core.schema import IndexNode, TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

from llama_index_openclaw_memory import OpenClawMemoryEmbedding, OpenClawVectorStore

DETAIL = "The quokka survey counted 412 animals on Rottnest Island in March."


def test_an_index_node_is_followed_to_the_retriever_it_names(store: OpenClawVectorStore,
                                                             embed_model: OpenClawMemoryEmbedding) -> None:
    details = VectorStoreIndex([TextNode(text=DETAIL, id_="detail")], embed_model=embed_model)  # in memory
    summary = IndexNode(text="Summary of the quokka survey report.", index_id="survey", id_="survey-summary")
    index = VectorStoreIndex([summary], storage_context=StorageContext.from_defaults(vector_store=store),
                             embed_model=embed_model)
    retriever = RecursiveRetriever("root", retriever_dict={"root": index.as_retriever(similarity_top_k=3),
                                                           "survey": details.as_retriever()})
    found = retriever.retrieve("quokka survey")
    assert [n.node.get_content() for n in found] == [DETAIL]


def test_an_index_node_keeps_its_class_and_index_id(store: OpenClawVectorStore) -> None:
    store.add([IndexNode(text="Summary of the quokka survey report.", index_id="survey", id_="survey-summary"),
               TextNode(text="A plain note about quokkas.", id_="plain")])
    nodes = {n.node_id: n for n in store.get_nodes(node_ids=["survey-summary", "plain"])}
    assert isinstance(nodes["survey-summary"], IndexNode) and nodes["survey-summary"].index_id == "survey"
    assert type(nodes["plain"]) is TextNode
    found = store.query(VectorStoreQuery(query_str="quokka survey report", mode=VectorStoreQueryMode.TEXT_SEARCH,
                                         similarity_top_k=5))
    assert any(isinstance(n, IndexNode) and n.index_id == "survey" for n in found.nodes)
