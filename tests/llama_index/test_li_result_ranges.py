"""The retriever hands over the line ranges the core returns (``query.merge_overlapping``): a folded or cut hit's
metadata names exactly the lines its node holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openclaw_memory import MemoryIndex

from llama_index_openclaw_memory import OpenClawMemoryRetriever
from tests.helpers.kayak_notes import FILES


def test_nodes_are_the_core_hits_ranges(write, tmp_path: Path) -> None:
    ws = write(FILES)
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / "i.sqlite")},
                     chunking={"tokens": 48, "overlap": 16}, citations="off") as memory:
        memory.sync()
        hits = memory.search("kayak", max_results=2, min_score=0).hits
        nodes = OpenClawMemoryRetriever(memory, similarity_top_k=2, min_score=0.0).retrieve("kayak")
    got = [(n.node.metadata["path"], n.node.metadata["start_line"], n.node.metadata["end_line"]) for n in nodes]
    assert got == [(h.path, h.start_line, h.end_line) for h in hits] == \
        [("memory/2023-05-02.md", 6, 11), ("memory/2023-05-09.md", 3, 4)]
    for n in nodes:
        meta = n.node.metadata
        lines = FILES[meta["path"]].split("\n")[meta["start_line"] - 1:meta["end_line"]]
        assert n.node.get_content() == "\n".join(lines)


def _workspace(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _store_query(memory: MemoryIndex, **kw: Any) -> tuple[Any, Any]:
    from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

    from llama_index_openclaw_memory import OpenClawVectorStore

    store = OpenClawVectorStore(memory)
    return store, store.query(VectorStoreQuery(query_str="kayak", similarity_top_k=2,
                                               mode=VectorStoreQueryMode.TEXT_SEARCH, **kw))


def test_the_vector_store_returns_its_nodes_as_stored(tmp_path: Path) -> None:
    """A vector store query is not merged: it returns as many nodes as asked, each what get_nodes returns."""
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    from tests.helpers.kayak_notes import KAYAKS

    with MemoryIndex(provider=None, workspace=_workspace(tmp_path / "ws1", KAYAKS), watch=False,
                     store={"path": str(tmp_path / "a.sqlite")},
                     chunking={"tokens": 48, "overlap": 40}) as memory:
        memory.sync()
        only_b = MetadataFilters(filters=[MetadataFilter(key="path", value="memory/b.md")])
        _, r = _store_query(memory, filters=only_b)
        assert [(n.metadata["path"], n.metadata["start_line"], n.metadata["end_line"]) for n in r.nodes] == \
            [("memory/b.md", 1, 15)]  # was []: folds of a.md used the line budget before the filter ran
    with MemoryIndex(provider=None, workspace=_workspace(tmp_path / "ws2", {"MEMORY.md": "# M\n"}), watch=False,
                     store={"path": str(tmp_path / "b.sqlite")}, chunking={"tokens": 48, "overlap": 40}) as memory:
        memory.sync()
        store, _ = _store_query(memory)
        store.add([TextNode(id_="A", text="\n".join(f"kayak kayak trip log entry {i} on the river" for i in range(40))),
                   TextNode(id_="B", text="the kayak was red\nnothing else here")])
        _, r = _store_query(memory)
        assert r.ids == ["A", "B"]  # was ["A"]
    with MemoryIndex(provider=None, workspace=_workspace(tmp_path / "ws3", FILES), watch=False,
                     store={"path": str(tmp_path / "c.sqlite")}, chunking={"tokens": 48, "overlap": 16}) as memory:
        memory.sync()
        store, r = _store_query(memory)
        assert len(r.nodes) == 2
        for n in r.nodes:
            [same] = store.get_nodes(node_ids=[n.node_id])
            assert (n.get_content(), n.metadata) == (same.get_content(), same.metadata)


def test_a_folded_or_cut_hit_has_its_own_node_id(tmp_path: Path) -> None:
    """A node id names one text: a hit holding other lines than its chunk gets an id of its own (stable, derived
    from the chunk id and the range); the chunk id stays in the metadata."""
    from openclaw_memory.retrieval.result_ranges import range_id

    with MemoryIndex(provider=None, workspace=_workspace(tmp_path / "ws", FILES), watch=False,
                     store={"path": str(tmp_path / "i.sqlite")}, chunking={"tokens": 48, "overlap": 16}) as memory:
        memory.sync()
        chunks = {c.id: c for c in memory.iter_chunks()}
        retriever = OpenClawMemoryRetriever(memory, similarity_top_k=2, min_score=0.0)
        nodes, again = retriever.retrieve("kayak"), retriever.retrieve("kayak")
        plain = OpenClawMemoryRetriever(memory, similarity_top_k=1, min_score=0.0).retrieve("Saturday morning")
    assert [n.node.node_id for n in nodes] == [n.node.node_id for n in again]
    assert len({n.node.node_id for n in nodes}) == 2
    for n in nodes:
        meta = n.node.metadata
        chunk = chunks[meta["chunk_id"]]
        assert (chunk.start_line, chunk.end_line) != (meta["start_line"], meta["end_line"])  # both folded or cut
        assert n.node.node_id == range_id(chunk.id, meta["start_line"], meta["end_line"]) != chunk.id
    [p] = plain  # a hit that holds its chunk keeps the chunk id
    assert p.node.node_id == p.node.metadata["chunk_id"]
    chunk = chunks[p.node.node_id]
    assert (chunk.start_line, chunk.end_line, chunk.text) == \
        (p.node.metadata["start_line"], p.node.metadata["end_line"], p.node.get_content())
