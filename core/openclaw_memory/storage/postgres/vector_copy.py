"""A PostgreSQL namespace's vectors held in this process's memory, as the SQLite store holds its own.

A vector search through the server walks the HNSW index (or scans every vector below ``store.pgHnswMinRows``)
and reads each hit's vector out of line: ~1 ms at 2,000 chunks and ~3.5 ms at 24,000, against ~0.2 and ~1.5 ms
for the SQLite store's in-memory matrix. :func:`read_matrix` reads a build's vectors into the same
:class:`~openclaw_memory.storage.sqlite.vector_cache.VectorMatrix`, exact as of one snapshot, tagged with the build
and its version (``"<build id>:<version>"``, what :meth:`PostgresStore.generation` returns). It reads on the
store's pooled connections, a batch at a time, so a process holds no more connections than before and a search
waits for one batch at most. A search picks its chunks from that
copy and reads their rows in the same statement as the build's current version: the copy answers only while the
version is the one it was read at, so a write from any host is seen by the next search.

Every host of a namespace reads its copy again after a write from any of them. So a copy is brought up to date
rather than read again: each row's version (its ``xmin``) is kept, and only the rows added or rewritten since are
read, with the list of the build's rows and versions (~31 bytes a row on the wire, against ~1.5 KB for a
384-dimensional vector). Many rows written since (a sync that rewrote many files) are read in batches first, each
on a connection lent for it alone, so the snapshot that makes the copy exact reads only what was written meanwhile.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from openclaw_memory.storage.sqlite.vector_cache import MatrixBuilder, UnitVectors, VectorMatrix, unit_rows

__all__ = ["read_matrix"]

#: rows fetched per batch while reading the copy; a close() stops the read between two batches
_BATCH = 2048
#: what :func:`_brought_up_to_date` returns when another build is active than the copy's
_REBUILT = object()
#: the columns a copy is read from; the last is the row's version
_COLUMNS = "seq, id, source, model, embedding, xmin::text::bigint"


def read_matrix(connection: Callable[[], AbstractContextManager[Any]], schema: str, build_where: str,
                build_args: Sequence[Any], dims: int, stop: threading.Event,
                previous: VectorMatrix | None = None) -> VectorMatrix | None:
    """The vectors of ``dims`` dimensions of the build that ``build_where`` (over ``namespaces`` aliased ``n``,
    with ``build_args``) selects in the quoted ``schema``, tagged ``"<build id>:<version>"`` (``"none:0"`` and no
    rows when there is no such build), through connections ``connection()`` lends (in autocommit mode). A first
    copy is read in batches, each on a connection lent for it alone (so searches get one in between), as are the
    rows written since ``previous`` (an earlier copy) was read when they are more than a batch; then the copy is
    made exact in one read-only snapshot, which reads the few rows written meanwhile. None when ``stop`` was set
    meanwhile or the build was replaced twice while reading."""
    for _ in range(2):
        if previous is None or previous.row_versions is None:
            previous = _read_in_batches(connection, schema, build_where, build_args, dims, stop)
        else:
            previous = _caught_up(connection, schema, dims, stop, previous)
        if previous is None or previous.row_versions is None:
            return previous  # stopped, or no build
        with connection() as conn:
            updated = _brought_up_to_date(conn, schema, build_where, build_args, dims, stop, previous)
        if updated is not _REBUILT:
            return updated  # type: ignore[return-value]
        previous = None  # another build is active now: read it
    return None


def _read_in_batches(connection: Callable[[], AbstractContextManager[Any]], schema: str, build_where: str,
                     build_args: Sequence[Any], dims: int, stop: threading.Event) -> VectorMatrix | None:
    """The build's vectors read :data:`_BATCH` rows at a time in seq order, each batch a statement (and a
    snapshot) of its own, tagged with the build and no version (:func:`_brought_up_to_date` makes it exact)."""
    with connection() as conn:
        head = conn.execute(f"SELECT n.id, n.n_rows FROM {schema}.namespaces n WHERE {build_where}",
                            list(build_args)).fetchone()
    if head is None:
        return VectorMatrix.empty("none:0")
    build, after = int(head[0]), -1
    builder = MatrixBuilder(int(head[1]), dims, versions=True)  # the build's chunk count: room for every vector
    while True:
        if stop.is_set():
            return None
        with connection() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM {schema}.chunks WHERE {_where(build, dims)} AND seq > %s "
                                "ORDER BY seq LIMIT %s", (after, _BATCH), binary=True).fetchall()
        if not rows:
            return builder.matrix(f"{build}:unread")
        after = rows[-1][0]
        for picked, vectors in _batches_of(rows, dims):
            builder.add_read(picked, vectors, version_at=5)


def _brought_up_to_date(conn: Any, schema: str, build_where: str, build_args: Sequence[Any], dims: int,
                        stop: threading.Event, previous: VectorMatrix) -> VectorMatrix | None | object:
    """``previous`` made exact in one read-only snapshot on ``conn``: the rows it holds at another version, or
    no longer, replaced by what the build holds now; :data:`_REBUILT` when another build is active now."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        head = conn.execute(f"SELECT n.id, n.version FROM {schema}.namespaces n WHERE {build_where}",
                            list(build_args)).fetchone()
        if head is None:
            return VectorMatrix.empty("none:0")
        if previous.generation.split(":")[0] != str(head[0]):
            return _REBUILT
        kept, fresh = _changed(previous, _listed(conn, schema, int(head[0]), dims))
        return _updated(_reader(conn, schema, int(head[0])), previous, kept, fresh, f"{head[0]}:{head[1]}", dims, stop)


def _caught_up(connection: Callable[[], AbstractContextManager[Any]], schema: str, dims: int, stop: threading.Event,
               previous: VectorMatrix) -> VectorMatrix | None:
    """``previous`` with the rows written to its build since, read outside any snapshot in batches (a connection
    lent for each) when they are more than one batch, tagged with the build and no version; else ``previous``
    itself. None when ``stop`` was set."""
    build = int(previous.generation.split(":")[0])
    with connection() as conn:
        kept, fresh = _changed(previous, _listed(conn, schema, build, dims))
    if fresh.size <= _BATCH:
        return previous  # read by the snapshot that makes the copy exact

    def read(seqs: list[int]) -> list[Any]:
        with connection() as lent:
            return _reader(lent, schema, build)(seqs)

    return _updated(read, previous, kept, fresh, f"{build}:unread", dims, stop)


def _reader(conn: Any, schema: str, build: int) -> Callable[[list[int]], list[Any]]:
    """Reads the rows (:data:`_COLUMNS`) of the seqs it is given, of build ``build``, on ``conn``."""
    return lambda seqs: conn.execute(f"SELECT {_COLUMNS} FROM {schema}.chunks WHERE ns_id = %s AND seq = ANY(%s)",
                                     (build, seqs), binary=True).fetchall()


def _where(build: int, dims: int) -> str:
    """The condition on ``chunks`` selecting the build's vectors of ``dims`` dimensions."""
    return f"ns_id = {int(build)} AND dims = {int(dims)} AND embedding IS NOT NULL"


def _listed(conn: Any, schema: str, build: int, dims: int) -> list[Any]:
    """``seq, version`` of each row of the build's vectors of ``dims`` dimensions now."""
    return conn.execute(f"SELECT seq, xmin::text::bigint FROM {schema}.chunks WHERE {_where(build, dims)}",
                        binary=True).fetchall()


def _changed(previous: VectorMatrix, listed: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """The seqs of ``listed`` (``seq, version`` of every row now) that ``previous`` (rows in seq order) holds at
    that version, and the others."""
    seqs = np.fromiter((r[0] for r in listed), dtype=np.int64, count=len(listed))
    versions = np.fromiter((r[1] for r in listed), dtype=np.int64, count=len(listed))
    held, held_versions = previous.rowids, previous.row_versions
    if not held.size or held_versions is None:
        return seqs[:0], seqs
    at = np.minimum(np.searchsorted(held, seqs), held.size - 1)
    same = (held[at] == seqs) & (held_versions[at] == versions)
    return seqs[same], seqs[~same]


def _updated(read: Callable[[list[int]], list[Any]], previous: VectorMatrix, kept: np.ndarray, fresh: np.ndarray,
             generation: str, dims: int, stop: threading.Event) -> VectorMatrix | None:
    """``previous``'s rows ``kept`` (seqs) with the rows ``fresh`` (seqs) as ``read`` returns them, :data:`_BATCH`
    at a time, in seq order, tagged ``generation``. None when ``stop`` was set."""
    if not fresh.size and kept.size == len(previous.ids):  # nothing written since: the same rows, not copied
        return dataclasses.replace(previous, generation=generation)
    builder = MatrixBuilder(kept.size + fresh.size, dims, versions=True, sources=previous.source_names,
                            models=previous.model_names)
    builder.add_kept(previous, np.searchsorted(previous.rowids, np.sort(kept)))
    for at in range(0, fresh.size, _BATCH):
        if stop.is_set():
            return None
        for picked, vectors in _batches_of(read(fresh[at: at + _BATCH].tolist()), dims):
            builder.add_read(picked, vectors, version_at=5)
    return builder.matrix(generation)


def _batches_of(rows: Sequence[Any], dims: int) -> Iterator[tuple[list[Any], UnitVectors]]:
    """``rows`` (:data:`_COLUMNS`, the vector as pgvector's loader gives it) of ``dims``-dimensional vectors, with
    their unit vectors (none when empty)."""
    vectors = [r[4].to_numpy() for r in rows]
    picked = [i for i, v in enumerate(vectors) if v.shape[0] == dims]  # the dims column says the size; so does it
    if picked:
        yield [rows[i] for i in picked], UnitVectors(*unit_rows(np.stack([vectors[i] for i in picked])))
