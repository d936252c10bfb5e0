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


def test_the_bound_of_a_prefix_range_is_the_least_string_after_every_string_it_starts():
    """The terms a prefix starts are read as a range of the terms' prefix index (``text_pattern_ops``: the byte order
    of UTF-8, which is code point order) up to this bound."""
    from openclaw_memory.storage.postgres.store import _after_prefix

    assert _after_prefix("paint") == "painu"
    assert _after_prefix("caf\u00e9") == "caf\u00ea"
    assert _after_prefix("a\ud7ff") == "a\ue000"  # past the surrogates, which no string holds
    assert _after_prefix("a\U0010ffff") == "b"  # nothing follows the last code point: the character before moves on
    assert _after_prefix("\U0010ffff") is None
    for prefix in ("paint", "caf\u00e9", "a\ud7ff"):
        bound = _after_prefix(prefix)
        assert bound is not None
        for word in (prefix, prefix + "s", prefix + "\U0010ffff\U0010ffff"):
            assert prefix.encode() <= word.encode("utf-8", "surrogatepass") < bound.encode()


def test_bm25_takes_a_phrase_count_it_is_told_is_the_same_and_scores_alike():
    docs = ["she paints the painting", "painting painting paint", "", "paint", "other words only"]
    phrases = [("paint",), ("paint*",), ("paint",)]
    plain = fts.bm25_scores(docs, phrases, [2, 3, 2], 100, 4.0)
    # the repeat of "paint" takes the first one's count; "paint"* is counted (several tokens start with it)
    assert fts.bm25_scores(docs, phrases, [2, 3, 2], 100, 4.0, same=[None, None, 0]) == plain
    only = ["paint x", "paint paint", "y"]  # here "paint" is the only token "paint"* starts: the same count
    assert fts.bm25_scores(only, [("paint",), ("paint*",)], [2, 2], 100, 2.0, same=[None, 0]) == \
        fts.bm25_scores(only, [("paint",), ("paint*",)], [2, 2], 100, 2.0)


def test_word_and_prefix_counts_and_ranks_equal_sqlite(make_pg_store: Any, tmp_path: Any) -> None:
    """Counts of words and prefixes (one statement on PostgreSQL; a prefix that starts a single asked word lists
    its chunks once) and BM25 ranks of a word with its prefix (its count taken from the word's when the prefix
    starts that word alone) equal SQLite's, with ASCII and accented prefixes."""
    from openclaw_memory.storage import StoredChunk
    from openclaw_memory.storage.sqlite.store import SQLiteStore
    from openclaw_memory.types import MemoryFile

    texts = ["caf\u00e9 au lait at the caf\u00e9", "cafeteria lunch", "paint the fence", "paints and painting",
             "zebra crossing", "the zebra zebra paint", "caf\u00e9s open late", "nothing here"]
    pg, lite = make_pg_store(), SQLiteStore(tmp_path / "i.sqlite", vector_enabled=False)
    for store in (pg, lite):
        for f in range(3):
            path = f"memory/n{f}.md"
            chunks = [StoredChunk(id=f"{f}-{i}", path=path, source="memory", start_line=i, end_line=i,
                                  hash=f"{f}-{i}", model="m", text=t, embedding=None)
                      for i, t in enumerate(texts[f:] + texts[:f])]
            store.replace_file(MemoryFile(path=path, abs_path="/" + path, mtime_ms=1.0, size=1, hash=path), chunks)
    matches = ['"zebra"', '"zebra"*', '"zeb"*', '"paint"', '"paint"*', '"caf"*', '"caf\u00e9"', '"caf\u00e9"*',
               '"crossing"', '"crossing"*', '"nothing"*', '"absent"*', '"absent"']
    got, want = pg.match_sets_many(matches, cap=1001), lite.match_sets_many(matches, cap=1001)
    assert [n for n, _ in got] == [n for n, _ in want]
    assert [None if rows is None else len(rows) for _, rows in got] == [n for n, _ in want]
    for match in ('"zebra" OR "zebra"*', '"paint" OR "paint"*', '"caf\u00e9" OR "caf\u00e9"* OR "caf"*',
                  '"crossing" OR "crossing"* OR "zebra"'):
        ranked = [(c.text, round(r, 9)) for c, r in pg.keyword_search(match, limit=30)]
        assert ranked == [(c.text, round(r, 9)) for c, r in lite.keyword_search(match, limit=30)], match
    lite.close()


def test_bm25_counting_a_phrase_only_where_it_may_be_scores_the_same() -> None:
    """Given, per phrase, the documents that may hold it (the chunks a search's counts listed), BM25 counts each phrase
    there only and scores every document exactly as counting it everywhere; a document left out of a phrase's list
    scores as if it did not hold it."""
    import random

    rng = random.Random(7)
    vocab = ["a", "ab", "abc", "b", "bc", "paint", "painter", "x", "xy"]

    def holds(doc: str, phrase: tuple[str, ...]) -> bool:
        toks = doc.split(" ") if doc else []
        return all(any(t.startswith(w[:-1]) if w.endswith("*") else t == w for t in toks) for w in phrase)

    for _ in range(500):
        docs = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(1, 8))]
        phrases = [tuple(w + ("*" if i == n - 1 and rng.random() < 0.3 else "") for i, w in
                         enumerate(rng.choice(vocab) for _ in range(n))) for n in
                   (rng.randint(1, 3) for _ in range(rng.randint(1, 5)))]
        same: list[int | None] = [None] * len(phrases)
        if rng.random() < 0.3:
            phrases.append(phrases[0])
            same.append(0)
        hits = [rng.randint(0, 20) for _ in phrases]
        keys = [100 + i for i in range(len(docs))]
        within = [frozenset(k for k, d in zip(keys, docs) if holds(d, p)) if rng.random() < 0.8 else None
                  for p in phrases]
        everywhere = fts.bm25_scores(docs, phrases, hits, 50, 5.0, same)
        assert fts.bm25_scores(docs, phrases, hits, 50, 5.0, same, within=within, keys=keys) == everywhere
    doc = "paint the paint"
    assert fts.bm25_scores([doc], [("paint",)], [1], 10, 3.0, within=[frozenset()], keys=[1]) == [-0.0]
    assert fts.bm25_scores([doc], [("paint",)], [1], 10, 3.0, within=[frozenset({1})], keys=[1])[0] < 0
