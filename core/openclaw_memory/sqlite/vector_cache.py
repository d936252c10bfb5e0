"""The in-memory vector cache: an index file's vectors as one unit-length numpy matrix, loaded in the background.

sqlite-vec 0.1 has no approximate index: a vec0 query is an exact scan of every stored vector
(~80 ms at 100k vectors). The same exact scan as one matrix product over a numpy copy held in memory
takes ~7 ms. :class:`VectorCache` keeps that copy (a :class:`VectorMatrix`) for one index file and
reads it in a daemon thread through its own read-only connection, so no search ever waits for it:
until it is loaded for the current index generation, :class:`~openclaw_memory.sqlite.store.SQLiteStore`
searches with vec0. Without sqlite-vec the copy is the only vector path and is loaded synchronously.

A copy is read inside one read snapshot and tagged with the index generation of that snapshot, so it
is served only while no write has committed since (from any process).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["VectorCache", "VectorMatrix"]

log = logging.getLogger(__name__)

#: rows fetched per batch while loading; a close() stops the load between two batches
_WARM_BATCH = 2048
_THREAD_NAME = "openclaw-memory-vector-cache"


@dataclass(frozen=True, eq=False)
class VectorMatrix:
    """One consistent copy of the stored vectors: unit-length rows in rowid order, the chunk id and
    source of each row, and the index generation they were read at."""

    generation: str
    vectors: np.ndarray
    ids: list[str]
    sources: list[str]

    def search(self, query: np.ndarray, limit: int, sources: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """The ``limit`` best ``(chunk id, cosine score)`` pairs, best first (ties in row order);
        ``[]`` when the matrix is empty or has another dimension than ``query``."""
        matrix = self.vectors
        if matrix.shape[0] == 0 or matrix.shape[1] != query.size:
            return []
        norm = float(np.linalg.norm(query))
        scores = matrix @ (query / norm if norm > 0 else query)
        if sources:
            mask = np.isin(np.asarray(self.sources), list(sources))
            scores = np.where(mask, scores, -np.inf)
        n = min(int(limit), int(np.isfinite(scores).sum()))
        if n <= 0:
            return []
        top = np.argpartition(-scores, n - 1)[:n] if n < scores.size else np.arange(scores.size)
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[i], float(scores[i])) for i in top if np.isfinite(scores[i])]


class VectorCache:
    """The :class:`VectorMatrix` of one index file and the background thread that loads it.

    ``module`` is the DB-API driver module the index is opened with; ``generation_at(db, inode)``
    reads the index generation through a connection (inside the caller's transaction, if any).
    Thread-safe: the matrix is replaced as a whole, and at most one load runs at a time.
    """

    def __init__(self, path: Path, module: ModuleType, generation_at: Callable[[Any, int | None], str]) -> None:
        self.path = path
        self._module = module
        self._generation_at = generation_at
        self._matrix: VectorMatrix | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._conn: Any = None  # the loading thread's connection, to interrupt on close()
        self._stop = threading.Event()
        self._failed: tuple[str, str] | None = None  # (generation, error) of the last failed load

    def get(self, generation: str, dims: int | None = None) -> VectorMatrix | None:
        """The matrix when it is loaded for ``generation`` (and, given ``dims``, has that many
        columns or no rows at all); otherwise None."""
        cached = self._matrix
        if cached is None or cached.generation != generation:
            return None
        if dims is None:
            return cached
        matrix = cached.vectors
        return cached if matrix.shape[0] == 0 or matrix.shape[1] == dims else None

    def load(self, db: Any, inode: int | None) -> VectorMatrix:
        """Read the matrix now through ``db`` (whose lock the caller holds), widest stored vectors, and keep it."""
        loaded = self._read_matrix(db, inode, None)
        assert loaded is not None  # no stop event
        self._matrix = loaded
        return loaded

    def drop(self) -> None:
        """Forget the loaded matrix (e.g. the index file was reopened)."""
        self._matrix = None

    def start_loading(self, dims: int, generation: Callable[[], str]) -> None:
        """Load the matrix of ``dims`` columns in a daemon thread, unless it is loaded or loading for
        the current ``generation()`` (or the last load failed at it), or the cache is closed."""
        with self._lock:
            if self._stop.is_set() or (self._thread is not None and self._thread.is_alive()):
                return
            gen = generation()
            if self._failed is not None and self._failed[0] == gen:
                return  # retried after the next write
            cached = self._matrix
            if cached is not None and cached.generation == gen:
                return  # loaded while this search ran on vec0
            if cached is not None:
                self._matrix = None  # stale: free it before loading the new copy
            thread = threading.Thread(target=self._load, args=(gen, dims), name=_THREAD_NAME, daemon=True)
            self._thread = thread
            thread.start()

    def _load(self, gen: str, dims: int) -> None:
        """Thread body: read the vectors through an own read-only connection, never holding the store's lock."""
        started = time.monotonic()
        try:
            inode = self.path.stat().st_ino
            conn = self._module.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                        check_same_thread=False, isolation_level=None, timeout=5.0)
            self._conn = conn
            try:
                if self._stop.is_set():
                    return
                loaded = self._read_matrix(conn, inode, dims, self._stop)
            finally:
                self._conn = None
                conn.close()
            if loaded is None or self._stop.is_set():
                return
            if self.path.stat().st_ino != inode:
                return  # a rebuild was swapped in meanwhile: the next search loads the new file
            self._matrix = loaded
            self._failed = None
            log.debug("vector cache for %s loaded: %d vectors in %.2fs", self.path, len(loaded.ids),
                      time.monotonic() - started)
        except Exception as exc:  # noqa: BLE001 - a failed load only means searches stay on vec0
            if self._stop.is_set():
                return  # closed while loading (e.g. the query was interrupted)
            self._failed = (gen, str(exc))
            log.warning("cannot load the vector cache for %s (searches keep using sqlite-vec): %s", self.path, exc)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background load; True when none is running any more."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def state(self, generation: Callable[[], str | None]) -> str:
        """``"loading"``, ``"warm (N vectors, X MB)"`` when loaded for the current ``generation()``
        (None: unknown), or ``"cold"`` (with the last load error)."""
        thread = self._thread
        if thread is not None and thread.is_alive():
            return "loading"
        cached = self._matrix
        gen = generation()
        if cached is not None and cached.generation == gen:
            return f"warm ({len(cached.ids)} vectors, {cached.vectors.nbytes / 2**20:.1f} MB)"
        failed = self._failed
        return f"cold (last load failed: {failed[1]})" if failed is not None else "cold"

    def close(self) -> None:
        """Stop a background load (at its next batch, or at once inside a long query), wait up to 2 s
        for its thread, and free the matrix. No load starts afterwards."""
        with self._lock:
            self._stop.set()
            thread = self._thread
        with contextlib.suppress(Exception):
            conn = self._conn
            if conn is not None:
                conn.interrupt()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)
        self._matrix = None

    def _read_matrix(self, db: Any, inode: int | None, dims: int | None,
                     stop: threading.Event | None = None) -> VectorMatrix | None:
        """The stored vectors of ``dims`` dimensions (the widest stored when None) as unit-length rows
        in rowid order, tagged with the generation they were read at; None when ``stop`` was set."""
        began = not db.in_transaction
        if began:
            db.execute("BEGIN")  # one read snapshot: the generation tag matches the rows exactly
        try:
            gen = self._generation_at(db, inode)
            if dims is None:
                dims = int(db.execute("SELECT coalesce(max(length(embedding)), 0) FROM chunks").fetchone()[0]) // 4
            if dims <= 0:
                return VectorMatrix(gen, np.zeros((0, 0), dtype=np.float32), [], [])
            width = int(dims) * 4
            most = int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])  # cheap, unlike a filtered count
            matrix = np.empty((most, dims), dtype=np.float32)
            ids: list[str] = []
            srcs: list[str] = []
            cur = db.execute("SELECT id, source, embedding FROM chunks WHERE length(embedding) = ? ORDER BY rowid",
                             (width,))
            while rows := cur.fetchmany(_WARM_BATCH):
                if stop is not None and stop.is_set():
                    return None
                at = len(ids)
                matrix[at : at + len(rows)] = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(-1, dims)
                ids.extend(r[0] for r in rows)
                srcs.extend(r[1] for r in rows)
        finally:
            if began and db.in_transaction:
                db.execute("ROLLBACK")
        matrix = matrix[: len(ids)] if len(ids) > most // 2 else matrix[: len(ids)].copy()
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
        matrix /= np.where(norms > 0, norms, 1.0)[:, None]  # cosine, as vec0 computes it
        return VectorMatrix(gen, matrix, ids, srcs)
