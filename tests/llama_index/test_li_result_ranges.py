"""The retriever hands over the line ranges the core returns (``query.merge_overlapping``): a folded or cut hit's
metadata names exactly the lines its node holds."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory import MemoryIndex

from llama_index_openclaw_memory import OpenClawMemoryRetriever
from tests.core.test_result_ranges import FILES


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
