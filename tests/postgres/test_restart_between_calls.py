"""A server restart between two calls costs no sync and no forced rebuild either (as it costs no
search, tests/postgres/test_outage.py): the connections it cut are replaced, not handed to the next call."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import append_memory
from tests.pg_server import StoppablePgServer, stoppable_pg_server

NOTES = {
    "MEMORY.md": "# Memory\n\nThe staging cluster runs on Hetzner; backups at 03:00 UTC.\n",
    "memory/2026-02-01.md": "# 2026-02-01\n\nMigrated the billing database to PostgreSQL 18 with pgvector.\n",
}


@pytest.fixture(scope="module")
def server() -> Iterator[StoppablePgServer]:
    with stoppable_pg_server() as srv:
        yield srv


@pytest.fixture
def index(server: StoppablePgServer, workspace: Path, tmp_path: Path,
          write: Callable[[dict[str, str]], Path]) -> Iterator[MemoryIndex]:
    server.start()
    write(NOTES)
    idx = MemoryIndex(workspace=workspace, state_dir=str(tmp_path / "state"), watch=False, provider=None,
                      store={"url": server.url, "namespace": server.namespace(), "pg_schema": server.schema},
                      sync={"on_search": False})
    idx.sync()
    yield idx
    idx.close()
    server.start()


def _restart(server: StoppablePgServer) -> None:
    server.stop()
    server.start()


def test_a_sync_after_a_restart_indexes_what_was_written(server: StoppablePgServer, index: MemoryIndex,
                                                         workspace: Path) -> None:
    _restart(server)
    append_memory(workspace, "memory/2026-02-03.md", "- the ferry to Bornholm leaves at 08:30")
    report = index.sync()
    assert report.files_indexed == 1
    assert index.search("Bornholm ferry").hits[0].path == "memory/2026-02-03.md"


def test_a_forced_rebuild_after_a_restart_runs(server: StoppablePgServer, index: MemoryIndex) -> None:
    _restart(server)
    report = index.sync(force=True)
    assert report.full_rebuild and report.files_indexed == len(NOTES)
    assert index.search("billing database").hits[0].path == "memory/2026-02-01.md"

