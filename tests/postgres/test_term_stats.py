"""The per-build term statistics BM25 reads on PostgreSQL: exact after every kind of write (replace,
moved chunk ids, delete, concurrent writers, rebuild), backfilled when a version-1 schema is migrated,
and giving the same keyword ranks and scores as SQLite's FTS5."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from openclaw_memory.storage.postgres import PostgresStore
from openclaw_memory.storage.postgres.schema import SCHEMA_VERSION
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage import StoredChunk
from openclaw_memory.types import MemoryFile

MakeStore = Callable[..., PostgresStore]

WORDS = "heron pelican migration billing stripe webhook okr churn alice bob postgres index".split()


def _file(path: str, h: str = "h") -> MemoryFile:
    return MemoryFile(path=path, abs_path="/nowhere/" + path, mtime_ms=1000.0, size=10, hash=h)


def _chunks(path: str, texts: list[str], prefix: str | None = None) -> list[StoredChunk]:
    p = prefix or path
    return [StoredChunk(id=f"{p}#{i}", path=path, source="memory", start_line=i, end_line=i, hash=f"{p}{i}",
                        model="m", text=t, embedding=None) for i, t in enumerate(texts)]


def _texts(rng: random.Random, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) for _ in range(n)]


def _scan_count(pg: Any, store: PostgresStore, word: str) -> int:
    """Chunks of the store's active build holding ``word``, counted by scanning (no statistics)."""
    with psycopg.connect(pg.url) as conn:
        return int(conn.execute(
            f'SELECT count(*) FROM "{store.schema}".chunks c JOIN "{store.schema}".namespaces n ON n.id = c.ns_id '
            "WHERE n.name = %s AND n.state = 'active' AND %s = ANY(string_to_array(c.tokens, ' '))",
            (store.namespace, word)).fetchone()[0])


def _assert_exact(pg: Any, store: PostgresStore) -> None:
    report = store.integrity()
    assert report["problems"] == [] and report["terms_off"] == 0
    for w in WORDS:
        assert store.count_matches(f'"{w}"', cap=10_000) == _scan_count(pg, store, w)


def _assert_ranks_like_sqlite(pg_store: PostgresStore, lite: SQLiteStore) -> None:
    for match in ('"heron"', '"pelican" OR "churn"', '("alice" AND "bob")', '"stripe webhook"', '"okr" NOT "bob"',
                  '"pelic"*', '"stripe web"* OR "heron"'):
        a = [(c.id, round(r, 9)) for c, r in pg_store.keyword_search(match, limit=50)]
        b = [(c.id, round(r, 9)) for c, r in lite.keyword_search(match, limit=50)]
        assert a == b, match


def test_statistics_follow_replace_move_and_delete(pg: Any, make_pg_store: MakeStore, tmp_path: Path) -> None:
    rng = random.Random(7)
    s = make_pg_store()
    lite = SQLiteStore(tmp_path / "lite.sqlite")
    try:
        for store in (s, lite):
            store.replace_file(_file("a.md"), _chunks("a.md", ["heron heron pelican", "alice met bob", "stripe webhook"]))
            store.replace_file(_file("b.md"), _chunks("b.md", ["pelican churn", "okr okr okr"]))
        _assert_exact(pg, s)
        _assert_ranks_like_sqlite(s, lite)
        texts = _texts(rng, 8)
        for store in (s, lite):
            store.replace_file(_file("a.md", "h2"), _chunks("a.md", texts))  # new text for every chunk
            # b.md's chunk ids move to c.md (a renamed file indexed before the old one is deleted)
            store.replace_file(_file("c.md"), _chunks("c.md", ["billing churn heron", "postgres index"], prefix="b.md"))
        _assert_exact(pg, s)
        _assert_ranks_like_sqlite(s, lite)
        for store in (s, lite):
            store.delete_file("a.md")
            store.replace_file(_file("d.md"), [])
        _assert_exact(pg, s)
        _assert_ranks_like_sqlite(s, lite)
        for store in (s, lite):
            store.delete_file("c.md")
        _assert_exact(pg, s)
        with psycopg.connect(pg.url) as conn:  # nothing left: no term rows left behind either
            left = conn.execute(f'SELECT count(*) FROM "{pg.schema}".terms t JOIN "{pg.schema}".namespaces n '
                                "ON n.id = t.ns_id WHERE n.name = %s", (s.namespace,)).fetchone()[0]
        assert left == 0
    finally:
        lite.close()


def test_statistics_stay_exact_under_concurrent_writers_and_rebuild(pg: Any, make_pg_store: MakeStore) -> None:
    """Writers of one namespace that do not take the sync lock still leave exact counts (and no deadlock)."""
    ns = pg.namespace()
    errors: list[BaseException] = []

    def write(worker: int) -> None:
        rng = random.Random(worker)
        store = make_pg_store(ns)
        try:
            for round_ in range(6):
                for f in range(3):  # shared files: writers replace each other's chunks
                    store.replace_file(_file(f"f{f}.md", f"{worker}-{round_}"), _chunks(f"f{f}.md", _texts(rng, 5)))
                if round_ % 2:
                    store.delete_file(f"f{rng.randrange(3)}.md")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    s = make_pg_store(ns)
    _assert_exact(pg, s)
    with s.rebuild() as fresh:
        fresh.replace_file(_file("new.md"), _chunks("new.md", ["heron heron", "pelican"]))
        _assert_exact(pg, s)  # the active build keeps its own statistics until the swap
    _assert_exact(pg, s)
    assert s.count_matches('"heron"', cap=10) == 1


def test_a_version_1_schema_gets_its_statistics_on_upgrade(pg: Any, tmp_path: Path) -> None:
    schema = "v1_" + pg.namespace().replace("-", "_")[-20:]
    s = PostgresStore(pg.url, namespace="n", schema=schema)
    lite = SQLiteStore(tmp_path / "lite.sqlite")
    try:
        for store in (s, lite):
            store.replace_file(_file("a.md"), _chunks("a.md", ["heron heron pelican", "alice met bob heron"]))
            store.replace_file(_file("b.md"), _chunks("b.md", ["pelican churn", "stripe webhook okr"]))
        s.close()
        with psycopg.connect(pg.url, autocommit=True) as conn:  # back to what version 1 had
            conn.execute(f'DROP TABLE "{schema}".terms')
            conn.execute(f'UPDATE "{schema}".schema_version SET version = 1')
        s = PostgresStore(pg.url, namespace="n", schema=schema)
        with psycopg.connect(pg.url) as conn:
            assert conn.execute(f'SELECT version FROM "{schema}".schema_version').fetchall() == [(SCHEMA_VERSION,)]
        _assert_exact(pg, s)
        _assert_ranks_like_sqlite(s, lite)
    finally:
        s.close()
        lite.close()
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.mark.parametrize("tokenizer", ["porter"])
def test_porter_statistics_count_stems(make_pg_store: MakeStore, pg: Any, tokenizer: str) -> None:
    s = make_pg_store(fts_tokenizer=tokenizer)
    s.replace_file(_file("a.md"), _chunks("a.md", ["running runs", "the runner ran", "run"]))
    assert s.integrity()["problems"] == []
    assert s.count_matches('"running"', cap=10) == s.count_matches('"run"', cap=10) == 2


def test_prefix_counts_come_from_the_term_statistics(make_pg_store: MakeStore, monkeypatch: Any,
                                                     tmp_path: Path) -> None:
    """A prefix that one token starts (or whose tokens include one holding ``cap`` chunks) is counted from
    the statistics, without reading a chunk; every count equals counting the chunks themselves, and the
    keyword scores equal SQLite's FTS5."""
    s = make_pg_store()
    lite = SQLiteStore(tmp_path / "lite.sqlite")
    texts = ["painting the heron", "painted heron and painter", "heron heron", "pelican paint", "the painting",
             "webhook_id 50%_off", "heron"] * 3
    for store in (s, lite):
        store.replace_file(_file("a.md"), _chunks("a.md", texts))
    statements: list[str] = []
    real = psycopg.Connection.execute

    def record(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(str(query))
        return real(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", record)

    def truth(prefix: str) -> int:
        return sum(any(t.startswith(prefix) for t in x.lower().replace("_", " ").replace("%", " ").split())
                   for x in texts)

    for prefix, cap, from_stats in [("pel", 100, True), ("heron", 100, True), ("zzz", 100, True), ("paint", 100, False),
                                    ("he", 2, True), ("painte", 100, False), ("50", 100, True), ("off", 100, True)]:
        statements.clear()
        assert s.count_matches(f'"{prefix}"*', cap=cap) == min(truth(prefix), cap), prefix
        assert any(".terms" in q for q in statements) and (not any(".chunks" in q for q in statements)) == from_stats
    for store in (s, lite):
        store.replace_file(_file("b.md"), _chunks("b.md", ["ab_cd", "abxcd abycd"]))
    assert s.count_matches('"abx"*', cap=100) == 1 and s.count_matches('"ab"*', cap=100) == 2
    monkeypatch.undo()
    try:
        for match in ['"pel"* OR "heron"', '"painte"* OR "pelican"', '"heron" AND "paint"*', '"ab"* OR "heron"']:
            pg_hits = [(c.id, round(score, 9)) for c, score in s.keyword_search(match, limit=50, window=4000)]
            lite_hits = [(c.id, round(score, 9)) for c, score in lite.keyword_search(match, limit=50, window=4000)]
            assert pg_hits and pg_hits == lite_hits, match
    finally:
        lite.close()
