"""The retriever hands over the line ranges the core returns (``query.merge_overlapping``): a folded or cut hit's
metadata names exactly the lines its content holds."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory import MemoryIndex

from langchain_openclaw_memory import OpenClawMemoryRetriever
from tests.helpers.kayak_notes import FILES


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


def test_a_folded_or_cut_hit_has_its_own_document_id(write, tmp_path: Path) -> None:
    """Document.id names one text: a folded or cut hit gets an id derived from its chunk id and range; the chunk id
    is in the metadata; an unchanged hit keeps the chunk id."""
    ws = write(FILES)
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / "i.sqlite")},
                     chunking={"tokens": 48, "overlap": 16}, citations="off") as memory:
        memory.sync()
        chunks = {c.id: c for c in memory.iter_chunks()}
        hits = memory.search("kayak", max_results=2, min_score=0).hits
        docs = OpenClawMemoryRetriever(memory=memory, k=2, min_score=0.0, content="text").invoke("kayak")
        [plain] = OpenClawMemoryRetriever(memory=memory, k=1, min_score=0.0, content="text").invoke("Saturday morning")
    assert [d.id for d in docs] == [h.id for h in hits]
    for d in docs:
        chunk = chunks[d.metadata["chunk_id"]]
        assert d.id != chunk.id and d.page_content != chunk.text
    assert plain.id == plain.metadata["chunk_id"] and plain.page_content == chunks[plain.id].text
