"""Passwords a user writes into ``store.url`` the way people do (an ``@`` in it, a quote left open in a
key/value DSN) never show, in part or whole, in the error that says the URL is wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ConfigError, StoreError
from openclaw_memory.storage.postgres import PostgresStore, redact_url
from tests.pg_server import EXTERNAL_URL

#: each half is recognisable on its own: neither may appear in a message
HEAD, TAIL = "kettleSecret", "Zebra9tail"


def _shown(message: str) -> bool:
    return HEAD in message or TAIL in message


def test_an_unencoded_at_sign_in_the_password_is_refused_without_showing_any_of_it(tmp_path: Path) -> None:
    url = f"postgresql://memory:{HEAD}@{TAIL}@127.0.0.1:1/agents"  # libpq splits at the first '@'
    with pytest.raises(ConfigError, match="%40") as failed:
        PostgresStore(url, namespace="n", connect_timeout=1)
    assert not _shown(str(failed.value)) and "store.url" in str(failed.value)
    with pytest.raises(ConfigError, match="%40") as failed:
        MemoryIndex(workspace=tmp_path, store=url, watch=False)
    assert not _shown(str(failed.value))


@pytest.mark.parametrize(("char", "code"), [("/", "%2F"), ("?", "%3F"), ("#", "%23")])
def test_an_unencoded_url_delimiter_in_the_password_is_refused_without_showing_it(char: str, code: str) -> None:
    # generated passwords hold '/' (base64): the URL's host part then ends inside the password
    url = f"postgresql://memory:{HEAD}{char}{TAIL}@127.0.0.1:1/agents"
    with pytest.raises(ConfigError, match=code) as failed:
        PostgresStore(url, namespace="n", connect_timeout=1)
    assert not _shown(str(failed.value))


@pytest.mark.skipif(EXTERNAL_URL is not None, reason="needs the local test server (trust auth)")
def test_a_percent_encoded_at_sign_in_the_password_opens(pg: Any) -> None:
    url = pg.url.replace("postgres:@", f"postgres:{HEAD}%40{TAIL}@", 1)  # trust auth: the password is not checked
    assert url != pg.url
    store = PostgresStore(url, namespace=pg.namespace(), schema=pg.schema, memory_cache=False)
    try:
        assert not _shown(repr(store)) and not _shown(store.safe_url)
    finally:
        store.close()


def test_a_password_whose_quote_is_never_closed_is_not_shown(tmp_path: Path) -> None:
    dsn = f"host={tmp_path} dbname=x user=app password='{HEAD} {TAIL} connect_timeout=2"
    assert not _shown(redact_url(dsn))
    with pytest.raises(StoreError, match="cannot open the memory index in PostgreSQL") as failed:
        PostgresStore(dsn, namespace="n")
    assert not _shown(str(failed.value)) and "password=***" in str(failed.value)


@pytest.mark.parametrize("spell", [
    lambda url: url + "\n",  # read from a secret file or an .env line
    lambda url: "  " + url + " ",
    lambda url: "PostgreSQL" + url[url.index("://"):],  # the configuration accepts the scheme in any case
])
def test_a_url_the_configuration_accepts_opens(pg: Any, spell: Any, workspace: Path) -> None:
    url = spell(pg.url)
    idx = MemoryIndex(workspace=workspace, watch=False, provider=None,
                      store={"url": url, "namespace": pg.namespace(), "pgSchema": pg.schema})
    try:
        assert idx.status().backend == "postgresql"
    finally:
        idx.close()


def test_a_password_with_a_backslash_escaped_space_is_not_shown(tmp_path: Path) -> None:
    """libpq reads ``password=a\\ b`` (no quotes) as "a b": all of it is the password."""
    dsn = f"host={tmp_path} dbname=x user=app password={HEAD}\\ {TAIL} connect_timeout=2"
    assert not _shown(redact_url(dsn)) and "user=app" in redact_url(dsn) and "connect_timeout=2" in redact_url(dsn)
    with pytest.raises(StoreError, match="cannot open the memory index in PostgreSQL") as failed:
        PostgresStore(dsn, namespace="n")
    assert not _shown(str(failed.value)) and "password=***" in str(failed.value)


@pytest.mark.skipif(EXTERNAL_URL is not None, reason="needs the local test server (trust auth)")
def test_a_backslash_escaped_password_still_connects_and_never_shows(pg: Any, tmp_path: Path) -> None:
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(pg.url)
    dsn = " ".join(f"{k}={v}" for k, v in params.items() if k != "password") + f" password={HEAD}\\ {TAIL}"
    store = PostgresStore(dsn, namespace=pg.namespace(), schema=pg.schema, memory_cache=False)
    try:
        assert not _shown(repr(store)) and not _shown(store.safe_url)
    finally:
        store.close()


@pytest.mark.parametrize("password", [f"{HEAD}%{TAIL}", f"{HEAD}%", f"{HEAD}%z9{TAIL}"])
def test_an_unencoded_percent_sign_in_the_password_is_refused_saying_how_to_write_it(tmp_path: Path,
                                                                                      password: str) -> None:
    """libpq refuses it as an 'invalid percent-encoded token', which (masked) told the user nothing to do."""
    url = f"postgresql://memory:{password}@127.0.0.1:1/agents"
    with pytest.raises(ConfigError, match="%25") as failed:
        PostgresStore(url, namespace="n", connect_timeout=1)
    assert not _shown(str(failed.value)) and "store.url" in str(failed.value)
    with pytest.raises(ConfigError, match="%25"):
        MemoryIndex(workspace=tmp_path, store=url, watch=False)
