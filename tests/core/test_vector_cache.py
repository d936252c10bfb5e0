"""The in-memory vector cache beside sqlite-vec: vec0 while cold, numpy once warm, loaded in the background."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openclaw_memory.storage.sqlite import vector_cache as vector_cache_module
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage import StoredChunk
from openclaw_memory.types import Candidate, MemoryFile
from tests.helpers.vector_paths import Served

DIMS = 32
THREAD_NAME = "openclaw-memory-vector-cache"


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal(DIMS).astype(np.float32)
    return v / np.linalg.norm(v)


def _put(store: SQLiteStore, rel: str, vectors: list[np.ndarray], *, source: str = "memory") -> None:
    chunks = [
        StoredChunk(id=f"{rel}:{i}", path=rel, source=source, start_line=i + 1, end_line=i + 1,
                    hash=hashlib.sha256(f"{rel}{i}".encode()).hexdigest(), model="fake", text=f"{rel} chunk {i}",
                    embedding=v)
        for i, v in enumerate(vectors)
    ]
    store.replace_file(MemoryFile(path=rel, abs_path=rel, mtime_ms=0.0, size=1, hash=f"{rel}:{len(vectors)}",
                                  source=source), chunks)  # type: ignore[arg-type]


def _fill(store: SQLiteStore, seed: int = 7, files: int = 8, per_file: int = 25) -> SQLiteStore:
    rng = np.random.default_rng(seed)
    for f in range(files):
        _put(store, f"memory/f{f}.md", [_unit(rng) for _ in range(per_file)], source="memory" if f % 2 else "sessions")
    return store


@pytest.fixture()
def make_store(tmp_path: Path) -> Iterator[Callable[..., SQLiteStore]]:
    """``make_store(name, **kwargs)``: a filled store (200 vectors), skipped unless sqlite-vec loads."""
    made: list[SQLiteStore] = []

    def _make(name: str = "v.sqlite", *, fill: bool = True, require_vec: bool = True, **kwargs: Any) -> SQLiteStore:
        st = SQLiteStore(tmp_path / name, **kwargs)
        made.append(st)
        if require_vec and st.info().vector_path != "sqlite-vec":
            pytest.skip(f"sqlite-vec is not loadable here: {st.info().vector_error}")
        return _fill(st) if fill else st

    yield _make
    for st in made:
        st.close()


def _hits(cands: list[Candidate]) -> tuple[list[str], list[float]]:
    return [c.id for c in cands], [float(c.vector_score or 0.0) for c in cands]


def _state(store: SQLiteStore) -> str:
    return store.info().vector_cache or ""


def _warm(store: SQLiteStore) -> None:
    assert store.wait_vector_cache(timeout=10), "the vector cache did not load within 10 s"
    assert _state(store).startswith("warm"), _state(store)


def _cache_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD_NAME and t.is_alive()]


def _block_loading(store: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Make the background load wait (until ``release`` or close) once it has its own connection."""
    entered, release = threading.Event(), threading.Event()
    real = store._vector_cache._read_matrix

    def blocked(db: Any, inode: int | None, dims: int | None, stop: threading.Event | None = None) -> Any:
        if threading.current_thread().name == THREAD_NAME:
            entered.set()
            deadline = time.monotonic() + 10
            while not release.is_set() and not (stop is not None and stop.is_set()) and time.monotonic() < deadline:
                time.sleep(0.005)
        return real(db, inode, dims, stop)

    monkeypatch.setattr(store._vector_cache, "_read_matrix", blocked)
    return entered, release


# ---- cold -> warm -------------------------------------------------------------------------------


def test_cold_search_uses_vec0_then_numpy_once_warm(
    make_store: Callable[..., SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_cache_module, "_WARM_BATCH", 7)  # many batches
    st = make_store()
    paths = Served(st)
    assert st.info().vector_cache == "cold"
    q = _unit(np.random.default_rng(1))
    first = st.vector_search(q, limit=20)
    assert (paths.vec0, paths.numpy) == (1, 0)
    assert len(first) == 20
    _warm(st)
    assert st.info().vector_cache == "warm (200 vectors, 0.0 MB)"
    second = st.vector_search(q, limit=20)
    assert (paths.vec0, paths.numpy) == (1, 1)
    assert _hits(second)[0] == _hits(first)[0]
    assert np.allclose(_hits(second)[1], _hits(first)[1], atol=1e-5)
    # and only numpy from now on: vec0 is not touched at all
    st._vec0_search = lambda *a, **kw: pytest.fail("vec0 used with a warm cache")  # type: ignore[method-assign]
    third = st.vector_search(q, limit=5, sources=["memory"])
    assert len(third) == 5 and all(c.source == "memory" for c in third)
    assert not _cache_threads()


def test_only_one_warm_up_at_a_time(make_store: Callable[..., SQLiteStore], monkeypatch: pytest.MonkeyPatch) -> None:
    st = make_store()
    entered, release = _block_loading(st, monkeypatch)
    q = _unit(np.random.default_rng(2))
    st.vector_search(q, limit=3)
    assert entered.wait(10)
    for _ in range(5):
        st.vector_search(q, limit=3)
    assert len(_cache_threads()) == 1 and st.info().vector_cache == "loading"
    release.set()
    _warm(st)


def test_searches_and_writes_are_not_blocked_by_a_warm_up(
    make_store: Callable[..., SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    st = make_store()
    paths = Served(st)
    entered, release = _block_loading(st, monkeypatch)
    q = _unit(np.random.default_rng(3))
    st.vector_search(q, limit=3)
    assert entered.wait(10)
    t0 = time.monotonic()
    assert len(st.vector_search(q, limit=3)) == 3
    _put(st, "memory/new.md", [q])
    assert st.vector_search(q, limit=1)[0].id == "memory/new.md:0"
    assert time.monotonic() - t0 < 5  # the load is still parked: nothing waited for it
    assert paths.numpy == 0 and paths.vec0 == 3
    release.set()
    _warm(st)  # the parked load read its snapshot after the write: warm for the current generation
    hit = st.vector_search(q, limit=1)[0]
    assert hit.id == "memory/new.md:0" and (paths.vec0, paths.numpy) == (3, 1)


# ---- staleness ---------------------------------------------------------------------------------


def test_a_write_makes_the_cache_stale_until_reloaded(make_store: Callable[..., SQLiteStore]) -> None:
    st = make_store()
    paths = Served(st)
    rng = np.random.default_rng(4)
    q = _unit(rng)
    st.vector_search(q, limit=5)
    _warm(st)
    st.vector_search(q, limit=5)
    assert (paths.vec0, paths.numpy) == (1, 1)

    _put(st, "memory/fresh.md", [q, _unit(rng)])  # an exact match for q
    assert st.info().vector_cache == "cold"
    hits = st.vector_search(q, limit=5)
    assert (paths.vec0, paths.numpy) == (2, 1)
    assert hits[0].id == "memory/fresh.md:0" and hits[0].vector_score == pytest.approx(1.0, abs=1e-5)
    _warm(st)
    assert _state(st).startswith("warm (202 vectors")
    again = st.vector_search(q, limit=5)
    assert (paths.vec0, paths.numpy) == (2, 2)
    assert _hits(again)[0] == _hits(hits)[0]

    st.delete_file("memory/fresh.md")
    gone = st.vector_search(q, limit=5)
    assert paths.vec0 == 3 and all(not c.id.startswith("memory/fresh.md") for c in gone)
    _warm(st)
    assert [c.id for c in st.vector_search(q, limit=5)] == [c.id for c in gone] and paths.numpy == 3


def test_a_write_committed_during_the_load_leaves_it_stale(
    make_store: Callable[..., SQLiteStore], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    st = make_store()
    q = _unit(np.random.default_rng(14))
    real = st._vector_cache._read_matrix

    def then_write(*a: Any, **kw: Any) -> Any:
        loaded = real(*a, **kw)
        other = SQLiteStore(tmp_path / "v.sqlite", memory_cache=False)
        try:
            _put(other, "memory/late.md", [q])
        finally:
            other.close()
        return loaded

    monkeypatch.setattr(st._vector_cache, "_read_matrix", then_write)
    st.vector_search(q, limit=3)
    assert st.wait_vector_cache(timeout=10)
    monkeypatch.undo()
    assert st.info().vector_cache == "cold"  # loaded, but tagged with the generation before the write
    paths = Served(st)
    assert st.vector_search(q, limit=1)[0].id == "memory/late.md:0"
    assert (paths.vec0, paths.numpy) == (1, 0)
    _warm(st)
    assert st.vector_search(q, limit=1)[0].id == "memory/late.md:0" and paths.numpy == 1


def test_a_write_from_another_connection_makes_it_stale(make_store: Callable[..., SQLiteStore], tmp_path: Path) -> None:
    st = make_store()
    q = _unit(np.random.default_rng(5))
    st.vector_search(q, limit=3)
    _warm(st)
    other = SQLiteStore(tmp_path / "v.sqlite")  # another process, as far as the generation is concerned
    try:
        _put(other, "memory/other.md", [q])
    finally:
        other.close()
    paths = Served(st)
    assert st.vector_search(q, limit=1)[0].id == "memory/other.md:0"
    assert (paths.vec0, paths.numpy) == (1, 0)


def test_rebuild_swap_reloads_the_new_file(make_store: Callable[..., SQLiteStore]) -> None:
    st = make_store()
    rng = np.random.default_rng(6)
    q = _unit(rng)
    st.vector_search(q, limit=3)
    _warm(st)
    with st.rebuild() as new:
        _put(new, "memory/rebuilt.md", [q, _unit(rng), _unit(rng)])
    paths = Served(st)
    hits = st.vector_search(q, limit=10)
    assert paths.vec0 == 1 and hits[0].id == "memory/rebuilt.md:0" and len(hits) == 3
    _warm(st)
    assert _state(st).startswith("warm (3 vectors")
    assert [c.id for c in st.vector_search(q, limit=10)] == [c.id for c in hits] and paths.numpy == 1


# ---- equivalence and switches --------------------------------------------------------------------


def test_vec0_and_warm_numpy_rank_the_same(make_store: Callable[..., SQLiteStore]) -> None:
    vec0 = make_store("a.sqlite", memory_cache=False)
    warm = make_store("b.sqlite")
    plain = make_store("c.sqlite", vector_enabled=False, require_vec=False)
    assert plain.info().vector_path == "numpy"
    rng = np.random.default_rng(8)
    warm.vector_search(_unit(rng), limit=1)
    _warm(warm)
    paths = Served(warm)
    for i, sources in enumerate([None, ["memory"], ["sessions"], None]):
        q = _unit(rng) * (3.5 if i == 3 else 1.0)  # scores are cosine on every path, whatever the query's norm
        a = vec0.vector_search(q, limit=40, sources=sources)
        b = warm.vector_search(q, limit=40, sources=sources)
        c = plain.vector_search(q, limit=40, sources=sources)
        assert len(a) == 40 and _hits(a)[0] == _hits(b)[0] == _hits(c)[0]
        assert _hits(a)[1] == _hits(b)[1] == _hits(c)[1]  # the same scores, to the last bit
        assert [x.vector_rank for x in a] == [x.vector_rank for x in b]
    assert paths.numpy == 4 and paths.vec0 == 0


def test_vector_scores_come_from_the_warm_copy_without_reading_rows(
        make_store: Callable[..., SQLiteStore], monkeypatch: pytest.MonkeyPatch) -> None:
    cold = make_store("a.sqlite", memory_cache=False)
    warm = make_store("b.sqlite")
    rng = np.random.default_rng(9)
    q = _unit(rng)
    warm.vector_search(q, limit=1)
    _warm(warm)
    ids = [f"memory/f{f}.md:{i}" for f in range(8) for i in range(0, 25, 3)]
    expect = cold.vector_scores(q, ids)  # read from the stored rows
    assert len(expect) == len(ids)

    def no_rows(*args: object, **kwargs: object) -> None:
        raise AssertionError("the warm copy holds these vectors: no row read expected")

    monkeypatch.setattr(warm, "get_chunks", no_rows)
    assert warm.vector_scores(q, ids) == expect  # bit-identical to the rows' scores
    monkeypatch.undo()
    new = _unit(rng)
    _put(warm, "memory/f0.md", [new])  # a write: the copy is stale, the rows answer (and are new)
    got = warm.vector_scores(q, ids)
    assert got.pop("memory/f0.md:0") == pytest.approx(float(new @ q), abs=1e-6)
    assert got == {k: v for k, v in expect.items() if not k.startswith("memory/f0.md")}


def test_chunks_vec_rebuilt_by_another_process(make_store: Callable[..., SQLiteStore], tmp_path: Path) -> None:
    """Another process rebuilds chunks_vec (here: migrating the layout of an older release): the warm copy
    is dropped, vec0 searches use the rebuilt table, and the ranking does not change."""
    st = make_store()
    q = _unit(np.random.default_rng(15))
    st.vector_search(q, limit=5)
    _warm(st)
    before = _hits(st.vector_search(q, limit=30, sources=["sessions"], model="fake"))
    old = SQLiteStore(tmp_path / "v.sqlite", memory_cache=False)
    try:  # what an older release wrote: chunks_vec(id, embedding) without the filter columns
        db = old._conn
        db.execute("BEGIN IMMEDIATE")
        db.execute("DROP TABLE chunks_vec")
        db.execute(f"CREATE VIRTUAL TABLE chunks_vec USING vec0(id TEXT PRIMARY KEY, embedding FLOAT[{DIMS}] "
                   "distance_metric=cosine)")
        db.execute("INSERT INTO chunks_vec(id, embedding) SELECT id, embedding FROM chunks")
        db.execute("COMMIT")
    finally:
        old.close()
    SQLiteStore(tmp_path / "v.sqlite", memory_cache=False).close()  # opening it rebuilds chunks_vec
    assert st.info().vector_cache == "cold"
    paths = Served(st)
    assert _hits(st.vector_search(q, limit=30, sources=["sessions"], model="fake")) == before
    assert (paths.vec0, paths.numpy) == (1, 0)
    _warm(st)
    assert _hits(st.vector_search(q, limit=30, sources=["sessions"], model="fake")) == before
    assert (paths.vec0, paths.numpy) == (1, 1)


def test_memory_cache_off_always_uses_vec0(make_store: Callable[..., SQLiteStore]) -> None:
    st = make_store(memory_cache=False)
    paths = Served(st)
    st._vector_cache._read_matrix = lambda *a, **kw: pytest.fail("memory cache loaded")  # type: ignore[method-assign]
    q = _unit(np.random.default_rng(9))
    for _ in range(4):
        assert len(st.vector_search(q, limit=5)) == 5
    assert st.wait_vector_cache(timeout=0)
    assert (paths.vec0, paths.numpy) == (4, 0)
    assert st._vector_cache._thread is None and st._vector_cache._matrix is None
    assert st.info().vector_cache == "off"


def test_without_sqlite_vec_numpy_loads_synchronously(make_store: Callable[..., SQLiteStore]) -> None:
    st = make_store(vector_enabled=False, require_vec=False)
    assert st.info().vector_path == "numpy" and st.info().vector_cache == "cold"
    assert len(st.vector_search(_unit(np.random.default_rng(10)), limit=5)) == 5
    assert st._vector_cache._thread is None
    assert _state(st).startswith("warm (200 vectors")


def test_a_failed_load_keeps_vec0_and_says_why(
    make_store: Callable[..., SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    st = make_store()
    calls = []

    def broken(*a: Any, **kw: Any) -> Any:
        calls.append(1)
        raise OSError("disk on fire")

    monkeypatch.setattr(st._vector_cache, "_read_matrix", broken)
    paths = Served(st)
    q = _unit(np.random.default_rng(11))
    st.vector_search(q, limit=3)
    assert st.wait_vector_cache(timeout=10)
    assert st.info().vector_cache == "cold (last load failed: disk on fire)"
    st.vector_search(q, limit=3)
    assert st.wait_vector_cache(timeout=10)
    assert len(calls) == 1 and paths.vec0 == 2  # not retried until the index changes
    monkeypatch.undo()
    _put(st, "memory/x.md", [q])
    st.vector_search(q, limit=3)
    _warm(st)


# ---- lifecycle and status -----------------------------------------------------------------------


def test_close_during_a_warm_up_is_prompt_and_leaves_no_thread(
    make_store: Callable[..., SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    st = make_store()
    entered, _ = _block_loading(st, monkeypatch)
    st.vector_search(_unit(np.random.default_rng(12)), limit=3)
    assert entered.wait(10)
    thread = st._vector_cache._thread
    assert thread is not None and thread.is_alive()
    t0 = time.monotonic()
    st.close()
    assert time.monotonic() - t0 < 2.5
    assert not thread.is_alive() and not _cache_threads()
    assert st._vector_cache._matrix is None


def test_close_right_after_a_cold_search(make_store: Callable[..., SQLiteStore]) -> None:
    st = make_store()
    st.vector_search(_unit(np.random.default_rng(13)), limit=3)
    t0 = time.monotonic()
    st.close()
    assert time.monotonic() - t0 < 2.5 and not _cache_threads()


def test_status_reports_the_cache(make_index: Callable[..., Any], write: Callable[..., Path],
                                  fake_provider: Any) -> None:
    write({"MEMORY.md": "# Notes\n\nThe deploy pipeline runs canary first.\n",
           "memory/2026-01-02.md": "Budget review moved to Friday.\n"})
    idx = make_index(fake_provider)
    idx.sync()
    st = idx.status()
    if st.vector["path"] != "sqlite-vec":
        pytest.skip(f"sqlite-vec is not loadable here: {st.vector['error']}")
    assert st.vector["cache"] == "cold"
    assert idx.search("deploy canary").hits
    assert idx.store.wait_vector_cache(timeout=10)  # type: ignore[attr-defined]
    assert idx.status().vector["cache"].startswith("warm (")
    off = make_index(fake_provider, store={"path": str(idx.config.resolved_store_path()) + ".off",
                                           "vector": {"memory_cache": False}})
    off.sync()
    assert off.status().vector["cache"] == "off"
    assert off.config.store.vector.memory_cache is False
