"""Where a memory came from: ``owner`` (the user's own words), ``agent`` (the agent's notes),
``untrusted`` (tool output, web pages, documents) or ``system``.

The origin is an inline marker in the Markdown, ``<!-- origin: untrusted -->`` at the end of each
entry a write carries, so it survives a rebuild of the index from the files (the files are the
source of truth) and stays invisible when the Markdown is rendered. Text without a marker is
hand-written, ``owner``. When an entry carries several markers the most restrictive one counts, so
untrusted text cannot promote itself by containing ``<!-- origin: owner -->``.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from openclaw_memory.errors import MemoryArgumentError

__all__ = ["ORIGINS", "PROMOTABLE", "Origin", "mark_origin", "origin_of", "without_origin_markers"]

Origin = Literal["owner", "agent", "untrusted", "system"]
#: The origins, least restrictive first.
ORIGINS: tuple[str, ...] = get_args(Origin)
#: The origins consolidation may promote into MEMORY.md.
PROMOTABLE = frozenset({"owner", "agent"})

_MARKER = re.compile(r"<!--\s*origin:\s*([a-z]+)\s*-->")
_MARKER_WITH_SPACE = re.compile(r"[ \t]*<!--\s*origin:\s*[a-z]+\s*-->")


def _check(origin: str) -> str:
    if origin not in ORIGINS:
        raise MemoryArgumentError(f"origin must be one of {', '.join(ORIGINS)}; got {origin!r}")
    return origin


def origin_of(text: str) -> str:
    """The origin of an entry's text: its most restrictive marker, ``owner`` without one (an
    unknown origin name counts as ``untrusted``)."""
    found = [name if name in ORIGINS else "untrusted" for name in _MARKER.findall(text)]
    return max(found, key=ORIGINS.index) if found else "owner"


def mark_origin(text: str, origin: str) -> str:
    """``text`` with ``<!-- origin: … -->`` at the end of each of its entries (list items with their
    continuation lines, paragraphs); headings, blank lines and code blocks are left as they are, and a code
    block ``text`` leaves open is closed."""
    from openclaw_memory.text.entries import parse_blocks, unclosed_fence

    marker = f" <!-- origin: {_check(origin)} -->"
    lines = text.split("\n")
    blocks = parse_blocks(text)
    for block in blocks:
        if block.entry:
            last = block.end - 1
            lines[last] = lines[last].rstrip() + marker
    fence = unclosed_fence(blocks)
    if fence is not None:  # closed here, or the lines written after it (another write's) would read as unmarked
        lines.insert(len(lines) - 1 if text.endswith("\n") else len(lines), fence)
    return "\n".join(lines)


def without_origin_markers(text: str) -> str:
    """``text`` without its ``<!-- origin: … -->`` markers (and the blanks before them): what is embedded
    and keyword-indexed, so a search for "agent" does not match every note the agent wrote. Text
    without a marker is returned as it is (the same object)."""
    if "origin:" not in text:
        return text
    stripped = _MARKER_WITH_SPACE.sub("", text)
    return stripped if stripped != text else text
