"""Pure ranking functions: BM25 mapping, merges, rescue, decay, MMR, snippets, clamp."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from openclaw_memory.text.note_dates import dated_path_timestamp, is_evergreen
from openclaw_memory.retrieval.ranking import (
    EXACT_MATCH_WEIGHT,
    apply_keyword_rescue,
    apply_mmr,
    apply_temporal_decay,
    calibrate_similarity,
    clamp_injected,
    decay_multiplier,
    jaccard,
    keyword_text_scores,
    merge_rrf,
    merge_weighted,
    mmr_tokens,
    relative_bm25,
    truncate_snippet,
)
from openclaw_memory.types import Candidate, SearchHit

UTC = timezone.utc


def cand(cid: str, *, v: float = 0.0, t: float = 0.0, text: str = "", path: str = "memory/x.md",
         score: float = 0.0, exact: bool = False, source: str = "memory") -> Candidate:
    return Candidate(id=cid, path=path, start_line=1, end_line=2, text=text or cid, source=source,  # type: ignore[arg-type]
                     vector_score=v, text_score=t, score=score, exact_match=exact)


# ---- BM25 ---------------------------------------------------------------------------------------


def test_relative_bm25_and_text_scores() -> None:
    assert relative_bm25([-4.0, -2.0, -1.0]) == [1.0, 0.5, 0.25]
    assert relative_bm25([0.0, 0.0]) == [1.0, 1.0]  # LIKE-only hits
    assert relative_bm25([]) == []
    assert keyword_text_scores([-4.0, -2.0], [1.0, 0.0]) == [1.0, pytest.approx(0.075)]
    # coverage multiplies, squared: the top BM25 hit holding 1 of 5 query terms stays weak
    assert keyword_text_scores([-4.0, -2.0], [0.2, 1.0]) == [pytest.approx(0.136), pytest.approx(0.75)]
    assert keyword_text_scores([-4.0], [0.5]) == [pytest.approx(0.325)]  # half the terms: a quarter of the credit
    assert keyword_text_scores([-4.0], [3.0]) == [1.0]  # coverage clamped


def test_calibrate_similarity() -> None:
    assert calibrate_similarity(0.85, None) == 0.85
    assert calibrate_similarity(0.85, 0.7) == pytest.approx(0.5)
    assert calibrate_similarity(0.6, 0.7) == 0.0 and calibrate_similarity(1.0, 0.7) == 1.0


# ---- merges -------------------------------------------------------------------------------------


def test_weighted_merge_spec_values() -> None:
    merged = {c.id: c for c in merge_weighted([cand("a", v=0.9)], [cand("b", t=1.0)], vector_weight=0.7, text_weight=0.3)}
    assert merged["a"].score == pytest.approx(0.63)
    assert merged["b"].score == pytest.approx(0.3)
    assert merged["b"].vector_score == 0.0 and merged["a"].text_score == 0.0
    both = merge_weighted([cand("x", v=0.2)], [cand("x", t=1.0, exact=True)], vector_weight=0.5, text_weight=0.5)
    assert len(both) == 1
    assert both[0].score == pytest.approx(0.5 * 0.2 + 0.5 * 1.0)
    assert both[0].exact_match and both[0].vector_rank == 1 and both[0].text_rank == 1


def test_weighted_merge_does_not_mutate_inputs_and_clamps_negative_cosine() -> None:
    v = cand("a", v=-0.4)
    (out,) = merge_weighted([v], [], vector_weight=0.7, text_weight=0.3)
    assert out.score == 0.0 and v.vector_score == -0.4 and out is not v


def test_rrf_hand_computed() -> None:
    vector = [cand("a", v=0.9), cand("c", v=0.5)]
    keyword = [cand("b", t=1.0), cand("a", t=0.5)]
    merged = {c.id: c.score for c in merge_rrf(vector, keyword, vector_weight=0.7, text_weight=0.3, k=60)}
    assert merged["a"] == pytest.approx(61 * (0.7 / 61 + 0.3 / 62))
    assert merged["b"] == pytest.approx(0.3)
    assert merged["c"] == pytest.approx(0.7 * 61 / 62)
    top_both = merge_rrf([cand("z")], [cand("z")], vector_weight=0.7, text_weight=0.3)
    assert top_both[0].score == pytest.approx(1.0)


def test_keyword_rescue_lifts_exact_matches_only() -> None:
    merged = merge_weighted([], [cand("id", t=1.0, exact=True), cand("word", t=0.9)], vector_weight=0.7, text_weight=0.3)
    apply_keyword_rescue(merged)
    scores = {c.id: c.score for c in merged}
    assert scores["id"] == pytest.approx(EXACT_MATCH_WEIGHT) and scores["id"] >= 0.35
    assert scores["word"] == pytest.approx(0.27) and scores["word"] < 0.35
    # rank fusion: as if the vector list had ranked it like the keyword list did
    fused = merge_rrf([cand("v")], [cand("id", t=0.8, exact=True), cand("w", t=0.7)], vector_weight=0.7,
                      text_weight=0.3, k=60)
    apply_keyword_rescue(fused, rrf_k=60)
    got = {c.id: c.score for c in fused}
    assert got["id"] == pytest.approx(0.8) and got["v"] == pytest.approx(0.7)
    assert got["w"] == pytest.approx(0.3 * 61 / 62)
    # never lowers a score that is already higher
    strong = cand("s", v=1.0, t=1.0, exact=True, score=0.95)
    apply_keyword_rescue([strong])
    assert strong.score == 0.95


# ---- temporal decay -----------------------------------------------------------------------------


def test_decay_formula_and_exact_half_life() -> None:
    assert decay_multiplier(30, 30) == pytest.approx(0.5, abs=1e-12)
    assert decay_multiplier(60, 30) == pytest.approx(0.25)
    assert decay_multiplier(0, 30) == 1.0
    assert decay_multiplier(-5, 30) == 1.0  # future dates do not decay
    assert decay_multiplier(10, 0.5) == pytest.approx(math.exp(-math.log(2) * 10))  # half-life floored to ≥ 1


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("memory/2026-01-16.md", datetime(2026, 1, 16, tzinfo=UTC)),
        ("memory/2026-01-16-vendor-pitch.md", datetime(2026, 1, 16, tzinfo=UTC)),
        ("memory/daily/2025/2025-12-31.md", datetime(2025, 12, 31, tzinfo=UTC)),
        ("notes/memory/2024-02-29-leap.md", datetime(2024, 2, 29, tzinfo=UTC)),
        ("memory/2026-02-30.md", None),
        ("memory/projects.md", None),
        ("MEMORY.md", None),
        ("memory/2026-01-16.txt", None),
        ("other/2026-01-16.md", None),
    ],
)
def test_dated_paths(path: str, expected: datetime | None) -> None:
    assert dated_path_timestamp(path) == expected


def test_evergreen_paths() -> None:
    assert is_evergreen("MEMORY.md", "memory") and is_evergreen("memory.md", "memory") and is_evergreen("USER.md", "memory")
    assert is_evergreen("memory/projects.md", "memory") and is_evergreen("./memory/people/ann.md", "memory")
    assert not is_evergreen("memory/2026-01-16-vendor-pitch.md", "memory")
    assert not is_evergreen("sessions/abc.jsonl", "sessions")
    assert not is_evergreen("notes/todo.md", "memory")


def test_decay_ordering_spec_example() -> None:
    now = datetime(2026, 2, 10, tzinfo=UTC)
    old = cand("old", path="memory/2025-01-01.md", score=0.95)
    new = cand("new", path="memory/2026-02-10.md", score=0.8)
    slug = cand("slug", path="memory/2025-01-01-vendor-pitch.md", score=0.95)
    ever = cand("ever", path="MEMORY.md", score=0.7)
    ancient = cand("ancient", path="memory/2000-01-01.md", score=1.0)
    future = cand("future", path="memory/2027-01-01.md", score=0.5)

    def ts(c: Candidate) -> datetime | None:
        return None if is_evergreen(c.path, c.source) else dated_path_timestamp(c.path)

    items = [old, new, slug, ever, ancient, future]
    apply_temporal_decay(items, ts, now=now, half_life_days=30)
    assert new.score == 0.8 and ever.score == 0.7 and future.score == 0.5
    assert old.score < new.score and slug.score == pytest.approx(old.score)
    assert ancient.score < 0.001
    half = cand("half", path="memory/2026-01-11.md", score=1.0)
    apply_temporal_decay([half], ts, now=now, half_life_days=30)
    assert half.score == pytest.approx(0.5, abs=1e-12)


def test_decay_uses_callback_for_sessions_and_naive_datetimes() -> None:
    now = datetime(2026, 2, 10, 12, 0)
    s = cand("s", path="sessions/a.jsonl", source="sessions", score=1.0)
    apply_temporal_decay([s], lambda c: now - timedelta(days=30), now=now, half_life_days=30)
    assert s.score == pytest.approx(0.5)


# ---- MMR ----------------------------------------------------------------------------------------


def test_tokens_and_jaccard() -> None:
    assert mmr_tokens("Deploy the API_v2, deploy!") == frozenset({"deploy", "the", "api", "v2"})
    assert {"咖", "啡", "咖啡"} <= mmr_tokens("喝咖啡")
    assert "喝咖" in mmr_tokens("喝咖啡") and "喝啡" not in mmr_tokens("喝咖啡")
    a, b = frozenset({"a", "b"}), frozenset({"b", "c"})
    assert jaccard(a, b) == pytest.approx(1 / 3) == jaccard(b, a)
    assert jaccard(frozenset(), frozenset()) == 1.0
    assert jaccard(a, frozenset()) == 0.0


DUP_A = "We deploy the API gateway on Friday with a canary rollout to five percent of traffic."
DUP_B = "We deploy the API gateway on Friday with a canary rollout to ten percent of traffic."
OTHER = "The vendor pitch covered pricing tiers and a support contract."
FILLER = "Lunch options near the office include ramen and tacos."


def test_mmr_demotes_near_duplicate() -> None:
    items = [cand("a", text=DUP_A, score=1.0), cand("a2", text=DUP_B, score=0.95),
             cand("b", text=OTHER, score=0.9), cand("d", text=FILLER, score=0.5)]
    order = [c.id for c in apply_mmr(items, 0.7)]
    assert order[:2] == ["a", "b"]
    assert order.index("a2") > order.index("b")
    assert [c.score for c in items] == [1.0, 0.95, 0.9, 0.5]  # scores kept


def test_mmr_lambda_extremes() -> None:
    items = [cand("a", text=DUP_A, score=1.0), cand("a2", text=DUP_B, score=0.95), cand("b", text=OTHER, score=0.9)]
    assert [c.id for c in apply_mmr(items, 1.0)] == ["a", "a2", "b"]
    assert [c.id for c in apply_mmr(items, 0.0)][:2] == ["a", "b"]
    assert [c.id for c in apply_mmr(items, 5.0)] == ["a", "a2", "b"]  # clamped to 1
    same = [cand("x", text="same", score=0.5), cand("y", text="same", score=0.5)]
    assert [c.id for c in apply_mmr(same, 0.7)] == ["x", "y"]
    assert apply_mmr([], 0.7) == []


def test_mmr_compares_the_indexed_text_not_record_markers() -> None:
    """leftovers4: two records with the same body are duplicates whatever their markers (ids, keys, times) say;
    MMR used to compare the marker lines too, so two copies of one item looked different enough to both stay."""
    from openclaw_memory.files.records import render_record

    def item(key: str, when: str) -> str:
        return render_record("item", {"key": key, "created_at": when, "updated_at": when}, "Vegetarian, no mushrooms.")

    a = cand("a", text=item("6f1c2a3e-9b4d-4e8a-b7c5-2d9e0f1a3b4c", "2026-03-01T09:00:01+00:00"), score=1.0)
    b = cand("b", text=item("0b9e77d1-3c2a-4f5e-8d6c-7a1b2c3d4e5f", "2026-11-24T23:59:58+00:00"), score=0.9)
    c = cand("c", text="Allergic to peanuts since childhood.", score=0.8)
    assert [x.id for x in apply_mmr([a, b, c], 0.5)] == ["a", "c", "b"]


# ---- snippets -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tail", "kept"),
    [
        ("👍🏽", 699),  # skin-tone modifier stays with its emoji
        ("🇯🇵", 699),  # flag = two regional indicators
        ("e\u0301", 699),  # combining accent
        ("👨\u200d👩\u200d👧", 699),  # ZWJ family
        ("ab", 700),
    ],
)
def test_snippet_truncation_keeps_characters_whole(tail: str, kept: int) -> None:
    text = "a" * 699 + tail + "zzz"
    out = truncate_snippet(text, 700)
    assert len(out) == kept and text.startswith(out)


def test_snippet_truncation_basics() -> None:
    assert truncate_snippet("short", 700) == "short"
    assert truncate_snippet("x" * 1000, 700) == "x" * 700
    assert truncate_snippet("咖" * 1000, 700) == "咖" * 700
    assert truncate_snippet("abc", 0) == ""
    flags = "🇯🇵🇫🇷"
    assert truncate_snippet(flags, 3) == "🇯🇵"
    family = "👨\u200d👩\u200d👧"
    assert truncate_snippet("x" + family, 3) == "x"


# ---- clamp --------------------------------------------------------------------------------------


def _hits(*sizes: int) -> list[SearchHit]:
    return [SearchHit(path=f"p{i}", start_line=1, end_line=1, score=1.0, snippet="x" * n) for i, n in enumerate(sizes)]


def test_clamp_injected() -> None:
    assert [len(h.snippet) for h in clamp_injected(_hits(300, 300, 300), 700)] == [300, 300, 100]
    assert [len(h.snippet) for h in clamp_injected(_hits(300, 300, 300), None)] == [300, 300, 300]
    assert [len(h.snippet) for h in clamp_injected(_hits(300, 300), 300)] == [300]
    assert clamp_injected(_hits(300), 0) == []
    emoji = [SearchHit(path="p", start_line=1, end_line=1, score=1.0, snippet="ab👍🏽cd")]
    assert clamp_injected(emoji, 3)[0].snippet == "ab"


def test_candidate_copies_run_post_init_and_work_with_slots() -> None:
    """``hybrid._copy`` skipped ``__init__`` for every class (the review of leftovers2): a candidate class with a
    ``__post_init__`` or ``__slots__`` is copied as ``dataclasses.replace`` copies it."""
    from dataclasses import dataclass

    from openclaw_memory.retrieval.ranking import merge_weighted

    @dataclass
    class Tagged(Candidate):
        def __post_init__(self) -> None:
            self.tag = f"{self.path}:{self.vector_score:.1f}"

    @dataclass(slots=True)
    class Slotted(Candidate):
        pass

    for cls in (Tagged, Slotted):
        vec = [cls(id="a", path="memory/a.md", start_line=1, end_line=2, text="alpha", vector_score=0.9)]
        kw = [cls(id="b", path="memory/b.md", start_line=1, end_line=2, text="beta", text_score=0.8)]
        merged = {c.id: c for c in merge_weighted(vec, kw, vector_weight=0.7, text_weight=0.3)}
        assert type(merged["a"]) is cls and merged["a"].vector_score == 0.9 and merged["b"].text_score == 0.8
        if cls is Tagged:
            assert merged["a"].tag == "memory/a.md:0.9"  # run again on the copy, as replace() does
