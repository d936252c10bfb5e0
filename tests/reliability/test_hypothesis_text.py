"""Property-based tests (hypothesis) of the pure text functions: the chunker and the keyword
query builder. Any text in, documented output out, never an exception (issue 20, standing suite).
"""

from __future__ import annotations

import hashlib
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openclaw_memory.text.chunker import chunk_markdown, split_for_input_limit, text_weight
from openclaw_memory.text.query_analysis import analyze_query
from openclaw_memory.text.preparation import segment_for_fts

# Markdown-ish text: headings, lists, CJK/Thai/Hangul, emoji, long lines, blank lines, FTS syntax
_ALPHABET = st.sampled_from(
    list("abc xyz XYZ 0123 -_*#>`\"'()[]{}:^~+.,;!?/\\|&%$@=\t")
    + ["\n", "\n\n", "\r\n", "東京", "ภาษาไทย", "한국어", "🙂", "é", "\u200b", "\u0301", "NEAR", "AND", "OR", "NOT"]
)
markdown = st.lists(_ALPHABET | st.text(max_size=30), max_size=80).map("".join)
long_lines = st.builds(lambda a, n: a * n, st.sampled_from(["a", "東", "ab ", "🙂", "ภ"]), st.integers(0, 3000))
texts = markdown | long_lines | st.text(max_size=400)

PROFILE = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROFILE
@given(text=texts, tokens=st.integers(-5, 600), overlap=st.integers(-10, 700))
def test_chunks_are_in_range_in_order_within_budget_and_cover_every_line(text, tokens, overlap):
    chunks = chunk_markdown(text, tokens, overlap)
    lines = text.split("\n")
    max_chars = max(32, max(1, tokens) * 4)
    flat = text.replace("\n", "")
    covered: set[int] = set()
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert c.text.strip() and c.hash == hashlib.sha256(c.text.encode("utf-8")).hexdigest()
        assert text_weight(c.text) <= max_chars  # no chunk overshoots its budget
        assert c.text.replace("\n", "") in flat  # a contiguous piece of the file
        covered.update(range(c.start_line, c.end_line + 1))
    assert [c.start_line for c in chunks] == sorted(c.start_line for c in chunks)
    for n, line in enumerate(lines, start=1):
        if line.strip():
            assert n in covered, f"line {n} is in no chunk"


@PROFILE
@given(text=texts, tokens=st.integers(1, 600), limit=st.integers(1, 9000))
def test_input_limit_splits_fit_and_lose_nothing(text, tokens, limit):
    chunks = chunk_markdown(text, tokens, 0)
    pieces = split_for_input_limit(chunks, limit)
    assert "".join(p.text for p in pieces) == "".join(c.text for c in chunks)
    for p in pieces:
        assert len(p.text.encode("utf-8")) <= limit or len(p.text) == 1


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    """Real FTS5 tables with the two tokenizers the index uses."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE u USING fts5(text, tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='trigram case_sensitive 0')")
    for row in ["Priya runs the deployment pipeline", "commit a828e60 racing the watcher", "東京で会議",
                "ภาษาไทย", "한국어 메모", "error: ECONNRESET at 10.0.0.1:443"]:
        db.execute("INSERT INTO u(text) VALUES (?)", (segment_for_fts(row),))
        db.execute("INSERT INTO t(text) VALUES (?)", (row,))
    return db


queries = texts | st.text(alphabet=st.characters(codec="utf-8"), max_size=200) | st.sampled_from(
    ['"', '""', "*", "^", "NEAR(a b)", "a OR", "NOT", "(", ")", "-", "a:b", "col:x", "\x00", "a AND NOT b"])


@PROFILE
@given(query=queries)
def test_every_built_keyword_query_is_valid_fts5(fts, query):
    for table, tokenizer in (("u", "unicode61"), ("t", "trigram")):
        match = analyze_query(query, tokenizer=tokenizer).match
        if match is None:
            continue
        assert isinstance(match, str) and match.strip()
        fts.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (match,)).fetchall()  # must not raise


@PROFILE
@given(query=st.text(max_size=300))
def test_query_analysis_never_raises_and_keeps_terms_bounded(query):
    a = analyze_query(query)
    assert len(a.terms) <= 64
    assert all(t.text for t in a.terms)
