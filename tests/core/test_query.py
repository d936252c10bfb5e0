"""Keyword extraction (spec §5.4 examples) and the FTS5 MATCH builder, checked against real FTS5."""

from __future__ import annotations

import re
import sqlite3
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_memory.text.query_analysis import MAX_TERMS, STOP_WORDS, analyze_query, match_rows
from openclaw_memory.text.preparation import SEGMENTED_SCRIPTS, segment_for_fts

_SEG = re.compile(f"[{SEGMENTED_SCRIPTS}]")


def build_fts_query(query: str, *, tokenizer: str = "unicode61") -> str | None:
    """The MATCH expression the search builds for ``query`` (OR of quoted phrases)."""
    return analyze_query(query, tokenizer=tokenizer).match


def keywords(query: str) -> list[str]:
    """The normalised keys of the query's concepts, in order (segmented scripts without spaces)."""
    a = analyze_query(query)
    return [k.replace(" ", "") if _SEG.search(k) else k for g in a.groups for k in g.keys]


# ---- keyword extraction: the spec's examples (§5.4), as the search analyses them ----------------


def test_english_example() -> None:
    assert keywords("that thing we discussed about the API") == ["discussed", "api"]


def test_chinese_example() -> None:
    kws = keywords("之前讨论的那个方案")
    assert {"讨论", "方案"} <= set(kws)
    assert "之前" not in kws and "那个" not in kws and "的" not in kws


def test_korean_examples() -> None:
    assert {"논의한", "배포", "전략"} <= set(keywords("어제 논의한 배포 전략"))
    assert "어제" not in keywords("어제 논의한 배포 전략")
    kws = keywords("서버에서 발생한 에러를 확인")
    assert "서버" in kws and "에러" in kws
    kws = keywords("API를 배포했다")
    assert "api" in kws and "배포했다" in kws


def test_japanese_example() -> None:
    kws = keywords("昨日話したデプロイ戦略")
    assert "デプロイ" in kws and "戦略" in kws
    assert "昨日" not in kws and "した" not in kws


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("¿Qué decidimos sobre la base de datos ayer?", ["decidimos", "base", "datos"]),
        ("o que decidimos sobre o banco de dados ontem", ["decidimos", "banco", "dados"]),
        ("ماذا قررنا بشأن قاعدة البيانات", ["قررنا", "بشأن", "قاعدة", "البيانات"]),
    ],
)
def test_es_pt_ar(query: str, expected: list[str]) -> None:
    assert keywords(query) == expected


def test_empty_stopword_only_and_duplicates() -> None:
    assert keywords("") == []
    assert keywords("   ") == []
    stop = analyze_query("what is this about")  # nothing informative: searched as typed
    assert stop.fallback and stop.phrase_match == '"what is this about"'
    assert keywords("deploy deploy Deploy, 2024 go")[:1] == ["deploy"]
    assert keywords("deploy deploy Deploy, 2024 go").count("deploy") == 1


def test_stop_word_lists_present() -> None:
    for w in ("the", "después", "você", "الآن", "에서", "ます", "为什么"):
        assert w in STOP_WORDS


# ---- build_fts_query ----------------------------------------------------------------------------


def test_simple_terms_are_or_ed_and_quoted() -> None:
    assert build_fts_query("a828e60") == '"a828e60"'
    q = build_fts_query("rotate postgres password")
    assert q is not None
    assert '"rotate"' in q and '"postgres"' in q and '"password"' in q and " OR " in q
    assert " AND " not in q


def test_blank_and_symbol_only_queries_give_none() -> None:
    for q in ("", "   ", "!!! ??? ...", "\x00\x01", "\ud800"):
        assert build_fts_query(q) is None
    # symbol-only text is searched verbatim (FTS5 decides whether it holds tokens), never as syntax
    assert build_fts_query("🎉🎉") == '"🎉🎉"'


def test_stop_words_removed_unless_nothing_else() -> None:
    q = build_fts_query("what is the deploy strategy")
    assert q is not None and '"what"' not in q and '"deploy"' in q
    fallback = build_fts_query("what is this")
    assert fallback is not None and '"what"' in fallback and '"this"' in fallback


def test_identifiers_become_phrases() -> None:
    q = build_fts_query("memorySearch.query.hybrid")
    assert q is not None and '"memorySearch query hybrid"' in q
    q = build_fts_query("sqlite-vec unavailable")
    assert q is not None and '"sqlite vec unavailable"' in q and '"sqlite vec"' in q


def test_cjk_terms_are_segmented_phrases() -> None:
    q = build_fts_query("咖啡")
    assert q is not None and q.startswith('"咖 啡"')
    assert '"서 버"' in (build_fts_query("서버에서") or "")


def test_term_count_is_bounded() -> None:
    long_query = " ".join(f"word{i} term{i}x" for i in range(5000))[:10_000]
    a = analyze_query(long_query)
    assert len(a.terms) <= MAX_TERMS
    assert a.match is not None and a.match.count(" OR ") <= MAX_TERMS - 1


def test_match_tiers_go_from_all_terms_to_any_term() -> None:
    a = analyze_query("how do I rotate the postgres password?")
    assert a.phrase_match == '"postgres password"'
    tiers = a.match_tiers()
    assert tiers[0] == '("rotate" AND "postgres" AND "password")'
    assert tiers[1].count(" AND ") == 3 and tiers[1].count(" OR ") == 2
    assert tiers[-1] == '"rotate" OR "postgres" OR "password"'
    assert analyze_query("a828e60").match_tiers() == ['"a828e60"']
    stop = analyze_query("what is this")
    assert stop.match_tiers() == [] and stop.phrase_match == '"what is this"'
    korean = analyze_query("서버에서 에러").match_tiers()
    assert korean[0] == '(("서 버 에 서" OR "서 버") AND "에 러")'
    many = analyze_query("alpha bravo charlie delta echo foxtrot golf hotel").match_tiers()
    assert len(many) == 3  # all 8, 7 of 8 (8 clauses), then any: C(8,6)=28 clauses is too many


def test_match_all_and_tiers_over_chosen_terms() -> None:
    a = analyze_query("rotate postgres password")
    assert a.match_all() == '("rotate" AND "postgres" AND "password")'
    rare = {"postgres", "password"}
    assert a.match_all(lambda t: t.key in rare) == '("postgres" AND "password")'
    assert a.match_tiers(include=lambda t: t.key in rare) == ['("postgres" AND "password")', '"postgres" OR "password"']
    assert a.match_all(lambda t: t.key == "rotate") is None  # one group: nothing to AND
    korean = analyze_query("서버에서 에러")
    assert korean.match_all() == '(("서 버 에 서" OR "서 버") AND "에 러")'


def test_tiers_are_valid_fts_and_strict_first(fts: sqlite3.Connection) -> None:
    tiers = analyze_query("postgres password rotation schedule").match_tiers()
    counts = [len(conn_rows(fts, t)) for t in tiers]
    assert counts[0] == 0 and counts[-1] == 2 and counts == sorted(counts)


def conn_rows(conn: sqlite3.Connection, match: str) -> list[int]:
    return [r[0] for r in conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (match,))]


def test_query_terms() -> None:
    assert keywords("that thing we discussed about the API") == ["discussed", "api"]
    assert "咖啡" in keywords("咖啡")


# ---- against a real FTS5 table ------------------------------------------------------------------

DOCS = [
    "We deployed commit a828e60 to production on Friday.",
    "memorySearch.query.hybrid controls the vector and text weights.",
    "Error: sqlite-vec unavailable, falling back to numpy.",
    "The vec table and sqlite are both fine; nothing is unavailable here.",
    "我每天早上喝一杯美式咖啡。",
    "这个项目的进度很好，下周发布。",
    "サーバーが昨夜ダウンしました。",
    "서버에서 에러가 발생했습니다.",
    "ร้านนี้ขายอาหารทะเลสด กุ้งตัวใหญ่มาก",
    "Rotate the postgres password every 90 days and store it in the vault.",
    "Postgres backups run nightly.",
    "Use NOT NULL constraints; (a AND b) OR c is a boolean expression.",
]


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(text, tokenize='unicode61 remove_diacritics 2')")
    conn.executemany("INSERT INTO f(rowid, text) VALUES (?, ?)", [(i, segment_for_fts(d)) for i, d in enumerate(DOCS)])
    return conn


def search(conn: sqlite3.Connection, query: str) -> list[int]:
    match = build_fts_query(query)
    if match is None:
        return []
    return [r[0] for r in conn.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY rank", (match,))]


@pytest.mark.parametrize(
    ("query", "doc"),
    [
        ("a828e60", 0),
        ("memorySearch.query.hybrid", 1),
        ("sqlite-vec unavailable", 2),
        ("咖啡", 4),
        ("项目", 5),
        ("サーバー", 6),
        ("서버", 7),
        ("서버에서", 7),
        ("อาหารทะเล", 8),
        ("กุ้ง", 8),
        ("how often do we rotate the postgres password?", 9),
    ],
)
def test_top_hit(fts: sqlite3.Connection, query: str, doc: int) -> None:
    assert search(fts, query)[0] == doc


def test_partial_match_found_and_fuller_match_ranks_higher(fts: sqlite3.Connection) -> None:
    hits = search(fts, "postgres password rotation schedule")
    assert hits[:2] == [9, 10]  # 9 has postgres+password, 10 only postgres: both returned


def test_exact_phrase_outranks_scattered_words(fts: sqlite3.Connection) -> None:
    hits = search(fts, "sqlite-vec unavailable")
    assert hits.index(2) < hits.index(3)


def test_operators_are_plain_text(fts: sqlite3.Connection) -> None:
    # "NOT" must not exclude doc 11, "AND" must not require, parentheses are not grouping
    assert search(fts, "NOT NULL") == [11]
    assert 11 in search(fts, "(a AND b) OR c")
    assert search(fts, "text: weights") == [1]  # a column-filter lookalike is just a word
    assert search(fts, "postgres*")[0] in (9, 10)
    assert search(fts, "-postgres") != []


HOSTILE = [
    '"', '""', '"unbalanced', 'a"b"c', "NEAR(a b, 3)", "NEAR", "AND", "OR NOT", "(((", ")))", "a:b:c", "text:foo",
    "^start", "*", "foo*", "-minus", "+plus", "{a b}:c", "col : x", "\x00\x01\x02 nul", "\u202e rtl \u200d zwj",
    "🎉 party 👨‍👩‍👧 family 🇯🇵", "x" * 10_000, "a828e60 " * 2000, "'; DROP TABLE f; --", "\\", "%_%", "\ud800",
    "ﷺ ﷽", "e\u0301", "NEAR/3", "^^^", "''", "a AND", "OR", "NOT a", "1 2 3 4 5 6 7 8 9 0",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(fts: sqlite3.Connection, query: str) -> None:
    search(fts, query)  # must not raise sqlite3.OperationalError


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_a_valid_match(query: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(text, tokenize='unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO f(text) VALUES ('hello world')")
    match = build_fts_query(query)
    if match is not None:
        conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (match,)).fetchall()


def _punctuation_fts5_reads_as_letters() -> str:
    """The punctuation and separator characters (by Python's Unicode tables) that FTS5's unicode61 reads as word
    characters: ~180 marks of scripts added to Unicode after SQLite's tables were made (U+10AF0 MANICHAEAN
    PUNCTUATION STAR, ...). The query splits a word at them and the index does not; left so, as telling them apart
    would change every index's tokens for characters hardly anyone writes."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(text, tokenize='unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'row')")
    marks = [chr(c) for c in range(0x80, 0x110000) if unicodedata.category(chr(c))[0] in "PZ"]
    conn.execute("INSERT INTO f(text) VALUES (?)", (" ".join(f"a{m}b" for m in marks),))
    return "".join(sorted({ch for (term,) in conn.execute("SELECT term FROM v") for ch in term} - {"a", "b"}))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                      blacklist_characters=_punctuation_fts5_reads_as_letters()),
               min_size=1, max_size=40))
def test_a_word_is_found_in_its_own_document(word: str) -> None:
    """Whatever the script, a document containing the query text is matched by it."""
    match = build_fts_query(word)
    if match is None:
        return
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(text, tokenize='unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'row')")
    conn.execute("INSERT INTO f(text) VALUES (?)", (segment_for_fts(word),))
    if conn.execute("SELECT count(*) FROM v").fetchone()[0] == 0:
        return  # FTS5 itself sees no token in this text
    conn.execute("DELETE FROM f")
    conn.execute("INSERT INTO f(text) VALUES (?)", (segment_for_fts(f"before {word} after"),))
    conn.execute("INSERT INTO f(text) VALUES ('unrelated')")
    assert conn.execute("SELECT count(*) FROM f WHERE f MATCH ?", (match,)).fetchone()[0] >= 1


def test_coverage_and_exact_match() -> None:
    a = analyze_query("what did we decide about commit a828e60")
    (cov_full, exact_full), (cov_id, exact_id), (cov_none, exact_none) = a.coverage(
        ["we decided on commit a828e60", "a828e60 was reverted", "nothing relevant"]
    )
    assert exact_id and exact_full and not exact_none
    assert cov_full > cov_id > cov_none == 0.0
    # one incidental shared word is not an exact match
    b = analyze_query("how do I rotate the postgres password")
    ((cov, exact),) = b.coverage(["reset your password on the website"])
    assert not exact and 0 < cov < 0.5
    ((cov, exact),) = b.coverage(["Postgres password: rotate it monthly"])
    assert exact and cov == 1.0


def test_match_rows_evaluates_and_or_as_fts5_does() -> None:
    """``match_rows`` combines phrases' chunk sets as FTS5 combines their rows (AND before OR), and knows
    nothing when a phrase's rows are unknown or the expression uses anything it does not evaluate."""
    rows = {'"a"': frozenset({1, 2, 3}), '"b"*': frozenset({2, 3, 4}), '"c d"': frozenset({3, 5}),
            '"say ""hi"""': frozenset({9})}
    assert match_rows('"a" OR "b"*', rows.get) == {1, 2, 3, 4}
    assert match_rows('(("a" OR "b"*) AND "c d")', rows.get) == {3}
    assert match_rows('"a" AND "b"* OR "c d"', rows.get) == {2, 3, 5}
    assert match_rows('("a" AND "b"*) OR ("a" AND "c d")', rows.get) == {2, 3}
    assert match_rows('"say ""hi"""', rows.get) == {9}
    for unknown in ('"zz" OR "a"', '"a" "b"*', '"a" NOT "b"*', '("a"', '"a" OR', 'OR "a"', '"a" AND NEAR("b")'):
        assert match_rows(unknown, rows.get) is None, unknown
    q = analyze_query("kestrel heron painting", stemming=True)  # the expressions the search builds parse
    every = {f'"{w}"' + s: frozenset({1}) for w in ("kestrel", "heron", "painting", "paint") for s in ("", "*")}
    for tier in q.match_tiers():
        assert match_rows(tier, every.get) == {1}, tier
