"""PostgreSQL store settings and bookkeeping: the HNSW threshold, exact search and HNSW's ef_search from
the config, the namespace's own size in ``status``, and a rebuild that drops only its own HNSW indexes."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError, StoreError
from openclaw_memory.storage.postgres import PostgresStore
from openclaw_memory.storage.postgres.store import default_ef_search
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.storage import IndexMeta, StoredChunk
from openclaw_memory.types import MemoryFile

MakeStore = Callable[..., PostgresStore]


def _notes(n: int) -> dict[str, str]:
    return {f"memory/2026-03-{i + 1:02d}.md": f"# Day {i}\n\nNote {i}: the deploy of service {i} went fine.\n"
            for i in range(n)}


def _file(path: str) -> MemoryFile:
    return MemoryFile(path=path, abs_path="/nowhere/" + path, mtime_ms=1000.0, size=10, hash="h" + path)


def _fill(store: PostgresStore, n: int, dims: int = 8, prefix: str = "c") -> None:
    rng = np.random.default_rng(n)
    chunks = [StoredChunk(id=f"{prefix}{i}", path="a.md", source="memory", start_line=i, end_line=i, hash=f"h{i}",
                          model="m", text=f"chunk {i} about topic {i % 7} " * 20,
                          embedding=rng.normal(size=dims).astype(np.float32)) for i in range(n)]
    store.replace_file(_file("a.md"), chunks)
    store.write_meta(IndexMeta("m", "p", "k", ("memory",), "s", 400, 80, "t", dims))


def test_hnsw_threshold_and_exact_search_come_from_the_store_config(
        pg: Any, workspace: Path, write: Callable[[dict[str, str]], Path]) -> None:
    write(_notes(6))
    cfg = MemoryConfig.load({"store": {"url": pg.url, "pgHnswMinRows": 5, "pgExactSearch": True}})
    assert cfg.store.pg_hnsw_min_rows == 5 and cfg.store.pg_exact_search is True
    assert MemoryConfig().store.pg_hnsw_min_rows == 1_000 and MemoryConfig().store.pg_exact_search is False
    with pytest.raises(ValueError):
        MemoryConfig.load({"store": {"pgHnswMinRows": 0}})

    def index(**store: Any) -> MemoryIndex:
        return MemoryIndex(workspace=workspace, watch=False, provider=FakeEmbeddingProvider(dims=16),
                           store={"url": pg.url, "namespace": ns, "pg_schema": pg.schema, **store})

    ns = pg.namespace()
    with index() as idx:  # 6 chunks, under the default threshold: exact
        idx.sync()
        assert idx.status().vector["path"] == "pgvector exact"
    ns = pg.namespace()
    with index(pg_hnsw_min_rows=5) as idx:  # the sync that crosses the configured threshold builds HNSW
        idx.sync()
        assert idx.status().vector["path"] == "pgvector hnsw"
        assert idx.search("deploy of service 3").hits
    with index(pg_hnsw_min_rows=5, pg_exact_search=True) as idx:  # the index exists, but exact is asked for
        assert idx.status().vector["path"] == "pgvector exact"
        assert idx.search("deploy of service 3").hits


def _low_threshold_index(pg: Any, workspace: Path, namespace: str) -> MemoryIndex:
    """An index of ``workspace`` in ``namespace`` whose vectors get an HNSW index from 5 of them."""
    return MemoryIndex(workspace=workspace, watch=False, provider=FakeEmbeddingProvider(dims=16),
                       store={"url": pg.url, "namespace": namespace, "pg_schema": pg.schema, "pg_hnsw_min_rows": 5})


def test_a_namespace_that_grows_past_the_threshold_gets_its_hnsw_index(
        pg: Any, workspace: Path, write: Callable[[dict[str, str]], Path]) -> None:
    """Notes added over incremental syncs (no rebuild, the index settings unchanged): the sync that takes the
    namespace past ``pgHnswMinRows`` builds the HNSW index, as a first index of that size does."""
    ns = pg.namespace()
    write(_notes(2))
    with _low_threshold_index(pg, workspace, ns) as idx:
        assert idx.sync().full_rebuild
        assert idx.status().vector["path"] == "pgvector exact"
    write(_notes(8))
    with _low_threshold_index(pg, workspace, ns) as idx:
        assert not idx.sync().full_rebuild
        assert idx.status().vector["path"] == "pgvector hnsw"
        assert idx.search("deploy of service 7").hits


def test_a_failure_keeping_up_the_indexes_after_a_sync_leaves_the_sync_done(
        pg: Any, workspace: Path, write: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The upkeep at the end of an incremental sync (the HNSW index, the keyword index's pending list) is best
    effort: the sync's writes are committed, so its failure (here a StoreError from the server) is logged and the
    sync reports what it indexed instead of failing."""
    ns = pg.namespace()
    write(_notes(2))
    with _low_threshold_index(pg, workspace, ns) as idx:
        idx.sync()
    write(_notes(8))
    real = PostgresStore._ensure_vector_indexes

    def failing(self: PostgresStore, *, full: bool = True) -> None:
        if not full:
            raise StoreError("building the HNSW index failed on PostgreSQL: could not extend file (no space left)")
        real(self, full=full)

    monkeypatch.setattr(PostgresStore, "_ensure_vector_indexes", failing)
    with _low_threshold_index(pg, workspace, ns) as idx, caplog.at_level(logging.WARNING, logger="openclaw_memory"):
        assert idx.sync().files_indexed == 6
        assert idx.search("deploy of service 7").hits[0].path == "memory/2026-03-08.md"
    assert any("keeping up the indexes" in r.getMessage() and "no space left" in r.getMessage()
               for r in caplog.records)


def test_status_size_is_the_namespaces_own(make_pg_store: MakeStore, pg: Any) -> None:
    big, small = make_pg_store(), make_pg_store()
    _fill(big, 400)
    _fill(small, 4)
    big_size, small_size = big.info().size_bytes, small.info().size_bytes
    assert big_size is not None and small_size is not None and 0 < small_size < big_size / 20
    with psycopg.connect(pg.url, autocommit=True) as conn:  # the whole schema holds far more than the small one
        schema_size = int(conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r'", (pg.schema,)).fetchone()[0])
    assert small_size < schema_size / 20
    empty = make_pg_store()
    assert empty.info().size_bytes == 0


def test_a_rebuild_drops_only_its_own_hnsw_indexes(pg: Any) -> None:
    """Build ids 1 and 11: dropping build 1's indexes must leave build 11's (its name starts the same)."""
    schema = "t_" + uuid.uuid4().hex[:10]  # a fresh schema: its build ids start at 1
    try:
        first = PostgresStore(pg.url, namespace="first", schema=schema, hnsw_min_rows=1)
        with psycopg.connect(pg.url, autocommit=True) as conn:
            assert conn.execute(f'SELECT id FROM "{schema}".namespaces WHERE name = %s',
                                ("first",)).fetchone()[0] == 1
            conn.execute(f"SELECT setval('\"{schema}\".namespaces_id_seq', 10)")
        other = PostgresStore(pg.url, namespace="other", schema=schema, hnsw_min_rows=1)
        _fill(first, 3)
        _fill(other, 3)
        assert first.info().vector_path == other.info().vector_path == "pgvector hnsw"
        with first.rebuild() as fresh:  # build 1 is retired and dropped
            _fill(fresh, 3)
        assert first.info().vector_path == "pgvector hnsw"
        assert other.info().vector_path == "pgvector hnsw"  # build 11's index is still there
        first.close()
        other.close()
    finally:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_hnsw_ef_search_comes_from_the_store_config_and_widens_the_search(
        make_pg_store: MakeStore, pg: Any, workspace: Path) -> None:
    """``store.pgEfSearch`` (default: eight times the rows a search fetches, at least 500) is HNSW's
    candidate list: a wider one finds more of the exact top 10 for queries without close neighbours."""
    assert default_ef_search(24) == default_ef_search(1) == 500 and default_ef_search(60) == 608
    assert default_ef_search(200) == 1000
    assert MemoryConfig().store.pg_ef_search is None
    assert MemoryConfig.load({"store": {"url": pg.url, "pgEfSearch": 64}}).store.pg_ef_search == 64
    with pytest.raises(ValueError, match="pgEfSearch"):
        MemoryConfig.load({"store": {"pgEfSearch": 1001}})
    with pytest.raises(ConfigError, match="pgEfSearch"):
        make_pg_store(ef_search=0)
    ns = pg.namespace()
    with MemoryIndex(workspace=workspace, watch=False, provider=None,
                     store={"url": pg.url, "namespace": ns, "pg_schema": pg.schema, "pgEfSearch": 64}) as idx:
        assert isinstance(idx.store, PostgresStore) and idx.store.ef_search == 64

    rng = np.random.default_rng(5)
    dims, n = 128, 4000
    vecs = rng.normal(size=(n, dims)).astype(np.float32)
    ns = pg.namespace()
    default = make_pg_store(ns, hnsw_min_rows=1000)
    default.replace_file(_file("a.md"), [StoredChunk(id=f"c{i}", path="a.md", source="memory", start_line=i,
                                                      end_line=i, hash=f"h{i}", model="m", text=f"chunk {i}",
                                                      embedding=vecs[i]) for i in range(n)])
    default.write_meta(IndexMeta("m", "p", "k", ("memory",), "s", 400, 80, "t", dims))
    assert default.info().vector_path == "pgvector hnsw"
    narrow, exact = make_pg_store(ns, ef_search=1), make_pg_store(ns, exact=True)
    queries = rng.normal(size=(20, dims)).astype(np.float32)  # random directions: no close neighbour

    def recall(store: PostgresStore) -> float:
        return float(np.mean([len({c.id for c in store.vector_search(q, limit=10)}
                                  & {c.id for c in exact.vector_search(q, limit=10)}) / 10 for q in queries]))

    wide, few = recall(default), recall(narrow)
    assert wide >= 0.9 and few <= wide - 0.1


@pytest.mark.parametrize("other", ["ROW EXCLUSIVE", "SHARE UPDATE EXCLUSIVE"], ids=["a-writer", "a-vacuum"])
def test_building_the_hnsw_index_outlasts_the_servers_statement_timeout(pg: Any, other: str) -> None:
    """A server (or role) with a ``statement_timeout`` (a managed database's guard) shorter than an HNSW build
    (minutes at 100k vectors; here it waits for another writer's transaction) made every first index and
    ``index --force`` fail; the build is not one of the statements that guard is for."""
    url = pg.url + ("&" if "?" in pg.url else "?") + "options=-c%20statement_timeout%3D1000"
    with PostgresStore(url, namespace=pg.namespace(), schema=pg.schema, memory_cache=False, hnsw_min_rows=50) as store:
        rng = np.random.default_rng(5)
        store.replace_file(_file("a.md"), [
            StoredChunk(id=f"c{i}", path="a.md", source="memory", start_line=i, end_line=i, hash=f"h{i}", model="m",
                        text=f"chunk {i}", embedding=rng.normal(size=8).astype(np.float32)) for i in range(60)])
        with psycopg.connect(pg.url) as writer:  # another host's sync or a VACUUM, mid-transaction: the build waits
            writer.execute(f'LOCK TABLE "{pg.schema}".chunks IN {other} MODE')
            threading.Timer(2.0, writer.commit).start()
            started = time.monotonic()
            store.write_meta(IndexMeta("m", "p", "k", ("memory",), "s", 400, 80, "t", 8))
            assert time.monotonic() - started >= 1.5
        assert store.info().vector_path == "pgvector hnsw"
