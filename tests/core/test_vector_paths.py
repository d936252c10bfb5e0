"""The vector search paths agree: sqlite-vec's vec0 scan, the warm in-memory matrix and numpy without sqlite-vec.

Every test builds the same index on each path and checks the result against one expected ranking:
cosine similarity, best first, equal scores in insertion order (chunk rowid), zero vectors scoring 0,
non-finite vectors never returned, ``sources`` and ``model`` filtering exactly the top ``limit`` rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openclaw_memory.sqlite.store import SQLiteStore
from openclaw_memory.sqlite.vec_index import VecIndex
from openclaw_memory.storage import StoredChunk
from openclaw_memory.types import Candidate, MemoryFile

MODES = ("vec0", "warm", "numpy")
_KWARGS: dict[str, dict[str, Any]] = {"vec0": {"memory_cache": False}, "warm": {}, "numpy": {"vector_enabled": False}}
NEW_MODEL = "text-embedding-3-small"  # longer than vec0's 12-byte inline text prefix
OLD_MODEL = "text-embedding-ada-002"

Row = tuple[str, np.ndarray]  # (chunk id, stored vector), in insertion order


def _put(store: SQLiteStore, rel: str, vectors: list[np.ndarray], *, source: str = "memory",
         model: str = "fake") -> list[Row]:
    chunks = [
        StoredChunk(id=f"{rel}:{i}", path=rel, source=source, start_line=i + 1, end_line=i + 1,
                    hash=hashlib.sha256(f"{rel}{i}".encode()).hexdigest(), model=model, text=f"{rel} chunk {i}",
                    embedding=np.asarray(v, dtype=np.float32))
        for i, v in enumerate(vectors)
    ]
    store.replace_file(MemoryFile(path=rel, abs_path=rel, mtime_ms=0.0, size=1, hash=f"{rel}:{len(vectors)}",
                                  source=source), chunks)  # type: ignore[arg-type]
    return [(c.id, c.embedding) for c in chunks]  # type: ignore[misc]


def _unit(rng: np.random.Generator, dims: int) -> np.ndarray:
    v = rng.standard_normal(dims).astype(np.float32)
    return v / np.linalg.norm(v)


def expected(rows: list[Row], query: np.ndarray, limit: int) -> list[str]:
    """The reference ranking: float64 cosine, zero vectors 0, non-finite dropped, ties in insertion order."""
    q = np.asarray(query, dtype=np.float64)
    qn = float(np.sqrt(np.sum(q * q)))
    scored = []
    for pos, (cid, v) in enumerate(rows):
        v64 = np.asarray(v, dtype=np.float64)
        if not np.all(np.isfinite(v64)):
            continue
        n = float(np.sqrt(np.sum(v64 * v64)))
        score = 0.0 if n == 0 else float(v64 @ q) / (n * qn)
        scored.append((-score, pos, cid))
    return [cid for _, _, cid in sorted(scored)[:limit]]


class Served:
    """Counts which path served each vector search (also used by test_vector_cache)."""

    def __init__(self, store: SQLiteStore) -> None:
        self.vec0 = 0
        self.numpy = 0
        real_vec0, real_numpy = store._vec0_search, store._numpy_search

        def vec0(*a: Any, **kw: Any) -> list[Candidate]:
            self.vec0 += 1
            return real_vec0(*a, **kw)

        def numpy(*a: Any, **kw: Any) -> list[Candidate]:
            self.numpy += 1
            return real_numpy(*a, **kw)

        store._vec0_search = vec0  # type: ignore[method-assign]
        store._numpy_search = numpy  # type: ignore[method-assign]


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture()
def build(tmp_path: Path, mode: str) -> Iterator[Callable[..., tuple[SQLiteStore, Served]]]:
    """``build(fill, dims)``: a store on ``mode``'s path, filled by ``fill(store)``, ready to search on that path."""
    made: list[SQLiteStore] = []

    def _build(fill: Callable[[SQLiteStore], Any], dims: int, name: str = "i.sqlite") -> tuple[SQLiteStore, Served]:
        st = SQLiteStore(tmp_path / name, **_KWARGS[mode])
        made.append(st)
        if mode != "numpy" and st.info().vector_path != "sqlite-vec":
            pytest.skip(f"sqlite-vec is not loadable here: {st.info().vector_error}")
        fill(st)
        _ready(st, mode, dims)
        return st, Served(st)

    yield _build
    for st in made:
        st.close()


def _ready(st: SQLiteStore, mode: str, dims: int) -> None:
    if mode == "warm":  # the first search loads the matrix in the background; wait until it serves
        st.vector_search(np.eye(dims, dtype=np.float32)[0], limit=1)
        assert st.wait_vector_cache(timeout=10)
        assert (st.info().vector_cache or "").startswith("warm"), st.info().vector_cache


def _check_path(served: Served, mode: str) -> None:
    if mode == "numpy" or mode == "warm":
        assert served.vec0 == 0 and served.numpy > 0
    else:
        assert served.numpy == 0 and served.vec0 > 0


def _ids(cands: list[Candidate]) -> list[str]:
    return [c.id for c in cands]


# ---- ties ----------------------------------------------------------------------------------------


def test_exact_ties_rank_in_insertion_order(build: Callable[..., tuple[SQLiteStore, Served]], mode: str) -> None:
    """Identical vectors (the embedding cache gives identical text identical vectors) tie exactly; the
    tie group straddles the limit, so which tied rows are returned matters as much as their order."""
    dims = 16
    rng = np.random.default_rng(21)
    q = _unit(rng, dims)
    same = _unit(rng, dims)
    rows: list[Row] = []

    def fill(st: SQLiteStore) -> None:
        for f in range(4):
            rows.extend(_put(st, f"memory/noise{f}.md", [_unit(rng, dims) for _ in range(7)]))
            # the same vector, some stored at another scale (cosine ignores it)
            rows.extend(_put(st, f"memory/dup{f}.md", [same * (1.0 if i % 3 else 2.0) for i in range(9)]))
        rows.extend(_put(st, "memory/best.md", [q + 0.05 * _unit(rng, dims) for _ in range(3)]))

    st, served = build(fill, dims)
    for limit in (5, 12, 40):
        want = expected(rows, q, limit)
        got = st.vector_search(q, limit=limit)
        assert _ids(got) == want, limit
        assert [c.vector_rank for c in got] == list(range(1, len(want) + 1))
    tied = [c for c in st.vector_search(q, limit=40) if c.path.startswith("memory/dup")]
    assert len({c.vector_score for c in tied}) == 1  # exactly equal scores, not merely close ones
    _check_path(served, mode)


def test_a_large_tie_group_at_the_limit(build: Callable[..., tuple[SQLiteStore, Served]], mode: str) -> None:
    """Far more tied rows than the limit: the first ones indexed are returned, on every path."""
    dims = 64
    rng = np.random.default_rng(22)
    q = _unit(rng, dims)
    same = _unit(rng, dims)
    rows: list[Row] = []

    def fill(st: SQLiteStore) -> None:
        for f in range(12):
            rows.extend(_put(st, f"memory/t{f:02d}.md", [same.copy() for _ in range(25)]))
            rows.extend(_put(st, f"memory/r{f:02d}.md", [_unit(rng, dims) * 0.1 - q for _ in range(3)]))
        rows.extend(_put(st, "memory/best.md", [q.copy(), q + 0.1 * same]))

    st, served = build(fill, dims)
    for limit in (1, 2, 10, 24):
        assert _ids(st.vector_search(q, limit=limit)) == expected(rows, q, limit), limit
    _check_path(served, mode)


# ---- filters --------------------------------------------------------------------------------------


def test_a_minority_source_filter_returns_its_top_rows(
    build: Callable[..., tuple[SQLiteStore, Served]], mode: str
) -> None:
    """400 "memory" chunks close to the query and 10 "sessions" chunks far from it."""
    dims = 16
    rng = np.random.default_rng(23)
    q = _unit(rng, dims)
    mem: list[Row] = []
    ses: list[Row] = []

    def fill(st: SQLiteStore) -> None:
        for f in range(4):
            mem.extend(_put(st, f"memory/m{f}.md", [q + 0.3 * _unit(rng, dims) for _ in range(100)]))
        ses.extend(_put(st, "sessions/s.jsonl", [_unit(rng, dims) for _ in range(10)], source="sessions"))

    st, served = build(fill, dims)
    got = st.vector_search(q, limit=6, sources=["sessions"])
    assert _ids(got) == expected(ses, q, 6)
    assert all(c.source == "sessions" for c in got)
    assert _ids(st.vector_search(q, limit=50, sources=["sessions"])) == expected(ses, q, 50)  # all ten
    assert _ids(st.vector_search(q, limit=6, sources=["memory"])) == expected(mem, q, 6)
    assert _ids(st.vector_search(q, limit=6, sources=["memory", "sessions"])) == expected(mem + ses, q, 6)
    assert st.vector_search(q, limit=6, sources=["elsewhere"]) == []
    _check_path(served, mode)


def test_two_models_in_one_index(build: Callable[..., tuple[SQLiteStore, Served]], mode: str) -> None:
    """Chunks embedded by another model are never compared with the query, however close they look."""
    dims = 16
    rng = np.random.default_rng(24)
    q = _unit(rng, dims)
    old: list[Row] = []
    new: list[Row] = []
    ses: list[Row] = []

    def fill(st: SQLiteStore) -> None:
        for f in range(3):
            old.extend(_put(st, f"memory/old{f}.md", [q + 0.2 * _unit(rng, dims) for _ in range(30)], model=OLD_MODEL))
            new.extend(_put(st, f"memory/new{f}.md", [_unit(rng, dims) for _ in range(4)], model=NEW_MODEL))
        ses.extend(_put(st, "sessions/s.jsonl", [_unit(rng, dims) for _ in range(5)], source="sessions",
                        model=NEW_MODEL))

    st, served = build(fill, dims)
    got = st.vector_search(q, limit=8, model=NEW_MODEL)
    assert _ids(got) == expected(new + ses, q, 8)
    assert _ids(st.vector_search(q, limit=100, model=NEW_MODEL)) == expected(new + ses, q, 100)
    assert _ids(st.vector_search(q, limit=3, model=NEW_MODEL, sources=["sessions"])) == expected(ses, q, 3)
    assert _ids(st.vector_search(q, limit=5, model=OLD_MODEL)) == expected(old, q, 5)
    assert _ids(st.vector_search(q, limit=5)) == expected(old + new + ses, q, 5)  # no model: no filter
    assert st.vector_search(q, limit=5, model="no-such-model") == []  # a model with no rows
    assert st.vector_search(q, limit=5, model="no-such-model", sources=["memory"]) == []
    _check_path(served, mode)


# ---- degenerate vectors -----------------------------------------------------------------------------


def test_zero_and_non_finite_stored_vectors(build: Callable[..., tuple[SQLiteStore, Served]], mode: str) -> None:
    """Zero vectors score 0 and rank by that score; NaN/inf vectors are never returned; nothing raises."""
    dims = 8
    rng = np.random.default_rng(26)
    q = _unit(rng, dims)
    zero = np.zeros(dims, np.float32)
    nan = np.full(dims, np.nan, np.float32)
    inf = zero.copy()
    inf[2] = np.inf
    tiny = zero.copy()
    tiny[0] = 1e-45  # denormal: its squared norm underflows in float32, but it has a direction
    rows: list[Row] = []

    def fill(st: SQLiteStore) -> None:
        _put(st, "memory/broken.md", [nan] * 30)  # indexed first: they must not take the scan's slots
        pos = q + 0.5 * _unit(rng, dims)
        neg = -q + 0.5 * _unit(rng, dims)
        rows.extend(_put(st, "memory/z.md", [zero, pos, nan, neg, -zero, q + 0.7 * _unit(rng, dims), inf,
                                             -q + 0.3 * _unit(rng, dims), tiny, zero * 3]))
        rows.extend(_put(st, "sessions/z.jsonl", [zero, -q], source="sessions"))

    st, served = build(fill, dims)
    for limit in (2, 4, 7, 20):
        got = st.vector_search(q, limit=limit)
        assert _ids(got) == expected(rows, q, limit), limit
        assert all(np.isfinite(c.vector_score) for c in got)
    scores = {c.id: c.vector_score for c in st.vector_search(q, limit=20)}
    assert scores["memory/z.md:0"] == 0.0 and scores["memory/z.md:4"] == 0.0
    assert not any(k.startswith("memory/broken.md") or k in ("memory/z.md:2", "memory/z.md:6") for k in scores)
    sessions = [r for r in rows if r[0].startswith("sessions/")]
    assert _ids(st.vector_search(q, limit=5, sources=["sessions"])) == expected(sessions, q, 5)
    _check_path(served, mode)


def test_degenerate_queries(build: Callable[..., tuple[SQLiteStore, Served]], mode: str) -> None:
    """A denormal query still has a direction; a zero or non-finite one has none and matches nothing."""
    dims = 8
    rng = np.random.default_rng(27)
    rows: list[Row] = []

    def fill(st: SQLiteStore) -> None:
        rows.extend(_put(st, "memory/a.md", [_unit(rng, dims) for _ in range(12)] + [np.zeros(dims, np.float32)]))

    st, _ = build(fill, dims)
    tiny = np.zeros(dims, np.float32)
    tiny[3] = 1e-45
    axis = np.eye(dims, dtype=np.float32)[3]
    assert _ids(st.vector_search(tiny, limit=5)) == expected(rows, axis, 5)
    assert _ids(st.vector_search(axis * 1e30, limit=5)) == expected(rows, axis, 5)
    assert st.vector_search(np.zeros(dims, np.float32), limit=5) == []
    assert st.vector_search(np.full(dims, np.nan, np.float32), limit=5) == []
    inf = axis.copy()
    inf[0] = np.inf
    assert st.vector_search(inf, limit=5) == []


# ---- index layout ----------------------------------------------------------------------------------


def test_vectors_of_an_earlier_dimension_stay_searchable(
    build: Callable[..., tuple[SQLiteStore, Served]], mode: str
) -> None:
    """A write of another dimension recreates chunks_vec; a later write of the first dimension brings
    back every stored vector of it, not only its own."""
    rng = np.random.default_rng(28)
    rows: list[Row] = []

    def fill(st: SQLiteStore) -> None:
        rows.extend(_put(st, "memory/a.md", [_unit(rng, 8) for _ in range(6)]))
        _put(st, "memory/b.md", [_unit(rng, 16) for _ in range(6)])
        rows.extend(_put(st, "memory/c.md", [_unit(rng, 8) for _ in range(6)]))

    st, served = build(fill, 8)
    q = _unit(rng, 8)
    assert _ids(st.vector_search(q, limit=20)) == expected(rows, q, 20)
    _check_path(served, mode)


def test_a_limit_above_the_vec0_k_cap(build: Callable[..., tuple[SQLiteStore, Served]], mode: str) -> None:
    """sqlite-vec refuses k > 4096; such searches are answered exactly all the same."""
    dims = 4
    rng = np.random.default_rng(29)
    rows: list[Row] = []

    def fill(st: SQLiteStore) -> None:
        for f in range(9):
            rows.extend(_put(st, f"memory/f{f}.md", [_unit(rng, dims) for _ in range(500)]))

    st, _ = build(fill, dims)
    q = _unit(rng, dims)
    got = st.vector_search(q, limit=4500)
    assert len(got) == 4500
    assert _ids(got[:50]) == expected(rows, q, 50)


# ---- migration of an index built with the old chunks_vec layout ----------------------------------


def _legacy_index(path: Path, fill: Callable[[SQLiteStore], Any], signed_zero: str | None = None) -> None:
    """An index as the previous release wrote it: chunks_vec(id, embedding) holding the raw stored vectors
    (and, for chunk ``signed_zero``, a zero vector of -0.0 components, which it stored as given)."""
    st = SQLiteStore(path, memory_cache=False)
    try:
        if st.info().vector_path != "sqlite-vec":
            pytest.skip(f"sqlite-vec is not loadable here: {st.info().vector_error}")
        fill(st)
        dims = st.info().vector_dims
        db = st._conn
        db.execute("BEGIN IMMEDIATE")
        for name, kind in db.execute("SELECT name, type FROM sqlite_master WHERE type = 'index' "
                                     "AND tbl_name = 'chunks' AND sql IS NOT NULL").fetchall():
            if name not in ("idx_chunks_path", "idx_chunks_source"):
                db.execute(f"DROP {kind} {name}")
        db.execute("DROP TABLE chunks_vec")
        db.execute(f"CREATE VIRTUAL TABLE chunks_vec USING vec0(id TEXT PRIMARY KEY, "
                   f"embedding FLOAT[{dims}] distance_metric=cosine)")
        if signed_zero is not None:
            db.execute("UPDATE chunks SET embedding = ? WHERE id = ?",
                       (np.full(dims, -0.0, dtype="<f4").tobytes(), signed_zero))
        db.execute("INSERT INTO chunks_vec(id, embedding) SELECT id, embedding FROM chunks "
                   "WHERE embedding IS NOT NULL ORDER BY rowid")
        db.execute("COMMIT")
    finally:
        st.close()


def _vec_sql(st: SQLiteStore) -> str:
    row = st._conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_vec'").fetchone()
    return str(row[0]) if row else ""


def _mixed_fill(rows: list[Row], ses: list[Row], dims: int, seed: int) -> Callable[[SQLiteStore], None]:
    """Near memory chunks, far session chunks, a tie group and zero / NaN vectors."""
    rng = np.random.default_rng(seed)
    q = np.eye(dims, dtype=np.float32)[0]
    same = _unit(rng, dims)

    def fill(st: SQLiteStore) -> None:
        _put(st, "memory/nan.md", [np.full(dims, np.nan, np.float32)] * 10)
        for f in range(3):
            rows.extend(_put(st, f"memory/m{f}.md", [q + 0.3 * _unit(rng, dims) for _ in range(60)]))
            rows.extend(_put(st, f"memory/d{f}.md", [same.copy() for _ in range(5)]))
        got = _put(st, "sessions/s.jsonl", [_unit(rng, dims) for _ in range(6)] + [np.zeros(dims, np.float32)] * 3,
                   source="sessions")
        ses.extend(got)
        rows.extend(got)

    return fill


@pytest.mark.parametrize("cache", ["vec0", "warm"])
def test_an_old_layout_index_is_migrated(tmp_path: Path, cache: str) -> None:
    dims = 16
    rows: list[Row] = []
    ses: list[Row] = []
    path = tmp_path / "old.sqlite"
    _legacy_index(path, _mixed_fill(rows, ses, dims, seed=30), signed_zero="sessions/s.jsonl:7")
    st = SQLiteStore(path, **_KWARGS[cache])
    try:
        sql = _vec_sql(st).lower()
        assert "model" in sql and "source" in sql, sql  # rebuilt with the filter columns
        _ready(st, cache, dims)
        served = Served(st)
        q = np.eye(dims, dtype=np.float32)[0]
        same = rows[60][1]
        assert _ids(st.vector_search(q, limit=6, sources=["sessions"])) == expected(ses, q, 6)
        assert _ids(st.vector_search(q, limit=9, sources=["sessions"])) == expected(ses, q, 9)  # all 3 zeros
        assert _ids(st.vector_search(q, limit=10, model="fake")) == expected(rows, q, 10)
        assert _ids(st.vector_search(same, limit=7)) == expected(rows, same, 7)
        assert st.vector_search(q, limit=5, model="other") == []
        _check_path(served, cache)
    finally:
        st.close()
    again = SQLiteStore(path, memory_cache=False)  # migrated once: reopening changes nothing
    try:
        gen = again.generation()
        again.close()
        again = SQLiteStore(path, memory_cache=False)
        assert again.generation() == gen
    finally:
        again.close()


def test_a_failed_migration_leaves_search_working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dims = 16
    rows: list[Row] = []
    ses: list[Row] = []
    path = tmp_path / "old.sqlite"
    _legacy_index(path, _mixed_fill(rows, ses, dims, seed=31))
    real = VecIndex._create_table

    def broken(self: VecIndex, db: Any, dims: int) -> None:
        real(self, db, dims)  # the whole rebuild ran; then the transaction fails
        raise OSError("disk full")

    monkeypatch.setattr(VecIndex, "_create_table", broken)
    st = SQLiteStore(path, memory_cache=False)
    try:
        assert "model" not in _vec_sql(st).lower()  # rolled back: the old table is intact
        served = Served(st)
        q = np.eye(dims, dtype=np.float32)[0]
        assert _ids(st.vector_search(q, limit=6, sources=["sessions"])) == expected(ses, q, 6)
        assert _ids(st.vector_search(q, limit=12)) == expected(rows, q, 12)
        assert served.vec0 == 0 and served.numpy == 2  # exact, without the old table
        assert any("chunks_vec" in n for n in st.info().notes), st.info().notes
        monkeypatch.undo()
        rng = np.random.default_rng(32)
        rows.extend(_put(st, "memory/late.md", [q + 0.01 * _unit(rng, dims)]))  # the next write migrates
        assert "model" in _vec_sql(st).lower()
        assert _ids(st.vector_search(q, limit=12)) == expected(rows, q, 12)
        assert st.vector_search(q, limit=1)[0].id == "memory/late.md:0"
        assert served.vec0 == 2
    finally:
        st.close()
