"""Translation between openclaw-memory values and LangChain objects (no logic of its own)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage, HumanMessage
from openclaw_memory.citations import strip_citation_footer
from openclaw_memory.types import SearchHit

__all__ = [
    "FLUSH_TAG",
    "SUMMARY_MARKER",
    "DocumentContent",
    "hit_metadata",
    "hit_to_document",
    "is_summary_message",
    "last_summary_id",
    "message_text",
]

#: ``additional_kwargs["lc_source"]`` value SummarizationMiddleware puts on its summary message.
SUMMARY_MARKER = "summarization"
#: Tag and ``lc_source`` metadata value of the silent flush turn's model calls.
FLUSH_TAG = "memory_flush"

DocumentContent = Literal["snippet", "text"]


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
