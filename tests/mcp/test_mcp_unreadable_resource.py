"""A memory file the server lists but cannot read as text (a daily note that is binary): reading the resource used
to fail with "Internal server error" (the reason only in the server's log); the client now gets the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp.shared.exceptions import MCPError  # noqa: E402

from tests.mcp.test_mcp_server import NOTES, _stdio  # noqa: E402

pytestmark = pytest.mark.timeout(120)


async def test_reading_a_binary_note_says_why(write: Any) -> None:
    notes: Path = write(NOTES)
    (notes / "memory" / "2026-03-03.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    async with _stdio(notes) as client:
        with pytest.raises(MCPError, match="looks binary"):
            await client.read_resource("memory://main/memory/2026-03-03.md")
        still = await client.read_resource("memory://main/MEMORY.md")  # the server goes on serving
    assert still.contents[0].text == NOTES["MEMORY.md"]
