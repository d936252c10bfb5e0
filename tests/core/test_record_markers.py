"""A record's marker lines (id, key, timestamps) stay in the file and in what a search returns, but are neither
embedded nor keyword-indexed: a record's score for its own content does not depend on its id or on the time it
was written (leftovers3, item 1; a random uuid plus the time of day made a LangGraph test flaky)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.text.chunker import (
    RECORD_INDEX_BODY,
    RECORD_INDEX_TEXT,
    chunk_markdown,
    indexed_hash,
    indexed_text,
    split_for_input_limit,
)
from openclaw_memory.files.records import render_record
from openclaw_memory.text.preparation import nonblank_lines
from openclaw_memory.indexing.line_units import line_units

BODY = "The user likes pepperoni pizza with extra basil.\nThey order it every Friday evening."
KEY_A = "6f1c2a3e-9b4d-4e8a-b7c5-2d9e0f1a3b4c"
KEY_B = "0b9e77d1-3c2a-4f5e-8d6c-7a1b2c3d4e5f"


def _record(key: str, created: str) -> str:
    return render_record("item", {"key": key, "created_at": created, "updated_at": created}, BODY)


def _workspace(write) -> Path:
    return write({
        "memory/store/a.md": _record(KEY_A, "2026-03-01T09:00:01+00:00"),
        "memory/store/b.md": _record(KEY_B, "2026-11-24T23:59:58.123456+00:00"),
        "memory/2026-01-02.md": "- Rex the dog needs a walk at noon.\n- The car is due for service.\n",
    })


def test_indexed_text_leaves_out_the_marker_lines_only() -> None:
    block = _record(KEY_A, "2026-03-01T09:00:01+00:00")
    chunk = chunk_markdown("# Notes\n\n" + block)[-1]
    assert chunk.text.startswith("<!-- openclaw-memory:item ")  # the chunk (what a search returns) keeps them
    assert indexed_text(chunk.text) == BODY
    assert indexed_hash(chunk.text, chunk.hash) == hashlib.sha256(BODY.encode()).hexdigest()
    assert nonblank_lines(chunk.text) == BODY.split("\n")
    plain = chunk_markdown("- no record here\n- <!-- a comment -->\n")[0]
    assert indexed_text(plain.text) is plain.text and indexed_hash(plain.text, plain.hash) == plain.hash
    only_markers = "<!-- /openclaw-memory:item -->"  # a piece of a record longer than a chunk: kept as it is
    assert indexed_text(only_markers) == only_markers
    assert line_units("<!-- openclaw-memory:item {} -->\na\nb\nc\n<!-- /openclaw-memory:item -->", 3) == []


def test_marker_words_are_not_keyword_matches(write, make_index) -> None:
    """Neither the key nor the attribute names match a keyword search; the body does, and the hit's text still
    holds the marker (the file is the source of truth) while its snippet shows the body. Look a record up by its
    id with the adapter's own get (LangGraph ``store.get``, LlamaIndex ``get_nodes``), not with a search."""
    _workspace(write)
    idx = make_index(None)
    idx.sync()
    for query in (KEY_A, "6f1c2a3e", "created_at", "updated_at openclaw"):
        assert idx.search(query, min_score=0).hits == [], query
    hits = idx.search("pepperoni pizza", min_score=0).hits
    assert sorted(h.path for h in hits) == ["memory/store/a.md", "memory/store/b.md"]
    assert all(KEY_A in h.text or KEY_B in h.text for h in hits)
    assert all("pepperoni pizza" in h.snippet and "openclaw-memory:" not in h.snippet for h in hits)
    assert hits[0].score == pytest.approx(hits[1].score, abs=1e-9)
    got = idx.get("memory/store/a.md")
    assert KEY_A in got.text


@pytest.mark.local_model
def test_a_records_score_does_not_depend_on_its_id_or_time(write, tmp_path: Path) -> None:
    """With the bundled model: the same body under two keys and times gets the same vector (the body's own)
    and the same score, in hybrid and vector search."""
    ws = _workspace(write)
    with MemoryIndex(workspace=ws, provider="local", store={"path": str(tmp_path / "i.sqlite")}, watch=False,
                     local={"first_index": "full"}) as idx:
        idx.sync()
        stored = {c.path: c.embedding for c in idx.store.iter_chunks() if c.path.startswith("memory/store/")}
        body = np.asarray(idx.provider.embed_documents([BODY])[0], dtype=np.float32)
        for vec in stored.values():
            assert float(np.dot(vec, body) / (np.linalg.norm(vec) * np.linalg.norm(body))) == pytest.approx(1, abs=1e-5)
        for mode in ("hybrid", "vector"):
            hits = idx.search("what pizza does the user like?", min_score=0, mode=mode).hits
            scores = {h.path: h.score for h in hits if h.path.startswith("memory/store/")}
            assert set(scores) == {"memory/store/a.md", "memory/store/b.md"}, mode
            assert scores["memory/store/a.md"] == pytest.approx(scores["memory/store/b.md"], abs=1e-6), mode


def test_a_records_index_text_is_indexed_in_place_of_its_marker(write, make_index) -> None:
    """A writer can ask for text to be embedded and keyword-indexed with the body (``index_text`` in the marker,
    as the LlamaIndex store does with a node's metadata); the file holds it, the other attributes stay out."""
    block = render_record("note", {"id": "r1", RECORD_INDEX_TEXT: "title: Lighthouse keeper rota"}, BODY)
    chunk = chunk_markdown(block)[0]
    assert indexed_text(chunk.text) == "title: Lighthouse keeper rota\n\n" + BODY
    assert indexed_hash(chunk.text, chunk.hash) == hashlib.sha256(indexed_text(chunk.text).encode()).hexdigest()
    assert nonblank_lines(chunk.text) == ["title: Lighthouse keeper rota", *BODY.split("\n")]
    for odd in ({"id": "r2", RECORD_INDEX_TEXT: 7}, {"id": "r3", RECORD_INDEX_TEXT: "  "}):  # not a text: body only
        assert indexed_text(chunk_markdown(render_record("note", odd, BODY))[0].text) == BODY
    write({"memory/notes.md": block, "memory/other.md": render_record("note", {"id": "r4"}, BODY)})
    idx = make_index(None)
    idx.sync()
    assert [h.path for h in idx.search("lighthouse rota", min_score=0).hits] == ["memory/notes.md"]
    assert idx.search("r1", min_score=0).hits == []


# ---- a record whose body is not indexed (leftovers4, item 1: LangGraph's put(index=[fields] | False)) ----------


def _quiet(attrs: dict[str, object], body: str = BODY) -> str:
    return render_record("item", {"key": "k", RECORD_INDEX_BODY: False, **attrs}, body)


def test_a_record_whose_body_is_not_indexed_is_indexed_by_its_index_text_alone(write, make_index) -> None:
    long_body = "\n".join(f"line {i}: the pepperoni pizza order number {i}." for i in range(200))  # ~9 KB
    block = _quiet({RECORD_INDEX_TEXT: "Lighthouse keeper rota"}, long_body)
    chunks = chunk_markdown("# Notes\n\nhand-written pizza line\n\n" + block + "\nafter the record\n", 100, 20)
    record = [c for c in chunks if c.text.startswith("<!-- openclaw-memory:item ")]
    assert len(record) == 1 and record[0].text == block.rstrip("\n")  # one chunk, however long its body
    assert indexed_text(record[0].text) == "Lighthouse keeper rota\n"
    assert split_for_input_limit(record, 64) == record  # never cut: only its index text is embedded
    assert [indexed_text(c.text).strip() for c in chunks if c is not record[0]][-1] == "after the record"

    nothing = _quiet({})  # neither body nor index text: no chunk at all
    assert chunk_markdown(nothing) == [] and indexed_text(nothing.rstrip("\n")) == ""
    unclosed = nothing.rstrip("\n").rsplit("\n", 1)[0]  # without its closing marker it is no record: text
    assert indexed_text(chunk_markdown(unclosed)[0].text) == BODY

    write({"memory/store/a.md": block, "memory/store/b.md": nothing,
           "memory/2026-01-02.md": "- Rex the dog needs a walk at noon.\n"})
    idx = make_index(None)
    idx.sync()
    assert [h.path for h in idx.search("lighthouse rota", min_score=0).hits] == ["memory/store/a.md"]
    assert idx.search("pepperoni pizza", min_score=0).hits == []
