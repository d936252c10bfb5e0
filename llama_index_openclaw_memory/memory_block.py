"""OpenClawMemoryBlock: OpenClaw's Markdown memory inside ``llama_index.core.memory.Memory``.

* **Write (the pre-compaction flush).** ``Memory`` hands a block the messages it evicts from the
  short-term buffer. This block writes durable notes about them to today's daily note
  ``memory/YYYY-MM-DD.md`` (append-only) and re-indexes, so they survive the eviction and are
  searchable later. The notes come from ``extractor`` (for example :func:`llm_note_extractor`)
  when given, otherwise from a plain transcript summary. With the ``sessions`` source on, each
  eviction also indexes the session's transcript (``memory.transcript_path(session_id)``, see
  ``MemoryIndex.after_compaction``) per ``compaction.post_index_sync``. Failures are logged, never
  raised: the messages are already archived when the block runs, and an exception would fail
  ``Memory.aput``.
* **Read (recall).** Each ``Memory.aget`` searches the memory for the latest user message and
  contributes the hits with ``path#Lstart-Lend`` citations. On the first turn of a session it
  also contributes the session bootstrap context: today's and yesterday's daily notes, and
  ``MEMORY.md`` in direct (one-to-one) sessions.

    >>> block = OpenClawMemoryBlock(memory=MemoryIndex(workspace="~/notes"))          # doctest: +SKIP
    >>> memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])          # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import Field, PrivateAttr, field_validator, model_validator
from llama_index.core.llms import LLM
from llama_index.core.memory import BaseMemoryBlock
from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import append_memory, daily_note_path, local_now
from openclaw_memory.agent.bootstrap import build_session_context
from openclaw_memory.text.citations import ChatType, normalize_session_kind
from openclaw_memory.agent.flush import is_no_reply
from openclaw_memory.agent.session_hook import format_conversation
from openclaw_memory.agent.tools import MemorySearchArgs, amemory_search, field_annotation, format_search_text

from llama_index_openclaw_memory._convert import check_memory_index
from llama_index_openclaw_memory._deprecated import warn_renamed

__all__ = [
    "DEFAULT_EXTRACTION_PROMPT",
    "NoteExtractor",
    "OpenClawMemoryBlock",
    "llm_note_extractor",
    "transcript_lines",
]

log = logging.getLogger(__name__)

_MaxResults = field_annotation(MemorySearchArgs, "max_results")
_MinScore = field_annotation(MemorySearchArgs, "min_score")

NoteExtractor = Callable[[list[ChatMessage]], str | None | Awaitable[str | None]]
"""Turns evicted messages into Markdown notes; ``""``, None or ``NO_REPLY`` means nothing to keep."""

#: How many flushes a block remembers to skip the same evicted messages of the same session (the oldest is forgotten).
REMEMBERED_FLUSHES = 1024
#: How many sessions' bootstrap contexts a block keeps for the steps of their current turn (the oldest is dropped
#: and read again from the files when asked for).
REMEMBERED_SESSIONS = 256

DEFAULT_EXTRACTION_PROMPT = (
    "The messages below are leaving an assistant's short-term context. Write down what is worth "
    "remembering for later sessions (decisions, preferences, facts about people and projects, open "
    "todos) as short Markdown bullet points. Skip small talk and anything already resolved. If nothing "
    "is worth keeping, reply with NO_REPLY only.\n\nMessages:\n{transcript}"
)


def _role(message: ChatMessage) -> str:
    return message.role.value if isinstance(message.role, MessageRole) else str(message.role)


def _session_id(messages: list[ChatMessage]) -> str | None:
    """The ``Memory`` session the messages came from (``Memory`` tags evicted messages with it)."""
    value = next((m.additional_kwargs.get("session_id") for m in messages
                  if m.additional_kwargs.get("session_id")), None)
    return str(value) if value else None


def _as_dicts(messages: list[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": _role(m), "content": m.content or ""} for m in messages]


def transcript_lines(messages: list[ChatMessage], max_chars: int | None = None) -> list[str]:
    """``"<role>: <text>"`` for each user/assistant message (one line each, cut to ``max_chars``)."""
    lines = format_conversation(_as_dicts(messages), max_messages=len(messages))
    out = []
    for line in lines:
        flat = " ".join(line.split())
        if max_chars is not None and len(flat) > max_chars:
            flat = flat[: max_chars - 1].rstrip() + "…"
        out.append(flat)
    return out


def llm_note_extractor(llm: LLM, *, prompt: str = DEFAULT_EXTRACTION_PROMPT) -> NoteExtractor:
    """A :data:`NoteExtractor` that asks ``llm`` which parts of the evicted messages are durable.

    ``prompt`` must contain ``{transcript}``; the reply is written as is (``NO_REPLY`` = nothing).
    """
    if "{transcript}" not in prompt:
        raise MemoryArgumentError("prompt must contain '{transcript}', where the evicted messages are inserted")

    async def extract(messages: list[ChatMessage]) -> str | None:
        transcript = "\n".join(transcript_lines(messages))
        if not transcript:
            return None
        response = await llm.acomplete(prompt.replace("{transcript}", transcript))
        return response.text

    return extract


def _remember(cache: OrderedDict[str, Any], key: str, value: Any, limit: int) -> None:
    """Keep ``key`` as the newest entry of ``cache``, forgetting the oldest beyond ``limit``."""
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > limit:
        cache.popitem(last=False)


class OpenClawMemoryBlock(BaseMemoryBlock[str]):
    """A ``Memory`` block that saves evicted messages as Markdown notes and recalls relevant memory.

    Args:
        memory: The :class:`openclaw_memory.MemoryIndex` to write to and search.
        extractor: Turns evicted messages into notes (sync or async); None = transcript summary.
        similarity_top_k / min_score: Recall limits (default: the memory's configuration; at most 50 results, as
            ``memory_search``); ``max_results`` is a deprecated alias of ``similarity_top_k``.
        session_key: OpenClaw session key; decides citations in ``citations="auto"`` mode.
        session_kind: ``"direct"`` (a one-to-one chat) bootstraps ``MEMORY.md`` too; ``"group"``/``"channel"``
            do not (``"private"``, the old name of ``"direct"``, still works and warns).
        bootstrap: ``"first_turn"`` (while the history holds one user message), ``"always"`` or ``"off"``.
        bootstrap_max_chars: Character budget of the bootstrap context.
        recall_instructions: Append the "Memory Recall" instructions (for agents with the memory tools).
        max_message_chars: Length a message is cut to in the transcript summary.
    """

    @model_validator(mode="before")
    @classmethod
    def _deprecated_max_results(cls, data: Any) -> Any:
        if isinstance(data, dict) and "max_results" in data:
            data = dict(data)
            value = data.pop("max_results")
            warn_renamed("OpenClawMemoryBlock(max_results=...)", "similarity_top_k=...")
            data.setdefault("similarity_top_k", value)
        return data

    @field_validator("session_kind", mode="before")
    @classmethod
    def _old_session_kind(cls, value: Any) -> Any:
        return normalize_session_kind(value) if isinstance(value, str) else value

    name: str = "openclaw_memory"
    description: str | None = "Durable Markdown memory: recalled notes and this session's memory files."
    memory: MemoryIndex = Field(exclude=True)
    extractor: Callable[..., Any] | None = Field(default=None, exclude=True)
    similarity_top_k: _MaxResults = None  # type: ignore[valid-type]  # the recall runs memory_search: its bounds
    min_score: _MinScore = None  # type: ignore[valid-type]
    session_key: str | None = None
    session_kind: ChatType = "direct"
    bootstrap: Literal["first_turn", "always", "off"] = "first_turn"
    bootstrap_max_chars: int = Field(default=8000, ge=500)
    recall_instructions: bool = False
    max_message_chars: int = Field(default=500, ge=20)

    _bootstrap_cache: OrderedDict[str, str] = PrivateAttr(default_factory=OrderedDict)
    _flushed: OrderedDict[str, None] = PrivateAttr(default_factory=OrderedDict)

    def __init__(self, **data: Any) -> None:
        if "memory" in data:
            check_memory_index(data["memory"])  # before pydantic, which would wrap it in a ValidationError
        super().__init__(**data)

    # ---- read -----------------------------------------------------------------------------------

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        history = list(messages or [])
        parts: list[str] = []
        if self._wants_bootstrap(history):
            session_id = str(block_kwargs.get("session_id") or "")
            if not history or history[-1].role == MessageRole.USER:  # a turn starts: read the files as they are now
                self._bootstrap_cache.pop(session_id, None)
            parts.append(await self._bootstrap_text(session_id))
        parts.append(await self._recall(history))
        return "\n\n".join(p for p in parts if p)

    def _wants_bootstrap(self, history: list[ChatMessage]) -> bool:
        if self.bootstrap == "off":
            return False
        if self.bootstrap == "always":
            return True
        return sum(1 for m in history if m.role == MessageRole.USER) <= 1

    async def _bootstrap_text(self, session_id: str) -> str:
        """The session's bootstrap context, read when a turn starts and kept for that turn's later steps (the
        agent's tool calls see the same context)."""
        cached = self._bootstrap_cache.get(session_id)
        if cached is not None:
            self._bootstrap_cache.move_to_end(session_id)
            return cached
        try:
            text = await asyncio.to_thread(
                build_session_context,
                self.memory.config,
                session_kind=self.session_kind,
                max_chars=self.bootstrap_max_chars,
                include_recall_instructions=self.recall_instructions,
            )
        except Exception as exc:
            log.warning("memory block: could not build the session bootstrap context: %s", exc, exc_info=True)
            return ""
        _remember(self._bootstrap_cache, session_id, text.strip(), REMEMBERED_SESSIONS)
        return text.strip()

    async def _recall(self, history: list[ChatMessage]) -> str:
        query = next((m.content for m in reversed(history) if m.role == MessageRole.USER and m.content), None)
        if not query or not query.strip():
            return ""
        try:
            payload = await amemory_search(
                self.memory, query, self.similarity_top_k, self.min_score, session_key=self.session_key
            )
        except Exception as exc:
            log.warning("memory block: recall failed: %s", exc, exc_info=True)
            return ""
        if payload.get("disabled"):
            log.warning("memory block: recall unavailable: %s", payload.get("error"))
            return ""
        if payload.get("error"):
            log.warning("memory block: recall failed: %s", payload["error"])
            return ""
        if not payload.get("results"):
            return ""
        return "## Recalled memory\n" + format_search_text(payload)

    # ---- write ----------------------------------------------------------------------------------

    async def _aput(self, messages: list[ChatMessage]) -> None:
        try:
            await self._flush(messages)
        except Exception as exc:  # the messages are already archived; never fail Memory.aput
            log.warning("memory block: could not save notes of %d evicted message(s): %s",
                        len(messages), exc, exc_info=True)
        if messages:
            await self._after_compaction(_session_id(messages))

    async def _after_compaction(self, session_id: str | None) -> None:
        """The post-compaction sync (:meth:`MemoryIndex.after_compaction`): the session's transcript
        (``memory.transcript_path(session_id)``) if it exists, else every changed transcript."""
        try:
            scheduled = await self.memory.async_after_compaction(session_id) if session_id else None
            if scheduled is None:  # disabled (cheap), or no transcript under that id
                await self.memory.async_after_compaction()
        except Exception as exc:
            log.warning("memory block: post-compaction sync failed: %s", exc, exc_info=True)

    async def _flush(self, messages: list[ChatMessage]) -> None:
        if not messages:
            return
        session = _session_id(messages)
        digest = hashlib.sha256(json.dumps([session, _as_dicts(messages)], ensure_ascii=False).encode()).hexdigest()
        if digest in self._flushed:
            self._flushed.move_to_end(digest)
            log.debug("memory block: these messages were already saved; skipping")
            return
        notes = await self._notes(messages)
        if not notes:
            _remember(self._flushed, digest, None, REMEMBERED_FLUSHES)
            return
        local = local_now(self.memory.config.timezone)
        header = f"## Conversation notes ({local:%H:%M}" + (f", session {session}" if session else "") + ")"
        rel = daily_note_path(local.date())
        await asyncio.to_thread(self._append, rel, f"{header}\n{notes}\n")
        _remember(self._flushed, digest, None, REMEMBERED_FLUSHES)
        await self._index_notes(rel)

    async def _index_notes(self, rel: str) -> None:
        """Sync the index after notes were appended to ``rel``; a failure is logged (the notes are saved)."""
        try:
            await self.memory.async_sync(reason="llamaindex memory flush")
        except Exception as exc:
            log.warning("memory block: saved notes to %s but could not index them (the next sync will): %s",
                        rel, exc, exc_info=True)

    async def _notes(self, messages: list[ChatMessage]) -> str:
        if self.extractor is not None:
            out = self.extractor(messages)
            if inspect.isawaitable(out):
                out = await out
            if out is None or not str(out).strip() or is_no_reply(str(out)):
                return ""
            return str(out).strip()
        return "\n".join(f"- {line}" for line in transcript_lines(messages, self.max_message_chars))

    def _append(self, rel: str, text: str) -> None:
        target = self.memory.workspace / rel
        prefix = "\n" if target.exists() and target.stat().st_size > 0 else ""
        append_memory(self.memory.workspace, rel, prefix + text, origin="agent")
        log.info("memory block: saved notes to %s", rel)
