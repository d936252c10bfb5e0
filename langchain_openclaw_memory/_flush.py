"""The silent pre-compaction flush turn, run with a LangChain chat model.

The model sees the conversation, the core's flush prompts and one append-only ``write_memory``
tool limited to today's daily note (and ``MEMORY.md`` when allowed). Its writes go through
:meth:`FlushPolicy.apply_flush_writes`; its reply is discarded (``NO_REPLY`` is expected). Nothing
of the turn is returned to the caller's conversation, and its model calls are tagged ``nostream``
so streaming UIs never show them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool, ToolException
from langgraph.constants import TAG_NOSTREAM
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError, MemoryArgumentError, MemoryArgumentTypeError
from openclaw_memory.agent.flush import FlushPolicy, FlushTurn, FlushWriteResult, is_no_reply
from openclaw_memory.index import MemoryIndex
from pydantic import BaseModel, Field

from langchain_openclaw_memory._convert import FLUSH_TAG, message_text, validation_error_text

__all__ = ["FlushOutcome", "SilentFlushRunner", "check_flush_threshold", "flush_run_config", "hidden_run_config",
           "sync_after_compaction", "with_soft_threshold"]

log = logging.getLogger(__name__)

try:  # langchain < 1.5 filters internal calls from run.messages with this marker
    from langchain.agents.middleware.internal_call_transformer import internal_call_metadata as _internal
except ImportError:  # pragma: no cover - newer langchain relies on the nostream tag alone

    def _internal() -> dict[str, Any]:
        return {}


WRITE_TOOL_NAME = "write_memory"


def hidden_run_config(tag: str) -> RunnableConfig:
    """Config for the library's own model calls inside an agent run (the flush turn, a consolidation sweep):
    hidden from streams (``nostream``), named and tagged ``tag``."""
    return {
        "run_name": tag,
        "tags": [TAG_NOSTREAM, tag],
        "metadata": {"lc_source": tag, **_internal()},
    }


def flush_run_config() -> RunnableConfig:
    """Config for the flush turn's model calls: hidden from streams, marked ``memory_flush``."""
    return hidden_run_config(FLUSH_TAG)


def with_soft_threshold(config: MemoryConfig, soft_threshold_tokens: int | None) -> MemoryConfig:
    """``config`` with ``compaction.memory_flush.soft_threshold_tokens`` replaced when given."""
    if soft_threshold_tokens is None:
        return config
    return MemoryConfig.load(config, compaction={"memory_flush": {"soft_threshold_tokens": soft_threshold_tokens}})


def check_flush_threshold(policy: FlushPolicy, trigger_tokens: int | None, *, given_as: str = "trigger_tokens") -> None:
    """ConfigError (a ValueError) when the flush could never run. With a compaction threshold (``trigger_tokens``,
    named ``given_as`` in the message) the flush runs at ``trigger_tokens - soft_threshold_tokens``; without one
    the policy's own check names the context window and the reserve."""
    if trigger_tokens is None or policy.threshold > 0:
        policy.check_threshold()
        return
    soft = policy.config.compaction.memory_flush.soft_threshold_tokens
    raise ConfigError(
        f"the memory flush would never run: its threshold is {policy.threshold} tokens ({given_as} {trigger_tokens} - "
        f"soft_threshold_tokens {soft}); pass a soft_threshold_tokens below {trigger_tokens} (e.g. "
        f"soft_threshold_tokens={max(1, trigger_tokens // 4)}) or a larger {given_as}"
    )


def sync_after_compaction(memory: MemoryIndex | None, session_id: str | None) -> None:
    """The post-compaction sync (``MemoryIndex.after_compaction``) for a session an adapter saw
    compacted: the transcript ``memory.transcript_path(session_id)`` when it exists, else every
    transcript that changed since it was indexed. A no-op unless the ``sessions`` source is on;
    failures are logged, never raised (a compaction must not fail the user's turn)."""
    if memory is None:
        return
    try:
        scheduled = memory.after_compaction(session_id) if session_id else None
        if scheduled is None:  # disabled (cheap), or no transcript under that id
            memory.after_compaction()
    except Exception as exc:
        log.warning("post-compaction sync for %s failed: %s", session_id or "the sessions", exc)


class WriteMemoryArgs(BaseModel):
    """Arguments of the flush turn's ``write_memory`` tool."""

    content: str = Field(description="Markdown to append: durable facts, decisions, preferences, todos.")
    path: str | None = Field(None, description="Target file; defaults to today's daily note.")


@dataclass(frozen=True)
class FlushOutcome:
    """What one flush turn did: the writes applied and the (discarded) final reply."""

    session_key: str
    target_path: str
    writes: list[FlushWriteResult] = field(default_factory=list)
    reply: str = ""
    no_reply: bool = True
    model_calls: int = 0

    @property
    def written(self) -> list[str]:
        """Paths that were appended to."""
        return [w.path for w in self.writes if w.ok]


def _write_tool(policy: FlushPolicy, turn: FlushTurn, writes: list[FlushWriteResult]) -> StructuredTool:
    allowed = " or ".join(turn.allowed_paths)

    def write_memory(content: str, path: str | None = None) -> str:
        if not content.strip():
            raise ToolException("content is empty: pass the Markdown to append, or reply NO_REPLY")
        results = policy.apply_flush_writes([(path or turn.target_path, content)], turn=turn)
        writes.extend(results)
        failed = [r.error for r in results if not r.ok]
        if failed:
            raise ToolException("; ".join(e or "write failed" for e in failed))
        return f"Appended {len(content)} characters to {results[0].path}."

    return StructuredTool.from_function(
        func=write_memory,
        name=WRITE_TOOL_NAME,
        description=(
            f"Append Markdown to a memory file (append-only; never overwrites). Allowed paths: {allowed}. "
            f"Default: {turn.target_path}."
        ),
        args_schema=WriteMemoryArgs,
        handle_tool_error=True,
        handle_validation_error=validation_error_text,  # told, the model calls again with the right arguments
    )


def _unknown_tool(call: ToolCall, tool: StructuredTool) -> ToolMessage:
    return ToolMessage(
        f"Unknown tool {call['name']!r}: only {tool.name} is available during the memory flush.",
        tool_call_id=call["id"] or "",
        status="error",
    )


def _require_tool_calling(model: Any) -> None:
    """Raise TypeError unless ``model`` can bind tools: the flush turn writes through a tool, and a
    model without tool calling would fail every flush (``BaseChatModel.bind_tools`` exists on
    every chat model and raises NotImplementedError when the model has none)."""
    probe = StructuredTool.from_function(
        func=lambda content: content, name=WRITE_TOOL_NAME, description="probe", args_schema=WriteMemoryArgs,
    )
    try:
        model.bind_tools([probe])
    except (NotImplementedError, AttributeError) as exc:
        raise MemoryArgumentTypeError(
            f"the flush model {type(model).__name__} does not support tool calling (bind_tools: "
            f"{type(exc).__name__}); the memory flush writes through a tool, so pass a chat model that "
            "supports tools (for example the agent's own model) as the flush model"
        ) from exc


@dataclass
class _Turn:
    """One flush turn in progress: prompts, the writes so far, the write tool, the messages."""

    turn: FlushTurn
    writes: list[FlushWriteResult]
    tool: StructuredTool
    convo: list[BaseMessage]


def _history(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The conversation without system messages and without a trailing unanswered tool call."""
    out = [m for m in messages if not isinstance(m, SystemMessage)]
    if out and isinstance(out[-1], AIMessage) and out[-1].tool_calls:
        out.pop()
    return out


class SilentFlushRunner:
    """Runs the flush turn with ``model`` and applies its writes through ``policy``.

    After a successful write the memory index is refreshed per ``compaction.post_index_sync``
    (``async``: in the background, ``await``: before returning, ``off``). ``max_model_calls``
    bounds the tool loop.
    """

    def __init__(
        self,
        model: BaseChatModel,
        policy: FlushPolicy,
        *,
        memory: MemoryIndex | None = None,
        max_model_calls: int = 4,
    ) -> None:
        _require_tool_calling(model)
        if max_model_calls < 1:
            raise MemoryArgumentError(f"max_model_calls must be >= 1, got {max_model_calls}")
        self.model = model
        self.policy = policy
        self.memory = memory
        self.max_model_calls = max_model_calls

    def _prepare(self, messages: Sequence[BaseMessage]) -> _Turn:
        turn = self.policy.build_flush_messages()
        writes: list[FlushWriteResult] = []
        tool = _write_tool(self.policy, turn, writes)
        convo: list[BaseMessage] = [
            SystemMessage(turn.system_prompt),
            *_history(messages),
            HumanMessage(turn.user_prompt),
        ]
        return _Turn(turn, writes, tool, convo)

    def _finish(self, session_key: str, t: _Turn, last: AIMessage | None, calls: int) -> FlushOutcome:
        reply = message_text(last) if last is not None else ""
        silent = is_no_reply(reply) or not reply.strip()
        if not silent:
            log.info("memory flush for %s: discarded a non-silent reply (%d chars)", session_key, len(reply))
        return FlushOutcome(session_key, t.turn.target_path, t.writes, reply, silent, calls)

    def _sync_mode(self, t: _Turn) -> str:
        """How to refresh the index after this turn: ``async``, ``await`` or ``off``."""
        if self.memory is None or not any(w.ok for w in t.writes):
            return "off"
        return self.memory.config.compaction.post_index_sync

    def run(self, messages: Sequence[BaseMessage], *, session_key: str = "") -> FlushOutcome:
        """Run the flush turn over ``messages`` (the conversation so far)."""
        t = self._prepare(messages)
        bound = self.model.bind_tools([t.tool])
        last: AIMessage | None = None
        calls = 0
        while calls < self.max_model_calls:
            last = bound.invoke(t.convo, config=flush_run_config())
            calls += 1
            t.convo.append(last)
            if not last.tool_calls:
                break
            for call in last.tool_calls:
                t.convo.append(t.tool.invoke({**call, "type": "tool_call"}) if call["name"] == t.tool.name
                               else _unknown_tool(call, t.tool))
        mode = self._sync_mode(t)
        if mode == "await":
            self.memory.sync(reason="memory flush")  # type: ignore[union-attr]
        elif mode == "async":
            self.memory.sync_in_background("memory flush")  # type: ignore[union-attr]
        return self._finish(session_key, t, last, calls)

    async def arun(self, messages: Sequence[BaseMessage], *, session_key: str = "") -> FlushOutcome:
        """Async twin of :meth:`run`."""
        t = self._prepare(messages)
        bound = self.model.bind_tools([t.tool])
        last: AIMessage | None = None
        calls = 0
        while calls < self.max_model_calls:
            last = await bound.ainvoke(t.convo, config=flush_run_config())
            calls += 1
            t.convo.append(last)
            if not last.tool_calls:
                break
            for call in last.tool_calls:
                t.convo.append(await t.tool.ainvoke({**call, "type": "tool_call"}) if call["name"] == t.tool.name
                               else _unknown_tool(call, t.tool))
        mode = self._sync_mode(t)
        if mode == "await":
            await self.memory.async_sync(reason="memory flush")  # type: ignore[union-attr]
        elif mode == "async":
            self.memory.sync_in_background("memory flush")  # type: ignore[union-attr]
        return self._finish(session_key, t, last, calls)
