"""A search on PostgreSQL reaches the server in a few round trips, however many counts and MATCH expressions the
keyword side asks for: what psycopg sends is counted (a statement outside a pipeline is one round trip, a pipeline
one for all of its statements, a ``transaction()`` block two more for BEGIN and COMMIT), nothing is timed. And a
sync leaves no entries waiting in the keyword index's pending list, which every keyword search would read in full."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import psycopg
import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.retrieval.pipeline import run_search
from openclaw_memory.storage import IndexMeta, StoredChunk
from openclaw_memory.storage.postgres import PostgresStore
from openclaw_memory.types import MemoryFile

MakeStore = Callable[..., PostgresStore]

#: searches of three or four words none of the notes holds all of: the keyword side counts every word and prefix
#: and tries several MATCH expressions, strict to loose
QUERIES = ["heron canal lantern", "orchard ferry compass violet", "granite heron violet", "lantern orchard"]
WORDS = ["heron", "canal", "lantern", "orchard", "ferry", "compass", "violet", "granite", "meadow", "harbour"]
#: round trips of one search at most: the counts (which also read the generation the chunk count is cached by); the
#: phrase and the first expression; a hybrid search adds the vector search (the keyword hits' vectors come with them:
#: before, a round trip of their own)
MAX_KEYWORD_ROUND_TRIPS = 2
MAX_HYBRID_ROUND_TRIPS = 3
#: statements of one search at most, each planned by the server: every count in one; the phrase and the first
#: expression, one each (no transaction and no run-time settings around them); the winners' texts when more matched
#: than the search keeps. A hybrid search adds the vector search (a transaction of its build check and its rows); the
#: keyword hits' vectors come with them (before, a statement of their own). (Before: a statement per count and BEGIN,
#: settings and COMMIT around the counts and around the ranked expressions, 12-16 per keyword search.)
MAX_KEYWORD_STATEMENTS = 4
MAX_HYBRID_STATEMENTS = 7
#: with a common word (COMMON_MATCHES): the counts; the phrase and the first expression worth running, in the same
#: pipeline. An AND of the common word with rarer ones that cannot fill the results (bounded by the rarer words'
#: chunks, known from the counts) is not run; before, it ran, and the next expression in a round trip of its own.
MAX_COMMON_WORD_ROUND_TRIPS = 2
MAX_COMMON_WORD_STATEMENTS = 4


class _Wire:
    """What this process sends to PostgreSQL through psycopg, counted."""

    def __init__(self) -> None:
        self.statements = 0
        self.round_trips = 0


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> _Wire:
    counted = _Wire()
    execute, pipeline = psycopg.Connection.execute, psycopg.Connection.pipeline
    transaction = psycopg.Connection.transaction

    def counting_execute(conn: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        counted.statements += 1
        if conn.info.pipeline_status == psycopg.pq.PipelineStatus.OFF:
            counted.round_trips += 1
        return execute(conn, query, params, **kwargs)

    @contextlib.contextmanager
    def counting_pipeline(conn: Any) -> Iterator[Any]:
        with pipeline(conn) as p:
            yield p
        counted.round_trips += 1

    @contextlib.contextmanager
    def counting_transaction(conn: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        counted.statements += 2
        counted.round_trips += 2
        with transaction(conn, *args, **kwargs) as tx:
            yield tx

    monkeypatch.setattr(psycopg.Connection, "execute", counting_execute)
    monkeypatch.setattr(psycopg.Connection, "pipeline", counting_pipeline)
    monkeypatch.setattr(psycopg.Connection, "transaction", counting_transaction)
    return counted


def _fill(store: PostgresStore, provider: FakeEmbeddingProvider) -> None:
    """60 notes of two or three of WORDS each (every word in many notes, no note with a whole query)."""
    for f in range(6):
        path = f"memory/f{f}.md"
        chunks = []
        for i in range(f * 10, f * 10 + 10):
            text = f"Note {i}: the {WORDS[i % 10]} by the {WORDS[(i * 3 + 1) % 10]}" + (
                f" near the {WORDS[(i * 7 + 2) % 10]}." if i % 2 else ".")
            chunks.append(StoredChunk(id=f"c{i}", path=path, source="memory", start_line=i, end_line=i, hash=f"h{i}",
                                      model=provider.model, text=text, embedding=provider.embed_query(text)))
        store.replace_file(MemoryFile(path=path, abs_path="/" + path, mtime_ms=1.0, size=1, hash=path), chunks)
    store.write_meta(IndexMeta(provider.id, provider.model, "k", ("memory",), "s", 400, 80, "test", 64))


def test_a_search_takes_a_few_round_trips(make_pg_store: MakeStore, wire: _Wire) -> None:
    provider = FakeEmbeddingProvider(dims=64)
    store, cfg = make_pg_store(), MemoryConfig()
    _fill(store, provider)
    for q in QUERIES:  # warm: the pool's connection, the build the store reads, whether it has an HNSW index
        run_search(store, cfg, q, provider=None)
        run_search(store, cfg, q, provider=provider, query_vector=provider.embed_query(q))
    for q in QUERIES:
        wire.round_trips = wire.statements = 0
        found = run_search(store, cfg, q, provider=None)
        assert found.hits, q  # the search found something: its expressions ran
        assert wire.round_trips <= MAX_KEYWORD_ROUND_TRIPS, (q, wire.round_trips, wire.statements)
        assert wire.statements <= MAX_KEYWORD_STATEMENTS, (q, wire.round_trips, wire.statements)
        wire.round_trips = wire.statements = 0
        found = run_search(store, cfg, q, provider=provider, query_vector=provider.embed_query(q))
        assert found.mode == "hybrid" and found.hits, q
        assert wire.round_trips <= MAX_HYBRID_ROUND_TRIPS, (q, wire.round_trips, wire.statements)
        assert wire.statements <= MAX_HYBRID_STATEMENTS, (q, wire.round_trips, wire.statements)


def test_keyword_only_searches_read_no_vectors_and_hybrid_ones_get_them_with_their_hits(
        make_pg_store: MakeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vector is stored out of line (one TOAST lookup each): a run of keyword-only searches reads none with its
    hits; a hybrid search (its vector side runs first here) reads its keyword hits' vectors with them, in no more
    round trips than before."""
    provider = FakeEmbeddingProvider(dims=64)
    store, cfg = make_pg_store(), MemoryConfig()
    _fill(store, provider)
    sent: list[str] = []
    execute = psycopg.Connection.execute

    def recording_execute(conn: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        sent.append(str(query))
        return execute(conn, query, params, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", recording_execute)
    for q in QUERIES * 2:
        sent.clear()
        assert run_search(store, cfg, q, provider=None).hits, q
        assert sent and not any("vector_send" in sql or "raw_embedding" in sql for sql in sent), (q, sent)
    for q in QUERIES:
        sent.clear()
        found = run_search(store, cfg, q, provider=provider, query_vector=provider.embed_query(q))
        assert found.mode == "hybrid" and found.hits, q
        assert not any("SELECT id, model, embedding" in sql for sql in sent), q  # no round trip of their own
        assert all(h.score > 0 for h in found.hits)


def test_a_search_with_a_common_word_asks_its_expressions_at_once(make_pg_store: MakeStore, wire: _Wire) -> None:
    """A word in more chunks than COMMON_MATCHES and a word in three: the AND of both cannot fill the six results
    (the rare word's chunks bound it), so the loose expression is asked in the same round trip as the phrase."""
    store = make_pg_store()
    for f in range(11):  # "harbour" in every chunk, "heron" in three
        path = f"memory/h{f}.md"
        chunks = [StoredChunk(id=f"h{f}-{i}", path=path, source="memory", start_line=i, end_line=i, hash=f"h{f}-{i}",
                              model="m", text=f"Note {i} of the harbour" + (" with a heron." if i == 7 and f < 3
                                                                          else "."), embedding=None)
                  for i in range(100)]
        store.replace_file(MemoryFile(path=path, abs_path="/" + path, mtime_ms=1.0, size=1, hash=path), chunks)
    store.write_meta(IndexMeta("none", "m", "k", ("memory",), "s", 400, 80, "test", 0))
    cfg = MemoryConfig()
    run_search(store, cfg, "harbour heron", provider=None)
    wire.round_trips = wire.statements = 0
    found = run_search(store, cfg, "harbour heron", provider=None)
    assert sorted(h.path for h in found.hits[:3]) == ["memory/h0.md", "memory/h1.md", "memory/h2.md"]
    assert wire.round_trips <= MAX_COMMON_WORD_ROUND_TRIPS, (wire.round_trips, wire.statements)
    assert wire.statements <= MAX_COMMON_WORD_STATEMENTS, (wire.round_trips, wire.statements)


def test_a_sync_leaves_nothing_pending_in_the_keyword_index(make_pg_store: MakeStore, pg: Any) -> None:
    store = make_pg_store()
    _fill(store, FakeEmbeddingProvider(dims=64))
    with psycopg.connect(pg.url, autocommit=True) as conn:  # the pending pages it finds to merge
        assert conn.execute("SELECT gin_clean_pending_list(%s::regclass)",
                            (f'"{pg.schema}".chunks_tsv',)).fetchone()[0] == 0


def test_a_search_s_statements_are_planned_once_per_connection(make_pg_store: MakeStore,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The statement counting a search's words and listing their chunks, and each ranked expression's, has the same
    text for every query of its shape (words and tsqueries are parameters): they are prepared, and after the first
    few searches the server runs them on their generic plans instead of planning them again for every search
    (planning took about as long as running them). Before, they were sent unprepared and planned on every search."""
    provider = FakeEmbeddingProvider(dims=64)
    store, cfg = make_pg_store(), MemoryConfig()
    _fill(store, provider)
    kinds = {"counts": "SELECT n.id, n.version, k.i,", "ranked": "WITH h AS MATERIALIZED"}
    used: dict[str, list[Any]] = {kind: [] for kind in kinds}  # the pool's connections each kind ran on
    execute = psycopg.Connection.execute

    def noting_execute(conn: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        for kind, start in kinds.items():
            if isinstance(query, str) and query.startswith(start) and conn not in used[kind]:
                used[kind].append(conn)
        return execute(conn, query, params, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", noting_execute)
    for _ in range(4):
        for q in QUERIES:
            assert run_search(store, cfg, q, provider=None).hits, q
    monkeypatch.setattr(psycopg.Connection, "execute", execute)
    for kind, start in kinds.items():
        assert used[kind], kind
        plans = [row for conn in used[kind] for row in conn.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE %s",
            (start + "%",)).fetchall()]
        assert plans, f"the {kind} statements are not prepared"
        # the first five runs of each are planned for their parameters, then the generic plan serves
        assert sum(generic for generic, _ in plans) > sum(custom for _, custom in plans), (kind, plans)


def test_bm25_counts_a_word_only_in_the_chunks_its_count_listed(make_pg_store: MakeStore,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A search ranks the chunks of its words with the lists of chunks its counts read (in the same build version):
    a word is counted in the chunks that hold it only, and the scores are those of counting it in every chunk."""
    from openclaw_memory.storage.postgres import fts

    provider = FakeEmbeddingProvider(dims=64)
    store, cfg = make_pg_store(), MemoryConfig()
    _fill(store, provider)
    calls: list[tuple[Any, ...]] = []
    bm25 = fts.bm25_scores

    def noting_bm25(*args: Any, **kwargs: Any) -> list[float]:
        scores = bm25(*args, **kwargs)
        calls.append((args, kwargs, scores))
        return scores

    monkeypatch.setattr(fts, "bm25_scores", noting_bm25)
    for q in QUERIES:
        assert run_search(store, cfg, q, provider=None).hits, q
    listed = [(args, kwargs, scores) for args, kwargs, scores in calls if kwargs.get("within") is not None]
    assert listed, "no ranking used the counts' chunk lists"
    for args, kwargs, scores in listed:
        docs, within, keys = args[0], kwargs["within"], kwargs["keys"]
        assert any(w is not None for w in within)
        skipped = sum(1 for w in within if w is not None for k in keys if k not in w)
        assert skipped, "every chunk holds every word: nothing was left uncounted"
        assert bm25(*args, **{k: v for k, v in kwargs.items() if k not in ("within", "keys")}) == scores


def test_keyword_hits_are_scored_with_their_vectors_as_stored_now(make_pg_store: MakeStore) -> None:
    """The vectors a keyword search reads with its hits score them on the vector side without a round trip, but
    never after a write: one through this store, or one through another (another process), which the next search's
    counts see."""
    provider = FakeEmbeddingProvider(dims=64)
    store, cfg = make_pg_store(), MemoryConfig()
    other = make_pg_store(store.namespace)
    _fill(store, provider)
    query = "heron canal lantern"
    qv = provider.embed_query(query)
    hit = run_search(store, cfg, query, provider=None).hits[0]
    old = store.get_chunks([hit.chunk_id])[0]
    assert store.vector_scores(qv, [hit.chunk_id]) == pytest.approx({hit.chunk_id: float(
        qv @ old.embedding / np.linalg.norm(qv) / np.linalg.norm(old.embedding))})
    path = old.path
    for writer, vector in ((store, -qv), (other, qv)):  # the same chunk with another vector
        chunks = [c if c.id != old.id else StoredChunk(id=c.id, path=c.path, source=c.source, start_line=c.start_line,
                                                       end_line=c.end_line, hash=c.hash, model=c.model, text=c.text,
                                                       embedding=vector) for c in store.iter_chunks() if c.path == path]
        writer.replace_file(MemoryFile(path=path, abs_path="/" + path, mtime_ms=2.0, size=1, hash=path + "2"), chunks)
        if writer is other:
            run_search(store, cfg, query, provider=None)  # its counts see the new version
        expected = 1.0 if writer is other else -1.0
        assert store.vector_scores(qv, [old.id])[old.id] == pytest.approx(expected, abs=1e-5), writer
