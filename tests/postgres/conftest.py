"""Fixtures of the PostgreSQL backend's tests: stores and indexes on the session's real server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.storage.postgres import PostgresStore


@pytest.fixture
def make_pg_store(pg: Any) -> Iterator[Callable[..., PostgresStore]]:
    """``make_pg_store(namespace=None, **kwargs)``: a PostgresStore in this session's schema (a fresh
    namespace unless one is given); all are closed afterwards."""
    made: list[PostgresStore] = []

    def _make(namespace: str | None = None, **kwargs: Any) -> PostgresStore:
        kwargs.setdefault("schema", pg.schema)
        # the server's own search paths, deterministically (no copy loaded in the background meanwhile);
        # tests/postgres/test_vector_copy.py asks for the in-memory copy
        kwargs.setdefault("memory_cache", False)
        store = PostgresStore(pg.url, namespace=namespace or pg.namespace(), **kwargs)
        made.append(store)
        return store

    yield _make
    for s in made:
        s.close()


@pytest.fixture
def make_pg_index(pg: Any, workspace: Path, tmp_path: Path) -> Iterator[Callable[..., MemoryIndex]]:
    """``make_pg_index(provider=None, **overrides)``: a MemoryIndex on the workspace whose store is the
    test server (one namespace per test unless ``store`` is given)."""
    made: list[MemoryIndex] = []
    namespace = pg.namespace()

    def _make(provider: object = None, **overrides: Any) -> MemoryIndex:
        overrides.setdefault("workspace", workspace)
        overrides.setdefault("store", {"url": pg.url, "namespace": namespace, "pg_schema": pg.schema})
        overrides.setdefault("watch", False)
        idx = MemoryIndex(provider=provider, **overrides)  # type: ignore[arg-type]
        made.append(idx)
        return idx

    yield _make
    for idx in made:
        idx.close()
