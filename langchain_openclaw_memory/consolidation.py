"""Consolidation ("dreaming") with a LangChain chat model: :func:`consolidate` / :func:`aconsolidate`,
:class:`ConsolidationMiddleware` (after an agent run, at most once per interval) and
:func:`consolidation_node` (a LangGraph node). The model is only translated into the core's
``str -> str`` completion; everything else is :mod:`openclaw_memory.consolidation`.
"""

from __future__ import annotations

import logging
import time
from datetime import date
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ContextT, ResponseT
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.runtime import Runtime
from openclaw_memory.errors import MemoryArgumentTypeError
from openclaw_memory import consolidation as core
from openclaw_memory.config import MemoryConfig
from openclaw_memory.consolidation import AsyncCompletion, Completion, ConsolidationReport
from openclaw_memory.index import MemoryIndex

from langchain_openclaw_memory._convert import CONSOLIDATION_TAG, check_memory_index, message_text
from langchain_openclaw_memory._flush import hidden_run_config

__all__ = ["ConsolidationMiddleware", "aconsolidate", "completion", "consolidate", "consolidation_node"]

log = logging.getLogger(__name__)


def _check(model: object) -> BaseChatModel:
    if not isinstance(model, BaseChatModel):
        raise MemoryArgumentTypeError(f"model must be a langchain_core BaseChatModel, not {type(model).__name__}")
    return model


def completion(model: BaseChatModel) -> tuple[Completion, AsyncCompletion]:
    """The core's completion functions (sync, async) over ``model``: one fresh, tool-free turn, tagged
    ``memory_consolidation`` and ``nostream`` (inside an agent run, ``stream_mode="messages"`` never shows it)."""
    chat = _check(model)

    def complete(prompt: str) -> str:
        return message_text(chat.invoke([HumanMessage(prompt)], config=hidden_run_config(CONSOLIDATION_TAG)))

    async def acomplete(prompt: str) -> str:
        return message_text(await chat.ainvoke([HumanMessage(prompt)], config=hidden_run_config(CONSOLIDATION_TAG)))

    return complete, acomplete


def consolidate(memory: MemoryIndex | MemoryConfig, model: BaseChatModel, *, apply: bool = True,
                today: date | None = None) -> ConsolidationReport:
    """Consolidate the recent daily notes into MEMORY.md with ``model`` (see
    :func:`openclaw_memory.consolidation.consolidate`)."""
    check_memory_index(memory, config=True)
    return core.consolidate(memory, completion(model)[0], apply=apply, today=today)


async def aconsolidate(memory: MemoryIndex | MemoryConfig, model: BaseChatModel, *, apply: bool = True,
                       today: date | None = None) -> ConsolidationReport:
    """Async twin of :func:`consolidate`."""
    check_memory_index(memory, config=True)
    return await core.aconsolidate(memory, completion(model)[1], apply=apply, today=today)


class ConsolidationMiddleware(AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]):
    """For ``create_agent``: after an agent run, consolidate the memory with ``model`` when the last
    sweep of this middleware is at least ``interval_seconds`` old (the first run always sweeps).

    A failed sweep is logged and does not fail the agent's run; ``last_report`` holds the latest
    report."""

    def __init__(self, memory: MemoryIndex | MemoryConfig, model: BaseChatModel, *,
                 interval_seconds: float = 24 * 3600) -> None:
        super().__init__()
        check_memory_index(memory, config=True)
        self.memory = memory
        self.model = _check(model)
        self.interval_seconds = interval_seconds
        self.last_report: ConsolidationReport | None = None
        self._last_run: float | None = None

    def _due(self) -> bool:
        now = time.monotonic()
        if self._last_run is not None and now - self._last_run < self.interval_seconds:
            return False
        self._last_run = now
        return True

    def after_agent(self, state: AgentState[ResponseT], runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        """Run a sweep when one is due."""
        if self._due():
            try:
                self.last_report = consolidate(self.memory, self.model)
            except Exception:
                log.warning("consolidation after the agent run failed", exc_info=True)
        return None

    async def aafter_agent(self, state: AgentState[ResponseT], runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        """Async twin of :meth:`after_agent`."""
        if self._due():
            try:
                self.last_report = await aconsolidate(self.memory, self.model)
            except Exception:
                log.warning("consolidation after the agent run failed", exc_info=True)
        return None


def consolidation_node(memory: MemoryIndex | MemoryConfig, model: BaseChatModel) -> RunnableLambda[Any, dict[str, Any]]:
    """A LangGraph node (sync and async) that runs one sweep and leaves the state unchanged; add it
    where a session ends, e.g. ``graph.add_node("dream", consolidation_node(memory, model))``."""
    check_memory_index(memory, config=True)
    _check(model)

    def sweep(state: Any) -> dict[str, Any]:
        consolidate(memory, model)
        return {}

    async def asweep(state: Any) -> dict[str, Any]:
        await aconsolidate(memory, model)
        return {}

    return RunnableLambda(sweep, afunc=asweep, name="consolidate_memory")
