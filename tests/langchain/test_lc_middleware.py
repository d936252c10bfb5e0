"""PreCompactionFlushMiddleware with create_agent and SummarizationMiddleware, end to end.

One scripted model plays three parts: the agent (long replies, so the history grows), the
silent flush turn (it has the ``write_memory`` tool: it writes a note, then says NO_REPLY) and the
summarizer (it gets SummarizationMiddleware's prompt).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import daily_note_path, today

from langchain_openclaw_memory import FlushOutcome, PreCompactionFlushMiddleware
from tests.helpers.flush_agent import TRIGGER, SOFT, PADDING, Script, build_agent as _agent


def _flushes_and_summaries(events: list[str]) -> list[str]:
    return [e for e in events if e != "agent"]


@pytest.fixture
def script() -> Script:
    return Script()


def _visible_text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def test_flush_writes_once_per_cycle_before_summarisation(memory: MemoryIndex, script: Script, scripted) -> None:
    model = scripted(script)
    outcomes: list[FlushOutcome] = []
    agent, flush = _agent(memory, model, outcomes=outcomes)
    assert flush.flush_threshold == TRIGGER - SOFT
    note = memory.workspace / daily_note_path(today("UTC"))
    config = {"configurable": {"thread_id": "t-1"}}

    visible: list[BaseMessage] = []
    notes_at_summary: list[int] = []
    for turn in range(40):
        summaries_before = script.events.count("summary")
        out = agent.invoke({"messages": [HumanMessage(f"user message {turn}:{PADDING}")]}, config)
        visible.extend(out["messages"])
        if script.events.count("summary") > summaries_before:
            notes_at_summary.append(note.read_text().count("durable note"))
        if script.events.count("summary") == 2:
            break

    # Two full cycles: each flush happened before the summary that closed its cycle.
    assert _flushes_and_summaries(script.events) == ["flush", "summary", "flush", "summary"]
    assert notes_at_summary == [1, 2]
    text = note.read_text()
    assert text.count("- durable note 1") == 1 and text.count("- durable note 2") == 1
    assert [o.written for o in outcomes] == [[daily_note_path(today("UTC"))]] * 2
    assert all(o.no_reply and o.reply == "NO_REPLY" for o in outcomes)

    # The flush turn saw the conversation and the core's flush prompt; the user sees none of it.
    assert any("user message 5" in m.text for m in script.flush_prompts[0])
    assert "Pre-compaction memory flush" in script.flush_prompts[0][-1].text
    state_messages = agent.get_state(config).values["messages"]
    for messages in (visible, state_messages):
        body = _visible_text(messages)
        assert "NO_REPLY" not in body and "durable note" not in body and "Pre-compaction" not in body
        assert not any(isinstance(m, AIMessage) and m.tool_calls for m in messages)
        assert not any(isinstance(m, ToolMessage) for m in messages)
    assert state_messages[0].additional_kwargs.get("lc_source") == "summarization"


def test_session_context_and_tools_reach_the_model(memory: MemoryIndex, script: Script, scripted) -> None:
    yesterday = daily_note_path(today("UTC") - timedelta(days=1))
    path = memory.workspace / yesterday
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("- Yesterday we agreed to ship on Friday.\n", encoding="utf-8")
    model = scripted(script)
    agent, _ = _agent(memory, model, outcomes=[])
    agent.invoke({"messages": [HumanMessage("hello")]}, {"configurable": {"thread_id": "ctx"}})

    call = model.calls[-1]
    system = call.messages[0]
    assert isinstance(system, SystemMessage)
    assert "Yesterday we agreed to ship on Friday." in system.text  # yesterday's daily note
    assert "The user prefers SQLite for local caches." in system.text  # MEMORY.md: private session
    assert "## Memory Recall" in system.text
    assert call.tools == ["memory_search", "memory_get"]


def test_group_sessions_do_not_see_or_write_memory_md(memory: MemoryIndex, script: Script, scripted) -> None:
    model = scripted(script)
    agent, flush = _agent(memory, model, outcomes=[], session_kind="group")
    agent.invoke({"messages": [HumanMessage("hello")]}, {"configurable": {"thread_id": "g"}})
    system = model.calls[-1].messages[0]
    assert "The user prefers SQLite" not in system.text
    assert "Citations are disabled" in system.text
    assert flush.policy.build_flush_messages().allowed_paths == (daily_note_path(today("UTC")),)


def test_system_prompt_is_kept_and_extended(memory: MemoryIndex, script: Script, scripted) -> None:
    model = scripted(script)
    summarize = SummarizationMiddleware(model, trigger=("tokens", TRIGGER))
    flush = PreCompactionFlushMiddleware(memory, model, summarization=summarize, soft_threshold_tokens=SOFT)
    agent = create_agent(model, system_prompt="You are Claw.", middleware=[flush, summarize])
    agent.invoke({"messages": [HumanMessage("hi")]})
    text = model.calls[-1].messages[0].text
    assert text.startswith("You are Claw.\n\n## Memory")


async def test_async_agent_flushes_silently_and_streams_nothing_of_it(
    memory: MemoryIndex, script: Script, scripted
) -> None:
    model = scripted(script)
    outcomes: list[FlushOutcome] = []
    agent, _ = _agent(memory, model, outcomes=outcomes)
    note = memory.workspace / daily_note_path(today("UTC"))
    config = {"configurable": {"thread_id": "async"}}
    streamed: list[str] = []
    for turn in range(12):
        async for chunk, _meta in agent.astream(
            {"messages": [HumanMessage(f"async message {turn}:{PADDING}")]}, config, stream_mode="messages"
        ):
            streamed.append(str(chunk.content))
        if outcomes:
            break
    assert len(outcomes) == 1 and note.read_text().count("- durable note 1") == 1
    joined = "\n".join(streamed)
    assert "Reply to async message" in joined  # the agent's own replies do stream
    assert "NO_REPLY" not in joined and "durable note" not in joined


def test_failed_flush_does_not_break_the_turn_and_is_retried(
    memory: MemoryIndex, script: Script, scripted, caplog: pytest.LogCaptureFixture
) -> None:
    attempts: list[int] = []

    def flaky(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        if "write_memory" in tools and not isinstance(messages[-1], ToolMessage) and not attempts:
            attempts.append(1)
            raise RuntimeError("flush model unavailable")
        return script(messages, tools)

    model = scripted(flaky)
    outcomes: list[FlushOutcome] = []
    agent, _ = _agent(memory, model, outcomes=outcomes)
    config = {"configurable": {"thread_id": "flaky"}}
    with caplog.at_level(logging.ERROR, logger="langchain_openclaw_memory.middleware"):
        for turn in range(12):
            out = agent.invoke({"messages": [HumanMessage(f"message {turn}:{PADDING}")]}, config)
            assert out["messages"][-1].text.startswith("Reply to message")
            if outcomes:
                break
    assert attempts == [1]
    assert "memory flush" in caplog.text and "failed" in caplog.text
    assert len(outcomes) == 1  # retried on the next model call of the same cycle


@pytest.mark.parametrize(
    ("trigger", "profile", "expected"),
    [
        (("tokens", 5000), None, 5000),
        ({"tokens": 6000, "messages": 10}, None, 6000),
        ([("messages", 50), ("tokens", 7000), ("tokens", 9000)], None, 7000),
        (("fraction", 0.5), {"max_input_tokens": 20_000}, 10_000),
    ],
)
def test_threshold_derives_from_the_summarization_trigger(
    memory: MemoryIndex, scripted, trigger: Any, profile: dict[str, int] | None, expected: int
) -> None:
    model = scripted(Script())
    if profile is not None:
        model.profile = profile
    summarize = SummarizationMiddleware(model, trigger=trigger)
    flush = PreCompactionFlushMiddleware(memory, model, summarization=summarize, soft_threshold_tokens=1000)
    assert flush.trigger_tokens == expected
    assert flush.flush_threshold == expected - 1000


def test_configuration_errors_are_actionable(memory: MemoryIndex, scripted) -> None:
    model = scripted(Script())
    with pytest.raises(ValueError, match="trigger_tokens"):
        by_messages = SummarizationMiddleware(model, trigger=("messages", 9))
        PreCompactionFlushMiddleware(memory, model, summarization=by_messages)
    with pytest.raises(ValueError, match="soft_threshold_tokens"):
        PreCompactionFlushMiddleware(memory, model, trigger_tokens=3000)  # default soft threshold is 4000
    with pytest.raises(ValueError, match="model="):
        PreCompactionFlushMiddleware(memory)
    # Without a summarizer the threshold is OpenClaw's: context window - reserve - soft.
    default = PreCompactionFlushMiddleware(memory, model)
    assert default.flush_threshold == 200_000 - 20_000 - 4000


def test_state_keys_are_private(memory: MemoryIndex, scripted) -> None:
    model = scripted(Script())
    agent = create_agent(model, middleware=[PreCompactionFlushMiddleware(memory, model, trigger_tokens=10_000,
                                                                         soft_threshold_tokens=100)])
    out = agent.invoke({"messages": [HumanMessage("hi")]})
    assert set(out) == {"messages"}
    assert "memory_context" not in agent.get_input_jsonschema()["properties"]


def test_session_kind_private_is_the_old_name_of_direct(memory: MemoryIndex, script: Script, scripted) -> None:
    model = scripted(script)
    with pytest.warns(DeprecationWarning, match='"direct"'):
        _, old = _agent(memory, model, outcomes=[], session_kind="private")
    _, new = _agent(memory, model, outcomes=[])
    assert old.session_kind == new.session_kind == "direct"
    assert old.policy.allow_memory_md and new.policy.allow_memory_md
    _, group = _agent(memory, model, outcomes=[], session_kind="group")
    assert not group.policy.allow_memory_md


def test_without_a_checkpointer_the_flush_still_runs_once_per_cycle(
        memory: MemoryIndex, script: Script, scripted) -> None:
    """As the README's example: no checkpointer, the caller passes the returned messages back in. The cycle
    is read from the messages (the flush marks the message it ran at), so each note is written once."""
    model = scripted(script)
    summarize = SummarizationMiddleware(model, trigger=("tokens", TRIGGER), keep=("messages", 4))
    flush = PreCompactionFlushMiddleware(memory, model, summarization=summarize, soft_threshold_tokens=SOFT)
    agent = create_agent(model, middleware=[flush, summarize])
    messages: list[BaseMessage] = []
    for turn in range(40):
        messages = agent.invoke({"messages": [*messages, HumanMessage(f"user message {turn}:{PADDING}")]})["messages"]
        if script.events.count("summary") == 2:
            break
    assert _flushes_and_summaries(script.events) == ["flush", "summary", "flush", "summary"]
    text = (memory.workspace / daily_note_path(today("UTC"))).read_text()
    assert text.count("- durable note 1") == 1 and text.count("- durable note 2") == 1
    assert "durable note 3" not in text
    assert "NO_REPLY" not in _visible_text(messages) and "durable note" not in _visible_text(messages)


async def test_without_a_checkpointer_the_async_flush_runs_once_per_cycle(
        memory: MemoryIndex, script: Script, scripted) -> None:
    model = scripted(script)
    summarize = SummarizationMiddleware(model, trigger=("tokens", TRIGGER), keep=("messages", 4))
    flush = PreCompactionFlushMiddleware(memory, model, summarization=summarize, soft_threshold_tokens=SOFT)
    agent = create_agent(model, middleware=[flush, summarize])
    messages: list[BaseMessage] = []
    for turn in range(25):
        out = await agent.ainvoke({"messages": [*messages, HumanMessage(f"user message {turn}:{PADDING}")]})
        messages = out["messages"]
        if script.events.count("summary") == 1:
            break
    assert _flushes_and_summaries(script.events) == ["flush", "summary"]
