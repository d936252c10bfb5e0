"""The search pipeline end to end on a real SQLiteStore (FTS5 + sqlite-vec or numpy)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openclaw_memory.text.instructions import MARKER_MATCH
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ProviderError
from openclaw_memory.retrieval.ranking import decay_multiplier
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.retrieval.pipeline import run_search
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.types import SearchResult
from tests.helpers.search_store import build_store as _store, FILLER, away_from as _away_from, ids

UTC = timezone.utc
Docs = Mapping[str, Sequence[str]]


@pytest.fixture()
def cfg(tmp_path: Path) -> MemoryConfig:
    return MemoryConfig(workspace=tmp_path, state_dir=tmp_path / "state", citations="off")


def _with(cfg: MemoryConfig, **query: Any) -> MemoryConfig:
    return MemoryConfig.load(cfg, query=query)


# ---- vector and keyword sides -------------------------------------------------------------------


def test_paraphrase_found_by_vector(tmp_path: Path, cfg: MemoryConfig) -> None:
    provider = FakeEmbeddingProvider(dims=256, synonyms={"automobile": "car", "purchased": "bought"})
    st = _store(tmp_path / "i.sqlite", {"memory/notes.md": [*FILLER, "We bought a car."]}, provider)
    res = run_search(st, cfg, "automobile purchased", provider=provider)
    assert res.mode == "hybrid" and res.provider == "fake" and res.model == "fake-hash"
    top = res.hits[0]
    assert top.chunk_id == "memory/notes.md:8"
    assert top.text_score == 0.0 and top.vector_score > 0.5 and top.score >= 0.35


def test_exact_id_found_by_keyword_when_vector_misses(tmp_path: Path, cfg: MemoryConfig) -> None:
    provider = FakeEmbeddingProvider(dims=64)
    filler = [f"{t} (note {i})" for i in range(4) for t in FILLER]  # 32 chunks > 24 candidates
    target = "Rolled back the deploy to a828e60 after the outage."
    qv = provider.embed_query("a828e60")
    st = _store(tmp_path / "i.sqlite", {"memory/log.md": [*filler, target]}, provider,
                vectors={f"memory/log.md:{len(filler)}": -qv})
    vec_ids = [c.id for c in st.vector_search(qv, limit=24)]
    assert f"memory/log.md:{len(filler)}" not in vec_ids  # the premise: the vector side misses it
    res = run_search(st, cfg, "a828e60", provider=provider)
    assert res.mode == "hybrid"
    assert res.hits and res.hits[0].chunk_id == f"memory/log.md:{len(filler)}"
    assert res.hits[0].vector_score == 0.0 and res.hits[0].score >= cfg.query.min_score
    # a question around the ID works too, and under rank fusion as well
    res = run_search(st, cfg, "why did we roll back to a828e60?", provider=provider)
    assert res.hits[0].chunk_id == f"memory/log.md:{len(filler)}"
    rrf = MemoryConfig.load(cfg, query={"hybrid": {"merge": "rrf"}})
    assert f"memory/log.md:{len(filler)}" in ids(run_search(st, rrf, "a828e60", provider=provider))


def test_exact_identifiers_and_error_strings(tmp_path: Path, cfg: MemoryConfig) -> None:
    provider = FakeEmbeddingProvider(dims=64)
    docs = {"memory/tech.md": [
        *FILLER,
        "Set memorySearch.query.hybrid.vectorWeight to 0.6 for code-heavy notes.",
        "Startup warning: sqlite-vec unavailable, falling back to numpy brute force.",
        "The vector table and the sqlite file are fine; the GPU was unavailable.",
    ]}
    st = _store(tmp_path / "i.sqlite", docs, provider)
    qv = _away_from(provider, docs["memory/tech.md"])
    for query, want in [("memorySearch.query.hybrid", 8), ("sqlite-vec unavailable", 9)]:
        res = run_search(st, cfg, query, provider=provider, query_vector=qv)
        assert res.hits and res.hits[0].chunk_id == f"memory/tech.md:{want}", query


def test_incidental_keyword_hits_do_not_flood(tmp_path: Path, cfg: MemoryConfig) -> None:
    provider = FakeEmbeddingProvider(dims=64)
    incidental = [
        "Change the wifi password at home.",
        "The password manager subscription renews in May.",
        "Never share a password over chat.",
        "Password hints are disabled on the laptop.",
    ]
    st = _store(tmp_path / "i.sqlite", {"memory/misc.md": [*FILLER, *incidental]}, provider)
    qv = _away_from(provider, [*FILLER, *incidental])
    res = run_search(st, cfg, "how do we rotate the postgres password", provider=provider, query_vector=qv)
    assert res.hits == [] and res.empty_reason == "no_match"
    # while keyword-only mode still answers with the best partial matches
    kw = run_search(st, cfg, "how do we rotate the postgres password", provider=None)
    assert kw.mode == "keyword" and kw.hits


def test_multi_word_question_matches_chunk_with_some_words(tmp_path: Path, cfg: MemoryConfig) -> None:
    provider = FakeEmbeddingProvider(dims=256)
    target = "Fixed the flaky login tests by mocking the clock."
    st = _store(tmp_path / "i.sqlite", {"memory/eng.md": [*FILLER, target]}, provider)
    question = "how did we deal with flaky tests during the last sprint retro?"
    # keyword-only: the best partial match is returned even under min_score (as the original)
    res = run_search(st, cfg, question, provider=None)
    assert res.hits and res.hits[0].chunk_id == "memory/eng.md:8"
    # hybrid with a weak (hash) vector side: 2 of 5 informative words rank it first, but such partial
    # keyword evidence alone does not clear the default floor (a real embedding carries paraphrases)
    res = run_search(st, cfg, question, provider=provider, min_score=0)
    assert res.hits and res.hits[0].chunk_id == "memory/eng.md:8"


def test_keyword_search_stops_at_the_strictest_tier_that_fills(tmp_path: Path, cfg: MemoryConfig) -> None:
    docs = {"memory/t.md": [f"alpha beta note {i}" for i in range(8)] + [f"alpha only {i}" for i in range(3)]}
    st = _store(tmp_path / "i.sqlite", docs, None)
    calls: list[str] = []
    real = st.keyword_search

    def spy(match: str, **kw: Any) -> Any:
        calls.append(match)
        return real(match, **kw)

    st.keyword_search = spy  # type: ignore[method-assign]
    few = run_search(st, cfg, "alpha beta", provider=None, max_results=6)
    # the loose OR over common words never ran (each word is also searched by its stem, as a prefix; the standing
    # instructions' search is the query's no matter)
    assert [m for m in calls if m != MARKER_MATCH] == ['"alpha beta"', '(("alpha" OR "alpha"*) AND ("beta" OR "beta"*))']
    assert len(few.hits) == 6 and all("beta" in h.text for h in few.hits)
    calls.clear()
    many = run_search(st, cfg, "alpha beta", provider=None, max_results=20, min_score=0)
    assert calls[-1] == '"alpha" OR "beta" OR "alpha"* OR "beta"*' and len(many.hits) == 11
    assert all("beta" in h.text for h in many.hits[:8])  # chunks with every term rank first


# ---- decay, MMR, filters, citations -------------------------------------------------------------


def test_temporal_decay_ordering(tmp_path: Path, cfg: MemoryConfig) -> None:
    provider = FakeEmbeddingProvider(dims=64)
    text = "Decided to migrate the billing service to Postgres."
    docs = {
        "memory/2026-01-01.md": [text],
        "memory/2026-03-01.md": [text],
        "memory/projects/2026-01-01-billing.md": [text],
        "MEMORY.md": [text],
    }
    # the same indexed text in every file: without the notes' dates as words (on by default since leftovers4)
    st = _store(tmp_path / "i.sqlite", docs, provider, store=SQLiteStore(tmp_path / "i.sqlite", fts_note_dates=False))
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    plain = run_search(st, cfg, "billing postgres migration", provider=provider, now=now)
    assert len({round(h.score, 9) for h in plain.hits}) == 1  # identical text: identical scores

    decayed_cfg = MemoryConfig.load(cfg, query={"min_score": 0.0, "hybrid": {"temporal_decay": {"enabled": True}}})
    res = run_search(st, decayed_cfg, "billing postgres migration", provider=provider, now=now)
    by_path = {h.path: h.score for h in res.hits}
    assert by_path["MEMORY.md"] == pytest.approx(plain.hits[0].score)  # evergreen
    assert by_path["memory/2026-03-01.md"] == pytest.approx(plain.hits[0].score * decay_multiplier(0.5, 30))
    ratio = by_path["memory/2026-01-01.md"] / by_path["memory/2026-03-01.md"]
    assert ratio == pytest.approx(2 ** (-59 / 30), rel=1e-6)
    assert by_path["memory/projects/2026-01-01-billing.md"] == pytest.approx(by_path["memory/2026-01-01.md"])
    assert [h.path for h in res.hits][:2] == ["MEMORY.md", "memory/2026-03-01.md"]


def test_session_hits_decay_by_message_timestamps(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    now = datetime(2026, 3, 1, tzinfo=UTC)
    stamp = (now - timedelta(days=30)).timestamp() * 1000
    lines = [{"type": "message", "message": {"role": "user", "content": "budget review", "timestamp": stamp}}]
    (sessions / "s1.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    cfg = MemoryConfig(workspace=tmp_path, sessions_dir=sessions, sources=["memory", "sessions"], citations="off",
                       query={"min_score": 0, "hybrid": {"temporal_decay": {"enabled": True}}})
    provider = FakeEmbeddingProvider(dims=64)
    st = _store(tmp_path / "i.sqlite", {"sessions/s1.jsonl": ["User: budget review"]}, provider, source="sessions")
    _store(tmp_path / "i.sqlite", {"MEMORY.md": ["User: budget review"]}, provider, store=st)
    res = run_search(st, cfg, "budget review", provider=provider, now=now)
    scores = {h.source: h.score for h in res.hits}
    assert scores["sessions"] == pytest.approx(scores["memory"] * 0.5, rel=1e-6)
    only = run_search(st, cfg, "budget review", provider=provider, now=now, sources=["sessions"])
    assert [h.source for h in only.hits] == ["sessions"]


def test_mmr_drops_duplicate(tmp_path: Path, cfg: MemoryConfig) -> None:
    provider = FakeEmbeddingProvider(dims=256)
    docs = {"memory/deploy.md": [
        "Canary rollout for the API gateway starts with five percent of traffic on Friday.",
        "Canary rollout for the API gateway starts with ten percent of traffic on Friday.",
        "Canary rollout checklist for the API gateway: alerts, dashboards, runbooks, a rollback plan and an owner on call all weekend.",
        *FILLER,
    ]}
    st = _store(tmp_path / "i.sqlite", docs, provider)
    q = "canary rollout for the API gateway"
    base = run_search(st, _with(cfg, max_results=2, min_score=0.0), q, provider=provider)
    assert set(ids(base)) == {"memory/deploy.md:0", "memory/deploy.md:1"}  # premise: the duplicates lead
    mmr_cfg = MemoryConfig.load(cfg, query={"max_results": 2, "min_score": 0.0, "hybrid": {"mmr": {"enabled": True}}})
    res = run_search(st, mmr_cfg, q, provider=provider)
    assert ids(res) == [ids(base)[0], "memory/deploy.md:2"]


def test_min_score_and_max_results(tmp_path: Path, cfg: MemoryConfig) -> None:
    provider = FakeEmbeddingProvider(dims=64)
    st = _store(tmp_path / "i.sqlite", {"memory/team.md": [*FILLER, "The team budget review is on Thursday."]}, provider)
    q = "team budget review"
    loose = run_search(st, cfg, q, provider=provider, min_score=0.0, max_results=20)
    assert len(loose.hits) > 3
    assert [h.score for h in loose.hits] == sorted((h.score for h in loose.hits), reverse=True)
    assert len(run_search(st, cfg, q, provider=provider, min_score=0.0, max_results=2).hits) == 2
    assert len(run_search(st, cfg, q, provider=provider, min_score=0.0).hits) == cfg.query.max_results
    strict = run_search(st, cfg, q, provider=provider, min_score=0.99)
    assert strict.hits == [] and strict.empty_reason == "no_match"
    mid = run_search(st, cfg, q, provider=provider)
    assert all(h.score >= 0.35 for h in mid.hits) and len(mid.hits) < len(loose.hits)


def test_citations_snippets_and_clamp(tmp_path: Path, cfg: MemoryConfig) -> None:
    provider = FakeEmbeddingProvider(dims=64)
    long = "Budget review notes: " + "figures and forecasts 💰. " * 120
    st = _store(tmp_path / "i.sqlite", {"memory/b.md": ["Budget review moved to Thursday.", long]}, provider)
    on = MemoryConfig.load(cfg, citations="on")
    hits = run_search(st, on, "budget review", provider=provider, min_score=0).hits
    assert hits and all(h.citation == f"memory/b.md#L{h.start_line}" for h in hits)
    assert all(h.snippet.endswith(f"\n\nSource: {h.citation}") for h in hits)
    auto = MemoryConfig.load(cfg, citations="auto")
    assert run_search(st, auto, "budget review", provider=provider).hits[0].citation == "memory/b.md#L1"
    group = run_search(st, auto, "budget review", provider=provider, session_key="agent:main:telegram:group:7")
    assert group.hits and all(h.citation is None and "Source:" not in h.snippet for h in group.hits)
    off = run_search(st, cfg, "budget review forecasts", provider=provider, min_score=0).hits
    long_hit = next(h for h in off if h.start_line == 2)
    assert len(long_hit.snippet) == 700 and long_hit.text == long and long.startswith(long_hit.snippet)
    clamped = MemoryConfig.load(cfg, query={"max_injected_chars": 720, "min_score": 0})
    got = run_search(st, clamped, "budget review forecasts", provider=provider).hits
    assert sum(len(h.snippet) for h in got) <= 720


# ---- failure modes and hostile input ------------------------------------------------------------

HOSTILE = [
    '"', '"unbalanced quote', 'a"b"c', "NEAR(a b, 3)", "AND", "OR NOT", "(((", ")))", "text:budget", "^start", "*",
    "budget*", "-budget", "{a b}:c", "\x00\x01\x02 budget", "\u202e rtl \u200d", "🎉 budget 👨\u200d👩\u200d👧 🇯🇵",
    "x" * 10_000, "budget " * 2000, "'; DROP TABLE chunks; --", "\\", "%_%", "\ud800 lone surrogate", "NEAR/3",
    "a AND", "NOT budget",
]


@pytest.fixture()
def small(tmp_path: Path) -> tuple[SQLiteStore, FakeEmbeddingProvider]:
    provider = FakeEmbeddingProvider(dims=64)
    return _store(tmp_path / "i.sqlite", {"memory/a.md": [*FILLER, "Budget review on Thursday."]}, provider), provider


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(small: tuple[SQLiteStore, FakeEmbeddingProvider], cfg: MemoryConfig,
                                     query: str, caplog: pytest.LogCaptureFixture) -> None:
    st, provider = small
    with caplog.at_level(logging.WARNING):
        for prov in (provider, None):
            res = run_search(st, cfg, query, provider=prov)
            assert isinstance(res, SearchResult)
    failed = [r for r in caplog.records if "keyword search failed" in r.getMessage()]
    assert not failed, failed[0].getMessage() if failed else ""


def test_operators_are_searched_as_words(small: tuple[SQLiteStore, FakeEmbeddingProvider], cfg: MemoryConfig) -> None:
    st, _ = small
    for q in ("NOT budget", "-budget", "budget*", "(budget) AND", "text:budget"):
        res = run_search(st, cfg, q, provider=None)
        assert res.hits and res.hits[0].chunk_id == "memory/a.md:8", q


def test_blank_query_makes_no_provider_call(small: tuple[SQLiteStore, FakeEmbeddingProvider], cfg: MemoryConfig) -> None:
    st, provider = small
    before = provider.calls
    for q in ("", "   ", "\n\t"):
        res = run_search(st, cfg, q, provider=provider)
        assert res.hits == [] and res.empty_reason == "no_match"
    assert provider.calls == before


def test_embedding_failure_falls_back_to_keywords(small: tuple[SQLiteStore, FakeEmbeddingProvider],
                                                   cfg: MemoryConfig) -> None:
    st, provider = small
    provider.fail_with = ProviderError("quota exceeded (429)")
    res = run_search(st, cfg, "budget review", provider=provider)
    assert res.mode == "keyword" and res.hits[0].chunk_id == "memory/a.md:8"
    assert res.keyword_only_reason is not None and "429" in res.keyword_only_reason
    none = run_search(st, cfg, "budget review", provider=None, keyword_only_reason="provider 'openai' has no API key")
    assert none.mode == "keyword" and none.provider == "none"
    assert none.keyword_only_reason == "provider 'openai' has no API key"
    assert run_search(st, cfg, "budget review", provider=None).keyword_only_reason == "no embedding provider"


# ---- keyword-only mode in five languages --------------------------------------------------------

LANG_DOCS = {
    "memory/zh.md": [
        "我每天早上都要喝一杯咖啡，不然没法工作。",
        "这个项目下周上线，进度有点紧。",
        "周末去爬山，天气很好。",
    ],
    "memory/ja.md": [
        "昨日の夜、本番サーバーが落ちて再起動しました。",
        "来週の会議は火曜日に変更になりました。",
    ],
    "memory/ko.md": [
        "어제 서버에서 메모리 누수가 발생했다.",
        "다음 주 회의는 화요일로 변경되었다.",
    ],
    "memory/th.md": [
        "ร้านนี้ขายอาหารทะเลสดมาก โดยเฉพาะกุ้งเผา",
        "ประชุมทีมย้ายไปวันพฤหัสบดี",
    ],
    "memory/en.md": [
        "The quarterly budget review moved to Thursday.",
        "Ann's birthday dinner is at the Italian place.",
    ],
}


@pytest.fixture()
def multilingual(tmp_path: Path) -> SQLiteStore:
    return _store(tmp_path / "i.sqlite", LANG_DOCS, None)


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("咖啡", "memory/zh.md:0"),
        ("项目", "memory/zh.md:1"),
        ("项目什么时候上线？", "memory/zh.md:1"),
        ("我想喝咖啡", "memory/zh.md:0"),
        ("サーバー", "memory/ja.md:0"),
        ("サーバーはいつ再起動した？", "memory/ja.md:0"),
        ("会議", "memory/ja.md:1"),
        ("서버", "memory/ko.md:0"),
        ("서버에서 메모리 문제", "memory/ko.md:0"),
        ("회의는", "memory/ko.md:1"),
        ("อาหารทะเล", "memory/th.md:0"),
        ("กุ้ง", "memory/th.md:0"),
        ("when is the budget review?", "memory/en.md:0"),
        ("Ann birthday", "memory/en.md:1"),
    ],
)
def test_keyword_only_multilingual(multilingual: SQLiteStore, cfg: MemoryConfig, query: str, want: str) -> None:
    res = run_search(multilingual, cfg, query, provider=None)
    assert res.mode == "keyword" and res.keyword_only_reason
    assert res.hits, query
    assert res.hits[0].chunk_id == want
    assert res.hits[0].text_score > 0


def test_trigram_index(tmp_path: Path, cfg: MemoryConfig) -> None:
    st = SQLiteStore(tmp_path / "t.sqlite", fts_tokenizer="trigram")
    _store(tmp_path / "t.sqlite", {"memory/zh.md": LANG_DOCS["memory/zh.md"], "memory/en.md": LANG_DOCS["memory/en.md"]},
           None, store=st)
    tri = MemoryConfig.load(cfg, store={"fts": {"tokenizer": "trigram"}})
    for query, want in [("咖啡", "memory/zh.md:0"), ("项目", "memory/zh.md:1"), ("budget review", "memory/en.md:0")]:
        res = run_search(st, tri, query, provider=None)
        assert res.hits and res.hits[0].chunk_id == want, query


def test_keyword_only_no_match(multilingual: SQLiteStore, cfg: MemoryConfig) -> None:
    res = run_search(multilingual, cfg, "kubernetes", provider=None)
    assert res.hits == [] and res.empty_reason == "no_match"


# ---- sqlite-vec and numpy agree -----------------------------------------------------------------


def test_sqlite_vec_and_numpy_rank_the_same(tmp_path: Path, cfg: MemoryConfig) -> None:
    rng = np.random.default_rng(11)
    provider = FakeEmbeddingProvider(dims=64)
    words = "deploy budget review canary gateway postgres billing vault rollback metrics hiring roadmap".split()
    docs = {f"memory/n{i}.md": [" ".join(rng.choice(words, size=8)) for _ in range(10)] for i in range(12)}
    # continuous random vectors: no exact ties, so the order is fully determined by the scores
    vectors = {f"{p}:{j}": rng.standard_normal(64).astype(np.float32) for p in docs for j in range(10)}
    vectors = {k: v / np.linalg.norm(v) for k, v in vectors.items()}
    # memory_cache=False: every query on this side runs on vec0 (test_vector_cache.py covers the cache)
    vec = _store(tmp_path / "vec.sqlite", docs, provider, vectors=vectors,
                 store=SQLiteStore(tmp_path / "vec.sqlite", memory_cache=False))
    if vec.info().vector_path != "sqlite-vec":
        pytest.skip(f"sqlite-vec not loadable: {vec.info().vector_error}")
    num = _store(tmp_path / "num.sqlite", docs, provider, vectors=vectors, vector_enabled=False)
    assert num.info().vector_path == "numpy"
    for q in ("canary gateway deploy", "budget review hiring", "rollback metrics"):
        qv = rng.standard_normal(64).astype(np.float32)
        qv /= np.linalg.norm(qv)
        a, b = vec.vector_search(qv, limit=24), num.vector_search(qv, limit=24)
        assert len(a) == 24 and [c.id for c in a] == [c.id for c in b]
        assert np.allclose([c.vector_score for c in a], [c.vector_score for c in b], atol=1e-5)
        ra = run_search(vec, cfg, q, provider=provider, query_vector=qv, min_score=0.0, max_results=10)
        rb = run_search(num, cfg, q, provider=provider, query_vector=qv, min_score=0.0, max_results=10)
        assert len(ra.hits) == 10 and ids(ra) == ids(rb)
