"""Least privilege on PostgreSQL: a role with USAGE + CREATE on a schema an administrator made, a
read-only role and a read-only session (as on a replica), each on the real server with real grants."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg_pool import PoolTimeout

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import StoreError
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.storage.postgres import PostgresStore
from tests.pg_server import EXTERNAL_URL

pytestmark = pytest.mark.skipif(EXTERNAL_URL is not None, reason="creates roles on the local test server")

NOTES = {
    "MEMORY.md": "# Memory\n\nThe staging cluster runs on Hetzner; backups at 03:00 UTC.\n",
    "memory/2026-02-01.md": "# 2026-02-01\n\nMigrated the billing database to PostgreSQL 18 with pgvector.\n",
}


@pytest.fixture
def admin(pg: Any) -> Iterator[Callable[..., str]]:
    """``admin(*grants_sql) -> url``: a new login role, the statements run as the superuser (``{role}``,
    ``{schema}`` filled in: the schema is this test's own, not created), and the role's URL."""
    made: list[tuple[str, str]] = []
    schema = "ocm_priv_" + uuid.uuid4().hex[:8]

    def _role(*statements: str) -> str:
        role = "ocm_role_" + uuid.uuid4().hex[:8]
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # an administrator's job
            conn.execute(f'CREATE ROLE "{role}" LOGIN')
            made.append((role, schema))
            for sql in statements:
                conn.execute(sql.format(role=f'"{role}"', schema=f'"{schema}"'))
        return pg.url.replace("postgres:@", f"{role}:@", 1) if "postgres:@" in pg.url else pg.url.replace(
            "postgres@", f"{role}@", 1)

    _role.schema = schema  # type: ignore[attr-defined]
    yield _role
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        for role, _ in made:
            conn.execute(f'DROP OWNED BY "{role}" CASCADE')
            conn.execute(f'DROP ROLE "{role}"')


def _index(url: str, schema: str, workspace: Path, tmp_path: Path, namespace: str, **config: Any) -> MemoryIndex:
    return MemoryIndex(workspace=workspace, state_dir=str(tmp_path / f"state-{uuid.uuid4().hex[:6]}"), watch=False,
                       provider=None, store={"url": url, "namespace": namespace, "pg_schema": schema}, **config)


def test_a_role_with_usage_and_create_on_a_precreated_schema_indexes(admin: Callable[..., str], pg: Any,
                                                                     workspace: Path, tmp_path: Path,
                                                                     write: Callable[[dict[str, str]], Path]) -> None:
    """Issue 31 item 4: opening failed with 'permission denied for database' (CREATE SCHEMA IF NOT EXISTS)."""
    write(NOTES)
    url = admin("CREATE SCHEMA {schema}", "GRANT USAGE, CREATE ON SCHEMA {schema} TO {role}")
    with _index(url, admin.schema, workspace, tmp_path, pg.namespace()) as idx:  # type: ignore[attr-defined]
        assert idx.sync().files_indexed == 2
        assert idx.search("billing database").hits[0].path == "memory/2026-02-01.md"


def test_a_missing_privilege_is_named(admin: Callable[..., str], pg: Any) -> None:
    schema = admin.schema  # type: ignore[attr-defined]
    no_schema = admin()  # may not create the schema (no CREATE on the database)
    with pytest.raises(StoreError, match="does not exist and this role may not create it: grant it CREATE on the "
                                         "database"):
        PostgresStore(no_schema, schema=schema, namespace=pg.namespace())
    usage_only = admin("CREATE SCHEMA {schema}", "GRANT USAGE ON SCHEMA {schema} TO {role}")
    with pytest.raises(StoreError, match="no CREATE privilege on it: GRANT CREATE ON SCHEMA"):
        PostgresStore(usage_only, schema=schema, namespace=pg.namespace())
    nothing = admin()
    with pytest.raises(StoreError, match="no USAGE privilege on the schema"):
        PostgresStore(nothing, schema=schema, namespace=pg.namespace())


def test_a_read_only_role_and_a_read_only_session_search(admin: Callable[..., str], pg: Any, workspace: Path,
                                                         tmp_path: Path,
                                                         write: Callable[[dict[str, str]], Path]) -> None:
    """Issue 31 item 5: a search on a read-only connection failed ('cannot execute CREATE SCHEMA in a
    read-only transaction'); many readers (replicas, read-only roles) search while one writer syncs."""
    write(NOTES)
    schema, ns = admin.schema, pg.namespace()  # type: ignore[attr-defined]
    writer = admin("CREATE SCHEMA {schema}", "GRANT USAGE, CREATE ON SCHEMA {schema} TO {role}")
    with _index(writer, schema, workspace, tmp_path, ns) as idx:
        idx.sync()
    reader = admin("GRANT USAGE ON SCHEMA {schema} TO {role}", "GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
    session = writer + ("&" if "?" in writer else "?") + "options=-c%20default_transaction_read_only%3Don"
    for url in (reader, session):
        with _index(url, schema, workspace, tmp_path, ns) as ro:
            assert ro.search("billing database").hits[0].path == "memory/2026-02-01.md"
            assert ro.status().chunks == 2
            with pytest.raises(StoreError, match="is read-only .* it can search, not index"):
                ro.sync(force=True)
        with _index(url, schema, workspace, tmp_path, "never-indexed") as empty:  # nothing indexed there yet
            assert empty.search("billing database", ).hits == []


def test_a_role_out_of_connections_is_busy_not_an_outage(admin: Callable[..., str], pg: Any, workspace: Path,
                                                          tmp_path: Path, write: Callable[[dict[str, str]], Path]) -> None:
    """'too many connections' is a sizing problem, not a server outage: the search that could not get a
    connection says so (and what to change), and the next one runs at once (no breaker left open)."""
    write(NOTES)
    url = admin("CREATE SCHEMA {schema}", "GRANT USAGE, CREATE ON SCHEMA {schema} TO {role}")
    role = url.split("//", 1)[1].split("@", 1)[0].split(":", 1)[0]
    with MemoryIndex(
            workspace=workspace, state_dir=str(tmp_path / "state-limit"), watch=False, provider=None,
            store={"url": url, "namespace": pg.namespace(), "pg_schema": admin.schema,  # type: ignore[attr-defined]
                   "pool": {"max_size": 2, "timeout": 1}}, sync={"on_search": False}) as idx:
        idx.sync()
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute(f'ALTER ROLE "{role}" CONNECTION LIMIT 1')
        pool = idx.store._root._pool  # noqa: SLF001 - every connection the role may have is taken
        held = []
        try:
            while True:
                held.append(pool.getconn(timeout=0.5))
        except PoolTimeout:
            pass
        try:
            with pytest.raises(StoreError) as raised:
                idx.search("billing database")
        finally:
            for conn in held:
                pool.putconn(conn)
        assert type(raised.value) is StoreError, raised.value
        assert "no connection left" in str(raised.value) and "store.pool.max_size" in str(raised.value)
        assert idx.search("billing database").hits  # at once: the breaker was not tripped


def test_a_writer_that_does_not_own_the_tables_syncs_past_the_hnsw_threshold(
        admin: Callable[..., str], pg: Any, workspace: Path, tmp_path: Path,
        write: Callable[[dict[str, str]], Path], caplog: pytest.LogCaptureFixture) -> None:
    """A role granted reading and writing on tables another role owns may not build indexes on them: its syncs of a
    namespace past ``pgHnswMinRows`` still succeed (vector search scans exactly), and the owner's next sync builds
    the HNSW index."""
    write({f"memory/2026-03-{i + 1:02d}.md": f"# Day {i}\n\nThe deploy of service {i} went fine.\n" for i in range(8)})
    schema, ns = admin.schema, pg.namespace()  # type: ignore[attr-defined]
    owner = admin("CREATE SCHEMA {schema}", "GRANT USAGE, CREATE ON SCHEMA {schema} TO {role}")
    PostgresStore(owner, schema=schema, namespace="first").close()  # the owner creates the tables
    writer = admin("GRANT USAGE ON SCHEMA {schema} TO {role}",
                   "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}",
                   "GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO {role}")

    def index(url: str) -> MemoryIndex:
        return MemoryIndex(workspace=workspace, state_dir=str(tmp_path / f"state-{uuid.uuid4().hex[:6]}"), watch=False,
                           provider=FakeEmbeddingProvider(dims=16),
                           store={"url": url, "namespace": ns, "pg_schema": schema, "pg_hnsw_min_rows": 5})

    with index(writer) as idx, caplog.at_level(logging.WARNING, logger="openclaw_memory"):
        assert idx.sync().files_indexed == 8
        (workspace / "memory" / "2026-03-09.md").write_text("# Day 8\n\nThe deploy of service 8 went fine.\n")
        assert idx.sync().files_indexed == 1
        assert idx.status().vector["path"] == "pgvector exact"
        assert idx.search("deploy of service 8").hits[0].path == "memory/2026-03-09.md"
    said = [r for r in caplog.records if "cannot build the HNSW index" in r.getMessage()]
    assert len(said) == 1  # once, not on every sync
    with index(owner) as idx:
        idx.sync()
        assert idx.status().vector["path"] == "pgvector hnsw"
