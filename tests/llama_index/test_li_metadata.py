"""A node's metadata takes part in its search, as LlamaIndex embeds ``node.get_content(MetadataMode.EMBED)``:
the store writes ``get_metadata_str(MetadataMode.EMBED)`` as the section's ``index_text``, which the memory
index embeds and keyword-indexes with the text; ``excluded_embed_metadata_keys`` keep keys out of it, and a
node read back has its excluded keys again."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.schema import MetadataMode, NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

from llama_index_openclaw_memory import OpenClawVectorStore
from openclaw_memory import MemoryIndex
from openclaw_memory.text.chunker import indexed_text

Mode = VectorStoreQueryMode
BODY = "The numbers in the second table look fine and nobody objected."


def _node(node_id: str, **fields: Any) -> TextNode:
    return TextNode(id_=node_id, text=BODY, relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="doc-r")},
                    **fields)


def _report() -> TextNode:
    return _node("n-report", metadata={"title": "Zanzibar expedition budget", "author": "Quillfeather"},
                 excluded_embed_metadata_keys=["author"], excluded_llm_metadata_keys=["title"])


def _ids(store: OpenClawVectorStore, text: str, mode: Mode = Mode.TEXT_SEARCH, **kwargs: Any) -> list[str]:
    res = store.query(VectorStoreQuery(query_str=text, similarity_top_k=3, mode=mode, **kwargs))
    return list(res.ids or [])


def test_metadata_is_keyword_searchable_and_excluded_keys_are_not(store: OpenClawVectorStore, corpus: Path) -> None:
    store.add([_report(), _node("n-plain")])
    assert _ids(store, "Zanzibar expedition")[:1] == ["n-report"]  # only the title says so
    assert _ids(store, "Quillfeather") == []  # excluded from the embedding: not searchable
    markdown = (corpus / "memory/llamaindex.md").read_text(encoding="utf-8")
    assert markdown.count('"index_text": "title: Zanzibar expedition budget"') == 1  # the file holds it
    plain_marker = next(line for line in markdown.split("\n") if '"id": "n-plain"' in line)
    assert '"index_text"' not in plain_marker and "excluded" not in plain_marker  # no metadata, nothing extra


def test_the_indexed_text_is_what_llamaindex_embeds(store: OpenClawVectorStore, memory: MemoryIndex) -> None:
    report = _report()
    store.add([report])
    indexed = [c for c in memory.store.iter_chunks() if c.path == "memory/llamaindex.md"]
    assert len(indexed) == 1
    assert indexed_text(indexed[0].text) == report.get_content(metadata_mode=MetadataMode.EMBED)
    assert "Quillfeather" not in indexed_text(indexed[0].text) and "n-report" not in indexed_text(indexed[0].text)


def test_a_node_read_back_keeps_its_excluded_keys(store: OpenClawVectorStore) -> None:
    original = _report()
    store.add([original])
    (got,) = store.get_nodes(node_ids=["n-report"])
    hit = store.query(VectorStoreQuery(query_str="Zanzibar", similarity_top_k=1, mode=Mode.TEXT_SEARCH)).nodes[0]
    for node in (got, hit):
        assert node.metadata["title"] == "Zanzibar expedition budget" and node.metadata["author"] == "Quillfeather"
        assert "author" in node.excluded_embed_metadata_keys and "title" in node.excluded_llm_metadata_keys
        # the derived location keys are still hidden from the embedding, the path still shown to the LLM
        assert {"path", "start_line", "end_line"} <= set(node.excluded_embed_metadata_keys)
        assert (node.get_content(metadata_mode=MetadataMode.EMBED)
                == original.get_content(metadata_mode=MetadataMode.EMBED))
        llm = node.get_content(metadata_mode=MetadataMode.LLM)
        assert "Quillfeather" in llm and "Zanzibar" not in llm and "memory/llamaindex.md" in llm
    # re-adding a node read back writes the same section (the derived keys are not stored)
    markdown = (store.memory.workspace / "memory/llamaindex.md").read_text(encoding="utf-8")
    store.add([got])
    assert (store.memory.workspace / "memory/llamaindex.md").read_text(encoding="utf-8") == markdown


def test_a_node_without_metadata_or_exclusions_writes_no_extra_attributes(store: OpenClawVectorStore) -> None:
    store.add([_node("n-plain", excluded_embed_metadata_keys=["path"])])  # a derived key: not stored
    marker = (store.memory.workspace / "memory/llamaindex.md").read_text(encoding="utf-8").split("\n")[0]
    digest = hashlib.sha256(BODY.encode()).hexdigest()  # the text's hash: what a delete checks
    assert marker == f'<!-- openclaw-memory:node {{"id": "n-plain", "ref_doc_id": "doc-r", "sha256": "{digest}"}} -->'
    (got,) = store.get_nodes(node_ids=["n-plain"])
    assert got.get_content(metadata_mode=MetadataMode.EMBED) == BODY


@pytest.mark.local_model
def test_with_the_bundled_model_a_question_about_the_metadata_finds_the_node(corpus: Path, tmp_path: Path) -> None:
    """Hybrid and dense search with the real model, through a VectorStoreIndex retriever."""
    store = OpenClawVectorStore.from_workspace(corpus, provider="local", store={"path": str(tmp_path / "m.sqlite")},
                                               watch=False, local={"first_index": "full"})
    try:
        assert store.memory.provider is not None and store.memory.provider.id == "local"
        index = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
        index.insert_nodes([_report(), _node("n-other", metadata={"title": "Office plants watering plan"})])
        for mode in ("hybrid", "default"):
            got = index.as_retriever(similarity_top_k=2, vector_store_query_mode=mode).retrieve(
                "budget of the Zanzibar expedition")
            assert got[0].node.node_id == "n-report", mode
            assert "author" in got[0].node.excluded_embed_metadata_keys
        got = index.as_retriever(similarity_top_k=2, vector_store_query_mode="hybrid").retrieve(
            "watering the office plants")
        assert got[0].node.node_id == "n-other"
    finally:
        store.close()


def test_a_nodes_own_metadata_template_is_indexed_and_kept(store: OpenClawVectorStore) -> None:
    custom = _node("n-custom", metadata={"title": "Harbour crane schedule", "floor": 3},
                   metadata_template="[{key}={value}]", metadata_separator=" ")
    store.add([custom])
    assert _ids(store, "harbour crane") == ["n-custom"]
    (got,) = store.get_nodes(node_ids=["n-custom"])
    assert (got.metadata_template, got.metadata_separator) == ("[{key}={value}]", " ")
    assert got.get_content(metadata_mode=MetadataMode.EMBED) == custom.get_content(metadata_mode=MetadataMode.EMBED)
    (chunk,) = [c for c in store.memory.store.iter_chunks() if c.path == "memory/llamaindex.md"]
    assert indexed_text(chunk.text) == custom.get_content(metadata_mode=MetadataMode.EMBED)
