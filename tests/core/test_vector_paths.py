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

from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage.sqlite.vec_index import VecIndex
from openclaw_memory.storage import StoredChunk
from openclaw_memory.types import Candidate, MemoryFile
from tests.helpers.vector_paths import Served

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


# ---- chunks_vec upkeep across writers and processes ------------------------------------------------


def _vec_store(path: Path, **kwargs: Any) -> SQLiteStore:
    """A store searching with vec0 (no in-memory copy); skips the test without sqlite-vec."""
    st = SQLiteStore(path, **{"memory_cache": False, **kwargs})
    if st.info().vector_path != "sqlite-vec":
        st.close()
        pytest.skip(f"sqlite-vec is not loadable here: {st.info().vector_error}")
    return st


def _chunks_vec_notes(st: SQLiteStore) -> list[str]:
    return [n for n in st.info().notes if "chunks_vec" in n]


def test_an_empty_embedding_does_not_switch_off_chunks_vec(tmp_path: Path) -> None:
    """A chunk with a 0-dimensional embedding (written first, and first in its file) neither creates a
    chunks_vec of 0 dimensions nor stops the process from creating the real one."""
    st = _vec_store(tmp_path / "i.sqlite")
    try:
        rng = np.random.default_rng(40)
        empty = np.zeros(0, np.float32)
        _put(st, "memory/empty.md", [empty, empty])
        rows = _put(st, "memory/a.md", [empty] + [_unit(rng, 8) for _ in range(6)])[1:]
        rows += _put(st, "memory/b.md", [_unit(rng, 8) for _ in range(6)])
        assert st.info().vector_dims == 8
        assert _chunks_vec_notes(st) == []
        served = Served(st)
        q = _unit(rng, 8)
        assert _ids(st.vector_search(q, limit=8)) == expected(rows, q, 8)
        assert served.vec0 == 1 and served.numpy == 0
    finally:
        st.close()


def test_a_failed_chunks_vec_creation_is_retried_for_another_dimension_and_after_a_reopen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "i.sqlite"
    st = _vec_store(path)
    other = _vec_store(path)
    try:
        real = VecIndex._create_table

        def no_8(self: VecIndex, db: Any, dims: int) -> None:
            if dims == 8:
                raise OSError("cannot create FLOAT[8]")
            real(self, db, dims)

        monkeypatch.setattr(VecIndex, "_create_table", no_8)
        rng = np.random.default_rng(41)
        _put(st, "memory/a.md", [_unit(rng, 8) for _ in range(3)])  # the write goes on without chunks_vec
        assert st.info().vector_dims is None and _chunks_vec_notes(st)
        rows16 = _put(st, "memory/b.md", [_unit(rng, 16) for _ in range(5)])  # another dimension: created
        assert st.info().vector_dims == 16 and _chunks_vec_notes(st) == []
        q = _unit(rng, 16)
        assert _ids(st.vector_search(q, limit=3)) == expected(rows16, q, 3)
        _put(st, "memory/c.md", [_unit(rng, 8) for _ in range(3)])  # 8 failed before: left at 16
        assert st.info().vector_dims == 16
        monkeypatch.undo()
        with other.rebuild():  # another process swaps in a rebuilt (empty) index; this one reopens it
            pass
        rows8 = _put(st, "memory/d.md", [_unit(rng, 8) for _ in range(4)])
        assert st.info().vector_dims == 8
        served = Served(st)
        q = _unit(rng, 8)
        assert _ids(st.vector_search(q, limit=3)) == expected(rows8, q, 3)
        assert served.vec0 == 1 and served.numpy == 0
    finally:
        other.close()
        st.close()


def _stale_marker(st: SQLiteStore) -> Any:
    return st._conn.execute("SELECT value FROM meta WHERE key = 'chunks_vec_stale'").fetchone()


def test_a_writer_without_sqlite_vec_never_makes_the_paths_disagree(tmp_path: Path) -> None:
    """A process without sqlite-vec writes chunks it cannot put into chunks_vec: it marks chunks_vec
    stale, vec0 searches use numpy until a process with sqlite-vec rebuilds it (next write or open)."""
    dims = 16
    path = tmp_path / "i.sqlite"
    a = _vec_store(path)
    b = SQLiteStore(path, vector_enabled=False)
    try:
        rng = np.random.default_rng(42)
        q = _unit(rng, dims)
        mem = {cid: v for cid, v in _put(a, "memory/a.md", [q + 0.4 * _unit(rng, dims) for _ in range(8)])}
        mem.update(_put(a, "memory/far.md", [_unit(rng, dims) for _ in range(8)]))
        assert _ids(a.vector_search(q, limit=4)) == expected(list(mem.items()), q, 4)  # vec0, dims known
        mem.update(_put(b, "memory/a.md", [-q + 0.2 * _unit(rng, dims) for _ in range(8)]))  # same ids, moved
        mem.update(_put(b, "memory/b.md", [q + 0.05 * _unit(rng, dims) for _ in range(3)]))  # new, the best
        assert _stale_marker(a) is not None
        served = Served(a)
        for limit in (2, 5, 30):
            assert _ids(a.vector_search(q, limit=limit)) == expected(list(mem.items()), q, limit), limit
        assert served.numpy == 3
        mem.update(_put(a, "memory/c.md", [_unit(rng, dims)]))  # a write with sqlite-vec rebuilds chunks_vec
        assert _stale_marker(a) is None
        served = Served(a)
        for limit in (2, 5, 30):
            assert _ids(a.vector_search(q, limit=limit)) == expected(list(mem.items()), q, limit), limit
        assert served.vec0 == 3 and served.numpy == 0
        mem.update(_put(b, "memory/d.md", [q.copy()]))
        b.delete_file("memory/b.md")
        for cid in [c for c in mem if c.startswith("memory/b.md")]:
            del mem[cid]
        a.close()
        a = _vec_store(path)  # opening with sqlite-vec rebuilds it too
        gen = a.generation()
        assert _stale_marker(a) is None
        served = Served(a)
        for limit in (2, 5, 30):
            assert _ids(a.vector_search(q, limit=limit)) == expected(list(mem.items()), q, limit), limit
        assert served.vec0 == 3 and served.numpy == 0
        a.close()
        a = _vec_store(path)
        assert a.generation() == gen  # rebuilt once
    finally:
        b.close()
        a.close()


def test_a_dimension_change_by_another_process_is_seen_by_searches(tmp_path: Path) -> None:
    path = tmp_path / "i.sqlite"
    a = _vec_store(path)
    b = _vec_store(path)
    try:
        rng = np.random.default_rng(43)
        rows8 = _put(a, "memory/a.md", [_unit(rng, 8) for _ in range(6)])
        q8 = _unit(rng, 8)
        assert _ids(a.vector_search(q8, limit=3)) == expected(rows8, q8, 3)
        rows16 = _put(b, "memory/b.md", [_unit(rng, 16) for _ in range(6)])  # recreates chunks_vec for 16
        served = Served(a)
        q16 = _unit(rng, 16)
        assert _ids(a.vector_search(q16, limit=3)) == expected(rows16, q16, 3)
        assert served.vec0 == 1 and served.numpy == 0
        assert a.info().vector_dims == 16
    finally:
        b.close()
        a.close()


def test_a_rebuild_by_another_process_clears_the_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dims = 16
    rows: list[Row] = []
    ses: list[Row] = []
    path = tmp_path / "old.sqlite"
    _legacy_index(path, _mixed_fill(rows, ses, dims, seed=44))

    def broken(self: VecIndex, db: Any, dims: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(VecIndex, "_create_table", broken)
    a = SQLiteStore(path, memory_cache=False)
    try:
        assert _chunks_vec_notes(a)
        monkeypatch.undo()
        SQLiteStore(path, memory_cache=False).close()  # another process opens the index and rebuilds it
        served = Served(a)
        q = np.eye(dims, dtype=np.float32)[0]
        assert _ids(a.vector_search(q, limit=12)) == expected(rows, q, 12)
        assert served.vec0 == 1 and served.numpy == 0
        assert _chunks_vec_notes(a) == []
    finally:
        a.close()


def test_a_vec0_search_reads_one_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write committed by another process while a vec0 search runs (here: between its KNN scan and
    the fetch of the chunks it found) is not mixed into that search."""
    from openclaw_memory.storage.sqlite import vec_index

    dims = 16
    path = tmp_path / "i.sqlite"
    a = _vec_store(path)
    b = _vec_store(path)
    try:
        rng = np.random.default_rng(45)
        q = _unit(rng, dims)
        before = dict(_put(a, "memory/near.md", [q + 0.3 * _unit(rng, dims) for _ in range(5)]))
        before.update(_put(a, "memory/far.md", [_unit(rng, dims) for _ in range(5)]))
        after = dict(before)
        real = vec_index._scored_chunks
        calls = []

        def meanwhile(*args: Any, **kwargs: Any) -> Any:
            if not calls:
                after.update(_put(b, "memory/near.md", [-q + 0.3 * _unit(rng, dims) for _ in range(5)]))
                after.update(_put(b, "memory/best.md", [q + 0.01 * _unit(rng, dims) for _ in range(3)]))
            calls.append(1)
            return real(*args, **kwargs)

        monkeypatch.setattr(vec_index, "_scored_chunks", meanwhile)
        served = Served(a)
        got = a.vector_search(q, limit=3)
        assert calls and served.vec0 == 1 and served.numpy == 0
        assert _ids(got) == expected(list(before.items()), q, 3)
        monkeypatch.undo()
        assert _ids(a.vector_search(q, limit=3)) == expected(list(after.items()), q, 3)
    finally:
        b.close()
        a.close()


def test_an_error_that_ends_the_transaction_is_not_hidden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error inside the (re)creation of chunks_vec that already rolled back the whole write
    transaction reaches the caller as itself, and the store stays usable."""

    def fatal(self: VecIndex, db: Any, dims: int) -> None:
        db.execute("ROLLBACK")  # as SQLite does on SQLITE_FULL / SQLITE_IOERR / SQLITE_NOMEM
        raise RuntimeError("database or disk is full")

    st = _vec_store(tmp_path / "i.sqlite")
    try:
        rng = np.random.default_rng(46)
        monkeypatch.setattr(VecIndex, "_create_table", fatal)
        with pytest.raises(RuntimeError, match="disk is full"):
            _put(st, "memory/a.md", [_unit(rng, 8) for _ in range(3)])
        assert st.is_empty()
        monkeypatch.undo()
        rows = _put(st, "memory/a.md", [_unit(rng, 8) for _ in range(3)])
        served = Served(st)
        q = _unit(rng, 8)
        assert _ids(st.vector_search(q, limit=3)) == expected(rows, q, 3)
        assert served.vec0 == 1 and served.numpy == 0
    finally:
        st.close()


def test_a_write_deletes_each_chunks_vec_row_once(tmp_path: Path) -> None:
    """Rewriting a file deletes each of its old chunks_vec rows once, plus the rows of ids that move
    to it from another path; the rows end up exactly those of the stored vectors."""
    dims = 8
    st = _vec_store(tmp_path / "i.sqlite")
    try:
        rng = np.random.default_rng(47)
        q = _unit(rng, dims)
        rows = dict(_put(st, "memory/a.md", [_unit(rng, dims) for _ in range(5)]))
        rows.update(_put(st, "memory/b.md", [_unit(rng, dims) for _ in range(3)]))
        moved = StoredChunk(id="memory/b.md:1", path="memory/a.md", source="memory", start_line=9, end_line=9,
                            hash="moved", model="fake", text="moved here", embedding=q.copy())
        fresh = [StoredChunk(id=f"memory/a.md:{i}", path="memory/a.md", source="memory", start_line=i + 1,
                             end_line=i + 1, hash=f"new{i}", model="fake", text=f"new {i}",
                             embedding=_unit(rng, dims)) for i in range(4)]
        fresh.append(StoredChunk(id="memory/a.md:new", path="memory/a.md", source="memory", start_line=7,
                                 end_line=7, hash="z", model="fake", text="zero", embedding=np.zeros(dims, np.float32)))
        statements: list[str] = []
        st._conn.set_trace_callback(statements.append)
        try:
            st.replace_file(MemoryFile(path="memory/a.md", abs_path="memory/a.md", mtime_ms=0.0, size=1, hash="v2",
                                       source="memory"), [*fresh, moved])  # type: ignore[arg-type]
        finally:
            st._conn.set_trace_callback(None)
        deletes = [s for s in statements if s.lstrip().upper().startswith("DELETE FROM CHUNKS_VEC")]
        assert len(deletes) == len(set(deletes)) == 6, deletes  # a.md:0-4 and the moved memory/b.md:1
        for cid in [c for c in rows if c.startswith("memory/a.md")]:
            del rows[cid]
        rows.update({c.id: c.embedding for c in [*fresh, moved]})
        ordered = [(cid, rows[cid]) for cid in ["memory/b.md:0", "memory/b.md:2",
                                                *[c.id for c in [*fresh, moved]]]]
        assert st._conn.execute("SELECT count(*) FROM chunks_vec").fetchone()[0] == 7  # the zero vector has none
        served = Served(st)
        assert _ids(st.vector_search(q, limit=8)) == expected(ordered, q, 8)
        assert st.vector_search(q, limit=1)[0].id == "memory/b.md:1"
        assert served.vec0 == 2 and served.numpy == 0
    finally:
        st.close()
