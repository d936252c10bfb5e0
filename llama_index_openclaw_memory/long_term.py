"""LanceDB long-term memory for LlamaIndex: the three tools and ``LongTermMemoryBlock``.

* :func:`create_long_term_tools`: ``memory_store`` / ``memory_recall`` / ``memory_forget`` as
  ``FunctionTool`` s (sync and async). The model sees the tool's text; ``ToolOutput.raw_output``
  keeps the payload, and a failed call is marked ``is_error``.
* :class:`LongTermMemoryBlock`: a ``Memory`` block. Each ``Memory.aget`` (before a model call)
  contributes the memories relevant to the latest user message as an escaped, untrusted-marked
  ``<relevant-memories>`` block. With ``auto_capture=True`` it stores memorable user messages of
  finished turns (those before the current input) and of messages evicted from short-term memory,
  each message at most once.

All logic lives in :mod:`openclaw_memory.long_term`; this module only translates.

    >>> block = LongTermMemoryBlock(memory=LongTermMemory("~/.openclaw/memory/lancedb", provider="local"))  # doctest: +SKIP
    >>> memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])                            # doctest: +SKIP
"""

# No `from __future__ import annotations`: FunctionTool builds the argument schema from these
# annotations at runtime, so they must be real objects, not strings.
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory import BaseMemoryBlock
from llama_index.core.tools import FunctionTool
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
from openclaw_memory.agent.tools import field_annotation

from llama_index_openclaw_memory.tools import MemoryTool, argument_schema

__all__ = ["LongTermMemoryBlock", "create_long_term_tools"]

# the core's argument models are the one source of descriptions and bounds
_Text = field_annotation(MemoryStoreArgs, "text")
_Importance = field_annotation(MemoryStoreArgs, "importance")
_Category = field_annotation(MemoryStoreArgs, "category")
_Query = field_annotation(MemoryRecallArgs, "query")
_Limit = field_annotation(MemoryRecallArgs, "limit")
_MinScore = field_annotation(MemoryRecallArgs, "min_score")
_ForgetQuery = field_annotation(MemoryForgetArgs, "query")
_MemoryId = field_annotation(MemoryForgetArgs, "memory_id")


def _payload(result: ToolOutput) -> dict[str, Any]:
    text, payload = result
    return {**payload, "message": text}


def _text(payload: dict[str, Any]) -> str:
    return str(payload["message"])


async def _atext(payload: dict[str, Any]) -> str:
    return _text(payload)


def create_long_term_tools(memory: LongTermMemory) -> list[FunctionTool]:
    """``[memory_store, memory_recall, memory_forget]`` over ``memory``; bad arguments and provider
    failures come back to the model as an explanation, never as an exception, in a ``ToolOutput`` with
    ``is_error=True``. The argument schemas carry the core's bounds."""
    check_long_term_memory(memory)

    def store(text: _Text, importance: _Importance = 0.7, category: _Category = "other") -> dict[str, Any]:
        return _payload(memory_store(memory, text, importance, category))

    async def astore(text: _Text, importance: _Importance = 0.7, category: _Category = "other") -> dict[str, Any]:
        return _payload(await amemory_store(memory, text, importance, category))

    def recall(query: _Query, limit: _Limit = 5, min_score: _MinScore = 0.1) -> dict[str, Any]:
        return _payload(memory_recall(memory, query, limit, min_score))

    async def arecall(query: _Query, limit: _Limit = 5, min_score: _MinScore = 0.1) -> dict[str, Any]:
        return _payload(await amemory_recall(memory, query, limit, min_score))

    def forget(query: _ForgetQuery = None, memory_id: _MemoryId = None) -> dict[str, Any]:
        return _payload(memory_forget(memory, query, memory_id))

    async def aforget(query: _ForgetQuery = None, memory_id: _MemoryId = None) -> dict[str, Any]:
        return _payload(await amemory_forget(memory, query, memory_id))

    return [
        MemoryTool.from_defaults(fn=fn, async_fn=afn, name=name, description=description,
                                 fn_schema=argument_schema(name, model), callback=_text, async_callback=_atext)
        for name, fn, afn, description, model in [
            ("memory_store", store, astore, MEMORY_STORE_DESCRIPTION, MemoryStoreArgs),
            ("memory_recall", recall, arecall, MEMORY_RECALL_DESCRIPTION, MemoryRecallArgs),
            ("memory_forget", forget, aforget, MEMORY_FORGET_DESCRIPTION, MemoryForgetArgs),
        ]
    ]


def _user_texts(messages: list[ChatMessage]) -> list[str]:
    return [m.content for m in messages if m.role == MessageRole.USER and m.content and m.content.strip()]


def _session(messages: list[ChatMessage], default: Any) -> str:
    value = next((m.additional_kwargs.get("session_id") for m in messages if m.additional_kwargs.get("session_id")),
                 None) or default
    return f"llamaindex:{value}" if value else "llamaindex:default"


class LongTermMemoryBlock(BaseMemoryBlock[str]):
    """A ``Memory`` block over a :class:`LongTermMemory`: auto-recall (on) and auto-capture (off).

    Args:
        memory: The long-term memory to recall from and capture into.
        auto_recall: Contribute the ``<relevant-memories>`` block on each ``Memory.aget``.
        auto_capture: Store memorable user messages of finished turns and of evicted messages.
        capture_triggers: Extra trigger regexes for auto-capture (added to the defaults).
        recall_limit / recall_min_score: How many memories to inject (3) and their score floor (None:
            the level measured for the memory's embedding model, ``memory.thresholds.recall``).
    """

    name: str = "long_term_memory"
    description: str | None = "Long-term memories (LanceDB) relevant to the latest user message."
    memory: LongTermMemory = Field(exclude=True)
    auto_recall: bool = True
    auto_capture: bool = False
    capture_triggers: list[str] = Field(default_factory=list)
    recall_limit: int = Field(default=3, ge=1, le=20)
    recall_min_score: float | None = Field(default=None, ge=0.0, le=1.0)

    _recall: AutoRecall = PrivateAttr()
    _capture: AutoCapture = PrivateAttr()

    def __init__(self, **data: Any) -> None:
        if "memory" in data:
            check_long_term_memory(data["memory"])  # before pydantic, which would wrap it in a ValidationError
        super().__init__(**data)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        self._recall = AutoRecall(self.memory, limit=self.recall_limit, min_score=self.recall_min_score)
        self._capture = AutoCapture(self.memory, triggers=self.capture_triggers)

    @property
    def recaller(self) -> AutoRecall:
        """The auto-recall hook (its cooldown state and last error)."""
        return self._recall

    async def _capture_texts(self, texts: list[str], session: str) -> None:
        if texts:
            await self._capture.acapture([CaptureCandidate("user", t) for t in texts], session=session)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        history = list(messages or [])
        users = _user_texts(history)
        if self.auto_capture and len(users) > 1:  # the turns before the current input have finished
            await self._capture_texts(users[:-1], _session(history, block_kwargs.get("session_id")))
        if not self.auto_recall or not users:
            return ""
        return await self._recall.acontext(users[-1])

    async def _aput(self, messages: list[ChatMessage]) -> None:
        if self.auto_capture:
            await self._capture_texts(_user_texts(messages), _session(messages, None))
