"""The in-memory vector cache: an index file's vectors as one unit-length numpy matrix, loaded in the background.

sqlite-vec 0.1 has no approximate index: a vec0 query is an exact scan of every stored vector
(~80 ms at 100k vectors). The same exact scan as one matrix product over a numpy copy held in memory
takes ~7 ms. :class:`VectorCache` keeps that copy (a :class:`VectorMatrix`) for one index file and
reads it in a daemon thread through its own read-only connection, so no search ever waits for it:
until it is loaded for the current index generation, :class:`~openclaw_memory.storage.sqlite.store.SQLiteStore`
searches with vec0. Without sqlite-vec the copy is the only vector path and is loaded synchronously.

A copy is read inside one read snapshot and tagged with the index generation of that snapshot, so it
is served only while no write has committed since (from any process).

Both vector paths rank with the helpers here, so they return the same rows in the same order:
:func:`unit_rows` scales every vector to unit length (zero vectors stay zero and score 0, non-finite
ones are never returned), :func:`exact_scores` gives each candidate a score that depends on its
values alone, and equal scores are ordered by the chunk's rowid (the order it was indexed in). The
fast scans (numpy's float32 matrix product, sqlite-vec's scan) only pick candidates, with a margin of
:func:`score_margin` around the cut-off so that rounding in them never changes the result.
From :data:`BINARY_PREFILTER_ROWS` rows up, the exact scan costs more than a search may take (a 1M-row
matrix is 1.5 GB to read per query): :meth:`VectorMatrix.search` then ranks every row first by the
Hamming distance of 1-bit codes (the sign of each dimension, centred on the mean vector: 48 bytes a row
at 384 dimensions, built while the copy loads), keeps the best :data:`BINARY_OVERFETCH` × ``limit`` rows
(at least :data:`BINARY_MIN_CANDIDATES`, and at least 1/:data:`BINARY_POOL_SHARE` of the rows) and scores
only those exactly, as above. That pre-filter is
approximate: a row whose code is far from the query's can be missed (``bench/bench_compare.py`` reports
the recall it keeps); below the threshold every row is scored and the paths agree exactly.
The stored vectors are read the same way for this copy and for (re)filling ``chunks_vec``
(:func:`stored_vectors`), and the vectors with a direction are picked in one place (:func:`directions`,
:attr:`UnitVectors.directed`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

__all__ = ["BINARY_MIN_CANDIDATES", "BINARY_OVERFETCH", "BINARY_POOL_SHARE", "BINARY_PREFILTER_ROWS", "BinaryCodes",
           "MatrixBuilder", "MatrixCache", "UnitVectors", "VectorCache", "VectorMatrix", "directions", "exact_scores",
           "matrix_of", "score_margin", "stored_scores", "stored_vectors", "unit_rows", "unit_vectors"]

log = logging.getLogger(__name__)

#: rows fetched per batch while loading; a close() stops the load between two batches
_WARM_BATCH = 2048
_THREAD_NAME = "openclaw-memory-vector-cache"
#: a float32 squared norm below this may have lost precision to underflow: such rows are scaled in float64
_SAFE_SQUARED_NORM = np.float32(2.0**-100)
#: candidates beyond ``limit`` taken from the partition, so a full pass over the scores is rarely needed
_SPARE = 32
#: rows per block whose best score bounds the partition of :func:`_top_candidates` from below
_BLOCK_ROWS = 64
#: rows scored at once by :func:`exact_scores` (bounds its float64 temporaries)
_SCORE_BATCH = 4096
#: from this many rows up, a search pre-filters with binary codes and rescores the survivors exactly
BINARY_PREFILTER_ROWS = 250_000
#: rows kept by the binary pre-filter per result asked for ...
BINARY_OVERFETCH = 64
#: ... and at least this many ...
BINARY_MIN_CANDIDATES = 4096
#: ... and at least this share of the rows searched (1/32: at 1M rows 31,250 rows rescored, ~3× the time of
#: 4,096 for recall@6 ~0.90 instead of ~0.67 on queries without a close answer; ``bench/README.md``)
BINARY_POOL_SHARE = 32
#: rows turned into codes at once (bounds the temporaries while building them)
_CODE_BATCH = 65536


def unit_rows(rows: np.ndarray, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``rows`` (one float32 vector per row) scaled to unit length, into ``out`` when given, and two masks:
    which rows are finite and which are zero vectors. Zero and non-finite rows come out all zero.

    Each row's result depends on its values alone, not on the other rows of the batch, so every path
    derives bit-identical unit vectors from the same stored vector."""
    x = np.asarray(rows, dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore"):  # such rows are redone in float64 below
        squared = np.square(x).sum(axis=1)
    safe = (squared >= _SAFE_SQUARED_NORM) & (squared < np.inf)  # False for NaN
    unit = np.divide(x, np.sqrt(np.where(safe, squared, np.float32(1.0)))[:, None], out=out)
    valid = safe.copy()
    zero = np.zeros(x.shape[0], dtype=bool)
    if not safe.all():  # tiny, huge or non-finite rows: scaled in float64 (rare)
        bad = np.flatnonzero(~safe)
        wide = x[bad].astype(np.float64)
        squared64 = np.square(wide).sum(axis=1)
        finite = np.isfinite(squared64)
        nonzero = finite & (squared64 > 0)
        fixed = np.zeros((bad.size, x.shape[1]), dtype=np.float32)
        fixed[nonzero] = wide[nonzero] / np.sqrt(squared64[nonzero])[:, None]
        unit[bad] = fixed
        valid[bad] = finite
        zero[bad] = finite & ~nonzero
    return unit, valid, zero


class UnitVectors(NamedTuple):
    """Vectors of one dimension as :func:`unit_rows` scales them: the float32 unit rows (zero and non-finite
    rows all zero), which rows are finite and which are zero vectors."""

    unit: np.ndarray
    finite: np.ndarray
    zero: np.ndarray

    @property
    def directed(self) -> np.ndarray:
        """The rows with a direction (finite and non-zero): the only ones ``chunks_vec`` holds, and the
        only ones a query can rank by their angle."""
        return self.finite & ~self.zero


def unit_vectors(blobs: Sequence[bytes], dims: int) -> UnitVectors:
    """The float32 BLOBs ``blobs``, each of ``dims`` dimensions, as :class:`UnitVectors`."""
    return UnitVectors(*unit_rows(np.frombuffer(b"".join(blobs), dtype="<f4").reshape(-1, dims)))


def directions(blobs: Sequence[bytes | None], dims: int) -> tuple[list[int], np.ndarray]:
    """The positions in ``blobs`` of the vectors of ``dims`` dimensions with a direction (finite, non-zero),
    and their unit vectors (float32 rows, in that order)."""
    width = int(dims) * 4
    at: list[int] = []
    picked: list[bytes] = []
    for i, blob in enumerate(blobs):
        if blob is not None and len(blob) == width:
            at.append(i)
            picked.append(blob)
    if not at:
        return [], np.zeros((0, int(dims)), dtype=np.float32)
    vectors = unit_vectors(picked, dims)
    keep = np.flatnonzero(vectors.directed)
    return [at[j] for j in keep], vectors.unit[keep]


def stored_vectors(db: Any, dims: int, batch: int = _WARM_BATCH) -> Iterator[tuple[list[Any], UnitVectors]]:
    """Every vector of ``dims`` dimensions in ``chunks``, in rowid order, ``batch`` rows at a time: the rows
    ``(rowid, id, source, model, embedding)`` and their :class:`UnitVectors`."""
    cur = db.execute("SELECT rowid, id, source, model, embedding FROM chunks WHERE length(embedding) = ? "
                     "ORDER BY rowid", (int(dims) * 4,))
    while rows := cur.fetchmany(batch):
        yield rows, unit_vectors([r[4] for r in rows], dims)


def exact_scores(unit: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The cosine score (float64) of each unit row against the unit ``query``; equal rows score bit-equal,
    whatever rows they are scored with (unlike a BLAS product, whose rounding depends on the row's position)."""
    q = np.asarray(query, dtype=np.float64)
    out = np.empty(unit.shape[0], dtype=np.float64)
    for at in range(0, unit.shape[0], _SCORE_BATCH):
        out[at : at + _SCORE_BATCH] = (np.asarray(unit[at : at + _SCORE_BATCH], dtype=np.float64) * q).sum(axis=1)
    return out + 0.0  # -0.0 -> 0.0


def _unit_query(query: np.ndarray) -> np.ndarray | None:
    """``query`` as a float32 unit vector; None when it is zero or not finite (it has no direction)."""
    unit, valid, zero = unit_rows(np.asarray(query, dtype=np.float32).reshape(1, -1))
    return unit[0] if valid[0] and not zero[0] else None


def stored_scores(query: np.ndarray, chunks: Sequence[Any], model: str | None = None) -> dict[str, float]:
    """The :func:`exact_scores` of ``query`` against the stored vectors of ``chunks`` (each a
    :class:`~openclaw_memory.storage.StoredChunk`), by chunk id: what a vector search scores them. Only
    finite vectors of the query's size and, given ``model``, of that model count (a zero vector scores 0);
    a zero or non-finite query scores nothing."""
    q = _unit_query(query)
    if q is None:
        return {}
    picked = [c for c in chunks if c.embedding is not None and c.embedding.size == q.size
              and (model is None or c.model == model)]
    if not picked:
        return {}
    unit, finite, _ = unit_rows(np.stack([np.asarray(c.embedding, dtype=np.float32) for c in picked]))
    keep = np.flatnonzero(finite)
    scores = exact_scores(unit[keep], q)
    return {picked[i].id: float(scores[j]) for j, i in enumerate(keep)}


def score_margin(dims: int) -> float:
    """How far a float32 cosine over ``dims`` dimensions (numpy's product, or sqlite-vec's distance) can be
    from :func:`exact_scores`: rows closer than this to the cut-off are candidates too."""
    return (int(dims) + 8) * 2.0**-23


def _scan_scores(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The float32 dot product of each row with ``q``, at memory speed: numpy's own SIMD sum of products
    (``einsum``) reads a row-major matrix about twice as fast as BLAS's ``sgemv`` on one thread here
    (``bench/README.md``). Only picks candidates: rounding is covered by :func:`score_margin`."""
    return np.einsum("ij,j->i", rows, np.asarray(q, dtype=rows.dtype))


def _above_block_bound(scores: np.ndarray, count: int) -> np.ndarray | None:
    """Indices of every row scoring at least the ``count``-th best maximum of blocks of :data:`_BLOCK_ROWS`
    rows: at least ``count`` rows, the best ``count`` among them (a tenth of the cost of a partition of
    every score). None when that bound is ``-inf`` (most rows filtered out)."""
    width = scores.size // _BLOCK_ROWS * _BLOCK_ROWS
    maxima = scores[:width].reshape(-1, _BLOCK_ROWS).max(axis=1)
    bound = np.partition(maxima, maxima.size - count)[maxima.size - count]
    return np.flatnonzero(scores >= bound) if np.isfinite(bound) else None


def _top_candidates(scores: np.ndarray, n: int, margin: float) -> np.ndarray:
    """Indices of every row whose ``scores`` value is within ``margin`` of the ``n``-th best or above it
    (``-inf`` marks rows filtered out; ``n`` must not exceed the number of other rows)."""
    size = scores.size
    spare = min(size, n + _SPARE)
    top = _above_block_bound(scores, spare) if spare < size and size >= _BLOCK_ROWS * spare * 4 else None
    if top is None:
        top = np.argpartition(-scores, spare - 1)[:spare] if spare < size else np.arange(size)
    values = scores[top]
    floor = -np.partition(-values, n - 1)[n - 1] - margin
    if spare < size and values.min() >= floor:  # rows outside the partition may be within the margin too
        return np.flatnonzero(scores >= floor)
    return top[values >= floor]


_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _add_popcount(words: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
    """Add the set bits of each uint64 of ``words`` to ``out`` (numpy >= 2 counts them natively; older numpy
    per byte)."""
    if hasattr(np, "bitwise_count"):
        np.bitwise_count(words, out=scratch)
        np.add(out, scratch, out=out)
    else:
        np.add(out, _BYTE_BITS[words.view(np.uint8)].reshape(-1, 8).sum(axis=1, dtype=np.uint16), out=out)


class BinaryCodes(NamedTuple):
    """1-bit codes of unit rows: bit ``j`` of a row is set when its dimension ``j`` is above ``centre[j]``.
    ``words[w, i]`` holds bits ``64w`` to ``64w + 63`` of row ``i`` (the last word zero-padded): word-major,
    so that a Hamming pass streams each word of every row contiguously."""

    centre: np.ndarray
    words: np.ndarray

    @classmethod
    def of(cls, unit: np.ndarray) -> BinaryCodes:
        """The codes of ``unit`` (float32 rows), centred on their mean."""
        n, dims = unit.shape
        centre = unit.mean(axis=0, dtype=np.float64).astype(np.float32) if n else np.zeros(dims, dtype=np.float32)
        width = (dims + 63) // 64
        words = np.empty((width, n), dtype=np.uint64)
        row = np.zeros((min(n, _CODE_BATCH), width * 8), dtype=np.uint8)
        for at in range(0, n, _CODE_BATCH):
            packed = np.packbits(unit[at : at + _CODE_BATCH] > centre, axis=1)
            m = packed.shape[0]
            row[:m, : packed.shape[1]] = packed
            words[:, at : at + m] = row[:m].view(np.uint64).T
        return cls(centre, words)

    def query(self, q: np.ndarray) -> np.ndarray:
        """The code of the unit query ``q``: one uint64 per word."""
        out = np.zeros(self.words.shape[0] * 8, dtype=np.uint8)
        packed = np.packbits(q > self.centre)
        out[: packed.size] = packed
        return out.view(np.uint64)

    def nearest(self, q: np.ndarray, count: int, keep: np.ndarray | None) -> np.ndarray:
        """Indices of at least ``count`` rows (of those in ``keep``, None: all) with the smallest Hamming
        distance to the code of ``q``: every row as close as the ``count``-th is included."""
        width, n = self.words.shape
        code = self.query(q)
        dist = np.zeros(n, dtype=np.uint16)
        xor = np.empty(n, dtype=np.uint64)
        bits = np.empty(n, dtype=np.uint8)
        for w in range(width):
            np.bitwise_xor(self.words[w], code[w], out=xor)
            _add_popcount(xor, dist, bits)
        beyond = width * 64 + 1  # farther than any code: rows left out by ``keep``
        if keep is not None:
            dist[~keep] = beyond
        counts = np.bincount(dist, minlength=beyond + 1)
        cut = int(np.searchsorted(np.cumsum(counts), count))  # the distance of the count-th nearest row
        return np.flatnonzero(dist <= cut)


@dataclass(frozen=True, eq=False)
class VectorMatrix:
    """One consistent copy of the stored vectors of one dimension: unit-length rows (zero vectors stay zero;
    non-finite ones are left out) in rowid order, each row's chunk id, rowid, source and model (as codes
    into ``source_names`` / ``model_names``), and the index generation they were read at."""

    generation: str
    vectors: np.ndarray
    ids: list[str]
    rowids: np.ndarray
    source_codes: np.ndarray
    source_names: tuple[str, ...]
    model_codes: np.ndarray
    model_names: tuple[str, ...]
    #: the binary codes of the pre-filter (only from :data:`BINARY_PREFILTER_ROWS` rows up)
    codes: BinaryCodes | None = None
    #: each chunk id's row
    row_of: dict[str, int] = field(default_factory=dict)
    #: per row, the version of the stored row it was read from, when the store has one (PostgreSQL's ``xmin``:
    #: a copy is brought up to date by reading only the rows whose version changed)
    row_versions: np.ndarray | None = None

    @classmethod
    def empty(cls, generation: str) -> VectorMatrix:
        """A matrix without rows."""
        none = np.zeros(0, dtype=np.int64)
        return cls(generation, np.zeros((0, 0), dtype=np.float32), [], none, none, (), none, ())

    def search(self, query: np.ndarray, limit: int, sources: Sequence[str] | None = None,
               model: str | None = None) -> list[tuple[str, float]]:
        """The ``limit`` best ``(chunk id, cosine score)`` pairs among the rows of ``sources`` and ``model``
        (None: any), best first, equal scores in rowid order; ``[]`` when the query is zero or not finite,
        or the matrix has another dimension. Scores are :func:`exact_scores`."""
        matrix = self.vectors
        if limit <= 0 or matrix.shape[0] == 0 or matrix.shape[1] != np.size(query):
            return []
        unit, valid, zero = unit_rows(np.asarray(query, dtype=np.float32).reshape(1, -1))
        if not valid[0] or zero[0]:
            return []  # no direction: nothing is similar to it
        q = unit[0]
        keep = self._rows_of(sources, model)
        count = matrix.shape[0] if keep is None else int(np.count_nonzero(keep))
        n = min(int(limit), count)
        if n <= 0:
            return []
        codes = self.codes
        if codes is not None and count > BINARY_PREFILTER_ROWS:
            picked = codes.nearest(q, max(n * BINARY_OVERFETCH, BINARY_MIN_CANDIDATES, count // BINARY_POOL_SHARE),
                                   keep)
            scores = _scan_scores(matrix[picked], q)
            if keep is not None:
                scores[~keep[picked]] = -np.inf
            rows = picked[_top_candidates(scores, n, score_margin(q.size))]
        else:
            scores = _scan_scores(matrix, q)
            if keep is not None:
                scores[~keep] = -np.inf
            rows = _top_candidates(scores, n, score_margin(q.size))
        exact = exact_scores(matrix[rows], q)
        order = np.lexsort((self.rowids[rows], -exact))[:n]
        return [(self.ids[rows[i]], float(exact[i])) for i in order]

    def scores_of(self, query: np.ndarray, ids: Sequence[str], model: str | None = None) -> dict[str, float]:
        """:func:`stored_scores` of the chunks ``ids`` (those with a row here, of ``model`` when given), read
        from this copy instead of the stored rows: the same values (rows are :func:`unit_rows` of the stored
        vectors)."""
        q = _unit_query(query) if self.vectors.shape[0] and self.vectors.shape[1] == np.size(query) else None
        if q is None:
            return {}
        want = None if model is None else (self.model_names.index(model) if model in self.model_names else -1)
        rows = [r for i in ids if (r := self.row_of.get(i)) is not None
                and (want is None or self.model_codes[r] == want)]
        if not rows:
            return {}
        scores = exact_scores(self.vectors[rows], q)
        return {self.ids[r]: float(s) for r, s in zip(rows, scores)}

    def _rows_of(self, sources: Sequence[str] | None, model: str | None) -> np.ndarray | None:
        """The mask of rows of ``sources`` and ``model``; None when that is every row."""
        keep: np.ndarray | None = None
        if model is not None:
            if model not in self.model_names:
                return np.zeros(len(self.ids), dtype=bool)
            if len(self.model_names) > 1:
                keep = self.model_codes == self.model_names.index(model)
        if sources:
            wanted = [code for code, name in enumerate(self.source_names) if name in sources]
            if len(wanted) < len(self.source_names):
                of_sources = np.isin(self.source_codes, wanted)
                keep = of_sources if keep is None else keep & of_sources
        return keep


class MatrixCache:
    """A :class:`VectorMatrix` kept for the index generation it was read at, and the daemon thread that
    (re)loads it.

    ``read(dims, stop, previous)`` reads one consistent copy of the stored vectors of ``dims`` dimensions,
    tagged with the generation it was read at (None when ``stop`` was set meanwhile). A stale copy answers no
    search once a load starts; with ``refresh`` it is handed to ``read`` as ``previous`` (to read only what changed
    since) and held until the load ends, else ``previous`` is None and the copy is freed before the load.
    ``interrupt()`` ends a read under way (on :meth:`close`). ``label`` names the index in logs, ``fallback`` what
    searches use while no copy is loaded. Thread-safe: the matrix is replaced as a whole, and at most one load runs
    at a time.
    """

    def __init__(self, read: Callable[[int, threading.Event, VectorMatrix | None], VectorMatrix | None], *,
                 label: str, fallback: str, interrupt: Callable[[], None] | None = None, refresh: bool = False) -> None:
        self._read = read
        self._interrupt = interrupt
        self._refresh = refresh
        self._label = label
        self._fallback = fallback
        self._matrix: VectorMatrix | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._failed: tuple[str, str] | None = None  # (generation, error) of the last failed load

    def get(self, generation: str, dims: int | None = None) -> VectorMatrix | None:
        """The matrix when it is loaded for ``generation`` (and, given ``dims``, holds the vectors of that
        size); otherwise None."""
        cached = self._matrix
        if cached is None or cached.generation != generation:
            return None
        return cached if dims is None or _of_dims(cached, dims) else None

    def latest(self, dims: int | None = None) -> VectorMatrix | None:
        """The matrix last loaded (whatever its generation), when it holds the vectors of ``dims`` dimensions
        (None: any size)."""
        cached = self._matrix
        return cached if cached is not None and (dims is None or _of_dims(cached, dims)) else None

    def keep(self, matrix: VectorMatrix) -> None:
        """Keep ``matrix`` (read by the caller) as the loaded copy."""
        self._matrix = matrix

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
            if cached is not None and cached.generation == gen and _of_dims(cached, dims):
                return  # loaded while this search ran on the fallback
            # stale: it answers no search; with ``refresh`` the load brings it up to date (and then lets it go)
            previous = cached if self._refresh and cached is not None and _of_dims(cached, dims) else None
            self._matrix = None
            thread = threading.Thread(target=self._load, args=(gen, dims, previous), name=_THREAD_NAME, daemon=True)
            self._thread = thread
            thread.start()

    def _load(self, gen: str, dims: int, previous: VectorMatrix | None) -> None:
        """Thread body: read the copy, never holding the store's lock."""
        started = time.monotonic()
        try:
            loaded = self._read(dims, self._stop, previous)
            with self._lock:  # close() sets the stop under it: a copy read meanwhile is never kept after close
                if loaded is None or self._stop.is_set():
                    return
                self._matrix = loaded
                self._failed = None
            log.debug("vector cache for %s loaded: %d vectors in %.2fs", self._label, len(loaded.ids),
                      time.monotonic() - started)
        except Exception as exc:  # noqa: BLE001 - a failed load only means searches stay on the fallback
            if self._stop.is_set():
                return  # closed while loading (e.g. the query was interrupted)
            self._failed = (gen, str(exc))
            log.warning("cannot load the vector cache for %s (searches keep using %s): %s", self._label,
                        self._fallback, exc)

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
        if self._interrupt is not None:
            with contextlib.suppress(Exception):
                self._interrupt()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)
        self._matrix = None


def _of_dims(matrix: VectorMatrix, dims: int) -> bool:
    """Whether ``matrix`` holds the vectors of ``dims`` dimensions: it has that many columns, or it is a copy of an
    index without any vector (:meth:`VectorMatrix.empty`). A copy without rows of another size says nothing of
    this one's."""
    return matrix.vectors.shape[1] == dims or matrix.vectors.shape == (0, 0)


class MatrixBuilder:
    """A :class:`VectorMatrix` being assembled row by row: from rows read (:meth:`add_read`) and rows of an earlier
    copy (:meth:`add_kept`), in arrays grown as needed (room for ``capacity`` rows of ``dims`` dimensions first).
    With ``versions``, each row's version is kept too (:attr:`VectorMatrix.row_versions`)."""

    _KEPT_BLOCK = 65536  # rows copied from an earlier copy at once (bounds the temporaries)

    def __init__(self, capacity: int, dims: int, *, versions: bool = False, sources: Sequence[str] = (),
                 models: Sequence[str] = ()) -> None:
        capacity = max(1, int(capacity))
        self.dims = int(dims)
        self._vectors = np.empty((capacity, self.dims), dtype=np.float32)
        self._rowids = np.empty(capacity, dtype=np.int64)
        self._sources = np.empty(capacity, dtype=np.int32)
        self._models = np.empty(capacity, dtype=np.int32)
        self._versions = np.full(capacity, -1, dtype=np.int64) if versions else None  # -1: unknown, read again
        self._source_names: dict[str, int] = {name: i for i, name in enumerate(sources)}
        self._model_names: dict[str, int] = {name: i for i, name in enumerate(models)}
        self.ids: list[str] = []

    def _room(self, extra: int) -> int:
        """Make room for ``extra`` more rows; the position of the first."""
        at = len(self.ids)
        if at + extra > self._rowids.size:
            size = max(2 * self._rowids.size, at + extra)
            self._vectors = np.resize(self._vectors, (size, self.dims))
            self._rowids, self._sources, self._models = (np.resize(a, size) for a in
                                                         (self._rowids, self._sources, self._models))
            if self._versions is not None:
                self._versions = np.resize(self._versions, size)
        return at

    def add_read(self, rows: Sequence[Sequence[Any]], vectors: UnitVectors, version_at: int | None = None) -> None:
        """Add ``rows`` (``(rowid, id, source, model, ...)``, the version at ``version_at``) with their unit
        ``vectors``; non-finite vectors are left out."""
        unit = vectors.unit
        if not vectors.finite.all():  # non-finite vectors are never returned: leave them out
            kept = np.flatnonzero(vectors.finite)
            unit = unit[kept]
            rows = [rows[i] for i in kept]
        at = self._room(len(rows))
        end = at + len(rows)
        self._vectors[at:end] = unit
        self._rowids[at:end] = [r[0] for r in rows]
        self._sources[at:end] = [self._source_names.setdefault(r[2], len(self._source_names)) for r in rows]
        self._models[at:end] = [self._model_names.setdefault(r[3], len(self._model_names)) for r in rows]
        if self._versions is not None:
            self._versions[at:end] = [r[version_at] for r in rows] if version_at is not None else -1
        self.ids.extend(r[1] for r in rows)

    def add_kept(self, previous: VectorMatrix, rows: np.ndarray) -> None:
        """Add the rows ``rows`` (positions) of ``previous``, whose source and model names this builder started
        with (``sources``, ``models``)."""
        at = self._room(int(rows.size))
        for first in range(0, int(rows.size), self._KEPT_BLOCK):
            block = rows[first: first + self._KEPT_BLOCK]
            span = slice(at + first, at + first + block.size)
            self._vectors[span] = previous.vectors[block]
            self._rowids[span] = previous.rowids[block]
            self._sources[span] = previous.source_codes[block]
            self._models[span] = previous.model_codes[block]
            if self._versions is not None:
                self._versions[span] = previous.row_versions[block] if previous.row_versions is not None else -1
        self.ids.extend(previous.ids[i] for i in rows.tolist())

    def matrix(self, generation: str) -> VectorMatrix:
        """The rows added, in rowid order, as a matrix tagged ``generation``."""
        n = len(self.ids)
        rowids = self._rowids[:n]
        order = None if n < 2 or bool(np.all(rowids[1:] > rowids[:-1])) else np.argsort(rowids, kind="stable")
        ids = self.ids if order is None else [self.ids[i] for i in order.tolist()]

        def trimmed(a: np.ndarray) -> np.ndarray:  # a copy only where rows must move or most of the room is unused
            if order is not None:
                return a[order]
            return a[:n] if n > a.shape[0] // 2 else a[:n].copy()

        vectors = trimmed(self._vectors)
        codes = BinaryCodes.of(vectors) if n > BINARY_PREFILTER_ROWS else None
        return VectorMatrix(generation, vectors, ids, trimmed(self._rowids), trimmed(self._sources),
                            tuple(self._source_names), trimmed(self._models), tuple(self._model_names), codes,
                            {cid: i for i, cid in enumerate(ids)},
                            trimmed(self._versions) if self._versions is not None else None)


def matrix_of(generation: str, batches: Iterable[tuple[Sequence[Sequence[Any]], UnitVectors]], most: int, dims: int,
              stop: threading.Event | None = None) -> VectorMatrix | None:
    """The :class:`VectorMatrix` of ``batches`` (rows ``(rowid, id, source, model, ...)`` in rowid order with
    their :class:`UnitVectors`, about ``most`` rows of ``dims`` dimensions in all), tagged ``generation``;
    non-finite vectors are left out. None when ``stop`` was set."""
    builder = MatrixBuilder(most, dims)
    for rows, vectors in batches:
        if stop is not None and stop.is_set():
            return None
        builder.add_read(rows, vectors)
    return builder.matrix(generation)


class VectorCache(MatrixCache):
    """The :class:`MatrixCache` of one SQLite index file, read through a read-only connection of its own.

    ``module`` is the DB-API driver module the index is opened with; ``generation_at(db, inode)``
    reads the index generation through a connection (inside the caller's transaction, if any).
    """

    def __init__(self, path: Path, module: ModuleType, generation_at: Callable[[Any, int | None], str]) -> None:
        super().__init__(self._read_own, label=str(path), fallback="sqlite-vec", interrupt=self._interrupt_read)
        self.path = path
        self._module = module
        self._generation_at = generation_at
        self._conn: Any = None  # the loading thread's connection, to interrupt on close()

    def load(self, db: Any, inode: int | None, dims: int | None = None) -> VectorMatrix:
        """Read the matrix now through ``db`` (whose lock the caller holds), of ``dims`` dimensions (the
        widest stored vectors when None), and keep it."""
        loaded = self._read_matrix(db, inode, dims)
        assert loaded is not None  # no stop event
        self.keep(loaded)
        return loaded

    def _read_own(self, dims: int, stop: threading.Event, previous: VectorMatrix | None) -> VectorMatrix | None:
        """The copy read through an own read-only connection (whole: ``previous`` is None here); None when a
        rebuild was swapped in meanwhile (the next search loads the new file) or ``stop`` was set."""
        inode = self.path.stat().st_ino
        conn = self._module.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                    check_same_thread=False, isolation_level=None, timeout=5.0)
        self._conn = conn
        try:
            if stop.is_set():
                return None
            loaded = self._read_matrix(conn, inode, dims, stop)
        finally:
            self._conn = None
            conn.close()
        return loaded if self.path.stat().st_ino == inode else None

    def _interrupt_read(self) -> None:
        conn = self._conn
        if conn is not None:
            conn.interrupt()

    def _read_matrix(self, db: Any, inode: int | None, dims: int | None,
                     stop: threading.Event | None = None) -> VectorMatrix | None:
        """The stored vectors of ``dims`` dimensions (the widest stored when None) as a :class:`VectorMatrix`,
        tagged with the generation they were read at; None when ``stop`` was set."""
        began = not db.in_transaction
        if began:
            db.execute("BEGIN")  # one read snapshot: the generation tag matches the rows exactly
        try:
            gen = self._generation_at(db, inode)
            if dims is None:
                dims = int(db.execute("SELECT coalesce(max(length(embedding)), 0) FROM chunks").fetchone()[0]) // 4
            if dims <= 0:
                return VectorMatrix.empty(gen)
            most = int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])  # cheap, unlike a filtered count
            return matrix_of(gen, stored_vectors(db, dims, _WARM_BATCH), most, dims, stop)
        finally:
            if began and db.in_transaction:
                db.execute("ROLLBACK")
