"""``LongTermMemoryMiddleware``'s auto-capture keeps one cursor per conversation thread, whatever the LangGraph
release: the thread id comes from ``runtime.execution_info`` when the runtime has one, else from the run's config.

The adapter allows LangGraph 1.0 releases (langchain 1.2.9 to 1.2.x run on ``langgraph>=1.0.7,<1.1``); their
``Runtime`` has no ``execution_info`` (the thread id is only in the config), and the middleware read
``runtime.execution_info`` directly: the run failed with AttributeError after the model answered.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime
from openclaw_memory.long_term import AutoCapture, LongTermMemory
from openclaw_memory.long_term.capture import CaptureCandidate, CaptureCursor

from langchain_openclaw_memory.long_term import LongTermMemoryMiddleware
from tests.helpers.chat_model import ScriptedChatModel

SAID = "I prefer answers in Czech"


def _as_in_langgraph_1_0(runtime: Runtime[Any]) -> Runtime[Any]:
    """A copy of ``runtime`` without ``execution_info``, as LangGraph 1.0's ``Runtime`` is (``runtime`` itself when
    the installed LangGraph is such a release)."""
    if not hasattr(runtime, "execution_info"):
        return runtime
    older = dataclasses.replace(runtime)
    object.__delattr__(older, "execution_info")  # the slot left empty: reading it raises AttributeError
    return older


class OnLangGraph10(LongTermMemoryMiddleware):
    """The middleware as LangGraph 1.0 calls it: a runtime without ``execution_info``."""

    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return super().after_agent(state, _as_in_langgraph_1_0(runtime))

    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return await super().aafter_agent(state, _as_in_langgraph_1_0(runtime))


class RecordingCursor(CaptureCursor):
    """A capture cursor (in memory) that records the sessions it is asked about."""

    def __init__(self) -> None:
        super().__init__()
        self.sessions: list[str] = []

    def unseen(self, session: str, messages: Sequence[CaptureCandidate]) -> list[CaptureCandidate]:
        self.sessions.append(session)
        return super().unseen(session, messages)


@pytest.mark.parametrize("middleware", [LongTermMemoryMiddleware, OnLangGraph10])
def test_capture_is_kept_per_thread(ltm: LongTermMemory, middleware: type[LongTermMemoryMiddleware]) -> None:
    cursor = RecordingCursor()
    capturing = middleware(ltm, auto_capture=True, capture=AutoCapture(ltm, cursor=cursor))
    model = ScriptedChatModel(responder=lambda messages, tools: AIMessage("noted"))
    agent = create_agent(model, middleware=[capturing], checkpointer=InMemorySaver())
    agent.invoke({"messages": [HumanMessage(SAID)]}, {"configurable": {"thread_id": "t-42"}})
    assert [r.text for r in ltm.list()] == [SAID]
    assert cursor.sessions == ["langchain:thread:t-42"]


async def test_capture_is_kept_per_thread_async(ltm: LongTermMemory) -> None:
    cursor = RecordingCursor()
    capturing = OnLangGraph10(ltm, auto_capture=True, capture=AutoCapture(ltm, cursor=cursor))
    model = ScriptedChatModel(responder=lambda messages, tools: AIMessage("noted"))
    agent = create_agent(model, middleware=[capturing], checkpointer=InMemorySaver())
    await agent.ainvoke({"messages": [HumanMessage(SAID)]}, {"configurable": {"thread_id": "t-7"}})
    assert [r.text for r in ltm.list()] == [SAID]
    assert cursor.sessions == ["langchain:thread:t-7"]


def test_without_a_thread_the_default_session_is_used(ltm: LongTermMemory) -> None:
    cursor = RecordingCursor()
    capturing = OnLangGraph10(ltm, auto_capture=True, capture=AutoCapture(ltm, cursor=cursor))
    agent = create_agent(ScriptedChatModel(responder=lambda messages, tools: AIMessage("ok")), middleware=[capturing])
    agent.invoke({"messages": [HumanMessage(SAID)]})
    assert cursor.sessions == ["langchain:default"]
