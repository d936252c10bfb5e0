"""A node's text comes back exactly as it was added, so its ``hash`` (text and metadata) is the one LlamaIndex
computed when the node went in (the ingestion cache, a docstore's de-duplication and a caller's own bookkeeping key
nodes by it).

The store dropped the line breaks a text ended with ("a note\\n" came back "a note", a Windows text "a\\r\\nb\\r\\n"
as "a\\r\\nb\\r"), so the node returned by ``get_nodes`` or a query had another hash than the node added.
"""

from __future__ import annotations

import pytest
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

from llama_index_openclaw_memory import OpenClawVectorStore

TEXTS = {
    "newline": "The kiln fires at 1240 degrees.\n",
    "blank-lines": "The kiln cools for nine hours.\n\n\n",
    "windows": "The kiln log is kept\r\nin the shed binder.\r\n",
    "inner": "The kiln\n\nshelf is cordierite.",
}


@pytest.mark.parametrize("node_id", TEXTS)
def test_get_nodes_returns_the_text_and_hash_as_added(store: OpenClawVectorStore, node_id: str) -> None:
    added = TextNode(id_=node_id, text=TEXTS[node_id], metadata={"topic": "kiln"})
    store.add([added])
    (back,) = store.get_nodes(node_ids=[node_id])
    assert back.get_content() == TEXTS[node_id]
    assert TextNode(id_=node_id, text=back.get_content(), metadata={"topic": "kiln"}).hash == added.hash


def test_a_query_returns_the_text_as_added(store: OpenClawVectorStore) -> None:
    store.add([TextNode(id_=k, text=v) for k, v in TEXTS.items()])
    found = store.query(VectorStoreQuery(query_str="kiln", mode=VectorStoreQueryMode.TEXT_SEARCH, similarity_top_k=10))
    texts = {n.node_id: n.get_content() for n in found.nodes if n.node_id in TEXTS}
    assert texts == TEXTS


def test_the_markdown_section_still_ends_at_its_text(store: OpenClawVectorStore) -> None:
    store.add([TextNode(id_="newline", text=TEXTS["newline"])])
    markdown = (store.memory.workspace / "memory/llamaindex.md").read_text(encoding="utf-8")
    assert "The kiln fires at 1240 degrees.\n<!-- /openclaw-memory:node -->" in markdown
