"""The backends the conformance suite (``test_store_conformance.py``) runs against.

Adding a backend is one entry in :data:`BACKENDS`: a :class:`Backend` whose ``open`` returns a
:class:`~openclaw_memory.storage.MemoryStore` on the index named ``name`` inside ``where`` (a fresh
temporary directory per test: it may also serve to derive a database or schema name), and whose
``open_unusable`` tries to open a store where none can be (it must raise ``StoreError``). Opening
the same ``name`` twice gives two handles on one index, as two processes would have.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage import MemoryStore


@dataclass(frozen=True)
class Backend:
    """How the suite opens stores of one backend."""

    open: Callable[[Path, str], MemoryStore]
    """``open(where, name)``: a store on the index ``name`` under ``where`` (created empty if new)."""
    open_unusable: Callable[[Path], MemoryStore]
    """``open_unusable(where)``: open a store at a location that cannot hold one (must raise StoreError)."""
    marks: tuple[pytest.MarkDecorator, ...] = field(default=())
    """Marks for this backend's tests (``pytest.mark.slow``, a skip when its server is absent, ...)."""


def _sqlite(**options: object) -> Backend:
    def open_(where: Path, name: str) -> MemoryStore:
        return SQLiteStore(where / f"{name}.sqlite", **options)  # type: ignore[arg-type]

    def unusable(where: Path) -> MemoryStore:
        blocker = where / "not-a-directory"
        blocker.write_text("a file where the index directory should be")
        return SQLiteStore(blocker / "index.sqlite", **options)  # type: ignore[arg-type]

    return Backend(open=open_, open_unusable=unusable)


def _postgresql() -> Backend:
    """PostgresStore on the test server (tests/pg_server.py): each index a namespace of its own."""

    def open_(where: Path, name: str) -> MemoryStore:
        from openclaw_memory.storage.postgres import PostgresStore
        from tests.pg_server import shared_pg_server

        server = shared_pg_server()
        key = hashlib.sha1(str(where).encode()).hexdigest()[:16]
        return PostgresStore(server.url, namespace=f"{key}-{name}", schema=server.schema)

    def unusable(where: Path) -> MemoryStore:
        from openclaw_memory.storage.postgres import PostgresStore

        return PostgresStore(f"postgresql://nobody@/db?host={where / 'no-server-here'}&connect_timeout=2",
                             namespace="n")

    return Backend(open=open_, open_unusable=unusable)


#: Every backend the suite runs against, by test id. The SQLite store runs on each vector path:
#: sqlite-vec with the in-memory copy (the default), sqlite-vec alone, and numpy alone.
BACKENDS: dict[str, Backend] = {
    "sqlite": _sqlite(),
    "sqlite-vec0": _sqlite(memory_cache=False),
    "sqlite-numpy": _sqlite(vector_enabled=False),
    "postgresql": _postgresql(),
}


class StoreFactory:
    """Opens stores of one backend for one test and closes them all afterwards."""

    def __init__(self, backend: Backend, where: Path) -> None:
        self.backend = backend
        self.where = where
        self._opened: list[MemoryStore] = []

    def open(self, name: str = "index") -> MemoryStore:
        """A store on the index ``name`` (another handle on it when it is already open)."""
        store = self.backend.open(self.where, name)
        self._opened.append(store)
        return store

    def open_unusable(self) -> MemoryStore:
        """Open a store where none can be; the backend raises StoreError."""
        return self.backend.open_unusable(self.where)

    def close_all(self) -> None:
        for store in reversed(self._opened):
            store.close()


@pytest.fixture(params=[pytest.param(name, marks=b.marks) for name, b in BACKENDS.items()])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """A :class:`StoreFactory` for each backend in :data:`BACKENDS`."""
    where = tmp_path / "stores"
    where.mkdir()
    factory = StoreFactory(BACKENDS[request.param], where)
    yield factory
    factory.close_all()


@pytest.fixture
def store(store_factory: StoreFactory) -> MemoryStore:
    """A new, empty store of the backend under test."""
    return store_factory.open()
