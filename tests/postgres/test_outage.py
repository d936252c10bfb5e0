"""A PostgreSQL index through outages and restarts of its server (a server of this module's own,
stopped and started for real): notes are still written, searches fail fast with a clear error and
recover on the first call once the server is back, and a restart costs no search, sync or forced rebuild."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import append_memory
from openclaw_memory.errors import StoreUnavailableError
from openclaw_memory.files.records import RecordFiles
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
def running(server: StoppablePgServer) -> Iterator[StoppablePgServer]:
    """The module's server, running at the start of the test and again after it."""
    server.start()
    yield server
    server.start()


@pytest.fixture
def index(running: StoppablePgServer, workspace: Path, tmp_path: Path,
          write: Callable[[dict[str, str]], Path]) -> Iterator[MemoryIndex]:
    write(NOTES)
    idx = MemoryIndex(workspace=workspace, state_dir=str(tmp_path / "state"), watch=False, provider=None,
                      store={"url": running.url, "namespace": running.namespace(), "pg_schema": running.schema},
                      sync={"on_search": False})
    idx.sync()
    assert idx.search("billing database").hits
    yield idx
    idx.close()


def _timed(call: Callable[[], Any]) -> tuple[float, BaseException | None]:
    start = time.monotonic()
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the test inspects it
        return time.monotonic() - start, exc
    return time.monotonic() - start, None


def test_notes_are_written_while_the_database_is_down(running: StoppablePgServer, index: MemoryIndex,
                                                      workspace: Path) -> None:
    """Issue 31 item 1: the Markdown file never waits for the index's database."""
    running.stop()
    rel = "memory/2026-02-03.md"
    append_memory(workspace, rel, "- the ferry to Bornholm leaves at 08:30")
    RecordFiles(workspace, "item").edit("memory/store/notes.md", lambda _t: "kept while the server was down\n",
                                        create=True)
    assert (workspace / rel).read_text().endswith("- the ferry to Bornholm leaves at 08:30\n")
    assert (workspace / "memory/store/notes.md").read_text() == "kept while the server was down\n"
    with pytest.raises(StoreUnavailableError, match="is unavailable .*outage"):
        index.search("Bornholm ferry")
    running.start()
    index.sync()  # the index catches up with what was written meanwhile
    assert index.search("Bornholm ferry").hits[0].path == rel


def test_status_during_an_outage_names_it(running: StoppablePgServer, index: MemoryIndex) -> None:
    running.stop()
    try:
        text = str(index.status().to_dict())
    except StoreUnavailableError as exc:  # a clear error of ours is as good as a status naming the outage
        text = str(exc)
    assert "unavailable" in text and "Traceback" not in text


def test_an_outage_fails_searches_fast_and_recovers_on_the_first_call(running: StoppablePgServer,
                                                                      index: MemoryIndex) -> None:
    """Issue 32 item 7: no search blocks for the pool's 30 s; the breaker lets the first call after the
    server's return through."""
    running.stop()
    first, exc = _timed(lambda: index.search("billing database"))
    assert isinstance(exc, StoreUnavailableError) and first < 8.0, (first, exc)
    for _ in range(3):  # the breaker is open: each call costs one refused connection attempt
        later, exc = _timed(lambda: index.search("billing database"))
        assert isinstance(exc, StoreUnavailableError) and later < 1.0, (later, exc)
    running.start()
    assert index.search("billing database").hits


def test_a_server_restart_costs_no_search(running: StoppablePgServer, index: MemoryIndex) -> None:
    """Issue 31 item 6: connections lost in a restart are replaced, not handed to the next searches."""
    running.stop()
    running.start()
    for _ in range(3):
        assert index.search("billing database").hits


def test_a_sync_after_a_restart_indexes_what_was_written(running: StoppablePgServer, index: MemoryIndex,
                                                         workspace: Path) -> None:
    """A restart costs no sync either: its first pooled call gets the retry a search gets (it raised)."""
    running.stop()
    running.start()
    append_memory(workspace, "memory/2026-02-03.md", "- the ferry to Bornholm leaves at 08:30")
    report = index.sync()
    assert report.files_indexed == 1
    assert index.search("Bornholm ferry").hits[0].path == "memory/2026-02-03.md"


def test_a_forced_rebuild_after_a_restart_runs(running: StoppablePgServer, index: MemoryIndex) -> None:
    running.stop()
    running.start()
    report = index.sync(force=True)
    assert report.full_rebuild and report.files_indexed == len(NOTES)
    assert index.search("billing database").hits[0].path == "memory/2026-02-01.md"
