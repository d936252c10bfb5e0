"""memory_search / memory_get as FunctionTools, called directly and by a FunctionAgent."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.memory import Memory

from llama_index_openclaw_memory import (
    create_memory_forget_entry_tool,
    create_memory_get_tool,
    create_memory_search_tool,
    create_memory_tools,
    memory_recall_prompt,
)
from openclaw_memory import MemoryIndex
from openclaw_memory.agent.tools import MEMORY_GET_DESCRIPTION, MEMORY_SEARCH_DESCRIPTION, memory_get


def test_tool_metadata_and_argument_schemas(memory: MemoryIndex) -> None:
    search, get = create_memory_tools(memory)
    assert (search.metadata.name, search.metadata.description) == ("memory_search", MEMORY_SEARCH_DESCRIPTION)
    assert (get.metadata.name, get.metadata.description) == ("memory_get", MEMORY_GET_DESCRIPTION)
    s_schema = search.metadata.get_parameters_dict()
    g_schema = get.metadata.get_parameters_dict()
    assert s_schema["required"] == ["query"] and set(s_schema["properties"]) == {
        "query", "max_results", "min_score", "after", "before", "corpus"}
    assert g_schema["required"] == ["path"] and set(g_schema["properties"]) == {"path", "from_line", "lines"}
    assert "memory_search" in memory_recall_prompt()


def _bounds(schema: dict[str, Any], name: str) -> tuple[Any, Any]:
    options = schema["properties"][name]["anyOf"]
    bounded = next(o for o in options if o["type"] != "null")
    return bounded.get("minimum"), bounded.get("maximum")


def test_argument_schemas_carry_the_core_bounds(memory: MemoryIndex) -> None:
    """The model sees the same bounds as the LangChain tools' schema (the core's argument models)."""
    search, get = create_memory_tools(memory)
    s_schema, g_schema = search.metadata.get_parameters_dict(), get.metadata.get_parameters_dict()
    assert _bounds(s_schema, "max_results") == (1, 50)
    assert _bounds(s_schema, "min_score") == (0, 1)
    assert _bounds(g_schema, "from_line") == (1, None) and _bounds(g_schema, "lines") == (1, None)
    assert s_schema["properties"]["max_results"]["description"] == "Maximum results (default 6)."


@pytest.mark.parametrize(("tool", "kwargs"), [
    ("memory_search", {"query": "   "}),
    ("memory_search", {"query": "coffee", "max_results": 0}),
    ("memory_search", {"query": "coffee", "min_score": -0.5}),
    ("memory_get", {"path": "../secrets.txt"}),
    ("memory_get", {"path": "notes.txt"}),
])
async def test_failures_are_tool_errors_the_model_can_read(memory: MemoryIndex, tool: str,
                                                           kwargs: dict[str, Any]) -> None:
    """A refused path, an empty query or a bad argument: ``is_error=True`` (as LlamaIndex marks a failed call,
    and the LangChain tools answer with status="error"), the explanation as the content, nothing raised."""
    tools = {t.metadata.name: t for t in create_memory_tools(memory)}
    for out in (tools[tool].call(**kwargs), await tools[tool].acall(**kwargs)):
        assert out.is_error is True
        assert out.content and out.raw_output["error"] in out.content
    fine = tools[tool].call(**({"query": "coffee"} if tool == "memory_search" else {"path": "MEMORY.md"}))
    assert fine.is_error is False


async def test_an_agent_sees_a_refused_call_as_a_tool_error(memory: MemoryIndex) -> None:
    def respond(messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
        if not [m for m in messages if m.role == MessageRole.TOOL]:
            call = ToolCallBlock(tool_call_id="call-1", tool_name="memory_get", tool_kwargs={"path": "../secrets.txt"})
            return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])
        return ChatMessage(role=MessageRole.ASSISTANT, content="I could not read that file.")

    agent = FunctionAgent(tools=create_memory_tools(memory), llm=MockFunctionCallingLLM(response_generator=respond))
    handler = agent.run(user_msg="Read ../secrets.txt", memory=Memory.from_defaults(session_id="refused"))
    results = [ev async for ev in handler.stream_events() if isinstance(ev, ToolCallResult)]
    await handler
    assert len(results) == 1 and results[0].tool_output.is_error is True
    assert "secrets.txt" in results[0].tool_output.content


def test_search_returns_cited_text_and_the_full_payload(memory: MemoryIndex) -> None:
    out = create_memory_search_tool(memory).call(query="payments worker error E429-RL", max_results=2)
    assert re.match(r"\[memory/2026-01-16\.md#L1-L\d+\] \(score 0\.\d\d\)\n", out.content)
    assert "E429-RL" in out.content
    assert out.raw_output["results"][0]["path"] == "memory/2026-01-16.md"
    assert out.raw_output["mode"] == "hybrid" and len(out.raw_output["results"]) <= 2


def test_get_reads_lines_and_refusals_reach_the_model(memory: MemoryIndex) -> None:
    get = create_memory_get_tool(memory)
    out = get.call(path="memory/2026-01-16.md", from_line=3, lines=1)
    assert out.content == "- We chose SQLite with FTS5 and sqlite-vec for the memory index."  # the lines, as text
    assert out.raw_output == {  # the structured result stays with the output
        "path": "memory/2026-01-16.md", "text": "- We chose SQLite with FTS5 and sqlite-vec for the memory index.",
        "start_line": 3, "end_line": 3,
    }
    refused = get.call(path="../secrets.txt")
    assert refused.raw_output["disabled"] is True and "secrets.txt" in refused.raw_output["error"]
    assert refused.content == refused.raw_output["error"]  # the explanation itself, as the LangChain tool says it
    assert refused.is_error  # an explanation for the model, marked as a failed call, not a crash


@pytest.mark.parametrize("arguments", [
    {"path": "memory/2026-01-16.md", "from_line": 3, "lines": 1},
    {"path": "memory/2031-01-01.md"},  # not written yet
    {"path": "MEMORY.md", "from_line": 400},  # past the end
    {"path": "MEMORY.md", "from_line": 2, "lines": 1},  # a blank line
    {"path": "../secrets.txt"},  # refused
])
async def test_get_says_what_the_langchain_tool_and_the_mcp_server_say(memory: MemoryIndex,
                                                                      arguments: dict[str, Any]) -> None:
    """One text per result on every surface: the core's ``format_get_text`` (the error's text for a refusal), never
    the payload's JSON (an empty ``"text"`` for a missing file or a blank line told the model nothing)."""
    langchain_tools = pytest.importorskip("langchain_openclaw_memory")
    said = langchain_tools.create_memory_get_tool(memory).invoke(arguments)
    get = create_memory_get_tool(memory)
    for out in (get.call(**arguments), await get.acall(**arguments)):
        assert out.content == said
        assert out.raw_output == memory_get(memory, **arguments)


async def test_async_tools(memory: MemoryIndex) -> None:
    search, get = create_memory_tools(memory)
    found = await search.acall(query="Stripe webhooks")
    assert found.content.startswith("[memory/2026-01-20.md#L")
    got = await get.acall(path="MEMORY.md", from_line=1, lines=1)
    assert got.content == "# Long-term memory" and got.raw_output["start_line"] == 1


def test_non_memory_argument_is_refused() -> None:
    with pytest.raises(TypeError, match="MemoryIndex"):
        create_memory_tools("not an index")  # type: ignore[arg-type]


def _scripted_llm() -> MockFunctionCallingLLM:
    """Calls memory_search, then memory_get on the first hit's file, then answers from what it read."""

    def respond(messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
        tool_results = [m for m in messages if m.role == MessageRole.TOOL]
        if not tool_results:
            call = ToolCallBlock(tool_call_id="call-1", tool_name="memory_search",
                                 tool_kwargs={"query": "payments worker error"})
            return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])
        if len(tool_results) == 1:
            path = re.match(r"\[([^\]#]+)#L", tool_results[0].content or "")
            assert path is not None, tool_results[0].content
            call = ToolCallBlock(tool_call_id="call-2", tool_name="memory_get",
                                 tool_kwargs={"path": path.group(1), "from_line": 4, "lines": 1})
            return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])
        return ChatMessage(role=MessageRole.ASSISTANT, content="From memory: " + (tool_results[-1].content or ""))

    return MockFunctionCallingLLM(response_generator=respond)


@pytest.mark.parametrize("kind", ["function_agent", "agent_workflow"])
async def test_an_agent_calls_both_tools(memory: MemoryIndex, kind: str) -> None:
    llm = _scripted_llm()
    if kind == "function_agent":
        agent: Any = FunctionAgent(tools=create_memory_tools(memory), llm=llm, system_prompt=memory_recall_prompt())
    else:
        agent = AgentWorkflow.from_tools_or_functions(create_memory_tools(memory), llm=llm, system_prompt=memory_recall_prompt())
    chat = Memory.from_defaults(session_id=f"tools-{kind}")
    handler = agent.run(user_msg="What error did the payments worker hit?", memory=chat)
    results = [ev async for ev in handler.stream_events() if isinstance(ev, ToolCallResult)]
    answer = await handler
    assert [r.tool_name for r in results] == ["memory_search", "memory_get"]
    assert results[0].tool_kwargs == {"query": "payments worker error"}
    assert "E429-RL" in results[0].tool_output.content
    assert results[1].tool_kwargs["path"] == "memory/2026-01-16.md"
    assert "E429-RL" in str(answer)
    roles = [m.role for m in await chat.aget_all()]
    assert roles.count(MessageRole.TOOL) == 2


async def test_the_forget_tool_removes_a_memory_md_entry(memory: MemoryIndex) -> None:
    forget = create_memory_forget_entry_tool(memory)
    assert forget.metadata.name == "memory_forget_entry"
    assert forget.metadata.get_parameters_dict()["required"] == ["what"]
    done = await forget.acall(what="Deployments run on Fly.io in the Frankfurt region.")
    assert not done.is_error and done.raw_output["removed"] == 1 and "Forgotten" in str(done.content)
    assert "Frankfurt" not in (memory.workspace / "MEMORY.md").read_text()
    assert not memory.search("Frankfurt region", min_score=0.0, mode="keyword").hits
    missing = forget.call(what="   ")
    assert missing.is_error and "forget needs" in str(missing.content)
