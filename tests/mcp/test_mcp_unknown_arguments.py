"""An MCP tool call with an argument the tool does not take (a misspelt ``max_result``, ``maxresults``) used to be
answered as if the argument were not there: six hits for a client that asked for two. It is now a tool error that
names the unknown argument and the ones the tool takes, shaped as the tool's other argument errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.agent.mcp_server import create_mcp_server  # noqa: E402
from tests.helpers.workspaces import heron_days_index  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


@pytest.fixture
def memory(tmp_path: Path) -> Any:
    index = heron_days_index(tmp_path)
    yield index
    index.close()


@pytest.mark.parametrize(("tool", "arguments", "unknown", "accepted"), [
    ("memory_search", {"query": "heron count", "max_result": 2}, "max_result", "maxResults"),
    ("memory_search", {"query": "heron count", "maxresults": 2, "limit": 2}, "limit", "minScore"),
    ("memory_get", {"path": "memory/2026-01-01.md", "from_lines": 3}, "from_lines", "from"),
    ("memory_append", {"text": "- a note", "source": "web"}, "source", "origin"),
    ("memory_forget_entry", {"what": "heron", "reason": "old"}, "reason", "what"),
])
async def test_an_unknown_argument_is_an_error_naming_it_and_the_accepted_ones(
        memory: MemoryIndex, tool: str, arguments: dict[str, Any], unknown: str, accepted: str) -> None:
    async with Client(create_mcp_server(memory)) as client:
        result = await client.call_tool(tool, arguments)
    text = _text(result)
    assert result.is_error, text
    assert text.startswith(f"invalid {tool} arguments: ") and f"'{unknown}'" in text and accepted in text
    assert result.structured_content["error"] == text
    if tool == "memory_search":
        assert result.structured_content["results"] == []
    if tool == "memory_append":  # nothing was written
        assert not any("a note" in path.read_text() for path in (memory.workspace / "memory").glob("*.md"))


async def test_both_spellings_and_the_agent_argument_are_still_taken(memory: MemoryIndex) -> None:
    async with Client(create_mcp_server(memory)) as client:
        for arguments in ({"query": "heron count", "max_results": 2}, {"query": "heron count", "maxResults": 2,
                                                                        "agent": "main"}):
            result = await client.call_tool("memory_search", arguments)
            assert not result.is_error and len(result.structured_content["results"]) == 2, _text(result)
        got = await client.call_tool("memory_get", {"path": "memory/2026-01-01.md", "from_line": 3})
        assert not got.is_error and "heron count was 1" in _text(got)
