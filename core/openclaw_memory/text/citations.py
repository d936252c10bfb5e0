"""Citations: how a search hit names where it came from (``path#L<start>-L<end>``), when
snippets carry one (the ``citations`` setting and the chat type of the session), and the
``Source: <citation>`` footer appended to a cited snippet.

Every place that shows a hit's location (search results, the ``memory_search`` tool text, the CLI,
the adapters) builds it with :func:`format_citation`, so they all agree; every place that takes one back
(``memory_get``, CLI ``get``, forgetting) reads it with :func:`parse_citation`.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import replace
from typing import Literal

from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.types import SearchHit

__all__ = [
    "ChatType",
    "chat_type",
    "citation_footer",
    "citations_enabled",
    "decorate_citation",
    "format_citation",
    "normalize_session_kind",
    "parse_citation",
    "strip_citation_footer",
]

ChatType = Literal["direct", "group", "channel"]
"""The kind of chat a session is: a one-to-one ``direct`` chat, a ``group`` or a ``channel``.

``session_kind=`` arguments (bootstrap, recall prompt, middleware, memory block) take these values;
``"private"``, their old name for ``"direct"``, still works with a DeprecationWarning."""


def normalize_session_kind(kind: str) -> ChatType:
    """``kind`` as a :data:`ChatType`; ``"private"`` (the old word for ``"direct"``) warns and maps to it.

    Raises MemoryArgumentError (a ValueError) for any other value.
    """
    if kind == "private":
        warnings.warn('session_kind="private" is now called "direct"', DeprecationWarning, stacklevel=3)
        return "direct"
    if kind not in ("direct", "group", "channel"):
        raise MemoryArgumentError(f"session_kind must be 'direct', 'group' or 'channel', got {kind!r}")
    return kind  # type: ignore[return-value]


def format_citation(path: str, start_line: int, end_line: int) -> str:
    """``path#L<start>`` when one line, else ``path#L<start>-L<end>``."""
    return f"{path}#L{start_line}" if start_line == end_line else f"{path}#L{start_line}-L{end_line}"


#: a path ending in .md (spaces and "#" allowed, as in file names: "memory/c#-notes.md") or one without whitespace
#: or "#", then #L<start>[-L<end>]
_CITATION = re.compile(r"^(?P<path>.+\.md|[^#\s]+)#L(?P<start>\d+)(?:-L(?P<end>\d+))?$")


def parse_citation(text: str) -> tuple[str, int, int] | None:
    """``(path, start_line, end_line)`` of a citation (``path#L<start>``, as :func:`format_citation` writes one
    line, or ``path#L<start>-L<end>``; whitespace around it ignored), else None. The path is not checked here."""
    match = _CITATION.match(text.strip())
    if match is None:
        return None
    start = int(match["start"])
    return match["path"], start, int(match["end"] or start)


def chat_type(session_key: str | None) -> ChatType:
    """Chat type of an agent session key (``agent:<id>:<rest>``): channel, group, or direct."""
    if not session_key or not session_key.strip():
        return "direct"
    parts = [p.strip().lower() for p in session_key.split(":")]
    if len(parts) >= 2 and parts[0] == "agent":
        parts = parts[2:]
    if "channel" in parts:
        return "channel"
    if "group" in parts:
        return "group"
    return "direct"


def citations_enabled(mode: str, session_key: str | None) -> bool:
    """``on`` → True, ``off`` → False, ``auto`` → only in direct chats (or with no session key)."""
    if mode == "on":
        return True
    if mode == "off":
        return False
    return chat_type(session_key) == "direct"


def citation_footer(citation: str) -> str:
    """The text appended to a cited snippet: a blank line, then ``Source: <citation>``."""
    return f"\n\nSource: {citation}"


def strip_citation_footer(snippet: str, citation: str | None) -> str:
    """``snippet`` without its ``Source: <citation>`` footer (and the blank line before it);
    unchanged when it has none."""
    tail = f"Source: {citation}"
    if citation and snippet.endswith(tail):
        return snippet[: -len(tail)].rstrip()
    return snippet


def decorate_citation(hit: SearchHit) -> SearchHit:
    """Copy of ``hit`` with ``citation`` set and ``Source: <citation>`` appended to the snippet."""
    citation = format_citation(hit.path, hit.start_line, hit.end_line)
    return replace(hit, citation=citation, snippet=hit.snippet.strip() + citation_footer(citation))
