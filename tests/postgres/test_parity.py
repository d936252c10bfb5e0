"""The same workspace indexed in SQLite and in PostgreSQL ranks the same: keyword scores (FTS5's BM25
reproduced over tsvector), CJK/Thai/Korean segmentation, the hybrid merge and ``min_score``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider

CORPUS = {
    "MEMORY.md": "# Long-term\n\nThe production database is PostgreSQL 16 on db-prod-3.\n\n"
                 "Alice prefers dark roast coffee and reviews every deploy.\n",
    "memory/2026-01-10.md": "# Deploy notes\n\nDeployed memorySearch.query.hybrid to staging; the deploy failed twice "
                            "with error E1234 before the rollback.\n\nPainting the office next week.\n",
    "memory/2026-01-11.md": "# Coffee\n\nWe bought a new coffee grinder. The coffee tastes better; painted walls too.\n\n"
                            "咖啡机坏了，明天修理。项目进度正常。\n",
    "memory/2026-01-12.md": "# 会议\n\n项目会议讨论了服务器迁移和数据库备份。\n\n서버에서 발생한 에러를 확인했습니다. 배포는 내일.\n",
    "memory/2026-01-13.md": "# ภาษาไทย\n\nการประชุมเรื่องฐานข้อมูลวันพรุ่งนี้ กาแฟอร่อยมาก\n\n"
                            "Rollback plan: restore the PostgreSQL snapshot from db-prod-3.\n",
    "memory/projects/api.md": "# API\n\nThe API gateway rate limit is 600 requests per minute; sqlite-vec is used "
                              "locally.\n\nError E1234 means the gateway token expired.\n",
}

QUERIES = [
    "coffee", "deploy error", "E1234", "memorySearch.query.hybrid", "PostgreSQL snapshot rollback", "painting",
    "db-prod-3", "咖啡", "项目会议", "서버 에러", "배포", "กาแฟ", "ฐานข้อมูล", "rate limit gateway", "what is this",
    "the coffee tastes", "nothing matches zzzqqq",
]


@pytest.fixture
def two_indexes(write: Callable[[dict[str, str]], Path], pg: Any, tmp_path: Path,
                make_index: Callable[..., MemoryIndex]) -> Callable[..., tuple[MemoryIndex, MemoryIndex]]:
    """``two_indexes(provider, tokenizer)``: the corpus indexed in SQLite and in PostgreSQL."""
    write(CORPUS)

    def _make(provider: object = None, tokenizer: str = "unicode61") -> tuple[MemoryIndex, MemoryIndex]:
        fts = {"tokenizer": tokenizer}
        lite = make_index(provider=provider, store={"path": str(tmp_path / f"{tokenizer}.sqlite"), "fts": fts})
        pgi = make_index(provider=provider, store={"url": pg.url, "namespace": pg.namespace(), "pg_schema": pg.schema,
                                                   "fts": fts})
        lite.sync()
        pgi.sync()
        assert pgi.status().backend == "postgresql" and lite.status().backend == "sqlite"
        return lite, pgi

    return _make


def _hits(idx: MemoryIndex, q: str, **kw: object) -> list[tuple[str, int, float, float]]:
    res = idx.search(q, **kw)  # type: ignore[arg-type]
    return [(h.path, h.start_line, round(h.score, 6), round(h.text_score, 6)) for h in res.hits]


@pytest.mark.parametrize("tokenizer", ["unicode61", "porter"])
def test_keyword_search_ranks_and_scores_like_sqlite(two_indexes: Callable[..., tuple[MemoryIndex, MemoryIndex]],
                                                      tokenizer: str) -> None:
    lite, pgi = two_indexes(None, tokenizer)
    found = 0
    for q in QUERIES:
        a, b = _hits(lite, q, min_score=0.0), _hits(pgi, q, min_score=0.0)
        assert b == a, q
        found += bool(a)
    assert found >= len(QUERIES) - 3  # the corpus answers most queries (the comparison is not vacuous)


def test_hybrid_merge_rescue_and_min_score_like_sqlite(two_indexes: Callable[..., tuple[MemoryIndex, MemoryIndex]]
                                                       ) -> None:
    lite, pgi = two_indexes(FakeEmbeddingProvider())
    for q in QUERIES:
        for min_score in (None, 0.0, 0.5):
            kw = {} if min_score is None else {"min_score": min_score}
            a = [(p, line, round(s, 4)) for p, line, s, _ in _hits(lite, q, **kw)]
            b = [(p, line, round(s, 4)) for p, line, s, _ in _hits(pgi, q, **kw)]
            assert b == a, (q, min_score)


def test_a_note_date_is_indexed_and_ranked_like_sqlite(two_indexes: Callable[..., tuple[MemoryIndex, MemoryIndex]]
                                                       ) -> None:
    # ``store.fts.note_dates`` (default on): the day's note holds none of these words, only its file name says the day
    lite, pgi = two_indexes(None, "unicode61")
    for q, day in (("What happened on 13 January 2026?", "memory/2026-01-13.md"),
                   ("January 12", "memory/2026-01-12.md")):
        a, b = _hits(lite, q, min_score=0.0), _hits(pgi, q, min_score=0.0)
        assert b == a, q
        assert a and a[0][0] == day, q
