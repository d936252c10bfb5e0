"""The CLI on PostgreSQL: a libpq key/value DSN selects it (never a file named after the string),
``--namespace`` picks the namespace, ``status --deep`` reports the server's integrity."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest
from click.testing import CliRunner

from openclaw_memory import MemoryIndex
from openclaw_memory.cli import main
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError, StoreError
from openclaw_memory.storage.postgres import PostgresStore
from tests.pg_server import EXTERNAL_URL

NOTES = {
    "MEMORY.md": "# Memory\n\nThe staging cluster runs on Hetzner; backups at 03:00 UTC.\n",
    "memory/2026-02-02.md": "# 2026-02-02\n\nAlice reviewed the HNSW index settings for recall.\n",
}
SECRET = "pw-Secret9"


def _key_value_dsn(url: str) -> str:
    """The test server's URL as a libpq key/value DSN, with a password (trust auth ignores it)."""
    parts = urlsplit(url)
    host = parse_qs(parts.query).get("host", [parts.hostname or "127.0.0.1"])[0]
    return (f"host={host} port={parts.port or 5432} dbname={parts.path.lstrip('/') or 'postgres'} "
            f"user={parts.username or 'postgres'} password={SECRET}")


@pytest.mark.skipif(EXTERNAL_URL is not None, reason="needs the local test server (trust auth)")
def test_cli_key_value_dsn_and_namespace_run_on_postgresql(pg: Any, workspace: Path, tmp_path: Path,
                                                           write: Callable[[dict[str, str]], Path],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31 items 3, 8 and 10: the DSN ran on SQLite and created a file named after it (password
    included); status --deep crashed on PostgreSQL (KeyError 'quick_check'); there was no --namespace."""
    write(NOTES)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    ns = pg.namespace()
    base = ["--workspace", str(workspace), "--store", _key_value_dsn(pg.url), "--namespace", ns, "-p", "none"]
    run = CliRunner()
    try:
        out = run.invoke(main, [*base, "index"], catch_exceptions=False)
        assert out.exit_code == 0, out.output
        out = run.invoke(main, [*base, "search", "HNSW recall", "--no-sync", "--json"], catch_exceptions=False)
        assert json.loads(out.output)["results"][0]["path"] == "memory/2026-02-02.md"
        out = run.invoke(main, [*base, "status", "--deep"], catch_exceptions=False)
        assert out.exit_code == 0, out.output
        assert f"namespace {ns}" in out.output and "Integrity: ok" in out.output
        assert SECRET not in out.output
        assert os.listdir(cwd) == []  # no SQLite file named after the DSN
        with psycopg.connect(pg.url, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM openclaw_memory.namespaces WHERE name = %s",
                                (ns,)).fetchone()[0] == 1
    finally:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute("DELETE FROM openclaw_memory.namespaces WHERE name = %s", (ns,))


def test_a_store_string_that_is_no_connection_string_nor_index_file_is_refused(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for value in (f"hots=127.0.0.1 dbname=x password={SECRET}", f"mysql://app:{SECRET}@db/x", "my index"):
        with pytest.raises(ConfigError, match="neither a PostgreSQL connection string") as err:
            MemoryConfig.load({"store": value})
        assert SECRET not in str(err.value)
        out = CliRunner().invoke(main, ["--store", value, "-w", str(tmp_path), "-p", "none", "status"])
        assert out.exit_code != 0 and "neither a PostgreSQL connection string" in out.output
        assert SECRET not in out.output
    with pytest.raises(ConfigError, match="belongs in store.url"):
        MemoryIndex(workspace=tmp_path, store={"path": f"postgresql://app:{SECRET}@db/x"}, watch=False)
    assert os.listdir(tmp_path) == []
    assert MemoryConfig.load({"store": "host=db.internal dbname=memory user=app"}).store.url is not None
    for dsn in (f"host={tmp_path} dbname=x user=app password={SECRET} connect_timeout=2",
                f"host={tmp_path} dbname=x password='{SECRET} x' connect_timeout=2"):  # nothing listens there
        with pytest.raises(StoreError, match="cannot open the memory index in PostgreSQL") as failed:
            PostgresStore(dsn, namespace="n")
        assert SECRET not in str(failed.value) and "password=***" in str(failed.value)
    assert MemoryConfig.load({"store": str(tmp_path / "index.sqlite")}).store.path == str(tmp_path / "index.sqlite")


def test_a_server_that_refuses_the_connection_reads_as_sentences(tmp_path: Path) -> None:
    """The driver's message ends with a question mark ("Is the server running ...?"): the advice follows it as a
    sentence of its own, not after "?." as before."""
    from openclaw_memory.storage.postgres import PostgresStore

    with pytest.raises(StoreError) as caught:
        PostgresStore(f"postgresql://nobody@/db?host={tmp_path / 'no-server-here'}&connect_timeout=2", namespace="n")
    message = str(caught.value)
    assert "Check that the server is running" in message and "?." not in message, message
