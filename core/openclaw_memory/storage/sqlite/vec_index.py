"""The vec0 index ``chunks_vec``: its layout, its upkeep on writes and its KNN search.

``chunks.embedding`` is the source of truth; ``chunks_vec`` (a sqlite-vec ``vec0`` table) is an index
over it, rebuilt from it whenever needed. It holds each finite, non-zero vector of its dimension scaled
to unit length, with the chunk's ``source`` and a key of its ``model`` as vec0 metadata columns, so both
filters apply inside the KNN scan; zero vectors are found through the partial index
``idx_chunks_zero_vec`` instead. A ``chunks_vec`` of an older layout (no metadata columns) is rebuilt
from ``chunks.embedding`` when the index is opened (or by the next write, when that fails; vector search
runs on numpy until then).

A process without sqlite-vec (``vector_enabled=False``, or a driver that cannot load it) writes chunks
without their ``chunks_vec`` rows; inside the same write transaction it marks an existing ``chunks_vec``
out of date (meta key ``chunks_vec_stale``). Such a ``chunks_vec`` is treated like one of an older layout:
never searched, and rebuilt by the next process with sqlite-vec that opens the index or writes to it.

:class:`VecIndex` belongs to :class:`~openclaw_memory.storage.sqlite.store.SQLiteStore`, which keeps the
connection, its lock and the write transactions: each method takes the connection to work through.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_memory.storage.sqlite.rows import CHUNK_COLUMNS, chunk_from_row, chunk_rows
from openclaw_memory.storage.sqlite.vector_cache import (
    directions,
    exact_scores,
    score_margin,
    stored_vectors,
    unit_rows,
)
from openclaw_memory.storage import StoredChunk

__all__ = ["ScoredChunk", "VecIndex"]

log = logging.getLogger(__name__)

#: chunks_vec's columns beside id and embedding; a chunks_vec without them has an older layout
_VEC_COLUMNS = "source TEXT, model INTEGER"
#: meta key present while chunks_vec misses writes of a process without sqlite-vec
_STALE_KEY = "chunks_vec_stale"
#: the chunks whose vector is zero (score 0 on every query; chunks_vec cannot hold them)
_ZERO_VEC_INDEX = ("CREATE INDEX IF NOT EXISTS idx_chunks_zero_vec ON chunks(model) "
                   "WHERE embedding = zeroblob(length(embedding))")
#: sqlite-vec refuses a KNN query for more rows than this
_VEC0_MAX_K = 4096
_FILL_BATCH = 2048

ScoredChunk = tuple[float, int, StoredChunk]  # (exact score, chunk rowid, chunk)


@functools.lru_cache(maxsize=64)
def _model_key(model: str) -> int:
    """The 64-bit key chunks_vec stores for a model name (an integer filters fast inside vec0's scan)."""
    return int.from_bytes(hashlib.blake2b(model.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


def _layout(db: Any) -> tuple[int | None, str | None]:
    """The dimension of ``chunks_vec`` (None: no such table) and, when it exists but cannot be used as it
    is, why (None: it has the current layout and is up to date)."""
    row = db.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_vec'").fetchone()
    if not row or not row[0]:
        return None, None
    sql = " ".join(str(row[0]).lower().split())
    start = sql.find("float[")
    dims = int(sql[start + 6 : sql.index("]", start)]) if start >= 0 else None
    if dims is None or _VEC_COLUMNS.lower() not in sql:
        return dims, "has an older layout"
    if _is_stale(db):
        return dims, "misses chunks written without sqlite-vec"
    return dims, None


def _is_stale(db: Any) -> bool:
    """Whether a process without sqlite-vec wrote chunks since ``chunks_vec`` was last rebuilt."""
    return db.execute("SELECT 1 FROM meta WHERE key = ?", (_STALE_KEY,)).fetchone() is not None


def _filter_sql(sources: Sequence[str] | None, model: object | None) -> tuple[str, list[Any]]:
    """The ``source`` and ``model`` conditions (``model`` as the table stores it) and their arguments."""
    sql = ""
    args: list[Any] = []
    if sources:
        sql += f" AND source IN ({','.join('?' * len(sources))})"
        args.extend(sources)
    if model is not None:
        sql += " AND model = ?"
        args.append(model)
    return sql, args


def _scored_chunks(db: Any, ids: Sequence[str], q: np.ndarray, sources: Sequence[str] | None,
                   model: str | None) -> list[ScoredChunk]:
    """``(exact score, rowid, chunk)`` of the chunks ``ids`` that still match the filters and have a
    finite, non-zero vector of ``q``'s size, best first, equal scores by rowid."""
    rows = [r for r in chunk_rows(db, f"rowid, {CHUNK_COLUMNS}", ids)
            if (not sources or r[3] in sources) and (model is None or r[7] == model)]
    at, unit = directions([r[9] for r in rows], q.size)
    if not at:
        return []
    scores = exact_scores(unit, q)
    out = [(float(scores[j]), int(rows[i][0]), chunk_from_row(rows[i][1:])) for j, i in enumerate(at)]
    out.sort(key=lambda t: (-t[0], t[1]))
    return out


def _zero_vector_chunks(db: Any, dims: int, limit: int, sources: Sequence[str] | None,
                        model: str | None) -> list[ScoredChunk]:
    """``(0.0, rowid, chunk)`` of the first ``limit`` chunks (by rowid) whose vector of ``dims``
    dimensions is zero, among ``sources`` and ``model``."""
    flt, flt_args = _filter_sql(sources, model)
    rows = db.execute(
        f"SELECT rowid, {CHUNK_COLUMNS} FROM chunks INDEXED BY idx_chunks_zero_vec "
        "WHERE embedding = zeroblob(length(embedding)) "
        f"AND length(embedding) = ?{flt} ORDER BY rowid LIMIT ?",
        [dims * 4, *flt_args, int(limit)],
    ).fetchall()
    return [(0.0, int(r[0]), chunk_from_row(r[1:])) for r in rows]


class VecIndex:
    """The ``chunks_vec`` table of one index file, and what this process knows about it.

    ``loaded``: sqlite-vec is loaded on the store's connections (otherwise there is no ``chunks_vec``
    to use, and writes only mark an existing one out of date). ``bump_generation(db)`` advances the index
    generation inside the caller's write transaction. ``dims`` is the dimension of ``chunks_vec`` when it
    exists with the current layout and is up to date (None otherwise); ``note`` says why an existing
    ``chunks_vec`` is not used, or why none could be created.
    """

    def __init__(self, path: Path, loaded: bool, bump_generation: Callable[[Any], None]) -> None:
        self.path = path
        self.loaded = loaded
        self._bump_generation = bump_generation
        self.dims: int | None = None  # of chunks_vec, when it exists with the current layout
        self.note: str | None = None  # why chunks_vec is not used, when it exists but is not
        self._failed_dims: set[int] = set()  # creating chunks_vec for these failed: not retried until reopened

    # ---- layout -------------------------------------------------------------------------------------

    def open(self, db: Any) -> None:
        """Read the layout of ``chunks_vec`` through a newly opened connection (no transaction open). One
        of an older layout, or out of date, is rebuilt first, in its own write transaction; when that
        fails, it is left as it was and not used."""
        self.note = None
        self.dims = None
        self._failed_dims.clear()
        if not self.loaded:
            return
        dims, why = _layout(db)
        if dims is None or why is None:
            self.dims = dims
            return
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                dims, why = _layout(db)  # another process may have rebuilt it meanwhile
                if dims is not None and why is not None:
                    log.info("rebuilding chunks_vec of %s: it %s", self.path, why)
                    self._create_table(db, dims)
                    self._bump_generation(db)
                db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    db.execute("ROLLBACK")
                raise
        except Exception as exc:  # noqa: BLE001 - searches use numpy until a write rebuilds the table
            self.note = (f"chunks_vec {why} and could not be rebuilt ({exc}); vector search "
                         "uses numpy until the next write rebuilds it")
            log.warning("%s: %s", self.path, self.note)
            return
        self.dims = dims

    def refresh(self, db: Any) -> None:
        """Look at ``chunks_vec`` again (another process may have created, rebuilt or recreated it)."""
        have, why = _layout(db)
        self.dims = have if why is None else None
        if self.dims is not None:
            self.note = None  # whatever this process could not do, another one did

    def _create_table(self, db: Any, dims: int) -> None:
        """(Re)create ``chunks_vec`` for ``dims`` dimensions from every stored vector of that size, inside
        the caller's write transaction."""
        db.execute("DROP TABLE IF EXISTS chunks_vec")
        db.execute(f"CREATE VIRTUAL TABLE chunks_vec USING vec0(id TEXT PRIMARY KEY, "
                   f"embedding FLOAT[{int(dims)}] distance_metric=cosine, {_VEC_COLUMNS})")
        db.execute(_ZERO_VEC_INDEX)
        signed_zeros: list[int] = []
        for rows, vectors in stored_vectors(db, dims, _FILL_BATCH):
            unit = vectors.unit.astype("<f4", copy=False)
            keep = vectors.directed
            db.executemany(
                "INSERT INTO chunks_vec(id, embedding, source, model) VALUES (?, ?, ?, ?)",
                [(r[1], unit[i].tobytes(), r[2], _model_key(r[3])) for i, r in enumerate(rows) if keep[i]],
            )
            signed_zeros.extend(r[0] for i, r in enumerate(rows) if vectors.zero[i] and any(r[4]))
        for rowid in signed_zeros:  # -0.0 components, written by an older release: make them a zeroblob
            db.execute("UPDATE chunks SET embedding = zeroblob(length(embedding)) WHERE rowid = ?", (rowid,))
        db.execute("DELETE FROM meta WHERE key = ?", (_STALE_KEY,))  # holds every stored vector now

    # ---- writes (inside the store's write transaction) ---------------------------------------------

    def for_write(self, db: Any, dims: int | None) -> int | None:
        """The dimension of the ``chunks_vec`` this write maintains (None: none). Given the ``dims`` of the
        vectors written, a missing ``chunks_vec``, or one of an older layout, out of date or of another
        dimension, is (re)created for them first; a failure leaves it as it was (and is not retried for
        that dimension until the index is reopened). Without sqlite-vec, an existing ``chunks_vec`` is
        marked out of date instead, as this write changes chunks without it."""
        if not self.loaded:
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_vec'").fetchone() is not None:
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')", (_STALE_KEY,))
            return None
        have, why = _layout(db)
        current = why is None
        want = dims if dims is not None and dims > 0 else (have if not current else None)
        if want is None or (current and have == want) or want in self._failed_dims:
            self.dims = have if current else None
            return self.dims
        if current and have is not None:
            log.info("vector dimension changed %s -> %s; recreating chunks_vec", have, want)
        elif have is not None:
            log.info("rebuilding chunks_vec of %s: it %s", self.path, why)
        db.execute("SAVEPOINT vec_table")
        try:
            self._create_table(db, want)
        except Exception as exc:  # noqa: BLE001 - this write goes on; searches use numpy
            if not db.in_transaction:
                raise  # the error ended the whole write transaction (e.g. disk full): this write fails
            db.execute("ROLLBACK TO vec_table")
            db.execute("RELEASE vec_table")
            self.note = f"chunks_vec could not be created for {want} dimensions ({exc}); vector search uses numpy"
            self._failed_dims.add(want)
            log.warning("%s: %s", self.path, self.note)
            self.dims = have if current else None
            return self.dims
        db.execute("RELEASE vec_table")
        self.dims, self.note = want, None
        return want

    @staticmethod
    def delete(db: Any, ids: Sequence[str]) -> None:
        """Remove the rows of the chunks ``ids``."""
        db.executemany("DELETE FROM chunks_vec WHERE id = ?", [(i,) for i in ids])

    @staticmethod
    def write(db: Any, chunks: Sequence[StoredChunk], blobs: Sequence[bytes | None], dims: int) -> None:
        """Put the rows of ``chunks`` into a ``chunks_vec`` of ``dims`` dimensions: each finite, non-zero
        vector of that size, as a unit vector (``blobs``: each chunk's packed embedding, or None). Call it
        after the file's previous chunks (and their rows) were deleted and before ``chunks`` are stored:
        an id still in ``chunks`` then moves here from another file, and only its row is deleted first."""
        at, unit = directions(blobs, dims)
        unit = unit.astype("<f4", copy=False)
        blob = {i: unit[j].tobytes() for j, i in enumerate(at)}
        rows: dict[str, tuple[str, bytes, str, int] | None] = {}
        for i, c in enumerate(chunks):  # an id given twice ends up as its last chunk, as in ``chunks``
            rows[c.id] = (c.id, blob[i], c.source, _model_key(c.model)) if i in blob else None
        moving = [(r[0],) for r in chunk_rows(db, "id", list(rows))]
        if moving:
            db.executemany("DELETE FROM chunks_vec WHERE id = ?", moving)
        db.executemany("INSERT INTO chunks_vec(id, embedding, source, model) VALUES (?, ?, ?, ?)",
                       [r for r in rows.values() if r is not None])

    # ---- search ------------------------------------------------------------------------------------

    def can_search(self, limit: int) -> bool:
        """Whether vec0 can be asked for ``limit`` rows (with room to over-fetch)."""
        return self.loaded and 2 * limit <= _VEC0_MAX_K

    @staticmethod
    def search(db: Any, query: np.ndarray, limit: int, sources: Sequence[str] | None,
               model: str | None) -> list[ScoredChunk] | None:
        """The top ``limit`` chunks for ``query`` (finite, non-zero), ranked as the numpy path ranks them:
        vec0's scan (``sources`` and ``model`` filtered inside it) picks the candidates, :func:`exact_scores`
        orders them, equal scores by rowid; zero vectors (score 0) come from their own index. Every read
        is of one snapshot (the caller holds the connection's lock). None when ``chunks_vec`` is out of
        date (a process without sqlite-vec wrote chunks since it was built): search numpy instead."""
        began = not db.in_transaction
        if began:
            db.execute("BEGIN")  # one read snapshot: another process's commit cannot mix two generations
        try:
            if _is_stale(db):
                return None
            return VecIndex._search(db, query, limit, sources, model)
        finally:
            if began and db.in_transaction:
                db.execute("ROLLBACK")

    @staticmethod
    def _search(db: Any, query: np.ndarray, limit: int, sources: Sequence[str] | None,
                model: str | None) -> list[ScoredChunk]:
        """:meth:`search`, inside the caller's snapshot."""
        q = unit_rows(query.reshape(1, -1))[0][0]
        flt, flt_args = _filter_sql(sources, _model_key(model) if model is not None else None)
        margin = score_margin(q.size)
        qb = np.asarray(q, dtype="<f4").tobytes()
        k = min(_VEC0_MAX_K, int(limit) + 16)  # a few more: rows within the margin of the cut-off
        zeros: list[ScoredChunk] | None = None
        while True:
            hits = db.execute(
                f"SELECT id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?{flt} "
                "ORDER BY distance", [qb, k, *flt_args],
            ).fetchall()
            ranked = _scored_chunks(db, [h[0] for h in hits], q, sources, model)
            if zeros is None and (len(ranked) < limit or ranked[limit - 1][0] <= 0.0):
                zeros = _zero_vector_chunks(db, q.size, limit, sources, model)
            if zeros:
                ranked = sorted(ranked + zeros, key=lambda t: (-t[0], t[1]))
            ranked = ranked[:limit]
            last = hits[-1][1] if hits else None
            if len(hits) < k or k >= _VEC0_MAX_K or last is None:
                break  # every matching row was scanned (or no more can be asked for)
            if len(ranked) == limit and ranked[-1][0] > 1.0 - float(last) + margin:
                break  # no row past the scan's last can reach the cut-off
            k = min(_VEC0_MAX_K, 2 * k)
        return ranked
