"""The user's messages in a transcript of a user and an assistant, as chunks of their own.

A transcript's messages open with ``User: `` or ``Assistant: `` (session transcripts are flattened to these, see
:func:`openclaw_memory.files.sessions.extract_session`; exported chats are often written so). In the transcript's
regular chunks a one-line message of the user's sits among the assistant's long answers, while what the user said
is what later questions ask about: a sync also indexes each of the user's messages alone
(:func:`user_turn_chunks`), and the search keeps places for them (:mod:`openclaw_memory.retrieval.user_turns`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from openclaw_memory.text.chunker import RECORD_CLOSE_PREFIX, RECORD_OPEN_PREFIX, is_record_marker, text_weight
from openclaw_memory.text.preparation import lines_outside_code
from openclaw_memory.types import Chunk

__all__ = ["ASSISTANT_LABELS", "USER_LABELS", "is_user_turn", "user_turn_chunks"]

#: The labels that open the user's messages of a transcript.
USER_LABELS = ("User", "Human")
#: The labels that open the assistant's messages of a transcript.
ASSISTANT_LABELS = ("Assistant", "AI")
_MESSAGE_OPENING = re.compile(rf"^({'|'.join(USER_LABELS + ASSISTANT_LABELS)}):[ \t]")


def _message_openings(lines: Sequence[str]) -> list[tuple[int, str]]:
    """``(line index, label)`` of each line that opens a message (outside code fences); none unless the text has
    messages of both the user and the assistant."""
    openings = [(index, opening.group(1)) for index, line in lines_outside_code(lines)
                if (opening := _MESSAGE_OPENING.match(line))]
    labels = {label for _, label in openings}
    return openings if labels & set(USER_LABELS) and labels & set(ASSISTANT_LABELS) else []


def _record_lines(lines: Sequence[str]) -> set[int]:
    """Indexes in ``lines`` of every record marker and of the lines of each closed record (an adapter's node or
    item, which is searched as a whole)."""
    inside: set[int] = set()
    opened: int | None = None
    for index, line in enumerate(lines):
        if is_record_marker(line):
            inside.add(index)
        if line.startswith(RECORD_OPEN_PREFIX):
            opened = index
        elif line.startswith(RECORD_CLOSE_PREFIX) and opened is not None:
            inside.update(range(opened, index + 1))
            opened = None
    return inside


def is_user_turn(text: str) -> bool:
    """Whether ``text`` is one message of the user's and nothing more: its first line opens a message of the
    user's and no other line opens one (outside code fences); what :func:`user_turn_chunks` makes."""
    first, _, rest = text.partition("\n")  # most candidates are told apart by their first line alone
    opening = _MESSAGE_OPENING.match(first)
    if opening is None or opening.group(1) not in USER_LABELS:
        return False
    return not any(_MESSAGE_OPENING.match(line) for _, line in lines_outside_code(rest.split("\n")))


def user_turn_chunks(content: str, chunks: Sequence[Chunk], tokens: int = 400) -> list[Chunk]:
    """Each of the user's messages in ``content``, when it is a transcript of a user and an assistant, as a chunk
    of its own beside ``chunks`` (the text's regular chunks): the message's first paragraph, within ``tokens``
    estimated tokens (its first line always whole). A message that is already a chunk of ``chunks``, or that lies
    in a record, gets none."""
    lines = content.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    openings = _message_openings(lines)
    if not openings:
        return []
    in_records = _record_lines(lines)
    have = {(c.start_line, c.end_line) for c in chunks}
    budget = max(32, max(1, tokens) * 4)
    out: list[Chunk] = []
    for position, (first, label) in enumerate(openings):
        if label not in USER_LABELS:
            continue
        end = openings[position + 1][0] - 1 if position + 1 < len(openings) else len(lines) - 1
        last, weight = first, text_weight(lines[first]) + 1
        while last < end and lines[last + 1].strip() and weight + text_weight(lines[last + 1]) + 1 <= budget:
            last += 1
            weight += text_weight(lines[last]) + 1
        if (first + 1, last + 1) in have or any(index in in_records for index in range(first, last + 1)):
            continue
        text = "\n".join(lines[first:last + 1])
        out.append(Chunk(start_line=first + 1, end_line=last + 1, text=text,
                         hash=hashlib.sha256(text.encode("utf-8")).hexdigest()))
    return out
