"""Line units: short runs of a chunk's lines, embedded beside the chunk, that re-score it on the vector side.

One vector for a ~10-line conversational chunk dilutes the one turn a question is about. With
``query.hybrid.unit_lines`` = *n* (3 by default; 0 turns it off) a sync also embeds each chunk's
non-overlapping runs of *n* non-blank lines (its *units*) with the index's model and keeps their vectors in
the embedding cache, keyed by the unit text's hash like every cached vector (derived data: rebuilt like the
rest). A search still scans only the chunk vectors; the candidates it found (both sides, ≤ 48 by default) are
then scored on the vector side by ``(1 − w)·chunk cosine + w·best unit cosine`` (``w`` =
``query.hybrid.unit_weight``, 0.4), on raw cosines before the model's calibration; whole chunks are returned
as before. A candidate whose units are not all cached keeps its chunk cosine.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

from openclaw_memory.storage import MemoryStore
from openclaw_memory.text.preparation import nonblank_lines

__all__ = ["best_unit_similarities", "blend_unit_similarity", "line_units", "unit_hash", "unit_similarities",
           "unit_vectors", "units_to_embed"]


def line_units(text: str, size: int) -> list[str]:
    """The non-overlapping runs of ``size`` consecutive non-blank lines of ``text`` (the last may be shorter);
    none when ``size`` < 1 or the text has no two units' worth (a chunk of at most ``size`` lines is its own unit,
    so it needs no second vector)."""
    if size < 1:
        return []
    lines = nonblank_lines(text)
    if len(lines) <= size:
        return []
    return ["\n".join(lines[i:i + size]) for i in range(0, len(lines), size)]


def unit_hash(text: str) -> str:
    """The embedding-cache key of a unit: sha256 of its text, as a chunk's."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=4096)
def _hashed_units(text: str, size: int) -> tuple[tuple[str, str], ...]:
    """Each of :func:`line_units` of ``text`` with its :func:`unit_hash`, remembered per chunk text: a search
    reads the units of the same candidates again and again."""
    return tuple((u, unit_hash(u)) for u in line_units(text, size))


def unit_vectors(store: MemoryStore, texts: Mapping[str, str], *, size: int, provider: str, model: str,
                 provider_key: str) -> dict[str, np.ndarray]:
    """The cached unit vectors of each text (by id), one row per unit, from the store's embedding cache (one
    read); ids whose units are not all cached, or of differing dimensions, (or that have none) are left out."""
    hashed = {cid: _hashed_units(text, size) for cid, text in texts.items()}
    hashes = {u: h for pairs in hashed.values() for u, h in pairs}
    if not hashes:
        return {}
    cached = store.cache_get(provider, model, provider_key, list(dict.fromkeys(hashes.values())))
    out: dict[str, np.ndarray] = {}
    for cid, pairs in hashed.items():
        vecs = [cached.get(h) for _, h in pairs]
        if not vecs or any(v is None or v.size != vecs[0].size for v in vecs):  # type: ignore[union-attr]
            continue
        out[cid] = np.stack(vecs).astype(np.float32, copy=False)  # type: ignore[arg-type]
    return out


def best_unit_similarities(vectors: Mapping[str, np.ndarray], query: np.ndarray) -> dict[str, float]:
    """The best raw cosine between ``query`` and a unit of each id's :func:`unit_vectors` (ids whose vectors
    are not of the query's dimension are left out)."""
    q = np.asarray(query, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(q))
    if not vectors or norm == 0.0:
        return {}
    q = q / norm
    out: dict[str, float] = {}
    for cid, m in vectors.items():
        if m.shape[1] != q.size:
            continue
        norms = np.linalg.norm(m, axis=1)
        norms[norms == 0] = 1.0
        out[cid] = float(np.max((m @ q) / norms))
    return out


def unit_similarities(store: MemoryStore, query: np.ndarray, texts: Mapping[str, str], *, size: int,
                      provider: str, model: str, provider_key: str) -> dict[str, float]:
    """The best raw cosine between ``query`` and a unit of each text (by id), from the unit vectors in the
    store's embedding cache; ids whose units are not all cached (or that have none) are left out."""
    return best_unit_similarities(unit_vectors(store, texts, size=size, provider=provider, model=model,
                                               provider_key=provider_key), query)


def blend_unit_similarity(chunk: float, unit: float | None, weight: float) -> float:
    """``(1 − weight)·chunk + weight·unit`` (raw cosines); ``chunk`` unchanged when the unit score is unknown."""
    if unit is None or weight <= 0:
        return chunk
    return (1.0 - weight) * chunk + weight * unit


def units_to_embed(texts: Sequence[str], size: int) -> list[str]:
    """Every unit of ``texts``, once each, in order."""
    return list(dict.fromkeys(u for t in texts for u in line_units(t, size)))
