"""Translation between openclaw-memory values and LangChain objects (no logic of its own)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.config import get_config
from openclaw_memory.index.memory_index import MemoryIndex, check_memory_index
from openclaw_memory.text.citations import strip_citation_footer
from openclaw_memory.types import SearchHit
from pydantic import PlainSerializer, ValidationError

__all__ = [
    "CONSOLIDATION_TAG",
    "FLUSH_MARK",
    "FLUSH_TAG",
    "SUMMARY_MARKER",
    "DocumentContent",
    "SerialisedMemory",
    "SerialisedProvider",
    "check_memory_index",
    "hit_metadata",
    "hit_to_document",
    "is_summary_message",
    "last_summary_id",
    "flushed_this_cycle",
    "thread_id",
    "memory_description",
    "message_text",
    "provider_description",
    "validation_error_text",
    "with_flush_mark",
]

#: ``additional_kwargs["lc_source"]`` value SummarizationMiddleware puts on its summary message.
SUMMARY_MARKER = "summarization"
#: Tag and ``lc_source`` metadata value of the silent flush turn's model calls.
FLUSH_TAG = "memory_flush"
#: Tag and ``lc_source`` metadata value of the consolidation sweep's model calls.
CONSOLIDATION_TAG = "memory_consolidation"

#: ``additional_kwargs`` key the flush middleware puts on the message it flushed at; its value names the compaction
#: cycle (the id of the summary that opened it, "" before the first), so the messages alone tell whether this
#: cycle was flushed, with or without a checkpointer.
FLUSH_MARK = "openclaw_memory_flush_cycle"

DocumentContent = Literal["snippet", "text"]


def memory_description(memory: MemoryIndex) -> dict[str, str]:
    """What a serialised object holding ``memory`` shows in its place: which workspace, agent, search backend and
    store class (never its configuration, which holds API keys and passwords)."""
    return {"workspace": str(memory.workspace), "agent_id": memory.config.agent_id, "backend": memory.config.backend,
            "store": type(memory.store).__name__}


def provider_description(provider: Any) -> dict[str, str] | None:
    """What a serialised object holding an embedding ``provider`` shows in its place: its id and model (no key)."""
    return None if provider is None else {"provider": str(provider.id), "model": str(provider.model)}


#: A pydantic field holding a MemoryIndex, serialised to JSON (``model_dump_json``, ``model_dump(mode="json")``, as
#: LangSmith traces it) as its description; ``model_dump()`` keeps the object, so ``Model(**m.model_dump())`` works.
SerialisedMemory = Annotated[MemoryIndex, PlainSerializer(memory_description, return_type=dict[str, str],
                                                          when_used="json")]
#: A pydantic field holding an embedding provider, serialised to JSON as its description.
SerialisedProvider = Annotated[Any, PlainSerializer(provider_description, return_type=dict[str, str] | None,
                                                    when_used="json")]


def hit_metadata(hit: SearchHit) -> dict[str, Any]:
    """The flat, JSON-able ``Document.metadata`` of a search hit."""
    return {
        "path": hit.path,
        "start_line": hit.start_line,
        "end_line": hit.end_line,
        "score": hit.score,
        "vector_score": hit.vector_score,
        "text_score": hit.text_score,
        "source": hit.source,
        "citation": hit.citation,
        "chunk_id": hit.chunk_id,
    }


def hit_to_document(hit: SearchHit, content: DocumentContent = "snippet") -> Document:
    """A ``Document`` whose content is the hit's snippet (or full text), without the ``Source:`` footer the agent
    tools show (the citation is in the metadata, as retrievers keep it), and id the hit's id (its chunk id, or
    one derived from it for a folded or cut hit; the chunk id is in the metadata)."""
    text = hit.text if content == "text" and hit.text else strip_citation_footer(hit.snippet, hit.citation)
    return Document(id=hit.id or None, page_content=text, metadata=hit_metadata(hit))


def message_text(message: BaseMessage) -> str:
    """The plain text of a message (text blocks only)."""
    return str(message.text)


def is_summary_message(message: BaseMessage) -> bool:
    """True for the summary message SummarizationMiddleware leaves after compacting history."""
    return isinstance(message, HumanMessage) and message.additional_kwargs.get("lc_source") == SUMMARY_MARKER


def last_summary_id(messages: Sequence[BaseMessage]) -> str | None:
    """The id (or, lacking one, the content) of the newest summary message, or None."""
    for m in reversed(messages):
        if is_summary_message(m):
            return m.id or message_text(m)
    return None


def _cycle(messages: Sequence[BaseMessage]) -> str:
    return last_summary_id(messages) or ""


def flushed_this_cycle(messages: Sequence[BaseMessage]) -> bool:
    """True when a message carries the flush mark of the current compaction cycle."""
    cycle = _cycle(messages)
    return any(m.additional_kwargs.get(FLUSH_MARK) == cycle for m in messages)


def with_flush_mark(messages: Sequence[BaseMessage]) -> BaseMessage | None:
    """A copy of the last message (same id, so it replaces it in the agent state) marked as flushed in the current
    compaction cycle; None when there is no message with an id to mark."""
    if not messages or not messages[-1].id:
        return None
    last = messages[-1]
    return last.model_copy(update={"additional_kwargs": {**last.additional_kwargs, FLUSH_MARK: _cycle(messages)}})


def validation_error_text(exc: ValidationError | Exception) -> str:
    """The tool message a model gets for arguments the tool's schema refused: each argument and what is wrong
    with it, then to fix them and call again (``handle_validation_error`` of the library's tools)."""
    errors = exc.errors() if isinstance(exc, ValidationError) else None
    if not errors:
        return f"Invalid tool arguments: {exc}"
    parts = [f"{'.'.join(str(p) for p in e.get('loc', ())) or 'arguments'}: {e.get('msg')}" for e in errors]
    return "Invalid tool arguments: " + "; ".join(parts) + ". Fix them and call the tool again."


def thread_id(runtime: object) -> str | None:
    """The conversation thread of a middleware hook's run: ``runtime.execution_info.thread_id`` when the runtime
    has one, else ``config["configurable"]["thread_id"]`` of the run (LangGraph 1.0's ``Runtime`` has no
    ``execution_info``); None without a thread (no thread in the config, or a hook called outside a run)."""
    found = getattr(getattr(runtime, "execution_info", None), "thread_id", None)
    if not found:
        try:
            found = (get_config().get("configurable") or {}).get("thread_id")
        except RuntimeError:  # outside a runnable context (or an async one on Python 3.10)
            found = None
    return str(found) if found else None
