"""``query.hybrid.relevance_vector_weight``: the weights that order hybrid hits and the weights that
``min_score`` judges them by can differ (the bundled model's fast tier orders at its own lighter vector
weight; see tests/core/test_fast_first_index_and_upgrade.py for that path with the real model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider

DOCS = {
    "memory/2026-03-01.md": "# Mar 1\n\nfeline feline\n",  # the embedder reads "feline" as "cat": vectors only
    "memory/2026-03-02.md": "# Mar 2\n\ngarden shed paint\n",
}


@pytest.mark.parametrize("merge", ["weighted", "rrf"])
def test_min_score_judges_hits_by_the_relevance_weight_and_the_order_is_unchanged(write, tmp_path: Path,
                                                                                  merge: str) -> None:
    provider = FakeEmbeddingProvider(dims=256, synonyms={"feline": "cat"})
    ws = write(DOCS)
    light = {"vector_weight": 0.15, "text_weight": 0.85, "merge": merge}

    def search(hybrid: dict[str, object], **kw: object) -> list[tuple[str, float]]:
        with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / "r.sqlite")},
                         query={"hybrid": hybrid}) as m:
            m.sync()
            return [(h.path, h.score) for h in m.search("cat", **kw).hits]

    assert search(light) == []  # 0.15 x a cosine never reaches min_score 0.35
    judged = search({**light, "relevance_vector_weight": 0.7})
    assert [p for p, _ in judged] == ["memory/2026-03-01.md"]
    assert judged == search(light, min_score=0)[:1]  # the same hit, with the score and rank of the light weights
    assert search({**light, "relevance_vector_weight": 0.0}) == []  # relevance from keywords alone
