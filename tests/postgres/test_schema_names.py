"""A ``store.pgSchema`` the library cannot use is refused naming the key the user set and what a valid name is."""

from __future__ import annotations

from pathlib import Path

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

