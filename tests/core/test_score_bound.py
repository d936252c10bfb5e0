"""Search scores stay in 0..1, the range ``min_score`` is given in, also when the file-coverage bonus
(``query.hybrid.file_coverage_weight``) lifts a near-perfect hybrid hit; bounding them keeps the order."""

from __future__ import annotations

from pathlib import Path

import pytest

import openclaw_memory.search as search_mod
from openclaw_memory import MemoryIndex
from openclaw_memory.hybrid import bound_score
from openclaw_memory.providers.fake import FakeEmbeddingProvider

DOCS = {
    "memory/violin.md": "violin lessons\n",
    "memory/piano.md": "piano lessons on tuesday with the violin teacher\n",
    "memory/other.md": "lessons learned from the outage\n",
    "memory/misc.md": "the violin case needs a new handle\n",
}


def _search(write, tmp_path: Path, name: str) -> list:  # noqa: ANN001 - fixtures
    ws = write(DOCS)
    with MemoryIndex(provider=FakeEmbeddingProvider(dims=256), workspace=ws, watch=False,
                     store={"path": str(tmp_path / f"{name}.sqlite")}) as m:
        m.sync()
        return m.search("violin lessons", max_results=4, min_score=0).hits


def test_a_perfect_hybrid_hit_scores_at_most_1(write, tmp_path: Path) -> None:
    hits = _search(write, tmp_path, "bound")
    top = hits[0]
    assert top.path == "memory/violin.md"
    # the setup: a perfect match on both sides, in a file that holds every word of the query (bonus 0.04)
    assert top.vector_score == pytest.approx(1.0, abs=1e-6) and top.text_score == pytest.approx(1.0)
    assert all(0.0 <= h.score <= 1.0 for h in hits)  # was 1.04
    assert top.score == pytest.approx(1.0, abs=1e-6)


def test_the_bound_keeps_the_order_and_the_scores_below_the_knee(write, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    bounded = _search(write, tmp_path, "bounded")
    monkeypatch.setattr(search_mod, "bound_score", lambda score, headroom: score)  # the scores as they were
    raw = _search(write, tmp_path, "raw")
    assert [h.chunk_id for h in bounded] == [h.chunk_id for h in raw]
    assert raw[0].score > 1.0  # the setup: the unbounded score of the perfect hit
    for b, r in zip(bounded, raw):
        assert b.score == (r.score if r.score <= 0.96 else pytest.approx(0.96 + (r.score - 0.96) / 2))


def test_bound_score_is_increasing_and_the_identity_below_the_knee() -> None:
    grid = [i / 1000 for i in range(0, 1041)]
    out = [bound_score(s, 0.04) for s in grid]
    assert all(a < b for a, b in zip(out, out[1:]))  # strictly increasing: the order is kept
    assert out[:961] == grid[:961]  # up to 0.96 unchanged
    assert out[-1] == pytest.approx(1.0) and max(out) <= 1.0
    assert [bound_score(s, 0.0) for s in grid] == grid  # no bonus, nothing to bound
