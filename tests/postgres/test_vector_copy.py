"""The PostgreSQL store's in-memory copy of a namespace's vectors (``store.vector.memoryCache``): searches it
answers are the server's answers, and a write from any host is seen by the next search."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg
import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.retrieval.pipeline import run_search
from openclaw_memory.storage import StoredChunk
from openclaw_memory.storage.postgres import PostgresStore, vector_copy
from openclaw_memory.types import MemoryFile

MakeStore = Callable[..., PostgresStore]
DIMS = 16
WORDS = ["heron", "canal", "lantern", "orchard", "ferry", "compass", "violet", "granite"]


def _file(path: str) -> MemoryFile:
    return MemoryFile(path=path, abs_path="/nowhere/" + path, mtime_ms=1000.0, size=10, hash="h-" + path)


def _fill(store: PostgresStore, rng: np.random.Generator, files: int = 12, per_file: int = 25) -> None:
    """Notes with random vectors: a few zero vectors, two sources, two models, words from :data:`WORDS`."""
    for f in range(files):
        path = f"memory/n{f}.md" if f % 4 else f"sessions/s{f}.jsonl"
        chunks = []
        for i in range(per_file):
            vec = np.zeros(DIMS, np.float32) if i == 7 else rng.standard_normal(DIMS).astype(np.float32)
            text = " ".join(rng.choice(WORDS, size=6))
            chunks.append(StoredChunk(id=f"{path}#{i}", path=path, source="sessions" if f % 4 == 0 else "memory",
                                      start_line=i * 2 + 1, end_line=i * 2 + 2, hash=f"h{f}-{i}",
                                      model="other" if f == 5 else "m", text=text, embedding=vec))
        store.replace_file(_file(path), chunks)


def _fill_file(store: PostgresStore, rng: np.random.Generator, path: str, count: int, model: str) -> None:
    store.replace_file(_file(path), [StoredChunk(
        id=f"{path}#{i}-{model}", path=path, source="memory", start_line=i + 1, end_line=i + 1, hash=f"{path}{i}",
        model=model, text="rewritten " + " ".join(rng.choice(WORDS, size=4)),
        embedding=rng.standard_normal(DIMS).astype(np.float32)) for i in range(count)])


def _answers(hits: list[Any]) -> list[tuple[Any, ...]]:
    return [(c.id, c.vector_score, c.vector_rank, c.text, c.start_line, tuple(c.embedding)) for c in hits]


def _warm(store: PostgresStore, q: np.ndarray) -> None:
    store.vector_search(q, limit=1)  # starts the load
    assert store.wait_vector_cache(timeout=30)
    assert store.info().vector_cache.startswith("warm (")


class _VectorStatements:
    """Counts the statements this process sends that search vectors on the server (an ORDER BY distance)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        execute = psycopg.Connection.execute

        def counted(conn: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            if "<=>" in str(query):
                self.count += 1
            return execute(conn, query, *args, **kwargs)

        monkeypatch.setattr(psycopg.Connection, "execute", counted)


def _pair(make_pg_store: MakeStore, rng: np.random.Generator, files: int = 12) -> tuple[PostgresStore, PostgresStore]:
    """A namespace filled by a writer without a copy (searching with the server's exact scan) and a reader of it
    with a copy."""
    writer = make_pg_store(memory_cache=False, hnsw_min_rows=10**9)
    _fill(writer, rng, files=files)
    return writer, make_pg_store(writer.namespace, memory_cache=True)


def _during_batch(monkeypatch: pytest.MonkeyPatch, size: int, at: int, action: Callable[[], None]) -> list[int]:
    """A copy read ``size`` vectors a batch, ``action`` run as its ``at``-th batch is read; the batches read."""
    monkeypatch.setattr(vector_copy, "_BATCH", size)
    batches, read_batch = [0], vector_copy._batches_of

    def counted(rows: Any, dims: int) -> Any:
        batches[0] += 1
        if batches[0] == at:
            action()
        return read_batch(rows, dims)

    monkeypatch.setattr(vector_copy, "_batches_of", counted)
    return batches


def _served_from_copy(reader: PostgresStore, writer: PostgresStore, rng: np.random.Generator,
                      monkeypatch: pytest.MonkeyPatch, *, queries: int = 5, limit: int = 30) -> None:
    """``reader`` answers as ``writer`` (the server's exact scan) does, from its copy: no search of its own on the
    server."""
    on_server = _VectorStatements(monkeypatch)
    for query in rng.standard_normal((queries, DIMS)).astype(np.float32):
        assert _answers(reader.vector_search(query, limit=limit)) == _answers(writer.vector_search(query, limit=limit))
    assert on_server.count == queries  # the writer's exact scans only


def test_searches_from_the_copy_are_the_servers_answers(make_pg_store: MakeStore,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    served = make_pg_store(memory_cache=False, hnsw_min_rows=10**9)  # the server's exact scan
    _fill(served, rng)
    copied = make_pg_store(served.namespace, memory_cache=True)
    queries = rng.standard_normal((12, DIMS)).astype(np.float32)
    _warm(copied, queries[0])
    on_server = _VectorStatements(monkeypatch)
    for q in queries:
        for filters in ({}, {"sources": ["memory"]}, {"sources": ["sessions"]}, {"model": "m"}, {"model": "other"},
                        {"model": "nobody"}):
            for limit in (1, 6, 40):
                assert _answers(copied.vector_search(q, limit=limit, **filters)) == \
                    _answers(served.vector_search(q, limit=limit, **filters)), (filters, limit)
    assert on_server.count == 12 * 6 * 3  # the exact scans of ``served`` only: ``copied`` searched in memory
    ids = [f"memory/n{f}.md#{i}" for f in (1, 5) for i in range(0, 25, 3)] + ["missing"]
    copied.keyword_search('"heron"', limit=3)  # the version vector_scores scores at
    assert copied.vector_scores(queries[1], ids) == served.vector_scores(queries[1], ids)
    assert copied.vector_scores(queries[1], ids, model="m") == served.vector_scores(queries[1], ids, model="m")


def test_a_write_from_another_host_is_seen_by_the_next_search(make_pg_store: MakeStore,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(8)
    writer = make_pg_store(memory_cache=False)
    _fill(writer, rng, files=4)
    reader = make_pg_store(writer.namespace, memory_cache=True)
    q = rng.standard_normal(DIMS).astype(np.float32)
    _warm(reader, q)
    writer.replace_file(_file("memory/new.md"), [StoredChunk(
        id="memory/new.md#0", path="memory/new.md", source="memory", start_line=1, end_line=2, hash="hn", model="m",
        text="the nearest note", embedding=q * 3)])
    hits = reader.vector_search(q, limit=5)
    assert hits[0].id == "memory/new.md#0" and hits[0].vector_score == pytest.approx(1.0)
    writer.delete_file("memory/n1.md")
    hits = reader.vector_search(q, limit=100)
    assert hits[0].id == "memory/new.md#0" and not any(h.path == "memory/n1.md" for h in hits)
    for _ in range(2):  # the copy is read again after the writes (once a load still under way has ended)
        assert reader.wait_vector_cache(timeout=30)
        reader.vector_search(q, limit=1)
    assert reader.wait_vector_cache(timeout=30)
    on_server = _VectorStatements(monkeypatch)
    assert _answers(reader.vector_search(q, limit=100)) == _answers(hits)
    assert on_server.count == 0
    # the same chunk id with another vector, written by the other host: scored with the vector stored now
    writer.replace_file(_file("memory/new.md"), [StoredChunk(
        id="memory/new.md#0", path="memory/new.md", source="memory", start_line=1, end_line=2, hash="hn", model="m",
        text="the nearest note", embedding=-q)])
    reader.keyword_search('"nearest"', limit=3)
    assert reader.vector_scores(q, ["memory/new.md#0"]) == {"memory/new.md#0": pytest.approx(-1.0)}


def test_a_copy_is_brought_up_to_date_with_the_rows_written_since(make_pg_store: MakeStore,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(12)
    writer, reader = _pair(make_pg_store, rng)
    q = rng.standard_normal(DIMS).astype(np.float32)
    _warm(reader, q)
    vectors_read: list[tuple[str, Any]] = []
    execute = psycopg.Connection.execute

    def reading(conn: Any, query: Any, params: Any = None, *args: Any, **kwargs: Any) -> Any:
        if vector_copy._COLUMNS in str(query):  # a read of the copy's rows
            vectors_read.append((str(query), params))
        return execute(conn, query, params, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", reading)
    # another host rewrites a file, deletes one and adds one (a new model)
    _fill_file(writer, rng, "memory/n1.md", 25, "m")
    writer.delete_file("memory/n2.md")
    _fill_file(writer, rng, "memory/added.md", 5, "third")
    reader.vector_search(q, limit=3)
    assert reader.wait_vector_cache(timeout=30)
    # only the vectors of the 25 rewritten chunks and the 5 new ones, by seq: no batch of the whole build
    assert vectors_read and all("seq = ANY" in sql for sql, _ in vectors_read)
    assert sum(len(params[1]) for _, params in vectors_read) == 30
    monkeypatch.undo()
    on_server = _VectorStatements(monkeypatch)
    for query in rng.standard_normal((6, DIMS)).astype(np.float32):
        for filters in ({}, {"model": "third"}, {"model": "m"}, {"sources": ["sessions"]}):
            assert _answers(reader.vector_search(query, limit=20, **filters)) == \
                _answers(writer.vector_search(query, limit=20, **filters)), filters
    assert on_server.count == 6 * 4  # the writer's exact scans only


def test_writes_between_the_batches_of_a_first_load_are_in_the_copy(make_pg_store: MakeStore,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(13)
    writer, reader = _pair(make_pg_store, rng, files=6)

    def write() -> None:  # another host writes while the copy is read: a rewrite, a deletion, an addition
        _fill_file(writer, rng, "memory/n1.md", 25, "m")
        writer.delete_file("memory/n3.md")
        _fill_file(writer, rng, "memory/added.md", 5, "m")

    batches = _during_batch(monkeypatch, 40, 2, write)  # 150 vectors: four batches
    _warm(reader, rng.standard_normal(DIMS).astype(np.float32))
    assert batches[0] >= 4
    monkeypatch.undo()
    _served_from_copy(reader, writer, rng, monkeypatch, queries=8)


def test_a_hybrid_search_ranks_the_same_with_the_copy(make_pg_store: MakeStore) -> None:
    rng = np.random.default_rng(9)
    served = make_pg_store(memory_cache=False)
    _fill(served, rng)
    copied = make_pg_store(served.namespace, memory_cache=True)
    provider = FakeEmbeddingProvider(dims=DIMS, model="m")
    cfg = MemoryConfig(citations="off")
    _warm(copied, rng.standard_normal(DIMS).astype(np.float32))
    for words in (["heron", "canal"], ["violet"], ["orchard", "ferry", "granite"]):
        q = rng.standard_normal(DIMS).astype(np.float32)
        text = " ".join(words)
        got = [run_search(s, cfg, text, provider=provider, query_vector=q, max_results=8, min_score=0).hits
               for s in (copied, served)]
        assert [(h.path, h.start_line, h.end_line, h.score) for h in got[0]] == \
            [(h.path, h.start_line, h.end_line, h.score) for h in got[1]]
        assert got[0]


def test_close_stops_a_load_and_frees_the_copy(make_pg_store: MakeStore) -> None:
    rng = np.random.default_rng(10)
    store = make_pg_store(memory_cache=True)
    _fill(store, rng, files=2)
    _warm(store, rng.standard_normal(DIMS).astype(np.float32))
    store.close()
    assert store._vector_copy.latest() is None and store.wait_vector_cache(timeout=0)


def test_without_the_memory_cache_nothing_is_loaded(make_pg_store: MakeStore) -> None:
    rng = np.random.default_rng(11)
    store = make_pg_store(memory_cache=False)
    _fill(store, rng, files=2)
    store.vector_search(rng.standard_normal(DIMS).astype(np.float32), limit=3)
    assert store.wait_vector_cache(timeout=5) and store.info().vector_cache == "off"


def _sized(path: str, count: int, dims: int, rng: np.random.Generator, text: str = "t") -> list[StoredChunk]:
    return [StoredChunk(id=f"{path}#{i}-{dims}", path=path, source="memory", start_line=i + 1, end_line=i + 1,
                        hash=f"{path}{i}", model="m", text=text, embedding=rng.standard_normal(dims).astype(np.float32))
            for i in range(count)]


def test_a_copy_of_one_vector_size_answers_no_search_of_another(make_pg_store: MakeStore) -> None:
    rng = np.random.default_rng(14)
    writer = make_pg_store(memory_cache=False, hnsw_min_rows=10**9)
    writer.replace_file(_file("memory/a.md"), _sized("memory/a.md", 20, 8, rng))
    reader = make_pg_store(writer.namespace, memory_cache=True)
    _warm(reader, rng.standard_normal(16).astype(np.float32))  # a copy of 16 dimensions: empty
    q = rng.standard_normal(8).astype(np.float32)
    for _ in range(2):
        assert _answers(reader.vector_search(q, limit=5)) == _answers(writer.vector_search(q, limit=5))
        assert reader.wait_vector_cache(timeout=30)
    writer.replace_file(_file("memory/b.md"), _sized("memory/b.md", 20, 16, rng))
    for dims in (8, 16, 8, 16):
        q = rng.standard_normal(dims).astype(np.float32)
        for _ in range(2):
            assert _answers(reader.vector_search(q, limit=5)) == _answers(writer.vector_search(q, limit=5))
            assert reader.wait_vector_cache(timeout=30)


def test_keyword_hits_read_newest_first_are_scored_with_the_vectors_stored_now(make_pg_store: MakeStore) -> None:
    rng = np.random.default_rng(15)
    writer = make_pg_store(memory_cache=False)
    chunks = _sized("memory/a.md", 20, 8, rng, text="heron canal")
    writer.replace_file(_file("memory/a.md"), chunks)
    reader = make_pg_store(writer.namespace, memory_cache=True)
    q = rng.standard_normal(8).astype(np.float32)
    _warm(reader, q)
    reader.vector_search(q, limit=1)  # answered by the copy: the version it was read at is the last one seen
    first = chunks[0]  # rewritten by another host under the same id, with another vector
    writer.replace_file(_file("memory/a.md"), [StoredChunk(**{**first.__dict__, "embedding": -q}), *chunks[1:]])
    hits = reader.keyword_search('"heron"', limit=50, order="recent")
    assert first.id in [c.id for c, _ in hits]
    assert reader.vector_scores(q, [first.id]) == writer.vector_scores(q, [first.id]) == \
        {first.id: pytest.approx(-1.0)}


def test_a_row_rewritten_in_place_is_read_again(make_pg_store: MakeStore, pg: Any) -> None:
    """A copy is brought up to date by each row's version (its ``xmin``), not only by its seq."""
    rng = np.random.default_rng(16)
    writer, reader = _pair(make_pg_store, rng, files=4)
    q = rng.standard_normal(DIMS).astype(np.float32)
    _warm(reader, q)
    with psycopg.connect(pg.url, autocommit=True) as conn, conn.transaction():  # same seq, a new vector
        conn.execute(f'UPDATE "{pg.schema}".chunks SET embedding = %s::vector WHERE id = %s AND ns_id = '
                     f'(SELECT id FROM "{pg.schema}".namespaces WHERE name = %s)',
                     (str((q * 2).tolist()), "memory/n1.md#3", writer.namespace))
        conn.execute(f'UPDATE "{pg.schema}".namespaces SET version = version + 1 WHERE name = %s',
                     (writer.namespace,))
    for _ in range(2):
        reader.vector_search(q, limit=1)
        assert reader.wait_vector_cache(timeout=30)
    on_server = [0]
    with pytest.MonkeyPatch.context() as patch:
        counter = _VectorStatements(patch)
        hits = reader.vector_search(q, limit=3)
        on_server[0] = counter.count
    assert on_server[0] == 0 and hits[0].id == "memory/n1.md#3" and hits[0].vector_score == pytest.approx(1.0)


def test_a_rebuild_swapped_in_while_the_copy_is_read_is_read_instead(make_pg_store: MakeStore,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(17)
    writer, reader = _pair(make_pg_store, rng, files=4)

    def rebuild() -> None:  # another host rebuilds the namespace while the copy is read
        with writer.rebuild() as fresh:
            _fill(fresh, rng, files=3)

    _during_batch(monkeypatch, 30, 2, rebuild)
    _warm(reader, rng.standard_normal(DIMS).astype(np.float32))
    monkeypatch.undo()
    _served_from_copy(reader, writer, rng, monkeypatch)


def test_many_rows_written_since_are_read_in_batches_outside_the_snapshot(make_pg_store: MakeStore,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync that rewrote many chunks: a copy is brought up to date a batch per lent connection, and the snapshot
    that makes it exact reads what was written meanwhile only (no search waits for more than a batch)."""
    rng = np.random.default_rng(18)
    writer, reader = _pair(make_pg_store, rng, files=6)
    q = rng.standard_normal(DIMS).astype(np.float32)
    _warm(reader, q)
    for f in (1, 2, 3):
        _fill_file(writer, rng, f"memory/n{f}.md", 25, "m")
    monkeypatch.setattr(vector_copy, "_BATCH", 10)
    in_snapshot: list[int] = []
    lent: list[int] = []
    execute = psycopg.Connection.execute

    def reading(conn: Any, query: Any, params: Any = None, *args: Any, **kwargs: Any) -> Any:
        if vector_copy._COLUMNS in str(query):  # a read of the copy's rows
            inside = conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
            (in_snapshot if inside else lent).append(len(params[1]))
        return execute(conn, query, params, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", reading)
    reader.vector_search(q, limit=3)
    assert reader.wait_vector_cache(timeout=30)
    monkeypatch.undo()
    assert sum(lent) == 75 and max(lent) <= 10 and sum(in_snapshot) == 0
    _served_from_copy(reader, writer, rng, monkeypatch)
