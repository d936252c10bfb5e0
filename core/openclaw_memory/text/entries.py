"""Entries of a Markdown memory file, and the bounded, sourced entry consolidation writes.

An *entry* is a top-level list item (with its indented or continuation lines) or a paragraph.
Headings, blank lines, code blocks and comments (over one line or several: notes commented out) are
structure, not entries. :func:`parse_blocks` splits a text into blocks whose lines joined with
``"\\n"`` give the text back unchanged, so a rewrite touches only the blocks it means to.

A promoted entry is one line::

    - We deploy on Fridays only. — Source: memory/2026-11-20.md#L3-L3 <!-- trigger: deploy, friday --> <!-- importance: 6 -->
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_TRIGGERS", "Block", "clipped", "normalized", "one_line", "parse_blocks", "render_entry", "source_refs",
           "unclosed_fence"]

#: At most this many ``<!-- trigger: … -->`` phrases per promoted entry.
MAX_TRIGGERS = 3
_BULLET = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+")
_SOURCE = re.compile(r"Source: (\S+?#L\d+-L\d+)")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_WORDS = re.compile(r"\w+")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Block:
    """Lines ``start``..``end`` (0-based, end exclusive) of a text; ``entry`` when it is an entry."""

    start: int
    end: int
    lines: tuple[str, ...]
    entry: bool

    @property
    def text(self) -> str:
        """The block's lines joined."""
        return "\n".join(self.lines)


def _structure(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#") or (stripped.startswith("<!--") and stripped.endswith("-->"))


def _continues(line: str) -> bool:
    """Whether ``line`` continues the entry above it (not blank, not structure, not a new item)."""
    return bool(line.strip()) and not _structure(line) and (line[:1] in (" ", "\t") or not _BULLET.match(line))


def _opens_comment(line: str) -> bool:
    """Whether ``line`` starts an HTML comment it does not close (it runs to a later ``-->``)."""
    stripped = line.strip()
    return stripped.startswith("<!--") and "-->" not in stripped[4:]


def parse_blocks(text: str) -> list[Block]:
    """The blocks of ``text`` in order; joining every block's lines with ``"\\n"`` gives ``text``."""
    lines = text.split("\n")
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        start = index
        line = lines[index]
        if _FENCE.match(line):  # a code block is one structure block, never an entry
            index += 1
            while index < len(lines) and not _FENCE.match(lines[index]):
                index += 1
            index = min(index + 1, len(lines))
            blocks.append(Block(start, index, tuple(lines[start:index]), False))
            continue
        if _opens_comment(line):  # a comment over several lines (notes commented out) is one structure block
            index += 1
            while index < len(lines) and "-->" not in lines[index]:
                index += 1
            index = min(index + 1, len(lines))
            blocks.append(Block(start, index, tuple(lines[start:index]), False))
            continue
        index += 1
        if not _structure(line):
            while index < len(lines) and _continues(lines[index]) and not _FENCE.match(lines[index]) \
                    and not _opens_comment(lines[index]):
                index += 1
        blocks.append(Block(start, index, tuple(lines[start:index]), not _structure(line)))
    return blocks


def unclosed_fence(blocks: list[Block]) -> str | None:
    """The fence (```` ``` ```` or ``~~~``) of the code block the text of ``blocks`` ends inside, or None."""
    last = blocks[-1] if blocks else None
    if last is None or last.entry:
        return None
    opening = _FENCE.match(last.lines[0])
    if opening is None or (len(last.lines) > 1 and _FENCE.match(last.lines[-1])):
        return None
    return opening.group(1)


def normalized(text: str) -> str:
    """``text`` without comments, sources, list markers, case and punctuation: what duplicates share."""
    text = _SOURCE.sub(" ", _COMMENT.sub(" ", text))
    words = _WORDS.findall(_BULLET.sub("", text.strip()).lower())
    return " ".join(word for word in words if word != "source")


def source_refs(text: str) -> set[str]:
    """The ``path#Lx-Ly`` references of the ``Source:`` markers in ``text``."""
    return set(_SOURCE.findall(text))


def clipped(text: str, limit: int) -> str:
    """``text`` on one line (whitespace runs as one space), cut to ``limit`` characters (ending with "…")."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(1, limit - 1)].rstrip() + "…"


def one_line(text: str, limit: int) -> str:
    """``text`` on one line without comments or a list marker, cut to ``limit`` characters."""
    return clipped(_BULLET.sub("", " ".join(_COMMENT.sub(" ", text).replace("-->", " ").split())), limit)


def _trigger(phrase: str) -> str:
    return " ".join(re.sub(r"[,<>]|--", " ", phrase).split())[:40].strip()


def render_entry(text: str, source: str, *, triggers: list[str] | tuple[str, ...] = (), importance: int = 5,
                 max_chars: int = 640) -> str:
    """The one-line promoted entry for ``text`` from ``source`` (``path#Lx-Ly``): the text on one
    line, cut to ``max_chars``; at most three trigger phrases; the importance clamped to 1..10."""
    phrases = [p for p in (_trigger(t) for t in triggers) if p][:MAX_TRIGGERS]
    line = f"- {one_line(text, max_chars)} — Source: {source}"
    if phrases:
        line += f" <!-- trigger: {', '.join(phrases)} -->"
    return line + f" <!-- importance: {min(10, max(1, int(importance)))} -->"
