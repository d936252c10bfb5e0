"""PostgreSQL scores a match the way FTS5 does when the MATCH expression has ANDs under an OR (the keyword side's
combination tiers): a phrase counts in a row only where its subexpression matches that row."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.retrieval.pipeline import run_search
from openclaw_memory.storage import IndexMeta, MemoryStore, StoredChunk
from openclaw_memory.storage.postgres import PostgresStore
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.types import MemoryFile

TEXTS = [
    "alpha beta gamma in one note",
    "alpha beta and other words here",
    "gamma delta alpha with more text",
    "beta gamma next to filler words",
    "delta alone here",
    "alpha gamma gamma extra",
    "alpha and a delta but no beta",
] + [f"filler note number {i} lorem ipsum" for i in range(16)]

MATCHES = [
    '("alpha" AND "beta") OR ("gamma" AND "delta")',
    '"alpha" AND "beta" OR "alpha" AND "gamma" OR "alpha" AND "delta" OR "beta" AND "gamma" OR "gamma" AND "delta"',
    '(("alpha" OR "alph"*) AND ("beta" OR "bet"*)) OR (("gamma" OR "gamm"*) AND ("delta" OR "delt"*))',
    '"alpha" NOT "beta" OR "delta"',
]


def _fill(store: MemoryStore) -> MemoryStore:
    path = "memory/notes.md"
    chunks = [StoredChunk(id=f"c{i}", path=path, source="memory", start_line=i + 1, end_line=i + 1, hash=f"h{i}",
                          model="m", text=text, embedding=None) for i, text in enumerate(TEXTS)]
    store.replace_file(MemoryFile(path=path, abs_path="/" + path, mtime_ms=1.0, size=1, hash="f"), chunks)
    store.write_meta(IndexMeta("fake", "m", "k", ("memory",), "s", 400, 80, "m", 0))
    return store


@pytest.fixture
def stores(make_pg_store: Callable[..., PostgresStore], tmp_path: Path
           ) -> Iterator[tuple[MemoryStore, MemoryStore]]:
    lite = _fill(SQLiteStore(tmp_path / "lite.sqlite"))
    yield lite, _fill(make_pg_store())
    lite.close()


def _ranked(rows: Any) -> list[tuple[str, float]]:
    return [(c.id, round(rank, 6)) for c, rank in rows]


@pytest.mark.parametrize("match", MATCHES)
def test_rows_matching_part_of_an_expression_score_as_in_sqlite(stores: tuple[MemoryStore, MemoryStore],
                                                                match: str) -> None:
    lite, pg = stores
    expected = _ranked(lite.keyword_search(match, limit=20))
    assert len(expected) >= 4  # rows matched by one AND only are among them
    assert _ranked(pg.keyword_search(match, limit=20)) == expected
    assert [_ranked(r) for r in pg.keyword_search_many([{"match": match, "limit": 20, "window": 4000}])] == [expected]


@pytest.mark.parametrize("query", ["alpha beta filler note", "alpha gamma delta here", "alpha beta gamma note"])
def test_keyword_search_ranks_partial_matches_as_sqlite_does(stores: tuple[MemoryStore, MemoryStore],
                                                             query: str) -> None:
    """Queries whose words no chunk holds all of: the keyword side ranks the matches of pairs of them by BM25, and
    the hits, their scores and what ``min_score`` keeps are the same on both stores."""
    lite, pg = stores

    def hits(store: MemoryStore) -> list[tuple[str, float, float]]:
        found = run_search(store, MemoryConfig(), query, provider=None).hits
        return [(h.chunk_id, round(h.score, 6), round(h.text_score, 6)) for h in found]

    expected = hits(lite)
    assert expected
    assert hits(pg) == expected
