"""Count which path (vec0 or NumPy) served each vector search of a SQLite store."""

from __future__ import annotations

from typing import Any

from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.types import Candidate


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

