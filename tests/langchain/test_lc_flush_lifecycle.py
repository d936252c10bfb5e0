"""The flush's lifecycle as a LangChain user meets it (issue 12, items 3-5): its bookkeeping lives
with the checkpointed conversation, a threshold that could never fire is refused the same way by
the middleware and the callback handler, and a flush model without tool calling is refused when
it is given, not at every flush."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage
from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import daily_note_path, today
from openclaw_memory.errors import ConfigError

from langchain_openclaw_memory import FlushOutcome, MemoryFlushCallbackHandler, PreCompactionFlushMiddleware
from tests.helpers.flush_agent import build_agent as _agent, PADDING, Script


def _run_until_first_flush(agent: Any, script: Script, thread_id: str) -> None:
    flushes = script.events.count("flush")
    for turn in range(30):
        agent.invoke({"messages": [HumanMessage(f"user message {turn}:{PADDING}")]},
                     {"configurable": {"thread_id": thread_id}})
        if script.events.count("flush") > flushes:
            return
    raise AssertionError("no flush within 30 turns")


def test_a_new_conversation_under_a_reused_thread_id_flushes_again(memory: MemoryIndex, scripted) -> None:
    """A fresh checkpointer (a new process, a reset conversation) with the same ``thread_id`` is a
    new conversation: it must flush before its first summarisation, as the first one did."""
    script = Script()
    model = scripted(script)
    outcomes: list[FlushOutcome] = []
    first, _ = _agent(memory, model, outcomes=outcomes)
    _run_until_first_flush(first, script, "t-1")
    assert script.events.count("summary") == 0  # still the first compaction cycle

    start = len(script.events)
    second, flush = _agent(memory, model, outcomes=outcomes)  # new InMemorySaver, same thread id
    _run_until_first_flush(second, script, "t-1")
    assert [e for e in script.events[start:] if e != "agent"][0] == "flush"  # not after a summary
    assert "already_flushed_this_cycle" not in [d.reason for d in flush.policy.decisions]
    note = (memory.workspace / daily_note_path(today("UTC"))).read_text()
    assert "durable note 1" in note and "durable note 2" in note


def test_a_small_context_window_is_refused_the_same_way_by_handler_and_middleware(
    memory: MemoryIndex, scripted
) -> None:
    model = scripted(Script())
    with pytest.raises(ConfigError, match="never run") as handler_err:
        MemoryFlushCallbackHandler(memory, model=model, context_window=8192)
    assert "-15808" in str(handler_err.value) and "reserve_tokens_floor" in str(handler_err.value)
    small = MemoryIndex(memory.config, provider=None, watch=False, compaction={"context_window": 8192})
    try:
        with pytest.raises(ConfigError, match="never run"):
            PreCompactionFlushMiddleware(small, model)
    finally:
        small.close()
    # The same compaction threshold gives the same flush threshold in both.
    handler = MemoryFlushCallbackHandler(memory, model=model, trigger_tokens=8192)
    middleware = PreCompactionFlushMiddleware(memory, model, trigger_tokens=8192)
    assert handler.policy.threshold == middleware.flush_threshold == 8192 - 4000
    with pytest.raises(ValueError, match="not both"):
        MemoryFlushCallbackHandler(memory, model=model, context_window=8192, trigger_tokens=4000)


def test_the_handler_takes_soft_threshold_tokens_as_the_middleware_does(memory: MemoryIndex, scripted) -> None:
    model = scripted(Script())
    handler = MemoryFlushCallbackHandler(memory, model=model, trigger_tokens=10_000, soft_threshold_tokens=1000)
    middleware = PreCompactionFlushMiddleware(memory, model, trigger_tokens=10_000, soft_threshold_tokens=1000)
    assert handler.policy.threshold == middleware.flush_threshold == 9000
    windowed = MemoryFlushCallbackHandler(memory, model=model, context_window=30_000, soft_threshold_tokens=500)
    assert windowed.policy.threshold == 30_000 - 20_000 - 500


def test_a_trigger_below_the_soft_threshold_is_refused_with_what_to_change(memory: MemoryIndex, scripted) -> None:
    model = scripted(Script())
    refusals = []
    for build in (lambda: MemoryFlushCallbackHandler(memory, model=model, trigger_tokens=3000),
                  lambda: PreCompactionFlushMiddleware(memory, model, trigger_tokens=3000)):
        with pytest.raises(ConfigError, match="never run") as refused:
            build()
        refusals.append(str(refused.value))
    for message in refusals:  # trigger_tokens was given: the message says which two numbers clash
        assert "trigger_tokens 3000 - soft_threshold_tokens 4000" in message
        assert "soft_threshold_tokens below 3000" in message
        assert "give the compaction threshold itself as trigger_tokens" not in message
    summarize = SummarizationMiddleware(model, trigger=("tokens", 3000))
    with pytest.raises(ConfigError, match="SummarizationMiddleware's trigger 3000 - soft_threshold_tokens 4000"):
        PreCompactionFlushMiddleware(memory, model, summarization=summarize)


def test_a_flush_model_without_tool_calling_is_refused_when_given(memory: MemoryIndex) -> None:
    no_tools = FakeListChatModel(responses=["hi"])
    with pytest.raises(TypeError, match="tool calling"):
        PreCompactionFlushMiddleware(memory, no_tools, trigger_tokens=10_000)
    with pytest.raises(TypeError, match="tool calling"):
        MemoryFlushCallbackHandler(memory, model=no_tools)
