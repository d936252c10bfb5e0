"""FTS5 prefix phrases (``"paint"*``, what stemmed keyword search sends) on the PostgreSQL side."""

from __future__ import annotations

from openclaw_memory.storage.postgres import fts


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


def test_bm25_counts_a_prefix_like_the_token_by_token_count():
    """The fast count of a one-token prefix phrase agrees with counting token by token (FTS5's definition)."""
    import math
    import random

    rng = random.Random(5)
    words = ["pa", "pai", "paint", "painted", "paints", "apaint", "xpaint", "paintpaint", "p", "other"]
    docs = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(300)]
    for stem in ("pai", "paint", "p", "paintp", "x"):
        phrase = (stem + fts.PREFIX,)
        scores = fts.bm25_scores(docs, [phrase], [50], 1000, 6.0)
        for doc, score in zip(docs, scores):
            f = fts.phrase_count(doc.split(" ") if doc else [], phrase)
            assert (score < 0) == (f > 0), (stem, doc)
            # the same score as a phrase counted token by token with the same frequency
            n = doc.count(" ") + 1 if doc else 0
            norm = 1.2 * (1 - 0.75 + 0.75 * n / 6.0)
            idf = math.log((1000 - 50 + 0.5) / (50 + 0.5))
            assert abs(-score - (idf * f * 2.2 / (f + norm) if f else 0.0)) < 1e-9


def test_bm25_counts_a_token_like_the_token_by_token_count_also_twice_in_a_row():
    """The fast count of a one-token phrase agrees with counting token by token, where the token stands two or three
    times in a row too (the occurrences then share the space between them)."""
    import random

    rng = random.Random(7)
    words = ["ab", "ab", "a", "b", "abab", "xab", "abx", "other"]
    docs = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(400)]
    docs += ["ab ab", "ab ab ab", "x ab ab y ab", "ab"]
    for token in ("ab", "a", "b", "x"):
        scores = fts.bm25_scores(docs, [(token,)], [50], 1000, 6.0)
        # as a sequence of tokens (counted one by one) the documents score the same
        assert scores == fts.bm25_scores([d.split(" ") if d else [] for d in docs], [(token,)], [50], 1000, 6.0)
        for doc, score in zip(docs, scores):
            f = fts.phrase_count(doc.split(" ") if doc else [], (token,))
            assert (score < 0) == (f > 0), (token, doc)
        same = {d: s for d, s in zip(docs, scores)}
        if token == "ab":  # three in a row score above two, two above one
            assert same["ab ab ab"] < same["ab ab"] < same["ab"] < 0
