"""PostgresStore on a real PostgreSQL + pgvector: storage contract, namespaces, schema versions,
secrets, vector search (exact, HNSW, halfvec) and the atomic rebuild."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg
import pytest

from openclaw_memory.errors import IndexLockedError, StoreError
from openclaw_memory.storage.postgres import PostgresStore, redact_url
from openclaw_memory.storage.postgres.schema import SCHEMA_VERSION
from openclaw_memory.storage import IndexMeta, StoredChunk
from openclaw_memory.types import MemoryFile
from tests.pg_server import EXTERNAL_URL

MakeStore = Callable[..., PostgresStore]

#: the password tests put a password into the local server's URL (trust authentication ignores it)
LOCAL_ONLY = pytest.mark.skipif(EXTERNAL_URL is not None, reason="needs the local test server (trust auth)")



def _file(path: str, h: str = "h1") -> MemoryFile:
    return MemoryFile(path=path, abs_path="/nowhere/" + path, mtime_ms=1000.0, size=10, hash=h)


def _chunk(cid: str, path: str, text: str, vec: Any = None, line: int = 1, model: str = "m") -> StoredChunk:
    return StoredChunk(id=cid, path=path, source="memory", start_line=line, end_line=line + 1, hash="h" + cid,
                       model=model, text=text, embedding=None if vec is None else np.asarray(vec, dtype=np.float32))


def test_write_replace_delete_and_read_back(make_pg_store: MakeStore) -> None:
    s = make_pg_store()
    assert s.is_empty()
    s.replace_file(_file("a.md"), [_chunk("1", "a.md", "alpha beta", [1, 0, 0]), _chunk("2", "a.md", "gamma", [0, 1, 0])])
    s.replace_file(_file("b.md"), [_chunk("3", "b.md", "delta", [0, 0, 1])])
    assert s.counts() == {"memory": {"files": 2, "chunks": 3}}
    assert [c.id for c in s.iter_chunks()] == ["1", "2", "3"]
    got = s.get_chunks(["3", "missing", "1"])
    assert [c.id for c in got] == ["3", "1"] and np.array_equal(got[1].embedding, np.array([1, 0, 0], np.float32))
    s.replace_file(_file("a.md", "h2"), [_chunk("4", "a.md", "epsilon")])  # replaces every row of a.md
    assert {c.id for c in s.iter_chunks()} == {"3", "4"}
    assert s.file_records()["a.md"].hash == "h2"
    assert s.keyword_search('"alpha"', limit=5) == []
    s.delete_file("b.md")
    assert set(s.file_records()) == {"a.md"} and [c.id for c in s.iter_chunks()] == ["4"]
    assert s.integrity()["problems"] == []


def test_namespaces_see_nothing_of_each_other(make_pg_store: MakeStore) -> None:
    a, b = make_pg_store(), make_pg_store()
    a.replace_file(_file("same.md"), [_chunk("x", "same.md", "secret plans of team a", [1, 0])])
    b.replace_file(_file("other.md"), [_chunk("x", "other.md", "team b notes", [1, 0])])  # same chunk id
    a.cache_put("p", "m", "k", {"h": np.ones(2, np.float32)})
    a.write_meta(IndexMeta("m", "p", "k", ("memory",), "s", 400, 80, "t", 2))
    assert [c.path for c, _ in b.keyword_search('"secret"', limit=5)] == []
    assert b.count_matches('"secret"', cap=10) == 0
    assert [c.path for c in b.vector_search(np.array([1, 0]), limit=5)] == ["other.md"]
    assert [c.path for c in a.vector_search(np.array([1, 0]), limit=5)] == ["same.md"]
    assert set(b.file_records()) == {"other.md"} and [c.path for c in b.iter_chunks()] == ["other.md"]
    assert b.get_chunks(["x"])[0].path == "other.md"
    assert b.cache_get("p", "m", "k", ["h"]) == {} and b.cache_count() == 0
    assert b.read_meta() is None and a.read_meta() is not None
    b.delete_file("same.md")  # a path of the other namespace: nothing happens there
    assert a.counts() == {"memory": {"files": 1, "chunks": 1}}


def test_a_newer_schema_is_refused_with_a_clear_error(pg: Any) -> None:
    schema = "ocm_future_" + pg.namespace().replace("-", "_")
    PostgresStore(pg.url, namespace="n", schema=schema).close()  # creates version SCHEMA_VERSION
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f'INSERT INTO "{schema}".schema_version(version) VALUES (%s)', (SCHEMA_VERSION + 1,))
    try:
        with pytest.raises(StoreError, match=rf"version {SCHEMA_VERSION + 1}, newer than .*upgrade openclaw-memory"):
            PostgresStore(pg.url, namespace="n", schema=schema)
    finally:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def test_schema_is_created_once_and_reopened(pg: Any, make_pg_store: MakeStore) -> None:
    ns = pg.namespace()
    make_pg_store(ns).replace_file(_file("a.md"), [_chunk("1", "a.md", "kept across opens")])
    assert [c.id for c in make_pg_store(ns).iter_chunks()] == ["1"]
    with psycopg.connect(pg.url) as conn:
        versions = conn.execute(f'SELECT version FROM "{pg.schema}".schema_version').fetchall()
    assert versions == [(SCHEMA_VERSION,)]


def _layout(url: str, schema: str) -> dict[str, tuple[str, bool | None]]:
    """Per column (embedding, tokens): its storage, and whether the first chunk's value lives out of line (TOAST;
    None before PostgreSQL 17, which cannot say)."""
    with psycopg.connect(url) as conn:
        storage = dict(conn.execute("SELECT attname, attstorage FROM pg_attribute WHERE attrelid = %s::regclass AND "
                                    "attname IN ('embedding', 'tokens')", (f'"{schema}".chunks',)).fetchall())
        row = None
        if conn.info.server_version >= 170000:  # pg_column_toast_chunk_id
            row = conn.execute(f'SELECT pg_column_toast_chunk_id(embedding) IS NOT NULL, pg_column_toast_chunk_id('
                               f'tokens) IS NOT NULL FROM "{schema}".chunks ORDER BY seq LIMIT 1').fetchone()
    return {"embedding": (storage["embedding"], row[0] if row else None),
            "tokens": (storage["tokens"], row[1] if row else None)}


def test_a_chunk_keeps_its_tokens_in_its_row_and_its_vector_out_of_line(pg: Any) -> None:
    """A keyword search reads every match's tokens: they stay in the row it visits, and the vector (read for a few
    hits) goes out of line, also in a schema whose columns were laid out the old way (set by the owner on open)."""
    schema = "ocm_layout_" + pg.namespace().replace("-", "_")
    words = " ".join(f"word{i}" for i in range(150))  # ~1 KB of tokens, a 384-dim vector: a ~2.7 KB row before
    vec = np.random.default_rng(0).standard_normal(384)
    with psycopg.connect(pg.url) as conn:
        toast = True if conn.info.server_version >= 170000 else None  # where a value lives: known from 17
    try:
        s = PostgresStore(pg.url, namespace="n", schema=schema)
        s.replace_file(_file("a.md"), [_chunk("1", "a.md", words, vec)])
        s.close()
        assert _layout(pg.url, schema) == {"embedding": ("e", toast), "tokens": ("m", toast and False)}
        with psycopg.connect(pg.url, autocommit=True) as conn:  # the layout of schema version 4
            conn.execute(f'ALTER TABLE "{schema}".chunks ALTER COLUMN embedding SET STORAGE MAIN, '
                         "ALTER COLUMN tokens SET STORAGE EXTENDED")
            conn.execute(f'DELETE FROM "{schema}".chunks')
        with psycopg.connect(pg.url) as busy:  # another host reading the table: the open neither waits nor fails
            busy.execute(f'SELECT count(*) FROM "{schema}".chunks')
            started = time.monotonic()
            PostgresStore(pg.url, namespace="n", schema=schema).close()
            assert time.monotonic() - started < 5
            assert _layout(pg.url, schema) == {"embedding": ("m", None), "tokens": ("x", None)}
        s = PostgresStore(pg.url, namespace="n", schema=schema)  # set at the next open
        s.replace_file(_file("b.md"), [_chunk("2", "b.md", words, vec)])
        assert [c.id for c, _ in s.keyword_search('"word7"', limit=5)] == ["2"]
        s.close()
        assert _layout(pg.url, schema) == {"embedding": ("e", toast), "tokens": ("m", toast and False)}
    finally:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_upgrading_a_version_3_schema_waits_for_no_reader(pg: Any) -> None:
    """Upgrading to version 4 locks nothing exclusively: another host reading the chunks keeps reading, and the open
    neither waits for it nor holds its searches behind an exclusive lock."""
    schema = "ocm_v3_" + pg.namespace().replace("-", "_")
    try:
        s = PostgresStore(pg.url, namespace="n", schema=schema)
        s.replace_file(_file("a.md"), [_chunk("1", "a.md", "heron pelican")])
        s.close()
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute(f'UPDATE "{schema}".schema_version SET version = 3')
        opened: list[PostgresStore] = []
        with psycopg.connect(pg.url) as busy:  # a transaction reading the chunks stays open meanwhile
            busy.execute(f'SELECT count(*) FROM "{schema}".chunks')
            opening = threading.Thread(target=lambda: opened.append(PostgresStore(pg.url, namespace="n",
                                                                                  schema=schema)), daemon=True)
            opening.start()
            opening.join(timeout=10)
            waited = opening.is_alive()
        opening.join(timeout=30)  # the reader is gone: an open that waited ends now
        for store in opened:
            store.close()
        assert not waited
        with psycopg.connect(pg.url) as conn:
            assert conn.execute(f'SELECT version FROM "{schema}".schema_version').fetchall() == [(SCHEMA_VERSION,)]
        s = PostgresStore(pg.url, namespace="n", schema=schema)
        assert [c.id for c, _ in s.keyword_search('"heron"', limit=5)] == ["1"]
        s.close()
    finally:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@LOCAL_ONLY
def test_the_password_of_the_url_never_shows(pg: Any) -> None:
    base = pg.url
    secret = "s3cr3t-Pa55"
    bad = base.replace("postgres:@", f"postgres:{secret}@", 1).replace("/postgres?", "/no_such_db_here?", 1)
    assert secret in bad
    with pytest.raises(StoreError) as err:
        PostgresStore(bad, namespace="n")
    assert secret not in str(err.value) and "no_such_db_here" in str(err.value)
    assert secret not in redact_url(f"postgresql://u:{secret}@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert secret not in redact_url(f"postgresql://h/db?password={secret}&sslmode=require")
    good = base.replace("postgres:@", f"postgres:{secret}@", 1)  # trust auth: the password is not checked
    s = PostgresStore(good, namespace="n-" + pg.namespace(), schema=pg.schema)
    try:
        assert secret not in s.info().path and secret not in repr(s)
    finally:
        s.close()


def test_zero_and_non_finite_vectors(make_pg_store: MakeStore) -> None:
    s = make_pg_store()
    s.replace_file(_file("a.md"), [_chunk("zero", "a.md", "z", [0, 0]), _chunk("nan", "a.md", "n", [np.nan, 1]),
                                   _chunk("neg", "a.md", "m", [-1, 0]), _chunk("pos", "a.md", "p", [1, 0])])
    hits = s.vector_search(np.array([1.0, 0.0]), limit=10)
    assert [(c.id, round(c.vector_score, 6)) for c in hits] == [("pos", 1.0), ("zero", 0.0), ("neg", -1.0)]
    assert s.vector_search(np.array([0.0, 0.0]), limit=5) == []
    assert s.vector_search(np.array([np.inf, 0.0]), limit=5) == []
    nan = s.get_chunks(["nan"])[0].embedding  # kept as written
    assert nan is not None and np.isnan(nan[0])


def test_vector_filters_ties_and_models(make_pg_store: MakeStore) -> None:
    s = make_pg_store()
    s.replace_file(_file("a.md"), [_chunk("t1", "a.md", "a", [1, 1], line=1), _chunk("t2", "a.md", "b", [2, 2], line=3),
                                   _chunk("o", "a.md", "c", [1, 0], line=5, model="other")])
    s.replace_file(MemoryFile(path="s.jsonl", abs_path="/s", mtime_ms=1, size=1, hash="x", source="sessions"),
                   [StoredChunk(id="s1", path="s.jsonl", source="sessions", start_line=1, end_line=1, hash="q",
                                model="m", text="s", embedding=np.array([1, 1], np.float32))])
    hits = s.vector_search(np.array([1.0, 1.0]), limit=10, sources=["memory"], model="m")
    assert [c.id for c in hits] == ["t1", "t2"]  # equal scores: in the order they were indexed
    assert [c.id for c in s.vector_search(np.array([1.0, 1.0]), limit=10, sources=["sessions"])] == ["s1"]
    assert s.vector_search(np.array([1.0, 1.0, 1.0]), limit=10) == []  # another vector size: nothing


@pytest.mark.slow
@pytest.mark.parametrize("dims", [64, 2304])
def test_hnsw_index_finds_what_the_exact_scan_finds(make_pg_store: MakeStore, pg: Any, dims: int) -> None:
    """From ``hnsw_min_rows`` vectors, write_meta builds the HNSW index (halfvec above 2,000 dims)."""
    rng = np.random.default_rng(7)
    vecs = rng.normal(size=(600, dims)).astype(np.float32)
    ns = pg.namespace()
    s = make_pg_store(ns, hnsw_min_rows=500)
    for f in range(6):
        s.replace_file(_file(f"f{f}.md"), [_chunk(f"c{f}-{i}", f"f{f}.md", f"text {i}", vecs[f * 100 + i], line=i)
                                           for i in range(100)])
    assert s.info().vector_path == "pgvector exact"
    s.write_meta(IndexMeta("m", "p", "k", ("memory",), "s", 400, 80, "t", dims))
    assert s.info().vector_path.startswith("pgvector hnsw") and ("halfvec" in s.info().vector_path) == (dims > 2000)
    exact = make_pg_store(ns, exact=True)
    recall = []
    for q in vecs[:20] + rng.normal(scale=0.1, size=(20, dims)).astype(np.float32):
        a = [c.id for c in s.vector_search(q, limit=10)]
        b = [c.id for c in exact.vector_search(q, limit=10)]
        recall.append(len(set(a) & set(b)) / 10)
    assert np.mean(recall) >= 0.9


def test_searches_walk_the_hnsw_index_built_from_a_low_threshold(make_pg_store: MakeStore, pg: Any) -> None:
    """A namespace of a few hundred vectors with ``hnsw_min_rows`` below it searches through the HNSW index
    it built (the planner's cost model alone prefers sorting a scan there and never used the index)."""
    rng = np.random.default_rng(3)
    vecs = rng.normal(size=(600, 64)).astype(np.float32)
    ns = pg.namespace()
    s = make_pg_store(ns, hnsw_min_rows=500)
    for f in range(6):
        s.replace_file(_file(f"f{f}.md"), [_chunk(f"c{f}-{i}", f"f{f}.md", f"text {i}", vecs[f * 100 + i], line=i)
                                           for i in range(100)])
    s.write_meta(IndexMeta("m", "p", "k", ("memory",), "s", 400, 80, "t", 64))
    assert s.info().vector_path == "pgvector hnsw"
    for q in vecs[:5]:
        assert s.vector_search(q, limit=10)
    s.close()  # a closing backend reports its index statistics
    with psycopg.connect(pg.url, autocommit=True) as conn:
        ns_id = conn.execute(f'SELECT id FROM "{pg.schema}".namespaces WHERE name = %s AND state = %s',
                             (ns, "active")).fetchone()[0]
        scans = 0
        for _ in range(50):  # the statistics collector publishes within a moment
            conn.execute("SELECT pg_stat_clear_snapshot()")
            scans = conn.execute("SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE schemaname = %s "
                                 "AND indexrelname = %s", (pg.schema, f"chunks_hnsw_{ns_id}_64")).fetchone()[0]
            if scans >= 5:
                break
            time.sleep(0.1)
    assert scans >= 5


def test_sync_lock_is_one_writer_per_namespace(make_pg_store: MakeStore, pg: Any) -> None:
    ns = pg.namespace()
    one, two, other = make_pg_store(ns), make_pg_store(ns), make_pg_store()
    with one.sync_lock(timeout=1):
        with pytest.raises(IndexLockedError, match="another process has been indexing"):
            with two.sync_lock(timeout=0.3):
                pass
        with other.sync_lock(timeout=0.3):  # another namespace is not blocked
            pass
        assert two.counts() == {}  # reading goes on
    with two.sync_lock(timeout=1):
        pass


@pytest.mark.parametrize("setting", ["idle_in_transaction_session_timeout", "transaction_timeout"])
def test_the_sync_lock_outlasts_the_servers_idle_transaction_timeouts(pg: Any, setting: str) -> None:
    """A server (or role) that ends transactions idle for a second (a managed database's default, a DBA's rule)
    must not end the lock of a sync that spends longer embedding: a second writer would index alongside it."""
    with psycopg.connect(pg.url, autocommit=True) as conn:
        if conn.execute("SELECT count(*) FROM pg_settings WHERE name = %s", (setting,)).fetchone()[0] == 0:
            pytest.skip(f"this server has no {setting}")
    url = pg.url + ("&" if "?" in pg.url else "?") + f"options=-c%20{setting}%3D1000"
    ns = pg.namespace()
    one, two = (PostgresStore(url, namespace=ns, schema=pg.schema, memory_cache=False) for _ in range(2))
    with one, two, one.sync_lock(timeout=1):
        time.sleep(2)  # a long embedding run
        with pytest.raises(IndexLockedError):
            with two.sync_lock(timeout=0.3):
                pass
    with PostgresStore(url, namespace=ns, schema=pg.schema, memory_cache=False) as three, three.sync_lock(timeout=1):
        pass  # free once the first sync ended


def test_a_rebuild_outlasts_the_servers_statement_timeout_dropping_the_old_build(pg: Any) -> None:
    """Dropping the build a rebuild replaced (its rows, 100k chunks on a large namespace) may take longer than a
    server's ``statement_timeout``; here it waits for another session's lock on one of its rows. The rebuild is
    done either way: it must not fail after the new build was made active."""
    url = pg.url + ("&" if "?" in pg.url else "?") + "options=-c%20statement_timeout%3D1000"
    with PostgresStore(url, namespace=pg.namespace(), schema=pg.schema, memory_cache=False) as store:
        store.replace_file(_file("old.md"), [_chunk("o1", "old.md", "old text", [1, 0])])
        with psycopg.connect(pg.url) as other:
            other.execute(f'SELECT 1 FROM "{pg.schema}".chunks WHERE id = %s FOR UPDATE', ("o1",))
            threading.Timer(2.0, other.commit).start()
            with store.rebuild() as fresh:
                fresh.replace_file(_file("new.md"), [_chunk("n1", "new.md", "new text", [0, 1])])
        assert [c.id for c in store.iter_chunks()] == ["n1"]


def test_rebuild_is_atomic_for_readers(make_pg_store: MakeStore, pg: Any) -> None:
    ns = pg.namespace()
    s = make_pg_store(ns)
    s.replace_file(_file("old.md"), [_chunk(f"o{i}", "old.md", f"old text {i}", [1, i], line=i) for i in range(50)])
    reader = make_pg_store(ns)
    seen: set[tuple[str, ...]] = set()
    stop = threading.Event()
    errors: list[BaseException] = []

    def read() -> None:
        while not stop.is_set():
            try:
                seen.add(tuple(sorted({c.path for c in reader.iter_chunks()})))
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

    t = threading.Thread(target=read)
    t.start()
    try:
        with pytest.raises(RuntimeError):
            with s.rebuild() as fresh:
                fresh.replace_file(_file("half.md"), [_chunk("h", "half.md", "never visible")])
                raise RuntimeError("crash in the middle")
        with s.rebuild() as fresh:
            for i in range(5):
                fresh.replace_file(_file(f"new{i}.md"), [_chunk(f"n{i}", f"new{i}.md", "new text", [i, 1])])
                time.sleep(0.02)
            fresh.write_meta(IndexMeta("m", "p", "k", ("memory",), "s", 400, 80, "t", 2))
            assert [c.path for c in s.iter_chunks()][0] == "old.md"  # not yet swapped
    finally:
        stop.set()
        t.join()
    assert not errors
    assert seen <= {("old.md",), tuple(f"new{i}.md" for i in range(5))}
    assert {c.path for c in reader.iter_chunks()} == {f"new{i}.md" for i in range(5)}
    assert reader.read_meta() is not None
    with psycopg.connect(pg.url) as conn:  # the old build and the abandoned one are gone
        states = conn.execute(f'SELECT state FROM "{pg.schema}".namespaces WHERE name = %s', (ns,)).fetchall()
    assert states == [("active",)]


def test_database_errors_are_store_errors(make_pg_store: MakeStore) -> None:
    s = make_pg_store()
    s.close()
    with pytest.raises(StoreError):
        s.counts()


def test_two_workspaces_in_one_namespace_are_refused(make_pg_store: MakeStore, make_pg_index: Callable[..., Any],
                                                     pg: Any, tmp_path: Any) -> None:
    from openclaw_memory.errors import ConfigError

    first = make_pg_index()
    first.sync()
    other = tmp_path / "other-workspace"
    (other / "memory").mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"store\.namespace '.+' .*already holds the index of the workspace"):
        make_pg_index(workspace=other)
    assert first.search("anything") is not None  # the first workspace's index is untouched

    ns = pg.namespace()
    s = make_pg_store(ns, workspace="/srv/a")
    make_pg_store(ns, workspace="/srv/a")  # the same workspace reopens it (another process, another host)
    with s.rebuild() as fresh:
        fresh.replace_file(_file("a.md"), [_chunk("1", "a.md", "rebuilt")])
    with pytest.raises(ConfigError, match=r"store\.namespace .*'/srv/a', not of '/srv/b'"):
        make_pg_store(ns, workspace="/srv/b")  # the rebuilt index still names its workspace


def test_a_namespace_deleted_under_an_open_store_reads_as_empty_and_is_rebuilt(
        make_pg_store: MakeStore, make_pg_index: Callable[..., Any], pg: Any, write: Callable[..., Any]) -> None:
    """Reads run in read-only transactions: a namespace row deleted meanwhile (its rows go with it) is
    recreated outside them, so reads find an empty index instead of failing on an INSERT, and the next
    sync rebuilds it."""
    ns = pg.namespace()
    s = make_pg_store(ns)
    s.replace_file(_file("a.md"), [_chunk("1", "a.md", "alpha beta", [1, 0, 0])])
    s.write_meta(IndexMeta("m", "p", "k", ("memory",), "s", 400, 80, "t", 3))

    def drop() -> None:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute(f'DELETE FROM "{pg.schema}".namespaces WHERE name = %s', (ns,))

    drop()
    assert s.read_meta() is None  # the first read after the deletion: empty, no error
    drop()
    assert s.counts() == {} and s.is_empty() and s.file_records() == {}
    drop()
    assert s.vector_search(np.array([1, 0, 0], np.float32), limit=3) == []
    assert s.keyword_search('"alpha"', limit=3) == []
    s.replace_file(_file("b.md"), [_chunk("2", "b.md", "gamma delta", [0, 1, 0])])  # writable again
    assert [c.id for c in s.iter_chunks()] == ["2"]

    write({"memory/2026-01-05.md": "# 2026-01-05\n\n- The quarterly budget review moved to Thursday.\n"})
    idx = make_pg_index()
    idx.sync()
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f'DELETE FROM "{pg.schema}".namespaces WHERE name = %s', (idx.config.resolved_store_namespace(),))
    assert idx.status().chunks == 0  # nothing indexed any more, and no error
    assert idx.sync().full_rebuild
    assert idx.search("budget review").hits[0].path == "memory/2026-01-05.md"
