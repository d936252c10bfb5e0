"""``query.hybrid.score_both_sides``: a keyword candidate the vector side did not return keeps its real cosine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.retrieval.ranking import merge_weighted
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.types import Candidate

DOCS = {
    # the embedder reads "feline" as "cat"; the keyword side does not: these two lead the vector side only
    "memory/2026-03-01.md": "# Mar 1\n\nfeline feline\n",
    "memory/2026-03-02.md": "# Mar 2\n\nfeline sleeps\n",
    # the only keyword hit, which the vector side (two candidates here) does not return
    "memory/2026-03-03.md": "# Mar 3\n\ncat owner notes about the garden shed\n",
}


def _cand(cid: str, *, v: float = 0.0, t: float = 0.0) -> Candidate:
    return Candidate(id=cid, path=f"memory/{cid}.md", start_line=1, end_line=1, text=cid, vector_score=v, text_score=t)


def test_merge_weighted_uses_the_given_vector_scores_of_keyword_only_candidates() -> None:
    merged = {c.id: c for c in merge_weighted([_cand("a", v=0.9)], [_cand("b", t=1.0), _cand("a", t=0.5)],
                                             vector_weight=0.7, text_weight=0.3, vector_scores={"b": 0.5, "a": 0.1})}
    assert merged["b"].vector_score == pytest.approx(0.5)
    assert merged["b"].score == pytest.approx(0.7 * 0.5 + 0.3 * 1.0)
    assert merged["b"].vector_rank is None  # it still was not in the vector list
    assert merged["a"].vector_score == pytest.approx(0.9)  # the vector list's own score wins
    (neg,) = merge_weighted([], [_cand("c", t=1.0)], vector_weight=0.7, text_weight=0.3, vector_scores={"c": -0.2})
    assert neg.vector_score == 0.0 and neg.score == pytest.approx(0.3)


@pytest.mark.parametrize("both", [True, False])
def test_keyword_hit_outside_the_vector_candidates_gets_its_cosine(write, tmp_path: Path, both: bool) -> None:
    provider = FakeEmbeddingProvider(dims=256, model=f"fake-both-{both}", synonyms={"feline": "cat"})
    ws = write(DOCS)
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / "b.sqlite")},
                     query={"hybrid": {"candidate_multiplier": 1, "score_both_sides": both}}) as m:
        m.sync()
        hits = m.search("cat", max_results=2, min_score=0).hits
    by_path = {h.path: h for h in hits}
    kw = by_path["memory/2026-03-03.md"]  # found by its word (the exact-match rescue keeps it in the top 2)
    assert kw.text_score > 0
    chunk = provider.embed_documents([DOCS["memory/2026-03-03.md"]])[0].astype(np.float64)
    expected = float(np.dot(chunk, provider.embed_query("cat")))
    assert expected > 0.1
    assert kw.vector_score == (pytest.approx(expected, abs=1e-5) if both else 0.0)
    assert kw.score == pytest.approx(max(0.7 * kw.vector_score + 0.3 * kw.text_score, 0.6 * kw.text_score), abs=1e-5)
