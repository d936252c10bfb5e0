"""The long-term memory tools, framework-neutral: ``memory_store``, ``memory_recall``, ``memory_forget``.

Each returns ``(text for the model, JSON-able payload)`` and never raises for bad arguments or a
failing provider: the payload then has ``error`` (and the text explains what to do). The argument
models are the one source of names, bounds and descriptions for every adapter.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from openclaw_memory.errors import MemoryArgumentError, OpenClawMemoryError
from openclaw_memory.long_term.hooks import OVER_FETCH, recall_for_model
from openclaw_memory.long_term.store import LongTermMemory

__all__ = [
    "MEMORY_FORGET_DESCRIPTION",
    "MEMORY_RECALL_DESCRIPTION",
    "MEMORY_STORE_DESCRIPTION",
    "MemoryForgetArgs",
    "MemoryRecallArgs",
    "MemoryStoreArgs",
    "ToolOutput",
    "amemory_forget",
    "amemory_recall",
    "amemory_store",
    "memory_forget",
    "memory_recall",
    "memory_store",
]

log = logging.getLogger(__name__)

ToolOutput = tuple[str, dict[str, Any]]

MEMORY_RECALL_DESCRIPTION = (
    "Search through long-term memories. Use when you need context about user preferences, past decisions, "
    "or previously discussed topics."
)
MEMORY_STORE_DESCRIPTION = (
    "Save important information in long-term memory. Use for preferences, facts, decisions. "
    "Store one short, self-contained statement per call."
)
MEMORY_FORGET_DESCRIPTION = (
    "Delete a specific long-term memory (GDPR-compliant). Pass memory_id when you know it; with a query, "
    "only an unambiguous match is deleted, otherwise the candidates are listed so you can pick an id."
)


class _Args(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans(cls, value: Any, info: Any) -> Any:
        if isinstance(value, bool) and info.field_name in ("importance", "limit", "min_score"):
            raise ValueError("a number is required, not a boolean")
        return value


class MemoryStoreArgs(_Args):
    """Arguments of ``memory_store``."""

    text: str = Field(description="Information to remember: one short, self-contained statement.")
    importance: float = Field(0.7, ge=0, le=1, description="Importance 0-1 (default: 0.7).")
    category: Literal["preference", "fact", "decision", "entity", "other"] = Field(
        "other", description="Kind of memory: preference, fact, decision, entity or other.")


class MemoryRecallArgs(_Args):
    """Arguments of ``memory_recall`` (camelCase ``minScore`` is accepted too)."""

    query: str = Field(description="Search query.")
    limit: int = Field(5, ge=1, le=20, description="Max results (default: 5).")
    min_score: float = Field(0.1, ge=0, le=1, alias="minScore", description="Score floor 0-1 (default: 0.1).")


class MemoryForgetArgs(_Args):
    """Arguments of ``memory_forget`` (camelCase ``memoryId`` is accepted too)."""

    query: str | None = Field(None, description="Search to find the memory to delete.")
    memory_id: str | None = Field(None, alias="memoryId", description="Specific memory id (or its first 8 characters).")


def _invalid(tool: str, exc: ValidationError) -> str:
    parts = [f"{'.'.join(str(p) for p in e.get('loc', ())) or 'arguments'}: {e.get('msg')}" for e in exc.errors()]
    return f"invalid {tool} arguments: " + "; ".join(parts) + f". Fix them and call {tool} again."


def _error(tool: str, message: str) -> ToolOutput:
    return message, {"error": message, "tool": tool}


def _preview(text: str) -> str:
    return text if len(text) <= 100 else text[:100] + "..."


def memory_store(memory: LongTermMemory, text: Any, importance: Any = 0.7, category: Any = "other") -> ToolOutput:
    """Run ``memory_store``: ``action`` is ``created`` (with ``id``, and ``superseded``: the memories
    it corrects) or ``duplicate`` (with ``existing_id``)."""
    try:
        args = MemoryStoreArgs.model_validate({"text": text, "importance": importance, "category": category})
        result = memory.store(args.text, args.importance, args.category)
    except ValidationError as exc:
        return _error("memory_store", _invalid("memory_store", exc))
    except OpenClawMemoryError as exc:
        log.warning("memory_store failed: %s", exc)
        return _error("memory_store", f"memory_store failed: {exc}")
    payload = result.to_dict()
    if result.action == "duplicate":
        return f'Similar memory already exists (id {result.record.id}): "{result.record.text}"', payload
    text = f'Stored (id {result.record.id}): "{_preview(result.record.text)}"'
    if result.superseded:
        text += "; it replaces " + ", ".join(f'"{_preview(r.text)}" (id {r.id})' for r in result.superseded)
    return text, payload


def memory_recall(memory: LongTermMemory, query: Any, limit: Any = 5, min_score: Any = 0.1) -> ToolOutput:
    """Run ``memory_recall``: ``memories`` (id, text, category, importance, score), best first, without the
    contaminated ones auto-recall leaves out too (:func:`~openclaw_memory.long_term.hooks.recall_for_model`)."""
    try:
        args = MemoryRecallArgs.model_validate({"query": query, "limit": limit, "min_score": min_score})
        hits = recall_for_model(memory, args.query, limit=args.limit, min_score=args.min_score,
                                over_fetch=args.limit + OVER_FETCH)
    except ValidationError as exc:
        return _error("memory_recall", _invalid("memory_recall", exc))
    except OpenClawMemoryError as exc:
        log.warning("memory_recall failed: %s", exc)
        return _error("memory_recall", f"memory_recall failed: {exc}")
    payload = {"count": len(hits), "memories": [h.to_dict() for h in hits]}
    if not hits:
        return "No relevant memories found.", payload
    lines = [f"{i}. [{h.record.category}] {h.record.text} ({(h.score or 0) * 100:.0f}%, id {h.record.id})"
             for i, h in enumerate(hits, 1)]
    return f"Found {len(hits)} memories:\n\n" + "\n".join(lines), payload


def memory_forget(memory: LongTermMemory, query: Any = None, memory_id: Any = None) -> ToolOutput:
    """Run ``memory_forget``: ``action`` is ``deleted`` (with ``restored``: the memories the deleted one had
    corrected, active again), ``candidates`` or ``not_found``."""
    try:
        args = MemoryForgetArgs.model_validate({"query": query, "memory_id": memory_id})
        if not (args.query and args.query.strip()) and not (args.memory_id and args.memory_id.strip()):
            raise MemoryArgumentError("memory_forget needs a query or a memory_id")
        result = memory.forget(args.query, args.memory_id)
    except ValidationError as exc:
        return _error("memory_forget", _invalid("memory_forget", exc))
    except OpenClawMemoryError as exc:
        log.warning("memory_forget failed: %s", exc)
        return _error("memory_forget", f"memory_forget failed: {exc}")
    payload = result.to_dict()
    if result.action == "deleted" and result.deleted is not None:
        text = f'Forgotten (id {result.deleted.id}): "{result.deleted.text}"'
        for again in result.restored:
            text += f'; the memory it had corrected is active again (id {again.id}): "{_preview(again.text)}"'
        if result.restored:
            text += ". Forget that one too if it is no longer true."
        return text, payload
    if result.action == "not_found":
        return "No matching memories found.", payload
    lines = [f"- [{c.record.id}] {c.record.text[:80]}" + (f" ({c.score * 100:.0f}%)" if c.score is not None else "")
             + (" (superseded by a correction)" if c.record.superseded_by else "") for c in result.candidates]
    return f"Found {len(result.candidates)} candidates; nothing deleted. Call memory_forget with one memory_id:\n" + \
        "\n".join(lines), payload


async def amemory_store(memory: LongTermMemory, text: Any, importance: Any = 0.7, category: Any = "other") -> ToolOutput:
    """Async twin of :func:`memory_store`."""
    return await asyncio.to_thread(memory_store, memory, text, importance, category)


async def amemory_recall(memory: LongTermMemory, query: Any, limit: Any = 5, min_score: Any = 0.1) -> ToolOutput:
    """Async twin of :func:`memory_recall`."""
    return await asyncio.to_thread(memory_recall, memory, query, limit, min_score)


async def amemory_forget(memory: LongTermMemory, query: Any = None, memory_id: Any = None) -> ToolOutput:
    """Async twin of :func:`memory_forget`."""
    return await asyncio.to_thread(memory_forget, memory, query, memory_id)
