"""LanceDB long-term memory for LangChain: the three tools and ``LongTermMemoryMiddleware``.

* :func:`create_long_term_tools`: ``memory_store`` / ``memory_recall`` / ``memory_forget`` as
  ``StructuredTool`` s (sync and async; the text for the model, the payload as ``artifact``).
* :class:`LongTermMemoryMiddleware` for ``create_agent``: once per invocation it recalls the
  memories relevant to the latest user message and adds them, as an escaped, untrusted-marked
  ``<relevant-memories>`` block, to the system prompt of every model call of that invocation (the
  block never enters the conversation state). With ``auto_capture=True`` it stores memorable user
  messages after a successful run. It also registers the three tools.

All logic lives in :mod:`openclaw_memory.long_term`; this module only translates.

    >>> ltm = LongTermMemory("~/.openclaw/memory/lancedb", provider="local")           # doctest: +SKIP
    >>> agent = create_agent(model, middleware=[LongTermMemoryMiddleware(ltm)])          # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Annotated, Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ContextT, ModelCallResult, PrivateStateAttr, ResponseT
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.runtime import Runtime
from openclaw_memory.long_term import AutoCapture, AutoRecall, CaptureCandidate, LongTermMemory
from openclaw_memory.long_term.store import check_long_term_memory
from openclaw_memory.long_term.tools import (
    MEMORY_FORGET_DESCRIPTION,
    MEMORY_RECALL_DESCRIPTION,
    MEMORY_STORE_DESCRIPTION,
    MemoryForgetArgs,
    MemoryRecallArgs,
    MemoryStoreArgs,
    ToolOutput,
    amemory_forget,
    amemory_recall,
    amemory_store,
    memory_forget,
    memory_recall,
    memory_store,
)
from typing_extensions import NotRequired

from langchain_openclaw_memory._convert import is_summary_message, message_text, thread_id, validation_error_text

__all__ = ["LongTermMemoryMiddleware", "LongTermMemoryState", "create_long_term_tools"]


def _output(result: ToolOutput) -> ToolOutput:
    text, payload = result
    if payload.get("error"):
        raise ToolException(text)
    return text, payload


def create_long_term_tools(memory: LongTermMemory) -> list[StructuredTool]:
    """``[memory_store, memory_recall, memory_forget]`` over ``memory``; a bad argument or a failing
    provider comes back to the model as a tool error it can act on."""
    check_long_term_memory(memory)

    def store(text: str, importance: float = 0.7, category: str = "other") -> ToolOutput:
        return _output(memory_store(memory, text, importance, category))

    async def astore(text: str, importance: float = 0.7, category: str = "other") -> ToolOutput:
        return _output(await amemory_store(memory, text, importance, category))

    def recall(query: str, limit: int = 5, min_score: float = 0.1) -> ToolOutput:
        return _output(memory_recall(memory, query, limit, min_score))

    async def arecall(query: str, limit: int = 5, min_score: float = 0.1) -> ToolOutput:
        return _output(await amemory_recall(memory, query, limit, min_score))

    def forget(query: str | None = None, memory_id: str | None = None) -> ToolOutput:
        return _output(memory_forget(memory, query, memory_id))

    async def aforget(query: str | None = None, memory_id: str | None = None) -> ToolOutput:
        return _output(await amemory_forget(memory, query, memory_id))

    specs = [("memory_store", store, astore, MEMORY_STORE_DESCRIPTION, MemoryStoreArgs),
             ("memory_recall", recall, arecall, MEMORY_RECALL_DESCRIPTION, MemoryRecallArgs),
             ("memory_forget", forget, aforget, MEMORY_FORGET_DESCRIPTION, MemoryForgetArgs)]
    return [
        StructuredTool.from_function(
            func=func, coroutine=coro, name=name, description=description, args_schema=schema,
            response_format="content_and_artifact", handle_tool_error=True,
            handle_validation_error=validation_error_text,
        )
        for name, func, coro, description, schema in specs
    ]


class LongTermMemoryState(AgentState[ResponseT]):
    """Agent state the middleware keeps (private: not in the agent's input or output)."""

    long_term_memories: NotRequired[Annotated[str, PrivateStateAttr]]


def _candidates(messages: Sequence[BaseMessage]) -> list[CaptureCandidate]:
    """The user's own messages (not SummarizationMiddleware's summary, which is a HumanMessage too)."""
    return [CaptureCandidate("user", message_text(m), m.id) for m in messages
            if isinstance(m, HumanMessage) and not is_summary_message(m)]


def _last_user_text(messages: Sequence[BaseMessage]) -> str | None:
    for m in reversed(messages):
        if isinstance(m, HumanMessage):
            return message_text(m)
    return None


class LongTermMemoryMiddleware(AgentMiddleware[LongTermMemoryState[ResponseT], ContextT, ResponseT]):
    """Auto-recall (on by default) and auto-capture (off by default) of a :class:`LongTermMemory`.

    ``recall`` / ``capture`` take configured :class:`AutoRecall` / :class:`AutoCapture` objects
    (limits, timeout, cooldown, custom triggers); ``capture_triggers`` adds trigger regexes to the
    default ones. ``tools=False`` leaves the three tools out of the agent.
    """

    state_schema = LongTermMemoryState

    def __init__(
        self,
        memory: LongTermMemory,
        *,
        auto_recall: bool = True,
        auto_capture: bool = False,
        tools: bool = True,
        recall: AutoRecall | None = None,
        capture: AutoCapture | None = None,
        capture_triggers: Iterable[str] = (),
    ) -> None:
        super().__init__()
        check_long_term_memory(memory)
        self.memory = memory
        self.recall = (recall or AutoRecall(memory)) if auto_recall else None
        self.capture = (capture or AutoCapture(memory, triggers=capture_triggers)) if auto_capture else None
        self.tools: list[BaseTool] = list(create_long_term_tools(memory)) if tools else []

    @staticmethod
    def _session(runtime: Runtime[ContextT]) -> str:
        thread = thread_id(runtime)
        return f"langchain:thread:{thread}" if thread else "langchain:default"

    # ---- auto-recall -----------------------------------------------------------------------

    def before_agent(self, state: LongTermMemoryState[ResponseT], runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        """Recall the memories for the latest user message, once per invocation."""
        if self.recall is None:
            return None
        return {"long_term_memories": self.recall.context(_last_user_text(state["messages"]))}

    async def abefore_agent(
        self, state: LongTermMemoryState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`before_agent`."""
        if self.recall is None:
            return None
        return {"long_term_memories": await self.recall.acontext(_last_user_text(state["messages"]))}

    @staticmethod
    def _with_memories(request: ModelRequest[ContextT]) -> ModelRequest[ContextT]:
        block = str(request.state.get("long_term_memories") or "")
        if not block:
            return request
        system = request.system_message
        if system is None:
            return request.override(system_message=SystemMessage(block))
        if isinstance(system.content, str):
            content: Any = f"{system.content}\n\n{block}" if system.content else block
        else:
            content = [*system.content, {"type": "text", "text": block}]
        return request.override(system_message=SystemMessage(content=content))

    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: Callable[[ModelRequest[ContextT]], ModelResponse[ResponseT]]
    ) -> ModelCallResult[ResponseT]:
        """Add the recalled memories to the system prompt of the model call."""
        return handler(self._with_memories(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[ResponseT]]],
    ) -> ModelCallResult[ResponseT]:
        """Async twin of :meth:`wrap_model_call`."""
        return await handler(self._with_memories(request))

    # ---- auto-capture ----------------------------------------------------------------------

    def after_agent(self, state: LongTermMemoryState[ResponseT], runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        """After a successful run, store the memorable user messages not captured before."""
        if self.capture is not None:
            self.capture.capture(_candidates(state["messages"]), session=self._session(runtime))
        return None

    async def aafter_agent(
        self, state: LongTermMemoryState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`after_agent`."""
        if self.capture is not None:
            await self.capture.acapture(_candidates(state["messages"]), session=self._session(runtime))
        return None
