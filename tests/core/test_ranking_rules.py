"""Ranking rules a user relies on: rare identifiers asked for are returned, min_score means the
same under both merges, decay never hides an identifier, bad inputs never break a search."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from openclaw_memory.text.citations import decorate_citation
from openclaw_memory.config import MemoryConfig
from openclaw_memory.retrieval.ranking import clamp_injected
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.text.query_analysis import analyze_query
from openclaw_memory.retrieval.pipeline import run_search
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.types import SearchHit

from tests.helpers.search_store import away_from as _away_from, build_store as _store, FILLER, ids

UTC = timezone.utc
TARGET = "Rolled back the deploy to a828e60 after the outage."
LONG_QUESTION = "what happened with commit a828e60 during the january database migration and who approved it"


def _id_store(tmp_path: Path, provider: FakeEmbeddingProvider, *, rel: str = "memory/log.md") -> tuple[SQLiteStore, str]:
    filler = [f"{t} (note {i})" for i in range(4) for t in FILLER]  # 32 chunks > 24 candidates
    st = _store(tmp_path / "i.sqlite", {rel: [*filler, TARGET]}, provider)
    return st, f"{rel}:{len(filler)}"


@pytest.fixture()
def cfg(tmp_path: Path) -> MemoryConfig:
    return MemoryConfig(workspace=tmp_path, state_dir=tmp_path / "state", citations="off")


# ---- needles: rare identifiers of the query -----------------------------------------------------


def test_needle_terms_are_identifiers_not_acronyms_or_hyphenated_words() -> None:
    a = analyze_query("a828e60 getUserName memorySearch.query.hybrid v1.2.3 notes/2026.md API sqlite-vec follow-up")
    flags = {g.keys[0]: g.needle for g in a.groups if g.distinctive}
    assert flags == {
        "a828e60": True, "getusername": True, "memorysearch query hybrid": True, "v1 2 3": True,
        "notes 2026 md": True, "api": False, "sqlite vec": False, "follow up": False,
    }


@pytest.mark.parametrize("merge", ["weighted", "rrf"])
def test_identifier_inside_a_long_question_is_returned_when_vector_misses(
        tmp_path: Path, cfg: MemoryConfig, merge: str) -> None:
    provider = FakeEmbeddingProvider(dims=64)
    st, target = _id_store(tmp_path, provider)
    config = MemoryConfig.load(cfg, query={"hybrid": {"merge": merge}})
    res = run_search(st, config, LONG_QUESTION, provider=provider, query_vector=_away_from(provider, FILLER + [TARGET]))
    assert res.mode == "hybrid"
    assert res.hits and res.hits[0].chunk_id == target, ids(res)
    assert res.hits[0].vector_score == 0.0 and res.hits[0].text_score < 0.5  # a small share of the question
    # the same question in keyword-only mode
    res = run_search(st, cfg, LONG_QUESTION, provider=None)
    assert res.mode == "keyword" and res.hits[0].chunk_id == target


def test_a_common_identifier_is_not_a_needle(tmp_path: Path, cfg: MemoryConfig) -> None:
    """An identifier found in more chunks than the candidate list holds does not lift every one of
    them to the rescue score: the long question then needs more of its words to match."""
    provider = FakeEmbeddingProvider(dims=64)
    docs = {"memory/k8s.md": [f"Node k8s01 {t}" for t in FILLER * 4]}  # 32 chunks mention k8s01
    st = _store(tmp_path / "i.sqlite", docs, provider)
    qv = _away_from(provider, docs["memory/k8s.md"])
    res = run_search(st, cfg, "what did the januari migration change about k8s01 and the database owners",
                     provider=provider, query_vector=qv)
    assert all(h.score < 0.6 for h in res.hits)
    rare = run_search(st, cfg, "k8s01", provider=provider, query_vector=qv, max_results=3)
    assert len(rare.hits) == 3  # asked for alone, it is an exact match of the whole query


def test_decay_moves_an_old_identifier_down_but_does_not_hide_it(tmp_path: Path, cfg: MemoryConfig) -> None:
    provider = FakeEmbeddingProvider(dims=64)
    st, target = _id_store(tmp_path, provider, rel="memory/2026-01-01.md")
    qv = _away_from(provider, FILLER + [TARGET])
    decay = MemoryConfig.load(cfg, query={"hybrid": {"temporal_decay": {"enabled": True}}})
    now = datetime(2026, 4, 1, tzinfo=UTC)  # 90 days: a multiplier of 1/8
    res = run_search(st, decay, "a828e60", provider=provider, query_vector=qv, now=now)
    assert ids(res) == [target]
    assert res.hits[0].score == pytest.approx(0.6 / 8, rel=1e-3)  # decayed; still returned
    # an ordinary keyword match in the same old note is decayed under min_score, as in the original
    res = run_search(st, decay, "rolled back outage", provider=provider, query_vector=qv, now=now)
    assert res.hits == []
    assert ids(run_search(st, decay, "rolled back outage", provider=provider, query_vector=qv,
                          now=datetime(2026, 1, 2, tzinfo=UTC))) == [target]


# ---- min_score under rank fusion ------------------------------------------------------------------


def test_rrf_applies_min_score_to_the_weighted_relevance(tmp_path: Path, cfg: MemoryConfig) -> None:
    provider = FakeEmbeddingProvider(dims=64)
    st = _store(tmp_path / "i.sqlite", {"memory/notes.md": FILLER}, provider)
    rrf = MemoryConfig.load(cfg, query={"hybrid": {"merge": "rrf"}})
    nonsense = _away_from(provider, FILLER)
    assert run_search(st, rrf, "xylophone quantum zebra", provider=provider, query_vector=nonsense).hits == []
    assert run_search(st, cfg, "xylophone quantum zebra", provider=provider, query_vector=nonsense).hits == []
    # a real match still comes back, with its rank-fusion score
    qv = provider.embed_query(FILLER[2])
    res = run_search(st, rrf, FILLER[2], provider=provider, query_vector=qv)
    assert res.hits[0].chunk_id == "memory/notes.md:2" and res.hits[0].score == pytest.approx(1.0)
    assert len(res.hits) < len(FILLER)


# ---- inputs that must not break a search ------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.zeros(64, dtype=np.float32), np.full(64, np.nan, dtype=np.float32)])
def test_unusable_query_vector_falls_back_to_keywords_and_says_so(tmp_path: Path, cfg: MemoryConfig,
                                                                   bad: np.ndarray) -> None:
    provider = FakeEmbeddingProvider(dims=64)
    st, target = _id_store(tmp_path, provider)
    res = run_search(st, cfg, "a828e60", provider=provider, query_vector=bad)
    assert res.mode == "keyword" and "not finite" in (res.keyword_only_reason or "")
    assert ids(res) == [target]


@pytest.mark.parametrize("stamp", ["NaN", "1e300", "-1e20", '"9999-99-99"', '"not a date"', "true"])
def test_malformed_transcript_timestamps_do_not_break_decay(tmp_path: Path, stamp: str) -> None:
    sessions = tmp_path / "state" / "agents" / "main" / "sessions"
    cfg = MemoryConfig(workspace=tmp_path, state_dir=tmp_path / "state", citations="off", sources=["memory", "sessions"],
                       query={"hybrid": {"temporal_decay": {"enabled": True}}})
    sessions = cfg.resolved_sessions_dir()
    sessions.mkdir(parents=True)
    line = '{"type": "message", "timestamp": %s, "message": {"role": "user", "content": "zanzibar flamingo"}}' % stamp
    assert json.loads(line)  # JSON5-free: Python's json reads NaN
    (sessions / "s1.jsonl").write_text(line + "\n")
    provider = FakeEmbeddingProvider(dims=64)
    st = _store(tmp_path / "i.sqlite", {"sessions/s1.jsonl": ["User: zanzibar flamingo"]}, provider, source="sessions")
    res = run_search(st, cfg, "zanzibar flamingo", provider=provider)
    assert ids(res) == ["sessions/s1.jsonl:0"]


def test_clamp_keeps_the_citation_footer_whole() -> None:
    hit = decorate_citation(SearchHit(path="MEMORY.md", start_line=1, end_line=4, score=0.9, snippet="word " * 140))
    footer = "\n\nSource: MEMORY.md#L1-L4"
    assert hit.snippet.endswith(footer)
    (cut,) = clamp_injected([hit], 705)
    assert cut.snippet.endswith(footer) and len(cut.snippet) <= 705
    assert cut.snippet[: -len(footer)].strip() and not cut.snippet[: -len(footer)].endswith(" ")
    assert clamp_injected([hit], len(footer)) == []  # not even the footer fits: nothing half-cited
    second = decorate_citation(SearchHit(path="memory/a.md", start_line=2, end_line=2, score=0.5, snippet="short"))
    kept = clamp_injected([second, hit], len(second.snippet) + 100)
    assert kept[0] == second and kept[1].snippet.endswith(footer) and len(kept) == 2


# ---- OpenClaw files load as OpenClaw reads them -------------------------------------------------------


def test_out_of_range_openclaw_values_are_clamped_with_a_warning(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    f = tmp_path / "openclaw.json"
    f.write_text("""{ agents: { defaults: { workspace: "%s", memorySearch: { query: { minScore: 1.2,
        hybrid: { vectorWeight: 2, textWeight: 1, candidateMultiplier: 50, mmr: { lambda: -3 },
                  temporalDecay: { halfLifeDays: 0.5 } } } } } } }""" % tmp_path)
    with caplog.at_level(logging.WARNING, logger="openclaw_memory.config"):
        c = MemoryConfig.from_openclaw_file(f)
    q = c.query
    assert (q.min_score, q.hybrid.candidate_multiplier, q.hybrid.mmr.lambda_, q.hybrid.temporal_decay.half_life_days) \
        == (1.0, 20, 0.0, 1)
    assert (q.hybrid.vector_weight, q.hybrid.text_weight) == (0.5, 0.5)  # clamped to 1 and 1, then normalised
    assert "memorySearch.query.minScore = 1.2" in caplog.text and "candidateMultiplier" in caplog.text
    with pytest.raises(Exception, match="min_score"):  # in Python, a typed config still refuses bad values
        MemoryConfig(query={"min_score": 1.2})
