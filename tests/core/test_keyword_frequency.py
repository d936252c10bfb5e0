"""Keyword search on words of very different frequency: rare words ranked in full, common words bounded.

The thresholds are lowered (``COMMON_MATCHES``, ``RECENT_CHUNKS``) so a few dozen chunks behave like a
100k-chunk index where a word appears in thousands of chunks.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory.text.instructions import MARKER_MATCH
from openclaw_memory.retrieval import keyword_side
from openclaw_memory.config import MemoryConfig
from openclaw_memory.retrieval.pipeline import run_search
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage import StoredChunk
from openclaw_memory.types import MemoryFile


def _index(store: SQLiteStore, rel: str, texts: list[str]) -> None:
    chunks = [
        StoredChunk(id=f"{rel}:{i}", path=rel, source="memory", start_line=i + 1, end_line=i + 1,
                    hash=hashlib.sha256(t.encode()).hexdigest(), model="fts-only", text=t, embedding=None)
        for i, t in enumerate(texts)
    ]
    store.replace_file(MemoryFile(path=rel, abs_path=rel, mtime_ms=0.0, size=1, hash=rel + str(len(texts))), chunks)


@pytest.fixture()
def store(tmp_path: Path):
    st = SQLiteStore(tmp_path / "i.sqlite", vector_enabled=False)
    yield st
    st.close()


@pytest.fixture()
def cfg(tmp_path: Path) -> MemoryConfig:
    return MemoryConfig(workspace=tmp_path, state_dir=tmp_path / "state", citations="off")


@pytest.fixture()
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_side, "COMMON_MATCHES", 5)
    monkeypatch.setattr(keyword_side, "RECENT_CHUNKS", 6)


def _spy(store: SQLiteStore) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    real = store.keyword_search

    def spy(match: str, **kw: Any) -> Any:
        calls.append((match, kw))
        return real(match, **kw)

    store.keyword_search = spy  # type: ignore[method-assign]
    return calls


# ---- store primitives ---------------------------------------------------------------------------


def test_count_matches_stops_at_the_cap(store: SQLiteStore) -> None:
    _index(store, "memory/a.md", [f"alpha note {i}" for i in range(12)])
    assert store.count_matches('"alpha"', cap=100) == 12
    assert store.count_matches('"alpha"', cap=5) == 5
    assert store.count_matches('"missing"', cap=5) == 0
    assert store.count_matches('"unbalanced', cap=5) == 0  # FTS5 syntax error: no rows, no exception


def test_recent_order_and_rank_window(store: SQLiteStore) -> None:
    # the oldest chunk repeats the word: full BM25 ranks it first; the newest come first without BM25
    _index(store, "memory/old.md", ["alpha alpha alpha alpha"])
    for i in range(6):
        _index(store, f"memory/n{i}.md", [f"alpha with some other words number {i}"])
    ranked = store.keyword_search('"alpha"', limit=3)
    assert ranked[0][0].path == "memory/old.md"
    recent = store.keyword_search('"alpha"', limit=3, order="recent")
    assert [c.path for c, _ in recent] == ["memory/n5.md", "memory/n4.md", "memory/n3.md"]
    assert {r for _, r in recent} == {0.0}
    windowed = store.keyword_search('"alpha"', limit=3, window=4)  # BM25 over the 4 newest matches only
    assert "memory/old.md" not in [c.path for c, _ in windowed] and len(windowed) == 3
    assert all(r < 0 for _, r in windowed)
    newest = store.keyword_search('"alpha"', limit=10, order="recent", newest=2)
    assert [c.path for c, _ in newest] == ["memory/n5.md", "memory/n4.md"]


# ---- the search plan ------------------------------------------------------------------------------


def test_rare_word_is_ranked_in_full_next_to_a_common_word(store, cfg, small_thresholds) -> None:
    # the rare word's chunks are the oldest; the common word fills every newer chunk
    _index(store, "memory/infra.md", ["kubernetes cluster upgraded", "kubernetes nodes drained", "kubernetes ok"])
    for i in range(30):
        _index(store, f"memory/d{i:02d}.md", [f"status update number {i} for the weekly sync"])
    calls = _spy(store)
    res = run_search(store, cfg, "kubernetes update", provider=None, max_results=6)
    assert {h.path for h in res.hits[:3]} == {"memory/infra.md"}
    loose = [m for m, _ in calls if " AND " not in m and m not in ('"kubernetes update"', MARKER_MATCH)]
    assert loose == ['"kubernetes"']  # the common word never widened the loose tier


def test_chunk_with_every_word_ranks_first_even_when_one_word_is_common(store, cfg, small_thresholds) -> None:
    _index(store, "memory/a.md", ["kubernetes cluster upgraded", "kubernetes nodes drained"])
    _index(store, "memory/b.md", ["kubernetes update rolled out to staging"])
    for i in range(30):
        _index(store, f"memory/d{i:02d}.md", [f"status update number {i}"])
    res = run_search(store, cfg, "kubernetes update", provider=None, max_results=3, min_score=0)
    assert res.hits[0].path == "memory/b.md"
    assert {h.path for h in res.hits} == {"memory/a.md", "memory/b.md"}


def test_common_word_query_returns_the_most_recent_matches(store, cfg, small_thresholds) -> None:
    for i in range(20):
        _index(store, f"memory/m{i:02d}.md", [f"meeting notes {i}"])
    calls = _spy(store)
    res = run_search(store, cfg, "meeting", provider=None, max_results=3)
    assert [h.path for h in res.hits] == ["memory/m19.md", "memory/m18.md", "memory/m17.md"]
    assert calls and all(kw.get("order") == "recent" for _, kw in calls)
    _index(store, "memory/m03.md", ["meeting notes 3, edited"])  # re-indexed: now the most recent
    assert run_search(store, cfg, "meeting", provider=None, max_results=3).hits[0].path == "memory/m03.md"


def test_exact_phrase_of_common_words_ranks_first(store, cfg, small_thresholds) -> None:
    _index(store, "memory/incident.md", ["postgres said: connection refused on port 5432"])
    for i in range(20):
        _index(store, f"memory/n{i:02d}.md", [f"the connection pool was fine and nobody refused review {i}"])
    res = run_search(store, cfg, "connection refused", provider=None, max_results=3)
    assert res.hits[0].path == "memory/incident.md"  # older than the RECENT_CHUNKS window: widened


def test_stop_word_only_query_finds_an_old_exact_phrase(store, cfg, small_thresholds) -> None:
    _index(store, "memory/old.md", ["what is this thing on the dashboard"])
    for i in range(20):
        _index(store, f"memory/n{i:02d}.md", [f"this is what we ship {i}"])
    res = run_search(store, cfg, "what is this", provider=None)
    assert res.hits and res.hits[0].path == "memory/old.md"


def test_a_word_missing_from_the_index_does_not_cost_an_and(store, cfg) -> None:
    _index(store, "memory/a.md", ["alpha release shipped", "alpha notes"])
    calls = _spy(store)
    res = run_search(store, cfg, "alpha zzzunknown", provider=None)
    assert {h.path for h in res.hits} == {"memory/a.md"}
    assert not [m for m, _ in calls if "zzzunknown" in m and m != '"alpha zzzunknown"']
