"""FTS5 prefix phrases (``"paint"*``, what stemmed keyword search sends) on the PostgreSQL side."""

from __future__ import annotations

from openclaw_memory.postgres import fts


def test_a_prefix_phrase_becomes_a_tsquery_prefix_and_counts_every_word_it_starts():
    node = fts.parse_match('"paintings" OR "paint"*')
    assert fts.to_tsquery(node) == "(('paintings') | ('paint':*))"
    doc = "she paints and painted a painting".split()
    assert fts.phrase_count(doc, ("paint*",)) == 3
    assert fts.phrase_count(doc, ("paint",)) == 0
    # a prefix on the last token of a phrase: the words before it must match exactly
    assert fts.phrase_count("she paints and she paid".split(), ("she", "pai*")) == 2
    exact, prefixed = fts.bm25_scores([doc], [("paint",)], [1], 10, 6.0), fts.bm25_scores([doc], [("paint*",)], [1], 10, 6.0)
    assert exact == [-0.0] and prefixed[0] < 0
