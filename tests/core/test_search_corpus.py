"""``memory_search``'s ``corpus`` (memory | sessions | all, the original's values) in the core tool and
the LangChain and LlamaIndex tools, over a real SQLite index of memory files and a session transcript."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.agent.tools import amemory_search, memory_get, memory_search


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemoryIndex]:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- The budget review is owned by Priya.\n")
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    line = {"type": "message", "message": {"role": "user", "content": "the budget review moves to Thursday"}}
    (sessions / "s1.jsonl").write_text(json.dumps(line) + "\n")
    with MemoryIndex(workspace=ws, sessions_dir=sessions, sources=["memory", "sessions"], provider="none",
                     store={"path": str(tmp_path / "index.sqlite")}, query={"min_score": 0}, watch=False) as index:
        index.sync()
        yield index


def sources(payload: dict) -> set[str]:
    return {hit["source"] for hit in payload["results"]}


def test_corpus_limits_the_search_to_memory_or_sessions(memory: MemoryIndex) -> None:
    assert sources(memory_search(memory, "budget review")) == {"memory", "sessions"}
    assert sources(memory_search(memory, "budget review", corpus="all")) == {"memory", "sessions"}
    assert sources(memory_search(memory, "budget review", corpus="memory")) == {"memory"}
    assert sources(memory_search(memory, "budget review", corpus="sessions")) == {"sessions"}


def test_an_unknown_corpus_is_an_error_payload(memory: MemoryIndex) -> None:
    payload = memory_search(memory, "budget review", corpus="web")
    assert payload["results"] == [] and "corpus" in payload["error"]


def test_the_async_twin_and_the_framework_tools_take_corpus(memory: MemoryIndex) -> None:
    import asyncio

    from langchain_openclaw_memory import create_memory_search_tool as langchain_tool
    from llama_index_openclaw_memory import create_memory_search_tool as llama_index_tool

    assert sources(asyncio.run(amemory_search(memory, "budget review", corpus="sessions"))) == {"sessions"}
    message = langchain_tool(memory).invoke({"type": "tool_call", "id": "1", "name": "memory_search",
                                              "args": {"query": "budget review", "corpus": "memory"}})
    assert sources(message.artifact) == {"memory"}
    output = llama_index_tool(memory).call(query="budget review", corpus="sessions")
    assert sources(output.raw_output) == {"sessions"}



def test_the_cli_search_takes_corpus(memory: MemoryIndex, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from openclaw_memory.cli import main

    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps({"agents": {"defaults": {"workspace": str(memory.workspace), "memorySearch": {
        "provider": "none", "sources": ["memory", "sessions"], "sessionsDir": str(memory.config.resolved_sessions_dir()),
        "experimental": {"sessionMemory": True}, "store": {"path": str(tmp_path / "cli.sqlite")}}}}}))
    for corpus, expected in (("memory", {"memory"}), ("sessions", {"sessions"}), ("all", {"memory", "sessions"})):
        result = CliRunner().invoke(main, ["--config", str(config), "search", "budget review", "--corpus", corpus,
                                           "--json", "--min-score", "0"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert {hit["source"] for hit in json.loads(result.output)["results"]} == expected


def test_user_md_is_memory_and_evergreen(tmp_path: Path) -> None:
    """USER.md (the user model) is indexed as memory and never decays, like MEMORY.md, however old the file."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    fact = "- Always answer Tomasz in Polish, briefly.\n"
    (ws / "USER.md").write_text(fact)
    (ws / "MEMORY.md").write_text(fact)
    (ws / "memory" / "2025-01-06.md").write_text(fact)  # a daily note: decays
    old = datetime.now().timestamp() - 200 * 86400
    for name in ("USER.md", "MEMORY.md"):
        os.utime(ws / name, (old, old))
    with MemoryIndex(workspace=ws, provider="none", store={"path": str(tmp_path / "index.sqlite")}, watch=False,
                     query={"min_score": 0, "hybrid": {"temporal_decay": {"enabled": True}}}) as index:
        index.sync()
        payload = memory_search(index, "answer Tomasz in Polish", corpus="memory")
        scores = {hit["path"]: hit["score"] for hit in payload["results"]}
        assert scores["USER.md"] == pytest.approx(scores["MEMORY.md"])  # neither decayed
        assert scores["memory/2025-01-06.md"] < scores["MEMORY.md"] / 2
        assert memory_get(index, "USER.md")["text"] == fact
