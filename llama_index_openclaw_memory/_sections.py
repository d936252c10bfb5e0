"""The Markdown form of nodes written by :class:`~llama_index_openclaw_memory.OpenClawVectorStore`.

Each node added through the store becomes one *section* of a memory file::

    <!-- openclaw-memory:node {"id": "n1", "ref_doc_id": "doc-1", "metadata": {"topic": "db"}} -->
    We chose SQLite for the memory index.
    <!-- /openclaw-memory:node -->

The two HTML comments are invisible when the Markdown is rendered. They carry the node's
identity, so the Markdown alone is enough to rebuild the LlamaIndex view, and they mark exactly
which lines the store wrote: deletes remove those lines and nothing else. Text outside sections
is hand-written memory and is never modified. Pure functions, no I/O.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from openclaw_memory.chunker import RECORD_CLOSE_PREFIX, RECORD_OPEN_PREFIX

__all__ = ["OPEN_PREFIX", "Section", "parse_sections", "remove_sections", "render_section", "section_lines"]

log = logging.getLogger(__name__)

OPEN_PREFIX = f"{RECORD_OPEN_PREFIX}node "  # a record to the chunker: each section gets its own chunk
_CLOSE = f"{RECORD_CLOSE_PREFIX}node -->"
_OPEN_RE = re.compile(r"^<!-- openclaw-memory:node (\{.*\}) -->\s*$")
_CLOSE_RE = re.compile(r"^<!-- /openclaw-memory:node -->\s*$")


@dataclass(frozen=True)
class Section:
    """One node the store wrote: its identity, its text and where it sits (1-based, inclusive).

    ``open_line``/``close_line`` are the marker lines; the text is on the lines between them.
    ``ref_doc_id`` is None when the node had no source document.
    """

    id: str
    ref_doc_id: str | None
    text: str
    open_line: int
    close_line: int
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def start_line(self) -> int:
        """First line of the text (the line after the opening marker)."""
        return self.open_line + 1

    @property
    def end_line(self) -> int:
        """Last line of the text (the line before the closing marker)."""
        return max(self.open_line + 1, self.close_line - 1)


def _json_attr(value: dict[str, Any]) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"node metadata must be JSON-serializable to be written to Markdown ({exc}); "
            "keep str/int/float/bool/None values, lists and dicts of them"
        ) from None
    # "-->" inside a value would end the HTML comment early; "\u003e" is the same JSON string.
    return text.replace(">", "\\u003e")


def render_section(node_id: str, text: str, *, ref_doc_id: str | None, metadata: dict[str, Any]) -> str:
    """The Markdown of one node: opening marker, text (trailing newlines dropped), closing marker.

    Raises ValueError for an empty text, a text containing a marker line, or metadata that is
    not JSON-serializable.
    """
    body = text.rstrip("\n")
    if not body.strip():
        raise ValueError(f"node {node_id!r} has no text; only nodes with text can be written to memory")
    for line in body.split("\n"):
        if _OPEN_RE.match(line) or _CLOSE_RE.match(line):
            raise ValueError(f"node {node_id!r} contains an openclaw-memory marker line; remove it from the text")
    attrs: dict[str, Any] = {"id": node_id}
    if ref_doc_id is not None:
        attrs["ref_doc_id"] = ref_doc_id
    if metadata:
        attrs["metadata"] = metadata
    return f"{OPEN_PREFIX}{_json_attr(attrs)} -->\n{body}\n{_CLOSE}\n"


def _attrs(line: str) -> dict[str, Any] | None:
    m = _OPEN_RE.match(line)
    if not m:
        return None
    try:
        data = json.loads(m.group(1))
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        return None
    ref = data.get("ref_doc_id")
    meta = data.get("metadata")
    if (ref is not None and not isinstance(ref, str)) or (meta is not None and not isinstance(meta, dict)):
        return None
    return data


def parse_sections(text: str, *, where: str = "") -> list[Section]:
    """Every well-formed section of a file's text, in file order.

    A marker that is malformed, unclosed, or opened inside another section is not a section:
    its lines count as hand-written (and are logged once per call).
    """
    lines = text.split("\n")
    out: list[Section] = []
    open_at: int | None = None
    attrs: dict[str, Any] | None = None
    problems = 0
    for no, line in enumerate(lines, start=1):
        if not line.startswith("<!-- "):
            continue
        if _CLOSE_RE.match(line):
            if open_at is None or attrs is None:
                problems += 1
                continue
            out.append(
                Section(
                    id=attrs["id"],
                    ref_doc_id=attrs.get("ref_doc_id"),
                    text="\n".join(lines[open_at : no - 1]),
                    open_line=open_at,
                    close_line=no,
                    metadata=dict(attrs.get("metadata") or {}),
                )
            )
            open_at, attrs = None, None
            continue
        parsed = _attrs(line)
        if parsed is None:
            if line.startswith(OPEN_PREFIX):
                problems += 1
            continue
        if open_at is not None:
            problems += 1  # an unclosed section: the earlier opening is hand-written text
        open_at, attrs = no, parsed
    if open_at is not None:
        problems += 1
    if problems:
        log.warning("%s: ignored %d malformed openclaw-memory marker(s); those lines count as hand-written",
                    where or "memory file", problems)
    return out


def section_lines(sections: Sequence[Section]) -> set[int]:
    """Line numbers (markers included) that belong to sections."""
    return {n for s in sections for n in range(s.open_line, s.close_line + 1)}


def remove_sections(text: str, should_remove: Callable[[Section], bool], *, where: str = "") -> tuple[str, int]:
    """``text`` without the sections for which ``should_remove`` is true, and how many were removed.

    Every other line is kept byte for byte, except the blank separator line the store writes
    between sections: the one before a removed section goes with it (the one after, for a
    section at the top of the file).
    """
    sections = [s for s in parse_sections(text, where=where) if should_remove(s)]
    if not sections:
        return text, 0
    lines = text.split("\n")
    drop: set[int] = set()
    for s in sections:
        drop.update(range(s.open_line, s.close_line + 1))
        before, after = s.open_line - 1, s.close_line + 1
        if before >= 1 and before not in drop and not lines[before - 1].strip():
            drop.add(before)
        elif all(n in drop for n in range(1, s.open_line)) and after < len(lines) and not lines[after - 1].strip():
            drop.add(after)
    kept = [line for no, line in enumerate(lines, start=1) if no not in drop]
    return "\n".join(kept), len(sections)
