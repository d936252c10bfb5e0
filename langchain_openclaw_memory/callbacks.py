"""``MemoryFlushCallbackHandler``: the compaction-aware flush for any LangChain runnable.

It watches chat-model calls, reads the token usage each call reports (``usage_metadata``, else
``llm_output["token_usage"]``, else an estimate of the prompt), applies the core
:class:`~openclaw_memory.agent.flush.FlushPolicy` per session and runs a flush once the soft threshold
is crossed, at most once per compaction cycle. The session is ``session_key`` or ``thread_id`` in
the run's metadata (LangGraph adds ``thread_id`` itself; plain chains pass
``config={"metadata": {"session_key": ...}}``), else a default key. A summary message from
``SummarizationMiddleware`` in a prompt, or a call to
:meth:`MemoryFlushCallbackHandler.record_compaction`, starts the next cycle; given a
:class:`~openclaw_memory.MemoryIndex` with the ``sessions`` source on, it also indexes that session's
transcript (``memory.transcript_path(session_key)``, see ``MemoryIndex.after_compaction``).
Callbacks only observe: the flush runs as a side call, it cannot change the chain's messages.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.config import MemoryConfig
from openclaw_memory.agent.flush import FlushDecision, FlushPolicy
from openclaw_memory.index import MemoryIndex

from langchain_openclaw_memory._convert import CONSOLIDATION_TAG, FLUSH_TAG, check_memory_index, last_summary_id
from langchain_openclaw_memory._flush import (
    FlushOutcome,
    SilentFlushRunner,
    check_flush_threshold,
    sync_after_compaction,
    with_soft_threshold,
)

__all__ = ["FlushRequest", "MemoryFlushCallbackHandler"]

log = logging.getLogger(__name__)

#: Tags of the library's own model calls, which are not the conversation's.
_OWN_TAGS = frozenset({FLUSH_TAG, CONSOLIDATION_TAG})


@dataclass(frozen=True)
class FlushRequest:
    """What a flush runner receives: the session, its conversation so far and the decision."""

    session_key: str
    messages: list[BaseMessage]
    decision: FlushDecision


FlushRunner = Callable[[FlushRequest], Any]


def reported_tokens(response: LLMResult) -> int | None:
    """Total tokens an LLM result reports, or None when the provider reports nothing."""
    for generations in response.generations:
        for gen in generations:
            usage = getattr(gen.message, "usage_metadata", None) if isinstance(gen, ChatGeneration) else None
            if usage:
                total = usage.get("total_tokens") or usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
                if total:
                    return int(total)
    output = response.llm_output or {}
    usage = output.get("token_usage") or output.get("usage")
    if isinstance(usage, Mapping):
        total = usage.get("total_tokens") or (usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
        if total:
            return int(total)
    return None


class MemoryFlushCallbackHandler(BaseCallbackHandler):
    """Runs the pre-compaction memory flush when a conversation nears its compaction threshold.

    Args:
        memory: The memory index (or its config) the flush writes to. Only an index gets the
            post-compaction transcript sync.
        model: Chat model for the default flush runner (the silent turn with an append-only
            ``write_memory`` tool). Not needed when ``flush_runner`` is given.
        flush_runner: Called with a :class:`FlushRequest` instead of the default runner.
        policy: The flush policy (default: built from the memory config, with
            ``context_window`` when given).
        context_window: The model's context window in tokens (default:
            ``compaction.context_window``); the flush fires at ``context_window -
            reserve_tokens_floor - soft_threshold_tokens``.
        trigger_tokens: The compaction threshold itself, instead of ``context_window`` (as in
            ``PreCompactionFlushMiddleware``): the flush fires at ``trigger_tokens -
            soft_threshold_tokens``. Either way a threshold that is not positive (a window
            smaller than the reserve) raises ConfigError (a ValueError) here, instead of a flush
            that silently never runs.
        soft_threshold_tokens: How far below the compaction threshold to flush (default:
            ``compaction.memory_flush.soft_threshold_tokens``, 4000), as in ``PreCompactionFlushMiddleware``.
        default_session_key: Session key for runs whose metadata has no ``session_key`` /
            ``thread_id``.
        session_key_fields: Metadata keys holding the session key, in order of preference.

    Example:
        ```python
        handler = MemoryFlushCallbackHandler(memory, model=model, context_window=128_000)
        chain.invoke(inputs, config={"callbacks": [handler], "metadata": {"session_key": "t1"}})
        ```
    """

    raise_error = False

    def __init__(
        self,
        memory: MemoryIndex | MemoryConfig,
        *,
        model: BaseChatModel | None = None,
        flush_runner: FlushRunner | None = None,
        policy: FlushPolicy | None = None,
        context_window: int | None = None,
        trigger_tokens: int | None = None,
        soft_threshold_tokens: int | None = None,
        default_session_key: str = "langchain:default",
        session_key_fields: Sequence[str] = ("session_key", "thread_id"),
    ) -> None:
        check_memory_index(memory, config=True)
        index = memory if isinstance(memory, MemoryIndex) else None
        config = with_soft_threshold(memory.config if isinstance(memory, MemoryIndex) else memory,
                                     soft_threshold_tokens)
        self.memory = index
        if trigger_tokens is not None:
            if context_window is not None:
                raise MemoryArgumentError("pass either context_window or trigger_tokens, not both")
            context_window = trigger_tokens + config.compaction.reserve_tokens_floor
        if policy is not None and (context_window is not None or soft_threshold_tokens is not None):
            raise MemoryArgumentError("pass either policy or context_window / trigger_tokens / soft_threshold_tokens, "
                                      "not both")
        self.policy = policy if policy is not None else FlushPolicy(config, context_window=context_window)
        check_flush_threshold(self.policy, trigger_tokens)
        if flush_runner is None:
            if model is None:
                raise MemoryArgumentError(
                    "MemoryFlushCallbackHandler needs model=<chat model> for the default flush turn, "
                    "or flush_runner=<callable taking a FlushRequest>"
                )
            runner = SilentFlushRunner(model, self.policy, memory=index)
            flush_runner = lambda req: runner.run(req.messages, session_key=req.session_key)  # noqa: E731
        self.flush_runner: FlushRunner = flush_runner
        self.default_session_key = default_session_key
        self.session_key_fields = tuple(session_key_fields)
        self.outcomes: deque[Any] = deque(maxlen=100)
        """What the most recent flushes returned (a :class:`FlushOutcome` for the default runner)."""
        self._runs: dict[UUID, tuple[str, list[BaseMessage]]] = {}
        self._summary_ids: dict[str, str] = {}
        self._lock = threading.RLock()

    # ---- bookkeeping -----------------------------------------------------------------------

    def _session_key(self, metadata: Mapping[str, Any] | None) -> str:
        for name in self.session_key_fields:
            value = (metadata or {}).get(name)
            if value:
                return str(value)
        return self.default_session_key

    def record_compaction(self, session_key: str | None = None) -> int:
        """Record that the session's history was compacted; returns the new compaction count.

        With a :class:`MemoryIndex` (``sessions`` source on) this also runs the post-compaction
        sync of the session's transcript (``compaction.post_index_sync``).
        """
        key = session_key or self.default_session_key
        count = self.policy.record_compaction(key)
        self._after_compaction(key)
        return count

    def _after_compaction(self, key: str) -> None:
        sync_after_compaction(self.memory, None if key == self.default_session_key else key)

    def _start(self, run_id: UUID, messages: list[BaseMessage], tags: list[str] | None,
               metadata: dict[str, Any] | None) -> None:
        if set(tags or ()) & _OWN_TAGS or (metadata or {}).get("lc_source") in _OWN_TAGS:
            return  # the library's own model calls: the flush turn's, a consolidation sweep's
        key = self._session_key(metadata)
        summary = last_summary_id(messages)
        compacted = False
        with self._lock:
            if summary is not None and self._summary_ids.get(key) != summary:
                self._summary_ids[key] = summary
                self.policy.record_compaction(key)
                compacted = True
            self._runs[run_id] = (key, messages)
        if compacted:  # outside the lock: in "await" mode this waits for the sync
            self._after_compaction(key)

    # ---- callback hooks ----------------------------------------------------------------------

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Remember the prompt of a chat-model call and notice compactions."""
        self._start(run_id, list(messages[0]) if messages else [], tags, metadata)

    def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Remember the prompt of a completion-model call."""
        self._start(run_id, [HumanMessage(p) for p in prompts[:1]], tags, metadata)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget a failed call."""
        with self._lock:
            self._runs.pop(run_id, None)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """Apply the flush policy to the call's token usage; run the flush when it says so."""
        with self._lock:
            run = self._runs.pop(run_id, None)
            if run is None:
                return
            key, messages = run
            reply = next(
                (g.message for gens in response.generations for g in gens if isinstance(g, ChatGeneration)), None
            )
            if isinstance(reply, AIMessage) and not reply.tool_calls:
                messages = [*messages, reply]
            tokens = reported_tokens(response)
            decision = self.policy.should_flush(key, total_tokens=tokens, messages=messages if tokens is None else None)
            if not decision.flush:
                return
            try:
                outcome = self.flush_runner(FlushRequest(key, messages, decision))
            except Exception:  # a failed flush must not break the chain; the next call retries
                log.exception("memory flush for %s failed", key)
                return
            self.policy.mark_flushed(key)
            self.outcomes.append(outcome)
            if isinstance(outcome, FlushOutcome):
                log.info("memory flush for %s wrote %s", key, outcome.written or "nothing")
