"""memory_append over MCP with text a client's model may produce: a NUL character."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.agent.mcp_server import create_mcp_server  # noqa: E402

pytestmark = pytest.mark.timeout(60)


async def test_a_nul_in_an_appended_note_leaves_the_days_notes_searchable(write: Any, tmp_path: Path) -> None:
    """A note holding NUL is written with U+FFFD in its place: the day's note stays text, so its earlier entries
    and the new one are found (the NUL made the whole daily note "binary": skipped by the index, refused by
    memory_get)."""
    notes: Path = write({"MEMORY.md": "# Notes\n"})
    with MemoryIndex(workspace=notes, provider=None, watch=False, store={"path": str(tmp_path / "i.sqlite")}) as memory:
        async with Client(create_mcp_server(memory)) as client:
            first = await client.call_tool("memory_append", {"text": "- The boiler code is 4471."})
            second = await client.call_tool("memory_append", {"text": "- Parcel ZX9Q arrived.\x00"})
            earlier = await client.call_tool("memory_search", {"query": "boiler code"})
            later = await client.call_tool("memory_search", {"query": "ZX9Q"})
            read = await client.call_tool("memory_get", {"path": first.structured_content["path"]})
    assert not first.is_error and not second.is_error
    daily = notes / first.structured_content["path"]
    assert b"\x00" not in daily.read_bytes()
    assert "4471" in earlier.content[0].text and "ZX9Q" in later.content[0].text
    assert not read.is_error and "arrived.\ufffd" in read.content[0].text
