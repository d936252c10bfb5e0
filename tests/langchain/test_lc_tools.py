"""memory_search / memory_get as StructuredTools: content + artifact, tool errors, an agent using them."""

from __future__ import annotations

import json

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ProviderError

from langchain_openclaw_memory import create_memory_forget_entry_tool, create_memory_tools, memory_recall_prompt

pytestmark = pytest.mark.both_stores  # also on PostgreSQL (tests/conftest.py)


def _call(tool: StructuredTool, args: dict[str, object], call_id: str = "c1") -> ToolMessage:
    return tool.invoke({"name": tool.name, "args": args, "id": call_id, "type": "tool_call"})


def test_tools_are_structured_with_pydantic_schemas(memory: MemoryIndex) -> None:
    search, get = create_memory_tools(memory)
    assert (search.name, get.name) == ("memory_search", "memory_get")
    assert search.response_format == get.response_format == "content_and_artifact"
    assert search.coroutine is not None and get.coroutine is not None
    search_params = convert_to_openai_tool(search)["function"]["parameters"]
    get_params = convert_to_openai_tool(get)["function"]["parameters"]
    assert set(search_params["properties"]) == {"query", "max_results", "min_score", "after", "before", "corpus"}
    assert search_params["required"] == ["query"]
    assert "Maximum results" in search_params["properties"]["max_results"]["description"]
    assert set(get_params["properties"]) == {"path", "from_line", "lines"}


def test_snake_and_camel_case_arguments_both_work(memory: MemoryIndex) -> None:
    _, get = create_memory_tools(memory)
    snake = _call(get, {"path": "memory/2026-01-15.md", "from_line": 4, "lines": 1})
    camel = _call(get, {"path": "memory/2026-01-15.md", "from": 4, "lines": 1})
    assert snake.content == camel.content == "- Alice owns the billing service."


def test_search_returns_cited_text_and_structured_artifact(memory: MemoryIndex) -> None:
    search, _ = create_memory_tools(memory)
    msg = _call(search, {"query": "ECONNRESET payments", "maxResults": 2, "minScore": 0.0})
    assert msg.status == "success"
    assert msg.text.startswith("[memory/2026-01-16.md#L")
    hits = msg.artifact["results"]
    assert 1 <= len(hits) <= 2
    assert hits[0]["path"] == "memory/2026-01-16.md"
    assert {"start_line", "end_line", "score", "snippet", "source"} <= set(hits[0])


def test_get_reads_requested_lines(memory: MemoryIndex) -> None:
    _, get = create_memory_tools(memory)
    msg = _call(get, {"path": "memory/2026-01-15.md", "from": 4, "lines": 1})
    assert msg.content == "- Alice owns the billing service."
    assert msg.artifact == {"path": "memory/2026-01-15.md", "text": msg.content, "start_line": 4, "end_line": 4}


def test_get_of_missing_allowed_file_is_not_an_error(memory: MemoryIndex) -> None:
    _, get = create_memory_tools(memory)
    msg = _call(get, {"path": "memory/2030-01-01.md"})
    assert msg.status == "success"
    assert "does not exist yet" in msg.content
    assert msg.artifact["text"] == ""


def test_get_of_lines_an_existing_file_lacks_does_not_call_it_missing(memory: MemoryIndex) -> None:
    _, get = create_memory_tools(memory)
    past_the_end = _call(get, {"path": "MEMORY.md", "from": 40})
    assert past_the_end.status == "success" and past_the_end.artifact["text"] == ""
    assert "does not exist" not in past_the_end.content and "empty" not in past_the_end.content
    assert "MEMORY.md" in past_the_end.content and "40" in past_the_end.content
    blank = _call(get, {"path": "memory/2026-01-15.md", "from": 2, "lines": 1})
    assert blank.artifact["text"] == ""
    assert blank.content == "Line 2 of memory/2026-01-15.md is blank."
    missing = _call(get, {"path": "memory/2030-01-01.md"})
    assert missing.content == "memory/2030-01-01.md does not exist yet."


def test_a_citation_given_as_the_path_reads_the_lines_it_names(memory: MemoryIndex) -> None:
    # memory_search shows "[memory/2026-01-16.md#L3-L4]"; models pass that back to memory_get as the path
    search, get = create_memory_tools(memory)
    cited = _call(search, {"query": "ECONNRESET payments", "maxResults": 1, "minScore": 0.0}).artifact["results"][0]
    got = _call(get, {"path": cited["citation"]})
    assert got.status != "error" and "not a Markdown" not in got.content and "ECONNRESET" in got.content
    assert (got.artifact["path"], got.artifact["start_line"], got.artifact["end_line"]) == (
        "memory/2026-01-16.md", cited["start_line"], cited["end_line"])


def test_searching_transcripts_that_are_not_indexed_says_so(memory: MemoryIndex) -> None:
    # corpus="sessions" is in the tool's schema; with the sessions source off, "No memory matched" would be untrue
    assert "sessions" not in memory.config.sources
    search, _ = create_memory_tools(memory)
    sessions = _call(search, {"query": "SQLite cache", "corpus": "sessions"})
    assert sessions.status == "error"
    assert "not indexed" in sessions.content and "corpus" in sessions.content
    assert _call(search, {"query": "SQLite cache", "corpus": "memory", "minScore": 0.0}).artifact["results"]


def test_refused_path_is_a_tool_error_not_an_exception(memory: MemoryIndex) -> None:
    _, get = create_memory_tools(memory)
    msg = _call(get, {"path": "../outside.md"})
    assert msg.status == "error"
    assert "outside.md" in msg.text and msg.text.strip()


def test_empty_query_and_invalid_arguments_are_tool_errors(memory: MemoryIndex) -> None:
    search, _ = create_memory_tools(memory)
    empty = _call(search, {"query": "   "})
    assert empty.status == "error"
    assert "query required" in empty.content
    invalid = _call(search, {"query": "x", "maxResults": 0})
    assert invalid.status == "error"
    assert "maxResults" in invalid.content and "Invalid tool arguments" in invalid.content


def test_query_embedding_failure_degrades_visibly_to_keyword_search(memory: MemoryIndex) -> None:
    memory.provider.fail_with = RuntimeError("insufficient_quota")  # type: ignore[union-attr]
    search, _ = create_memory_tools(memory)
    msg = _call(search, {"query": "Benchmarked"})
    assert msg.status == "success"
    assert msg.text.startswith("[memory/2026-01-16.md#L")
    assert "(keyword-only search: query embedding failed" in msg.content
    assert msg.artifact["mode"] == "keyword"


def test_unavailable_memory_reaches_the_model_as_tool_error(
    memory: MemoryIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise ProviderError("embedding provider returned 429 insufficient_quota")

    monkeypatch.setattr(memory, "search", fail)
    search, _ = create_memory_tools(memory)
    msg = _call(search, {"query": "SQLite"})
    assert msg.status == "error"
    payload = json.loads(msg.text)
    assert payload["disabled"] is True and payload["unavailable"] is True
    assert "quota" in payload["warning"] and payload["action"]


async def test_async_tools(memory: MemoryIndex) -> None:
    search, get = create_memory_tools(memory)
    msg = await search.ainvoke(
        {"name": "memory_search", "args": {"query": "rate limit", "minScore": 0}, "id": "a", "type": "tool_call"}
    )
    assert "memory/projects/api.md" in msg.content
    bad = await get.ainvoke({"name": "memory_get", "args": {"path": "/etc/passwd"}, "id": "b", "type": "tool_call"})
    assert bad.status == "error"


def test_recall_prompt_follows_session_kind(memory: MemoryIndex) -> None:
    private = memory_recall_prompt(memory)
    group = memory_recall_prompt(memory.config, session_kind="group")
    assert private.startswith("## Memory Recall") and "memory_search" in private and "memory_get" in private
    assert "Source: <path#line>" in private
    assert "Citations are disabled" in group


def test_one_recall_prompt_across_core_and_adapters() -> None:
    import llama_index_openclaw_memory
    import openclaw_memory.agent.tools

    assert memory_recall_prompt is openclaw_memory.agent.tools.memory_recall_prompt
    assert llama_index_openclaw_memory.memory_recall_prompt is openclaw_memory.agent.tools.memory_recall_prompt


def test_agent_calls_the_tools(memory: MemoryIndex, scripted) -> None:
    def respond(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            return AIMessage(
                "",
                tool_calls=[
                    {"name": "memory_search", "args": {"query": "who owns billing", "minScore": 0}, "id": "s1"},
                    {"name": "memory_get", "args": {"path": "../secrets.md"}, "id": "g1"},
                ],
            )
        results = [m for m in messages if isinstance(m, ToolMessage)]
        return AIMessage("Checked memory: " + " | ".join(f"{m.name}:{m.status}" for m in results))

    model = scripted(respond)
    agent = create_agent(model, create_memory_tools(memory), system_prompt=memory_recall_prompt(memory))
    out = agent.invoke({"messages": [HumanMessage("Who owns the billing service?")]})

    tool_messages = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert tool_messages["s1"].status == "success"
    assert "Alice owns the billing service." in tool_messages["s1"].content
    assert tool_messages["s1"].artifact["results"][0]["path"] == "memory/2026-01-15.md"
    assert tool_messages["g1"].status == "error"
    assert out["messages"][-1].content == "Checked memory: memory_search:success | memory_get:error"
    assert model.calls[0].tools == ["memory_search", "memory_get"]
    assert "## Memory Recall" in model.calls[0].messages[0].text


def test_the_forget_tool_removes_a_memory_md_entry(memory: MemoryIndex) -> None:
    forget = create_memory_forget_entry_tool(memory)
    assert convert_to_openai_tool(forget)["function"]["parameters"]["required"] == ["what"]
    done = _call(forget, {"what": "Deployments run on Fly.io in the Frankfurt region."})
    assert done.status == "success" and done.artifact["removed"] == 1 and "Forgotten" in done.text
    assert "Frankfurt" not in (memory.workspace / "MEMORY.md").read_text()
    assert not memory.search("Frankfurt region", min_score=0.0, mode="keyword").hits
    refused = _call(forget, {"what": ""})
    assert refused.status == "error" and "what" in refused.text
