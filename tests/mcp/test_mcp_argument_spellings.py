"""The MCP memory_search takes ``max_results`` / ``min_score`` as well as the schema's ``maxResults`` / ``minScore``,
as memory_search itself (MemorySearchArgs) and the MCP memory_get (``from`` / ``from_line``) take both spellings. The
snake_case ones were dropped without a word, so ``max_results=2`` returned six hits."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from openclaw_memory.agent.mcp_server import create_mcp_server  # noqa: E402
from tests.helpers.workspaces import heron_days_index  # noqa: E402


def _results(server: Any, arguments: dict[str, Any]) -> Any:
    result = asyncio.run(server.call_tool("memory_search", arguments))
    return result.structured_content


@pytest.fixture
def server(tmp_path: Path) -> Any:
    memory = heron_days_index(tmp_path)
    yield create_mcp_server(memory)
    memory.close()


@pytest.mark.parametrize("name", ["maxResults", "max_results"])
def test_both_spellings_of_max_results_limit_the_hits(server: Any, name: str) -> None:
    assert len(_results(server, {"query": "heron count", name: 2})["results"]) == 2


@pytest.mark.parametrize("name", ["minScore", "min_score"])
def test_both_spellings_of_min_score_are_checked(server: Any, name: str) -> None:
    payload = _results(server, {"query": "heron count", name: 7})
    assert payload["results"] == [] and "less than or equal to 1" in payload["error"]


def test_the_schema_still_names_the_camel_case_arguments(server: Any) -> None:
    tools = {tool.name: tool for tool in asyncio.run(server.list_tools())}
    properties = tools["memory_search"].input_schema["properties"]
    assert {"maxResults", "minScore"} <= set(properties) and "max_results" not in properties
