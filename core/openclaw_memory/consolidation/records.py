"""Program-written records in memory files (``<!-- openclaw-memory:KIND {...} -->`` to ``<!-- /openclaw-memory:KIND
-->``: documents and store items an application inserted, a LlamaIndex vector store's nodes in MEMORY.md say). Their
lines are data, not notes: never a candidate, never an entry a sweep or forget may change."""

from __future__ import annotations

from collections.abc import Sequence

from openclaw_memory.text.chunker import parse_record_marker
from openclaw_memory.text.entries import Block, parse_blocks
from openclaw_memory.text.preparation import CODE_FENCE

__all__ = ["memory_entries", "record_lines"]


def record_lines(text: str) -> set[int]:
    """The 0-based lines inside program-written records (``<!-- openclaw-memory:KIND {...} -->`` to
    ``<!-- /openclaw-memory:KIND -->``: documents and store items an application inserted), which
    are data, not notes. A marker shown in a code fence, or one never closed, is a hand-written line."""
    inside: set[int] = set()
    body: list[int] = []
    kind: str | None = None  # of the record open at this line
    fenced = False
    for number, line in enumerate(text.split("\n")):
        marker = parse_record_marker(line.strip())
        if kind is None and marker is None and CODE_FENCE.match(line):
            fenced = not fenced
        elif kind is None and not fenced and marker is not None and marker.opening:
            kind, body = marker.kind, []
        elif kind is not None and marker is not None and not marker.opening and marker.kind == kind:
            inside.update(body)
            kind = None
        elif kind is not None:
            body.append(number)
    return inside


def memory_entries(text: str, blocks: Sequence[Block] | None = None) -> list[Block]:
    """The entry blocks of ``text`` (MEMORY.md) a sweep shows the model as ``E1``.. and may change: every entry
    outside program-written records. ``blocks`` is ``parse_blocks(text)`` when the caller has it already."""
    inside = record_lines(text)
    return [block for block in (parse_blocks(text) if blocks is None else blocks)
            if block.entry and block.start not in inside]
