"""The retriever hands over the line ranges the core returns (``query.merge_overlapping``): a folded or cut hit's
metadata names exactly the lines its content holds."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory import MemoryIndex

from langchain_openclaw_memory import OpenClawMemoryRetriever
from tests.core.test_result_ranges import FILES


def test_documents_are_the_core_hits_ranges(write, tmp_path: Path) -> None:
    ws = write(FILES)
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / "i.sqlite")},
                     chunking={"tokens": 48, "overlap": 16}, citations="off") as memory:
        memory.sync()
        hits = memory.search("kayak", max_results=2, min_score=0).hits
        docs = OpenClawMemoryRetriever(memory=memory, k=2, min_score=0.0, content="text").invoke("kayak")
    assert [(d.metadata["path"], d.metadata["start_line"], d.metadata["end_line"]) for d in docs] == \
        [(h.path, h.start_line, h.end_line) for h in hits] == \
        [("memory/2023-05-02.md", 6, 11), ("memory/2023-05-09.md", 3, 4)]
    for d in docs:
        lines = FILES[d.metadata["path"]].split("\n")[d.metadata["start_line"] - 1:d.metadata["end_line"]]
        assert d.page_content == "\n".join(lines)
