"""Standing instructions: lines in which someone tells the assistant what to always or never do.

``Always include version numbers when I ask about libraries.``, ``- Never push to main directly``,
``User: From now on, answer in French.``: a line (a list item, or a dialogue turn of a speaker other than the
assistant) that opens with *Always*, *Never*, *Please always/never* or *From now on*. The search brings the one
that matches a question up as a hit of its own (:mod:`openclaw_memory.retrieval.standing_instructions`).
"""

from __future__ import annotations

import re

from openclaw_memory.text.preparation import lines_outside_code
from openclaw_memory.text.speakers import LABEL_PATTERN
from openclaw_memory.text.turns import ASSISTANT_LABELS

__all__ = ["ASSISTANT_SPEAKERS", "MARKER_MATCH", "MIN_WORDS", "instruction_lines"]

#: A keyword-index MATCH expression that selects every chunk that may hold a standing instruction.
MARKER_MATCH = '"always" OR "never" OR "from now on"'

_LINE = re.compile(
    r"^[ \t]*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?"                      # an optional list marker
    rf"(?:(?P<speaker>{LABEL_PATTERN}):[ \t]+)?"                            # an optional ``Speaker:`` label
    r"(?:\*\*|__)?"
    r"(?P<body>(?:Please,?[ \t]+(?:always|never)|Always|Never|From now on)\b.*)$"
)
_NOT_INSTRUCTIONS = re.compile(r"^(?:Never[ \t]+mind|Never[ \t]+again\W*$|Always[ \t]+has\b|Never[ \t]+had\b)",
                               re.IGNORECASE)
#: Speakers whose lines are the assistant's advice, not someone's instruction to it.
ASSISTANT_SPEAKERS = frozenset({*(label.lower() for label in ASSISTANT_LABELS), "bot", "system", "model", "agent",
                                "tool", "claude", "chatgpt", "gpt", "gemini", "copilot"})
#: An instruction says what to do, about what: at least this many words.
MIN_WORDS = 4


def instruction_lines(text: str) -> list[tuple[int, str]]:
    """The standing instructions in ``text``: ``(line index, the line as written)`` for each line (outside code
    fences) that opens with *Always*, *Never*, *Please always/never* or *From now on*, after a list marker or a
    ``Speaker:`` label that is not the assistant's, and has at least :data:`MIN_WORDS` words. Lines are what
    ``"\n"`` separates, as in a note's line numbers."""
    found: list[tuple[int, str]] = []
    for index, line in lines_outside_code(text.split("\n")):
        match = _LINE.match(line.rstrip("\r"))
        if match is None:
            continue
        speaker, body = match.group("speaker"), match.group("body")
        if speaker is not None and speaker.lower() in ASSISTANT_SPEAKERS:
            continue
        if _NOT_INSTRUCTIONS.match(body) or len(body.split()) < MIN_WORDS:
            continue
        found.append((index, line))
    return found
