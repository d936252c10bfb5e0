"""How stored values map to Python: float32 vector BLOBs and ``chunks`` rows as :class:`StoredChunk`.

Shared by :mod:`openclaw_memory.storage.sqlite.store` and :mod:`openclaw_memory.storage.sqlite.vec_index`, which both
read whole chunks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from openclaw_memory.storage import StoredChunk

__all__ = ["CHUNK_COLUMNS", "chunk_from_row", "chunk_rows", "pack_vector", "unpack_vector"]

#: the ``chunks`` columns :func:`chunk_from_row` reads, in its order
CHUNK_COLUMNS = "id, path, source, start_line, end_line, hash, model, text, embedding"
#: ids bound per ``IN (...)`` list (SQLite before 3.32 allows 999 variables per statement)
_IDS_PER_QUERY = 400


def pack_vector(vec: np.ndarray) -> bytes:
    """Little-endian float32 bytes, with -0.0 stored as 0.0 (so a zero vector is a zeroblob)."""
    return (np.asarray(vec, dtype="<f4") + np.float32(0.0)).astype("<f4", copy=False).tobytes()


def unpack_vector(blob: bytes | None) -> np.ndarray | None:
    """The float32 vector of a BLOB written by :func:`pack_vector` (None for NULL or an empty BLOB)."""
    if not blob:
        return None
    return np.frombuffer(blob, dtype="<f4")


def chunk_from_row(r: Sequence[Any]) -> StoredChunk:
    """The chunk of a row of :data:`CHUNK_COLUMNS`."""
    return StoredChunk(
        id=r[0], path=r[1], source=r[2], start_line=int(r[3]), end_line=int(r[4]), hash=r[5], model=r[6],
        text=r[7], embedding=unpack_vector(r[8]),
    )


def chunk_rows(db: Any, columns: str, ids: Sequence[str]) -> Iterator[Any]:
    """``SELECT columns FROM chunks`` for the chunks ``ids`` (in no particular order; unknown ids are
    left out), a few hundred ids per statement."""
    for i in range(0, len(ids), _IDS_PER_QUERY):
        part = list(ids[i : i + _IDS_PER_QUERY])
        yield from db.execute(f"SELECT {columns} FROM chunks WHERE id IN ({','.join('?' * len(part))})", part)
