"""Consolidation with LangChain models: ``consolidate(memory, model)``, the middleware after an agent
run, and a LangGraph node; the model is LangChain's ``GenericFakeChatModel`` scripted with the
decisions a model would answer."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path
from typing import TypedDict

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from openclaw_memory.config import MemoryConfig

from langchain_openclaw_memory import (
    ConsolidationMiddleware,
    FlushRequest,
    MemoryFlushCallbackHandler,
    aconsolidate,
    consolidate,
    consolidation_node,
)

MEMORY = "# Memory\n\n- Deploys happen on Tuesdays.\n- The team lead is Dana.\n"
NOTE = "- Deploys now happen on Fridays only, after the freeze.\n- Carol prefers answers in French.\n"


def decisions(*items: dict) -> AIMessage:
    return AIMessage(content=json.dumps({"decisions": list(items)}))


def model_answering(*messages: AIMessage) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter(messages))


@pytest.fixture
def config(tmp_path: Path) -> MemoryConfig:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(MEMORY)
    (ws / "memory" / f"{date.today().isoformat()}.md").write_text(NOTE)
    return MemoryConfig(workspace=ws, state_dir=tmp_path / "state", provider="none",
                        dreaming={"min_recall_count": 0, "min_unique_queries": 0})


def memory_text(config: MemoryConfig) -> str:
    return (config.resolved_workspace() / "MEMORY.md").read_text()


def test_consolidate_with_a_chat_model_supersedes_with_a_source(config: MemoryConfig) -> None:
    model = model_answering(decisions({"op": "supersede", "candidate": "C1", "entry": "E1", "importance": 8},
                                      {"op": "add", "candidate": "C2", "triggers": ["language"]}))
    report = consolidate(config, model)
    text = memory_text(config)
    today = date.today().isoformat()
    assert report.applied and report.superseded == [f"memory/{today}.md#L1-L1"]
    assert "Tuesdays" not in text and "- The team lead is Dana." in text
    assert f"Source: memory/{today}.md#L2-L2 <!-- trigger: language -->" in text


def test_aconsolidate_uses_the_async_model(config: MemoryConfig) -> None:
    model = model_answering(decisions({"op": "add", "candidate": "C2"}))
    report = asyncio.run(aconsolidate(config, model))
    assert report.added and "Carol prefers answers in French." in memory_text(config)


def test_a_chat_model_answering_prose_promotes_append_only(config: MemoryConfig) -> None:
    report = consolidate(config, model_answering(AIMessage(content="Done! Memory updated.")))
    assert report.mode == "append-only" and memory_text(config).startswith(MEMORY)
    assert len(report.added) == 2


def test_the_middleware_consolidates_after_the_agent_run_once_per_interval(config: MemoryConfig) -> None:
    dreamer = model_answering(decisions({"op": "add", "candidate": "C2"}), decisions({"op": "add", "candidate": "C1"}))
    middleware = ConsolidationMiddleware(config, dreamer, interval_seconds=3600)
    agent = create_agent(model_answering(AIMessage(content="Hello!"), AIMessage(content="Hi again!")),
                         middleware=[middleware])
    agent.invoke({"messages": [HumanMessage("hi")]})
    assert middleware.last_report is not None and middleware.last_report.applied
    assert "Carol prefers" in memory_text(config) and "Fridays" not in memory_text(config)
    agent.invoke({"messages": [HumanMessage("hi again")]})  # within the interval: no second sweep
    assert "Fridays" not in memory_text(config)
    assert (config.resolved_workspace() / "DREAMS.md").read_text().count("## Deep Sleep") == 1


def test_a_langgraph_node_runs_a_sweep(config: MemoryConfig) -> None:
    class State(TypedDict):
        done: bool

    graph = StateGraph(State)
    graph.add_node("dream", consolidation_node(config, model_answering(decisions({"op": "add", "candidate": "C1"}))))
    graph.add_edge(START, "dream")
    graph.add_edge("dream", END)
    graph.compile().invoke({"done": True})
    assert "Fridays only" in memory_text(config)


def test_a_model_that_is_not_a_chat_model_is_refused(config: MemoryConfig) -> None:
    with pytest.raises(TypeError, match="BaseChatModel"):
        consolidate(config, "gpt-4.1")  # type: ignore[arg-type]


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_sweep_after_the_run_is_not_streamed_as_the_agents_reply(config: MemoryConfig, asynchronous: bool) -> None:
    # a chat UI streaming stream_mode="messages" must not show the consolidation model's JSON after the answer
    dreamer = model_answering(decisions({"op": "add", "candidate": "C2"}))
    middleware = ConsolidationMiddleware(config, dreamer)
    agent = create_agent(model_answering(AIMessage(content="Hello!")), middleware=[middleware])
    inputs = {"messages": [HumanMessage("hi")]}

    async def astreamed() -> list[str]:
        return [chunk.text async for chunk, _ in agent.astream(inputs, stream_mode="messages")]

    if asynchronous:
        streamed = asyncio.run(astreamed())
    else:
        streamed = [chunk.text for chunk, _ in agent.stream(inputs, stream_mode="messages")]
    assert middleware.last_report is not None and middleware.last_report.applied  # the sweep ran
    assert "decisions" not in "".join(streamed) and "".join(streamed) == "Hello!"


def test_the_flush_handler_does_not_count_the_sweep_as_the_conversation(config: MemoryConfig) -> None:
    # the sweep's long prompt is the library's own call, as the flush turn's are: it must not trigger a flush
    requests: list[FlushRequest] = []
    handler = MemoryFlushCallbackHandler(config, flush_runner=requests.append, trigger_tokens=400,
                                         soft_threshold_tokens=100)
    middleware = ConsolidationMiddleware(config, model_answering(decisions({"op": "add", "candidate": "C2"})))
    agent = create_agent(model_answering(AIMessage(content="Hello!")), middleware=[middleware])
    agent.invoke({"messages": [HumanMessage("hi")]}, {"callbacks": [handler], "metadata": {"session_key": "s1"}})
    assert middleware.last_report is not None and middleware.last_report.applied
    assert requests == []
