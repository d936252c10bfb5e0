"""A forced rebuild on PostgreSQL whose new build is live when dropping the old build fails (here the server refuses
the delete; an outage at that moment is the same): the sync succeeds with a warning that the old build is left, the
new index answers, and the next sync drops the build left behind."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from openclaw_memory import MemoryIndex

pytestmark = pytest.mark.slow

REFUSE = """
CREATE FUNCTION "{schema}".refuse_retired_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.name = '{namespace}' AND OLD.state = 'retired' THEN
    RAISE EXCEPTION 'deleting the retired build is refused by the test';
  END IF;
  RETURN OLD;
END $$;
CREATE TRIGGER refuse_retired_delete BEFORE DELETE ON "{schema}".namespaces
  FOR EACH ROW EXECUTE FUNCTION "{schema}".refuse_retired_delete();
"""
ALLOW = """
DROP TRIGGER IF EXISTS refuse_retired_delete ON "{schema}".namespaces;
DROP FUNCTION IF EXISTS "{schema}".refuse_retired_delete();
"""


def _states(pg: Any, namespace: str) -> list[str]:
    with psycopg.connect(pg.url) as conn:
        rows = conn.execute(f'SELECT state FROM "{pg.schema}".namespaces WHERE name = %s ORDER BY id',
                            (namespace,)).fetchall()
    return [state for (state,) in rows]


@pytest.fixture
def refusing(pg: Any) -> Iterator[Callable[[str, bool], None]]:
    """``refusing(namespace, on)``: make the server refuse (or allow again) deleting that namespace's retired build."""

    def _set(namespace: str, on: bool) -> None:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute((REFUSE if on else ALLOW).format(schema=pg.schema, namespace=namespace))

    yield _set
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(ALLOW.format(schema=pg.schema))


def _synced_index(make_pg_index: Callable[..., MemoryIndex], write: Any) -> tuple[MemoryIndex, str]:
    """An index of one note, synced, and its namespace."""
    write({"MEMORY.md": "# Memory\n\nThe heron count was three.\n"})
    memory = make_pg_index()
    memory.sync()
    return memory, memory.status().server["namespace"]


def _allow_and_sync(memory: MemoryIndex, pg: Any, namespace: str, refusing: Callable[[str, bool], None]) -> None:
    """Let the server drop the retired build again: the next sync drops the build left behind."""
    refusing(namespace, False)
    memory.sync()
    assert _states(pg, namespace) == ["active"]


def test_a_rebuild_whose_old_build_cannot_be_dropped_succeeds_with_a_warning(
        make_pg_index: Callable[..., MemoryIndex], write: Any, pg: Any,
        refusing: Callable[[str, bool], None]) -> None:
    memory, namespace = _synced_index(make_pg_index, write)
    write({"memory/2026-03-01.md": "# Day\n\nThe ferry to Bornholm leaves at 08:30.\n"})
    refusing(namespace, True)
    report = memory.sync(force=True)
    assert report.full_rebuild
    assert any("old build" in warning and "next sync" in warning for warning in report.warnings), report.warnings
    assert memory.search("ferry Bornholm").hits[0].path == "memory/2026-03-01.md"  # the new index is live
    assert _states(pg, namespace) == ["retired", "active"]
    assert memory.scheduler.last_error is None  # no failed sync is reported
    _allow_and_sync(memory, pg, namespace, refusing)


def test_syncs_go_on_while_an_old_build_cannot_be_dropped(
        make_pg_index: Callable[..., MemoryIndex], write: Any, pg: Any,
        refusing: Callable[[str, bool], None]) -> None:
    memory, namespace = _synced_index(make_pg_index, write)
    refusing(namespace, True)
    memory.sync(force=True)
    write({"memory/2026-03-02.md": "# Day\n\nThe lighthouse keeper retired in March.\n"})
    report = memory.sync()  # tidying the old build fails again: the sync indexes the new note all the same
    assert report.files_indexed == 1
    assert memory.search("lighthouse keeper").hits[0].path == "memory/2026-03-02.md"
    assert _states(pg, namespace) == ["retired", "active"]
    _allow_and_sync(memory, pg, namespace, refusing)
