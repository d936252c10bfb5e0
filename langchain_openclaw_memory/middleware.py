"""``PreCompactionFlushMiddleware``: OpenClaw's memory flush for ``langchain.agents.create_agent``.

List it **before** ``SummarizationMiddleware``. Before each model call it counts the conversation's
tokens with the summarizer's counter; once they reach ``trigger - soft_threshold_tokens`` it runs
one silent flush turn (the flush model bound to an append-only ``write_memory`` tool, its reply
discarded), at most once per compaction cycle. A new summary message (``lc_source ==
"summarization"``) starts the next cycle and, with the ``sessions`` source on, indexes the thread's
transcript (``memory.transcript_path(thread_id)``, see :meth:`MemoryIndex.after_compaction`) per
``compaction.post_index_sync``. It also gives the agent ``memory_search`` /
``memory_get`` and adds the session's memory context (daily notes, ``MEMORY.md`` in private
sessions, the Memory Recall section) to the system prompt.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.summarization import SummarizationMiddleware
from langchain.agents.middleware.types import ContextT, ModelCallResult, PrivateStateAttr, ResponseT
from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.runtime import Runtime
from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.agent.bootstrap import DEFAULT_BOOTSTRAP_MAX_CHARS, build_session_context
from openclaw_memory.text.citations import ChatType, normalize_session_kind
from openclaw_memory.agent.flush import FlushDecision, FlushPolicy
from openclaw_memory.index import MemoryIndex
from typing_extensions import NotRequired

from langchain_openclaw_memory._convert import (
    check_memory_index,
    flushed_this_cycle,
    last_summary_id,
    thread_id,
    with_flush_mark,
)
from langchain_openclaw_memory._flush import (
    FlushOutcome,
    SilentFlushRunner,
    check_flush_threshold,
    sync_after_compaction,
    with_soft_threshold,
)
from langchain_openclaw_memory.tools import create_memory_tools

__all__ = ["MemoryFlushState", "PreCompactionFlushMiddleware"]

log = logging.getLogger(__name__)

try:
    from langchain.agents.middleware.internal_call_transformer import InternalCallTransformer

    _TRANSFORMERS: tuple[Any, ...] = (InternalCallTransformer,)
except ImportError:  # pragma: no cover - newer langchain hides internal calls by the nostream tag
    _TRANSFORMERS = ()

TokenCounter = Callable[[Sequence[BaseMessage]], int]


class MemoryFlushState(AgentState[ResponseT]):
    """Agent state keys the middleware keeps per thread (private: not in input or output)."""

    memory_session_key: NotRequired[Annotated[str, PrivateStateAttr]]
    memory_compactions: NotRequired[Annotated[int, PrivateStateAttr]]
    memory_summary_id: NotRequired[Annotated[str | None, PrivateStateAttr]]
    memory_context: NotRequired[Annotated[str, PrivateStateAttr]]


def _profile_limit(model: Any) -> int | None:
    profile = getattr(model, "profile", None)
    value = profile.get("max_input_tokens") if isinstance(profile, Mapping) else None
    return value if isinstance(value, int) else None


def _trigger_tokens(summarization: SummarizationMiddleware) -> int:
    """The smallest token threshold at which ``summarization`` may compact."""
    trigger = summarization.trigger
    items = trigger if isinstance(trigger, list) else [trigger] if trigger is not None else []
    limits: list[int] = []
    for item in items:
        clause: dict[str, Any] = dict(item) if isinstance(item, Mapping) else {item[0]: item[1]}
        if "tokens" in clause:
            limits.append(int(clause["tokens"]))
        elif "fraction" in clause:
            window = _profile_limit(summarization.model)
            if window is not None:
                limits.append(max(1, int(window * float(clause["fraction"]))))
    if not limits:
        raise MemoryArgumentError(
            f"cannot derive a token threshold from SummarizationMiddleware(trigger={trigger!r}): the flush needs a "
            "'tokens' or 'fraction' trigger; pass trigger_tokens=<int> to PreCompactionFlushMiddleware"
        )
    return min(limits)


class PreCompactionFlushMiddleware(AgentMiddleware[MemoryFlushState[ResponseT], ContextT, ResponseT]):
    """Flush durable memories to ``memory/YYYY-MM-DD.md`` before the agent's history is summarised.

    Once per compaction cycle: the flush marks the message it ran at (``additional_kwargs``, key
    ``openclaw_memory_flush_cycle``), so the cycle is known from the messages, with a checkpointer or without one
    (then pass the returned ``messages`` back in, as a stateless agent must anyway for summaries to stick).

    After each summarisation (noticed at the next model call) the thread's session transcript is
    indexed as :meth:`MemoryIndex.after_compaction` describes (``sources`` with ``"sessions"``,
    ``sync.sessions.post_compaction_force``, ``compaction.post_index_sync``): the file
    ``memory.transcript_path(thread_id)`` if there is one, else every transcript that changed.

    Args:
        memory: The agent's memory index (its config gives the workspace, timezone, prompts).
        model: The chat model for the silent flush turn (usually the agent's model; a
            ``"provider:model"`` string is resolved with ``init_chat_model``). Defaults to the
            summarizer's model when ``summarization`` is given.
        summarization: The ``SummarizationMiddleware`` listed after this one: its trigger and
            token counter set the flush threshold.
        trigger_tokens: The compaction threshold in tokens when there is no ``summarization``
            (default: ``compaction.context_window - compaction.reserve_tokens_floor``). The flush
            runs at ``trigger_tokens - soft_threshold_tokens``; a threshold that is not positive
            raises ConfigError (a ValueError), as in ``MemoryFlushCallbackHandler``.
        soft_threshold_tokens: How far below the trigger to flush (default:
            ``compaction.memory_flush.soft_threshold_tokens``, 4000).
        token_counter: Counts the conversation's tokens (default: the summarizer's counter).
        session_kind: ``"direct"`` (a one-to-one chat) injects ``MEMORY.md`` and lets the flush
            append to it; ``"group"``/``"channel"`` do neither (``"private"``, the old name of
            ``"direct"``, still works and warns).
        session_key: Key of the flush bookkeeping (default: one per conversation, kept in the
            checkpointed thread state, so the bookkeeping lives and dies with the conversation).
        include_tools: Register ``memory_search`` / ``memory_get`` with the agent.
        inject_context: Add the session's memory context to the system prompt.
        on_flush: Called with each :class:`FlushOutcome` (for logging or tests).

    Example:
        ```python
        summarize = SummarizationMiddleware(model, trigger=("tokens", 100_000))
        agent = create_agent(
            model,
            middleware=[PreCompactionFlushMiddleware(memory, model, summarization=summarize), summarize],
            checkpointer=InMemorySaver(),
        )
        ```
    """

    state_schema = MemoryFlushState  # type: ignore[assignment]
    transformers = _TRANSFORMERS

    def __init__(
        self,
        memory: MemoryIndex,
        model: BaseChatModel | str | None = None,
        *,
        summarization: SummarizationMiddleware | None = None,
        trigger_tokens: int | None = None,
        soft_threshold_tokens: int | None = None,
        token_counter: TokenCounter | None = None,
        session_kind: ChatType = "direct",
        session_key: str | None = None,
        include_tools: bool = True,
        inject_context: bool = True,
        context_max_chars: int = DEFAULT_BOOTSTRAP_MAX_CHARS,
        max_model_calls: int = 4,
        on_flush: Callable[[FlushOutcome], None] | None = None,
    ) -> None:
        super().__init__()
        check_memory_index(memory)
        if model is None:
            if summarization is None:
                raise MemoryArgumentError("PreCompactionFlushMiddleware needs model=<chat model> for the flush turn")
            model = summarization.model
        if isinstance(model, str):
            model = init_chat_model(model)
        self.memory = memory
        self.model = model
        self.session_kind: ChatType = normalize_session_kind(session_kind)
        self.session_key = session_key
        self.inject_context = inject_context
        self.context_max_chars = context_max_chars
        self.on_flush = on_flush
        self.tools = create_memory_tools(memory) if include_tools else []

        config = with_soft_threshold(memory.config, soft_threshold_tokens)
        reserve = config.compaction.reserve_tokens_floor
        given_as = "trigger_tokens" if trigger_tokens is not None else None
        if trigger_tokens is None and summarization is not None:
            trigger_tokens, given_as = _trigger_tokens(summarization), "SummarizationMiddleware's trigger"
        if trigger_tokens is None:
            trigger_tokens = config.compaction.context_window - reserve
        self.trigger_tokens = trigger_tokens
        if token_counter is None:
            token_counter = summarization.token_counter if summarization is not None else count_tokens_approximately
        self.policy = FlushPolicy(
            config,
            token_counter=token_counter,
            context_window=trigger_tokens + reserve,
            allow_memory_md=self.session_kind == "direct",
        )
        # ConfigError (a ValueError) for a flush that could never run
        check_flush_threshold(self.policy, trigger_tokens if given_as else None, given_as=given_as or "")
        self.runner = SilentFlushRunner(model, self.policy, memory=memory, max_model_calls=max_model_calls)

    @property
    def flush_threshold(self) -> int:
        """Token count at which the flush turn runs (``trigger - soft_threshold_tokens``)."""
        return self.policy.threshold

    # ---- session start ---------------------------------------------------------------------

    def _session_updates(self, state: MemoryFlushState[ResponseT]) -> dict[str, Any] | None:
        updates: dict[str, Any] = {}
        if not state.get("memory_session_key"):
            updates["memory_session_key"] = f"langchain:{uuid.uuid4()}"
        if self.inject_context and "memory_context" not in state:
            updates["memory_context"] = build_session_context(
                self.memory.config, session_kind=self.session_kind, max_chars=self.context_max_chars
            )
            if self.memory.config.sync.on_session_start:
                self.memory.sync_in_background("session start")
        return updates or None

    def before_agent(self, state: MemoryFlushState[ResponseT], runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        """Start of an invocation: fix the session key and the memory context once per session."""
        return self._session_updates(state)

    async def abefore_agent(
        self, state: MemoryFlushState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`before_agent`."""
        return await asyncio.to_thread(self._session_updates, state)

    # ---- the flush -------------------------------------------------------------------------

    def _key(self, state: MemoryFlushState[ResponseT], runtime: Runtime[ContextT]) -> str:
        """The flush bookkeeping key: ``session_key`` when given, else the key kept in the thread's
        checkpointed state (a fresh one per conversation, so a new checkpointer starts a new
        compaction cycle even under a reused ``thread_id``)."""
        if self.session_key:
            return self.session_key
        return state.get("memory_session_key") or "langchain:default"

    def _decide(
        self, state: MemoryFlushState[ResponseT], runtime: Runtime[ContextT]
    ) -> tuple[str, int, FlushDecision, dict[str, Any]]:
        messages = state["messages"]
        updates: dict[str, Any] = {}
        compactions = state.get("memory_compactions", 0)
        summary_id = last_summary_id(messages)
        if summary_id is not None and summary_id != state.get("memory_summary_id"):
            compactions += 1
            updates = {"memory_compactions": compactions, "memory_summary_id": summary_id}
            sync_after_compaction(self.memory, thread_id(runtime))
        key = self._key(state, runtime)
        if flushed_this_cycle(messages):  # known from the messages alone, also without a checkpointer
            decision = FlushDecision(False, "already_flushed_this_cycle", self.policy.threshold, session_key=key,
                                     compaction_count=compactions)
        else:
            decision = self.policy.should_flush(key, messages=messages, compaction_count=compactions)
        return key, compactions, decision, updates

    def _done(self, key: str, compactions: int, outcome: FlushOutcome, messages: Sequence[BaseMessage],
              updates: dict[str, Any]) -> None:
        """Record the flush: in the policy's session state and as a mark on the last message."""
        self.policy.mark_flushed(key, compaction_count=compactions)
        marked = with_flush_mark(messages)
        if marked is not None:
            updates["messages"] = [marked]
        if self.on_flush is not None:
            self.on_flush(outcome)

    def before_model(self, state: MemoryFlushState[ResponseT], runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        """Run the silent flush turn when the soft threshold is crossed (once per compaction cycle)."""
        key, compactions, decision, updates = self._decide(state, runtime)
        if decision.flush:
            try:
                outcome = self.runner.run(state["messages"], session_key=key)
            except Exception:  # a failed flush must not fail the user's turn; it is retried next call
                log.exception("memory flush for %s failed; the conversation continues without it", key)
            else:
                self._done(key, compactions, outcome, state["messages"], updates)
        return updates or None

    async def abefore_model(
        self, state: MemoryFlushState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`before_model`."""
        key, compactions, decision, updates = await asyncio.to_thread(self._decide, state, runtime)
        if decision.flush:
            try:
                outcome = await self.runner.arun(state["messages"], session_key=key)
            except Exception:
                log.exception("memory flush for %s failed; the conversation continues without it", key)
            else:
                await asyncio.to_thread(self._done, key, compactions, outcome, state["messages"], updates)
        return updates or None

    # ---- system prompt ---------------------------------------------------------------------

    def _with_context(self, request: ModelRequest[ContextT]) -> ModelRequest[ContextT]:
        context = str(request.state.get("memory_context") or "") if self.inject_context else ""
        if not context:
            return request
        system = request.system_message
        if system is None:
            return request.override(system_message=SystemMessage(context))
        if isinstance(system.content, str):
            content: Any = f"{system.content}\n\n{context}" if system.content else context
        else:
            content = [*system.content, {"type": "text", "text": context}]
        return request.override(system_message=SystemMessage(content=content))

    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: Callable[[ModelRequest[ContextT]], ModelResponse[ResponseT]]
    ) -> ModelCallResult[ResponseT]:
        """Add the session's memory context to the system prompt."""
        return handler(self._with_context(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[ResponseT]]],
    ) -> ModelCallResult[ResponseT]:
        """Async twin of :meth:`wrap_model_call`."""
        return await handler(self._with_context(request))
