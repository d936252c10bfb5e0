"""A record marker longer than a chunk's budget (a node with big metadata) is never split: it stays one line in
its chunk, so its JSON is neither keyword-indexed nor embedded, and the chunk (what a search returns) holds the
whole marker."""

from __future__ import annotations

import numpy as np
import pytest

from openclaw_memory.text.chunker import RECORD_INDEX_TEXT, chunk_markdown, indexed_text, split_for_input_limit
from openclaw_memory.files.records import parse_records, render_record

BODY = "The harbour survey found two cracked bollards on the east pier.\nRepairs are booked for March."
INDEX_TEXT = "title: Harbour survey"
SECRET = "quokkaref7781"  # only inside the metadata JSON (a key the node excludes from its index text)
HAND = "# Notes\n\n- Rex the dog needs a walk at noon.\n\n"


def _block(filler: int) -> str:
    metadata = {"title": "Harbour survey", "source_ref": SECRET, "blob": "lorem ipsum dolor " * filler}
    return render_record("node", {"id": "n-long", RECORD_INDEX_TEXT: INDEX_TEXT, "metadata": metadata}, BODY)


@pytest.mark.parametrize("filler", [100, 500])  # markers of ~1.9k and ~9k characters (past 1600 and 8000 bytes)
def test_a_long_marker_stays_one_line_of_its_chunk(filler: int) -> None:
    block = _block(filler)
    marker = block.split("\n")[0]
    assert len(marker) > 1600
    chunks = chunk_markdown(HAND + block)
    record = [c for c in chunks if c.text.startswith("<!-- openclaw-memory:node ")]
    assert len(record) == 1 and record[0].text == block.rstrip("\n")  # the whole record, marker in one piece
    assert indexed_text(record[0].text) == f"{INDEX_TEXT}\n\n{BODY}"
    assert [r.attrs["id"] for r in parse_records(record[0].text, "node")] == ["n-long"]
    assert not any(SECRET in c.text for c in chunks if c is not record[0])
    # the embedding input limit measures what is embedded, not the marker
    assert split_for_input_limit(record, 8000) == record


def test_a_long_marker_is_not_searchable_and_reads_back_unchanged(write, make_index, fake_provider) -> None:
    content = HAND + _block(500)
    write({"memory/nodes.md": content})
    idx = make_index(fake_provider)
    idx.sync()
    assert idx.search(SECRET, min_score=0, mode="keyword").hits == []
    assert idx.search("lorem ipsum dolor", min_score=0, mode="keyword").hits == []
    hits = idx.search("cracked bollards", min_score=0, mode="keyword").hits
    assert len(hits) == 1
    hit = hits[0]
    assert hit.text.split("\n")[0] == content.split("\n")[hit.start_line - 1]  # the whole marker line
    assert hit.text == "\n".join(content.split("\n")[hit.start_line - 1 : hit.end_line])
    got = idx.get("memory/nodes.md", hit.start_line, hit.end_line - hit.start_line + 1)
    assert got.text == hit.text
    assert idx.get("memory/nodes.md").text == content
    # one stored chunk for the record, embedded from its index text and body only
    stored = [c for c in idx.store.iter_chunks() if "openclaw-memory:node" in c.text]
    assert len(stored) == 1
    want = np.asarray(fake_provider.embed_documents([f"{INDEX_TEXT}\n\n{BODY}"])[0], dtype=np.float32)
    vec = stored[0].embedding
    assert float(np.dot(vec, want) / (np.linalg.norm(vec) * np.linalg.norm(want))) == pytest.approx(1, abs=1e-5)


@pytest.mark.parametrize("limit", [300, 600, 2048])
def test_a_chunk_split_for_the_input_limit_never_cuts_a_marker(limit: int) -> None:
    """A provider with a small input limit (Gemini: 2048 bytes) gets pieces of a record's chunk; each marker line
    stays whole in one piece, no piece embeds any of the marker's JSON, and each piece's embedded text fits."""
    body = "\n".join(f"Line {i}: the harbour survey counted cracked bollards on pier {i}." for i in range(60))
    block = render_record("node", {"id": "n-long", RECORD_INDEX_TEXT: INDEX_TEXT,
                                   "metadata": {"source_ref": SECRET, "blob": "lorem ipsum dolor " * 500}}, body)
    lines = block.rstrip("\n").split("\n")
    (chunk,) = chunk_markdown(block, tokens=4000)
    pieces = split_for_input_limit([chunk], limit)
    assert len(pieces) > 1 and "".join(p.text for p in pieces) == chunk.text
    for p in pieces:
        assert p.text.strip("\n").split("\n") == lines[p.start_line - 1 : p.end_line]  # whole lines, its own range
        assert SECRET not in indexed_text(p.text) and "lorem" not in indexed_text(p.text)
        assert len(indexed_text(p.text).encode()) <= limit
    assert sum(p.text.count(lines[0]) for p in pieces) == 1
