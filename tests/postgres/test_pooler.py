"""The PostgreSQL index behind a real PgBouncer in transaction mode (the usual managed setup), and the
connections one agent process holds."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import append_memory
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.pgbouncer import needs_pgbouncer, pgbouncer_in_front

NOTES = {f"memory/2026-03-{day:02d}.md": f"# 2026-03-{day:02d}\n\nDeploy {day} of the billing service went to "
         f"region eu-{day}; rollback plan R{day} reviewed by the platform team.\n" for day in range(1, 29)}


def _index(url: str, workspace: Path, tmp_path: Path, pg: Any, **store: Any) -> MemoryIndex:
    return MemoryIndex(workspace=workspace, state_dir=str(tmp_path / "state"), watch=False,
                       provider=FakeEmbeddingProvider(),
                       store={"url": url, "namespace": pg.namespace(), "pg_schema": pg.schema, **store})


@needs_pgbouncer
@pytest.mark.parametrize("prepared", [None, False], ids=["detected", "configured"])
def test_sync_and_search_behind_a_transaction_mode_pgbouncer(pg: Any, workspace: Path, tmp_path: Path,
                                                             write: Callable[[dict[str, str]], Path],
                                                             prepared: bool | None) -> None:
    """Issue 31 item 2: every sync failed with 'prepared statement "_pg3_0" already exists'."""
    write(NOTES)
    with pgbouncer_in_front(pg.url, pool_mode="transaction") as url, \
            _index(url, workspace, tmp_path, pg, pool={"prepared_statements": prepared, "max_size": 3, "timeout": 30}) as idx:
        assert idx.sync().files_indexed == len(NOTES)
        errors: list[BaseException] = []

        def searches() -> None:
            try:
                for day in range(1, 29, 3):
                    assert idx.search(f"rollback plan R{day}").hits
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=searches) for _ in range(3)]
        for t in threads:
            t.start()
        append_memory(workspace, "memory/2026-03-29.md", "Deploy 29 went to region eu-29.")
        idx.sync()  # (a search running meanwhile may have started the sync that indexes it)
        assert "memory/2026-03-29.md" in idx.indexed_files()
        assert idx.sync(force=True).files_indexed == len(NOTES) + 1
        for t in threads:
            t.join(60)
        assert errors == []
        assert idx.search("region eu-29").hits[0].path == "memory/2026-03-29.md"


def test_one_agent_process_holds_at_most_the_pool_and_a_sync_lock(pg: Any, workspace: Path, tmp_path: Path,
                                                                  write: Callable[[dict[str, str]], Path]) -> None:
    """Connections of one process while it syncs, searches from 4 threads and appends: ``store.pool.max_size``
    plus the sync's lock connection (appends take none)."""
    write(NOTES)
    name = "ocm-count-" + pg.namespace()
    url = pg.url + ("&" if "?" in pg.url else "?") + f"application_name={name}"
    peak, stop, recent = [0], threading.Event(), []

    def sample() -> None:
        # a count held for three samples in a row: on a loaded machine a closed connection's server process can
        # still be listed for a moment while its replacement is already open
        with psycopg.connect(pg.url, autocommit=True) as conn:
            while not stop.is_set():
                n = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                                 (name,)).fetchone()[0]
                recent[:] = [*recent[-2:], int(n)]
                if len(recent) == 3:
                    peak[0] = max(peak[0], min(recent))
                stop.wait(0.005)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        with _index(url, workspace, tmp_path, pg, pool={"timeout": 30}) as idx:  # a slow CI machine waits longer
            idx.sync()

            def work() -> None:
                for day in range(1, 29):
                    idx.search(f"rollback plan R{day}")
                    append_memory(workspace, f"memory/2026-04-{day:02d}.md", f"Deploy {day} checked.")

            threads = [threading.Thread(target=work) for _ in range(4)]
            for t in threads:
                t.start()
            idx.sync(force=True)
            for t in threads:
                t.join(120)
    finally:
        stop.set()
        sampler.join()
    assert 1 <= peak[0] <= 3, peak[0]  # default store.pool.max_size 2, plus the sync lock's connection
