"""Selecting PostgreSQL (config, keyword, CLI), its status, and several hosts on one namespace: one
writer at a time, a shared embedding cache."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner

from openclaw_memory import MemoryIndex
from openclaw_memory.cli import main
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError, IndexLockedError, StoreError
from openclaw_memory.storage.postgres import PostgresStore
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.pg_server import EXTERNAL_URL

NOTES = {
    "MEMORY.md": "# Memory\n\nThe staging cluster runs on Hetzner; backups at 03:00 UTC.\n",
    "memory/2026-02-01.md": "# 2026-02-01\n\nMigrated the billing database to PostgreSQL 18 with pgvector.\n",
    "memory/2026-02-02.md": "# 2026-02-02\n\nAlice reviewed the HNSW index settings for recall.\n",
}

#: the password tests put a password into the local server's URL (trust authentication ignores it)
LOCAL_ONLY = pytest.mark.skipif(EXTERNAL_URL is not None, reason="needs the local test server (trust auth)")



def _host(pg: Any, workspace: Path, tmp_path: Path, name: str, namespace: str, provider: Any = None) -> MemoryIndex:
    """One host: its own state directory, the shared workspace and database namespace."""
    return MemoryIndex(workspace=workspace, state_dir=str(tmp_path / f"state-{name}"), watch=False, provider=provider,
                       store={"url": pg.url, "namespace": namespace, "pg_schema": pg.schema})


def test_store_url_is_selected_by_config_and_keyword(pg: Any, workspace: Path,
                                                      write: Callable[[dict[str, str]], Path]) -> None:
    write(NOTES)
    cfg = MemoryConfig.load({"store": pg.url, "workspace": str(workspace)})
    assert cfg.store.url is not None and cfg.store.path is None and cfg.resolved_store_namespace() == "main"
    assert "postgres" not in repr(cfg.store.url) or "**" in repr(cfg.store.url)  # a SecretStr
    assert MemoryConfig.load({"store": "/tmp/x.sqlite"}).store.path == "/tmp/x.sqlite"
    with pytest.raises(ValueError, match="PostgreSQL URL"):
        MemoryConfig.load({"store": {"url": "mysql://h/db"}})
    ns = pg.namespace()
    with MemoryIndex(workspace=workspace, watch=False, provider=None, agent_id=ns, store=pg.url) as idx:
        idx.sync()
        st = idx.status()
        assert st.backend == "postgresql" and st.chunks == 3
        assert st.server is not None and st.server["namespace"] == ns
        assert st.server["server_version"].split(".")[0].isdigit() and st.server["pgvector_version"]
        assert st.server["size_bytes"] > 0
        assert idx.search("billing database").hits[0].path == "memory/2026-02-01.md"
    with psycopg.connect(pg.url, autocommit=True) as conn:  # the default schema: leave nothing behind
        conn.execute("DELETE FROM openclaw_memory.namespaces WHERE name = %s", (ns,))


@LOCAL_ONLY
def test_cli_store_url_status_shows_the_server_and_never_the_password(pg: Any, workspace: Path,
                                                                     write: Callable[[dict[str, str]], Path]) -> None:
    write(NOTES)
    secret = "hunter2-Secret"
    url = pg.url.replace("postgres:@", f"postgres:{secret}@", 1)  # trust auth: accepted, not checked
    ns = pg.namespace()
    run = CliRunner()
    base = ["--workspace", str(workspace), "--store", url, "--agent", ns, "--provider", "none"]
    try:
        out = run.invoke(main, [*base, "index"], catch_exceptions=False)
        assert out.exit_code == 0 and secret not in out.output
        out = run.invoke(main, [*base, "status"], catch_exceptions=False)
        assert out.exit_code == 0, out.output
        assert "postgresql 18" in out.output and "pgvector" in out.output and f"namespace {ns}" in out.output
        assert secret not in out.output
        out = run.invoke(main, [*base, "status", "--json"], catch_exceptions=False)
        data = json.loads(out.output)
        assert data["backend"] == "postgresql" and data["server"]["namespace"] == ns and secret not in out.output
        out = run.invoke(main, [*base, "search", "HNSW recall", "--json"], catch_exceptions=False)
        assert json.loads(out.output)["results"][0]["path"] == "memory/2026-02-02.md"
    finally:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute("DELETE FROM openclaw_memory.namespaces WHERE name = %s", (ns,))


def test_a_second_host_makes_no_embedding_calls(pg: Any, workspace: Path, tmp_path: Path,
                                                write: Callable[[dict[str, str]], Path]) -> None:
    write(NOTES)
    ns = pg.namespace()
    one, two = FakeEmbeddingProvider(), FakeEmbeddingProvider()
    with _host(pg, workspace, tmp_path, "a", ns, one) as a, _host(pg, workspace, tmp_path, "b", ns, two) as b:
        a.sync()
        assert one.texts_embedded >= 3
        report = b.sync(force=True)  # a full rebuild on the other host: every vector from the shared cache
        assert report.full_rebuild and report.cache_hits >= 3 and report.embedded == 0
        queries_only = two.texts_embedded
        assert b.search("billing database").hits[0].path == "memory/2026-02-01.md"
        assert two.texts_embedded == queries_only + 1  # the query, nothing else
        assert a.search("backups Hetzner").hits[0].path == "MEMORY.md"


def test_one_writer_per_namespace_while_every_host_searches(pg: Any, workspace: Path, tmp_path: Path,
                                                            write: Callable[[dict[str, str]], Path]) -> None:
    write(NOTES)
    ns = pg.namespace()
    with _host(pg, workspace, tmp_path, "a", ns) as a, _host(pg, workspace, tmp_path, "b", ns) as b:
        a.sync()
        other = PostgresStore(pg.url, namespace=ns, schema=pg.schema)
        try:
            with other.sync_lock(timeout=1):  # a third host is indexing
                with pytest.raises(IndexLockedError, match="another process has been indexing"):
                    b.sync(lock_timeout=0.3)
                assert b.search("Hetzner backups").hits  # searching goes on
        finally:
            other.close()
        assert b.sync(lock_timeout=1).files_scanned == 3


def test_an_unreachable_server_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open the memory index in PostgreSQL"):
        PostgresStore(f"postgresql://u:pw@/db?host={tmp_path}&connect_timeout=1", namespace="n")


@LOCAL_ONLY
def test_the_password_never_reaches_logs_status_or_errors(pg: Any, workspace: Path, tmp_path: Path,
                                                          write: Callable[[dict[str, str]], Path],
                                                          caplog: pytest.LogCaptureFixture) -> None:
    write(NOTES)
    secret = "Tr0ub4dor-3"
    url = pg.url.replace("postgres:@", f"postgres:{secret}@", 1)  # trust auth: accepted, not checked
    caplog.set_level("DEBUG")
    with MemoryIndex(workspace=workspace, state_dir=str(tmp_path / "s"), watch=False, provider=FakeEmbeddingProvider(),
                     store={"url": url, "namespace": pg.namespace(), "pg_schema": pg.schema}) as idx:
        idx.sync()
        idx.sync(force=True)
        assert idx.search("billing").hits
        shown = json.dumps(idx.status(deep=True).to_dict(), default=str) + repr(idx.config) + str(idx.config.store)
    bad = url.replace("/postgres?", "/missing_db?", 1)
    with pytest.raises(StoreError) as err:
        MemoryIndex(workspace=workspace, watch=False, store=bad)
    assert secret not in shown and secret not in caplog.text and secret not in str(err.value)
    assert "***" in shown


def test_hosts_with_their_own_copies_of_a_workspace_at_one_path_are_refused(pg: Any, workspace: Path,
                                                                            tmp_path: Path) -> None:
    """Issue 31 item 7: each host's sync removed the notes only the other's copy had, every round."""
    ns = pg.namespace()
    (workspace / "memory").mkdir(exist_ok=True)
    (workspace / "memory/2026-02-01.md").write_text("Host A's copy: the billing database moved to PostgreSQL.\n")
    with _host(pg, workspace, tmp_path, "a", ns) as a:
        a.sync()
    host_a_copy = workspace.rename(tmp_path / "host-a-copy")
    (workspace / "memory").mkdir(parents=True)  # host B: its own copy at the same path
    (workspace / "memory/2026-02-02.md").write_text("Host B's copy: Alice reviewed the HNSW settings.\n")
    with pytest.raises(ConfigError, match="another copy of the workspace .* hosts sharing a namespace must share one "
                                          "volume"):
        _host(pg, workspace, tmp_path, "b", ns)
    per_host = MemoryIndex(workspace=workspace, state_dir=str(tmp_path / "state-b"), watch=False, provider=None,
                           store={"url": pg.url, "namespace": ns + "-{host}", "pg_schema": pg.schema})
    with per_host:  # each copy in a namespace of its own host
        per_host.sync()
        assert per_host.search("HNSW settings").hits
    host_b_copy = workspace.rename(tmp_path / "host-b-copy")
    host_a_copy.rename(workspace)  # host A again, on its own copy: its index is intact
    with _host(pg, workspace, tmp_path, "a", ns) as a:
        assert a.search("billing database").hits[0].path == "memory/2026-02-01.md"
    assert host_b_copy.is_dir()
