"""A ``store.pgSchema`` the library cannot use is refused naming the key the user set and what a valid name is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ConfigError


@pytest.mark.parametrize(("schema", "why"), [
    ("memory-prod", "letters, digits and _"),
    ("2026_memory", "not starting with a digit"),
    ("m" * 64, "at most 63 characters"),
])
def test_an_unusable_schema_name_is_refused_naming_store_pg_schema(tmp_path: Path, schema: str, why: str) -> None:
    with pytest.raises(ConfigError) as refused:
        MemoryIndex(workspace=tmp_path, watch=False, provider=None,
                    store={"url": "postgresql://app@127.0.0.1:1/agents", "pgSchema": schema})
    assert "store.pgSchema" in str(refused.value) and why in str(refused.value)



def test_a_namespace_holding_a_nul_character_is_refused_naming_store_namespace(tmp_path: Path) -> None:
    """PostgreSQL text cannot hold NUL: the name is wrong, not the server (it said 'Check that the server is
    running')."""
    with pytest.raises(ConfigError, match="store.namespace") as refused:
        MemoryIndex(workspace=tmp_path, watch=False, provider=None,
                    store={"url": "postgresql://app@127.0.0.1:1/agents", "namespace": "team\x00a"})
    assert "NUL" in str(refused.value)


@pytest.mark.parametrize("namespace", ['ops "blue" team', "équipe-été/名前", "n%_\\'", "x" * 200])
def test_namespaces_with_quotes_unicode_and_wildcards_hold_their_own_index(make_pg_index: Any, write: Any,
                                                                          namespace: str, pg: Any) -> None:
    write({"MEMORY.md": "# Facts\nThe deploy key rotates on Fridays.\n"})
    index = make_pg_index(store={"url": pg.url, "namespace": namespace, "pg_schema": pg.schema})
    index.sync()
    assert [h.path for h in index.search("deploy key rotates").hits] == ["MEMORY.md"]
    assert index.status().files == 1
