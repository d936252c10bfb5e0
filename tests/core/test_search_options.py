"""MemoryIndex's public API for adapters: tuned searches (query_vector, mode, vector_weight, mmr,
where), iter_chunks() and indexed_files(), on a real workspace and SQLite index."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.providers.fake import FakeEmbeddingProvider

NOTES = {
    "MEMORY.md": "# Memory\n\n- The user prefers dark roast coffee in the morning.\n",
    "memory/2026-01-16.md": "# 2026-01-16\n\n- The payments worker failed with error E429-RL from the rate limiter.\n",
    "memory/2026-01-20.md": "# 2026-01-20\n\n- Met Alice about the billing migration; she owns the Stripe webhooks.\n",
}


@pytest.fixture
def memory(write: Callable[[dict[str, str]], Path], make_index: Callable[..., MemoryIndex],
           fake_provider: FakeEmbeddingProvider) -> MemoryIndex:
    write(dict(NOTES))
    index = make_index(fake_provider, citations="off")
    index.sync()
    return index


def test_query_vector_is_used_instead_of_embedding_the_query(
        memory: MemoryIndex, fake_provider: FakeEmbeddingProvider) -> None:
    text = "dark roast coffee"
    by_text = memory.search(text, min_score=0)
    vec = fake_provider.embed_query(text)
    calls = fake_provider.calls
    by_vector = memory.search(text, min_score=0, query_vector=list(map(float, vec)))
    assert fake_provider.calls == calls  # the vector was not computed again
    assert by_vector.mode == "hybrid"
    assert [(h.chunk_id, round(h.score, 5)) for h in by_vector.hits] == [
        (h.chunk_id, round(h.score, 5)) for h in by_text.hits]


def test_a_vector_alone_is_nearest_neighbour_search(memory: MemoryIndex, fake_provider: FakeEmbeddingProvider) -> None:
    vec = fake_provider.embed_query("payments worker rate limiter error")
    res = memory.search("", query_vector=vec, max_results=3, min_score=0)
    assert res.mode == "vector"
    assert res.hits[0].path == "memory/2026-01-16.md"
    scores = [h.vector_score for h in res.hits]
    assert scores == sorted(scores, reverse=True) and all(h.text_score == 0 for h in res.hits)
    assert memory.search("").hits == []  # no text and no vector: nothing to search for


def test_mode_picks_the_sides(memory: MemoryIndex, fake_provider: FakeEmbeddingProvider) -> None:
    calls = fake_provider.calls
    keyword = memory.search("E429-RL", mode="keyword")
    assert keyword.mode == "keyword" and keyword.keyword_only_reason == "keyword mode requested"
    assert [h.path for h in keyword.hits] == ["memory/2026-01-16.md"]
    assert fake_provider.calls == calls  # no embedding for a keyword search
    vector = memory.search("Stripe webhooks billing", mode="vector", min_score=0)
    assert vector.mode == "vector" and all(h.text_score == 0 for h in vector.hits)
    assert memory.search("Stripe webhooks billing", mode="hybrid", min_score=0).mode == "hybrid"


def test_vector_weight_one_ranks_as_vectors_alone(memory: MemoryIndex) -> None:
    q = "payments worker rate limiter"
    only_vectors = memory.search(q, mode="vector", min_score=0)
    weighted = memory.search(q, mode="hybrid", vector_weight=1.0, min_score=0)
    assert {h.chunk_id: h.score for h in weighted.hits} == pytest.approx(
        {h.chunk_id: h.score for h in only_vectors.hits})


def test_where_looks_further_down_the_ranking(write: Callable[[dict[str, str]], Path],
                                              make_index: Callable[..., MemoryIndex]) -> None:
    files = {f"memory/ops/n{i:02d}.md": f"# Ops {i}\n\n- deploy deploy rollback {i}\n" for i in range(20)}
    files.update({f"memory/team/t{i}.md": (f"# Team {i}\n\n- The team talked about lunch, the offsite, hiring, "
                                            f"plants and budgets; one deploy was mentioned once ({i}).\n")
                  for i in range(2)})
    write(files)
    memory = make_index(None, citations="off")
    memory.sync()
    plain = memory.search("deploy", max_results=2, min_score=0)
    assert not all(h.path.startswith("memory/team/") for h in plain.hits)  # they rank below the ops notes
    res = memory.search("deploy", max_results=2, min_score=0, where=lambda h: h.path.startswith("memory/team/"))
    assert sorted(h.path for h in res.hits) == ["memory/team/t0.md", "memory/team/t1.md"]
    none = memory.search("deploy", where=lambda h: False)
    assert none.hits == [] and none.empty_reason == "no_match"


def test_mmr_option_turns_diversity_on(write: Callable[[dict[str, str]], Path],
                                       make_index: Callable[..., MemoryIndex],
                                       fake_provider: FakeEmbeddingProvider) -> None:
    write({
        "memory/a.md": "# A\n\nThe staging database password rotates every week.\n",
        "memory/b.md": "# B\n\nThe staging database password rotates every week.\n",
        "memory/c.md": "# C\n\nThe staging database lives in Frankfurt.\n",
    })
    memory = make_index(fake_provider, citations="off")
    memory.sync()
    q = "staging database password"
    plain = [h.path for h in memory.search(q, mode="hybrid", mmr=False, min_score=0).hits]
    assert set(plain[:2]) == {"memory/a.md", "memory/b.md"}
    diverse = [h.path for h in memory.search(q, mode="hybrid", mmr=0.3, min_score=0).hits]
    assert diverse[1] == "memory/c.md"


@pytest.mark.parametrize(("options", "message"), [
    ({"mode": "fuzzy"}, "unknown search mode"),
    ({"vector_weight": 1.5}, "vector_weight must be between 0"),
    ({"mmr": 2.0}, "MMR lambda must be between 0 and 1"),
    ({"query_vector": [0.5] * 8}, "8,.*64-dimensional"),
    ({"query_vector": [0.0] * 64}, "query_vector"),
    ({"query_vector": [1.0] * 64, "mode": "keyword"}, "keyword search takes no query_vector"),
])
def test_bad_options_raise_memory_argument_errors(memory: MemoryIndex, options: dict, message: str) -> None:
    with pytest.raises(MemoryArgumentError, match=message):
        memory.search("coffee", **options)


def test_query_vector_on_a_keyword_only_index_is_refused(write: Callable[[dict[str, str]], Path],
                                                         make_index: Callable[..., MemoryIndex]) -> None:
    write(dict(NOTES))
    memory = make_index(None)
    with pytest.raises(MemoryArgumentError, match="no embedding provider"):
        memory.search("coffee", query_vector=np.ones(64, dtype=np.float32))


def test_iter_chunks_and_indexed_files_read_the_index(memory: MemoryIndex) -> None:
    assert memory.indexed_files() == sorted(NOTES)
    assert memory.indexed_files("sessions") == []
    chunks = list(memory.iter_chunks())
    assert {c.path for c in chunks} == set(NOTES)
    assert all(c.source == "memory" and c.embedding is not None and c.text for c in chunks)
    assert any("E429-RL" in c.text for c in chunks)
    memory.close()
    with pytest.raises(RuntimeError, match="closed"):
        memory.indexed_files()
    with pytest.raises(RuntimeError, match="closed"):
        list(memory.iter_chunks())


def test_collapse_counts_each_key_once(write: Callable[[dict[str, str]], Path],
                                       make_index: Callable[..., MemoryIndex]) -> None:
    long_note = "\n\n".join(f"## Part {i}\n\n" + f"The kestrel survey on ridge {i} counted falcons. " * 12
                            for i in range(10))
    write({"memory/long.md": "# Survey\n\n" + long_note + "\n",
           "memory/short.md": "# Short\n\n- One kestrel survey note.\n"})
    # chunks as found (with query.merge_overlapping the overlapping chunks of long.md come back as one hit)
    memory = make_index(None, citations="off", query={"merge_overlapping": False})
    memory.sync()
    plain = memory.search("kestrel survey", max_results=2, min_score=0)
    assert [h.path for h in plain.hits] == ["memory/long.md", "memory/long.md"]  # two chunks of one file
    res = memory.search("kestrel survey", max_results=2, min_score=0, collapse=lambda h: h.path)
    assert [h.path for h in res.hits] == ["memory/long.md", "memory/short.md"]
    assert res.hits[0].chunk_id == plain.hits[0].chunk_id  # the best chunk of each file
