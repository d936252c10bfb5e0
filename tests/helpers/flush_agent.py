"""A LangChain agent with the pre-compaction flush and summarization middleware, driven by a scripted responder."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_openclaw_memory import FlushOutcome, PreCompactionFlushMiddleware
from openclaw_memory import MemoryIndex


TRIGGER = 2000


SOFT = 800


PADDING = " lorem ipsum" * 34  # ~400 characters: ~100 tokens per message


class Script:
    """Responder for the agent, the flush turn and the summarizer; logs what it was asked to do."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.flush_prompts: list[list[BaseMessage]] = []
        self.agent_prompts: list[list[BaseMessage]] = []

    def __call__(self, messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        last = messages[-1]
        if "write_memory" in tools:
            if isinstance(last, ToolMessage):
                return AIMessage("NO_REPLY")
            self.events.append("flush")
            self.flush_prompts.append(messages)
            n = self.events.count("flush")
            return AIMessage(
                "", tool_calls=[{"name": "write_memory", "args": {"content": f"- durable note {n}"}, "id": f"w{n}"}]
            )
        if "Context Extraction Assistant" in last.text:
            self.events.append("summary")
            return AIMessage(f"SUMMARY {self.events.count('summary')}")
        self.events.append("agent")
        self.agent_prompts.append(messages)
        return AIMessage(f"Reply to {last.text[:16]}:{PADDING}")


def build_agent(memory: MemoryIndex, model: Any, *, outcomes: list[FlushOutcome], **kwargs: Any) -> Any:
    summarize = SummarizationMiddleware(model, trigger=("tokens", TRIGGER), keep=("messages", 4))
    flush = PreCompactionFlushMiddleware(
        memory, model, summarization=summarize, soft_threshold_tokens=SOFT, on_flush=outcomes.append, **kwargs
    )
    return create_agent(model, middleware=[flush, summarize], checkpointer=InMemorySaver()), flush

