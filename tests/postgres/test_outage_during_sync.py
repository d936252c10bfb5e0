"""A PostgreSQL server that goes away in the middle of a sync (stopped for real between two files): the sync's
error is the outage the docs tell users to catch (``StoreUnavailableError``), and still an ``IndexingError``."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import IndexingError, MemoryIndex, StoreUnavailableError
from openclaw_memory.files.append import append_memory
from tests.postgres.test_outage import index, running, server  # noqa: F401 - the module's server and index
from tests.pg_server import StoppablePgServer


def test_a_sync_cut_off_by_an_outage_raises_the_outage(running: StoppablePgServer,  # noqa: F811
                                                       index: MemoryIndex, workspace: Path) -> None:  # noqa: F811
    append_memory(workspace, "memory/2026-02-03.md", "- the ferry to Bornholm leaves at 08:30")
    append_memory(workspace, "memory/2026-02-04.md", "- the ferry back leaves at 17:00")

    def stop_after_the_first_file(done: int, total: int, label: str) -> None:
        if done == 1:
            running.stop()

    with pytest.raises(StoreUnavailableError, match="unavailable") as caught:  # what docs/storage.md names
        index.sync(progress=stop_after_the_first_file)
    assert isinstance(caught.value, IndexingError)  # and what a sync failure always was
    running.start()
    index.sync()
    assert index.search("ferry back").hits[0].path == "memory/2026-02-04.md"


def test_other_sync_failures_stay_plain_indexing_errors(running: StoppablePgServer,  # noqa: F811
                                                        index: MemoryIndex, workspace: Path) -> None:  # noqa: F811
    workspace_gone = workspace.rename(workspace.with_name("moved"))
    with pytest.raises(IndexingError) as caught:
        index.sync()
    assert not isinstance(caught.value, StoreUnavailableError)
    workspace_gone.rename(workspace)
