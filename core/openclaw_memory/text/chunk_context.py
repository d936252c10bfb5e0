"""The context a chunk is embedded with (``chunking.embed_context``): what its note says about it elsewhere.

A chunk cut from the middle of a note loses what the note said above it: the day it was written, the section it
sits in, who is talking. With the context on, each chunk is embedded as a short header and its text:

* the note's date as words for a daily note (``memory/2024-03-15.md`` → ``15 March 2024``), else its file name;
* the Markdown heading path above the chunk's first line (``# Project › ## Decisions``; headings inside fenced
  code are not headings);
* in a dialogue (lines opened by speaker labels, :func:`openclaw_memory.text.speakers.speaker_labels`), the speaker
  of the message a chunk starts in the middle of (``Assistant: …``).

Only what is embedded changes: the stored text, the keyword index and the returned snippets stay the chunk's own.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from openclaw_memory.text.chunker import indexed_hash, indexed_text
from openclaw_memory.text.note_dates import note_date_words
from openclaw_memory.text.speakers import line_speaker, speaker_labels

__all__ = ["NoteOutline", "chunk_context", "contextual_key", "with_context"]

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: the header's parts are joined by this; a heading path's levels by :data:`_LEVEL`
_PART = " | "
_LEVEL = " > "


@dataclass(frozen=True)
class _LineState:
    headings: tuple[tuple[int, str], ...]  #: (level, title) of the headings in force above the line
    speaker: str | None  #: the speaker whose message the line belongs to
    heading_level: int  #: the line's own heading level (0: not a heading)
    labelled: bool  #: the line opens with a speaker label
    blank: bool  #: the line holds only whitespace


class NoteOutline:
    """The headings and speakers in force at each line of a note's text (1-based lines of that text)."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        lines = text.split("\n")
        speakers = speaker_labels([text])
        states: list[_LineState] = []
        stack: list[tuple[int, str]] = []
        speaker: str | None = None
        fence: str | None = None
        outside = 0  # how many headings of ``stack`` belong to the note, not to the message being read
        for line in lines:
            level, label = 0, None
            if fence is not None:
                if line.lstrip(" ").startswith(fence):
                    fence = None
            elif (opened := _FENCE.match(line)) is not None:
                fence = opened.group(1)[0] * 3
            elif (heading := _HEADING.match(line)) is not None:
                level = len(heading.group(1))
            elif speakers and (label := line_speaker(line)) not in speakers:
                label = None
            if label is not None:  # a new message: the headings of the one before it end with it
                del stack[outside:]
            states.append(_LineState(tuple(stack), speaker if label is None else label, level, label is not None,
                                     not line.strip()))
            if level:
                if level == 1 or speaker is None:  # a section of the note, not of a message: no one's message yet
                    speaker = None
                    while stack and stack[-1][0] >= level:
                        stack.pop()
                    outside = len(stack) + 1
                while len(stack) > outside and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, heading.group(2).strip()))  # type: ignore[union-attr]
            elif label is not None:
                speaker = label
        self._states = states

    def title(self) -> str:
        """The note's date as words for a daily note, else its file name without the extension."""
        return note_date_words(self.path) or PurePosixPath(self.path).stem

    def at(self, line: int) -> str:
        """The context of a chunk whose first line is ``line`` (see the module's docstring; blank lines at its
        start are skipped); "" past the end."""
        if not 1 <= line <= len(self._states):
            return ""
        while line < len(self._states) and self._states[line - 1].blank:
            line += 1
        state = self._states[line - 1]
        path = [title for level, title in state.headings if not state.heading_level or level < state.heading_level]
        header = _PART.join(part for part in (self.title(), _LEVEL.join(path)) if part)
        if state.speaker is not None and not state.labelled and not state.heading_level:
            return f"{header}\n{state.speaker}: …"
        return header


def chunk_context(outline: NoteOutline, start_lines: Sequence[int]) -> list[str]:
    """The context of each chunk (by its first line in the note's text)."""
    return [outline.at(line) for line in start_lines]


def with_context(context: str, text: str) -> str:
    """What is embedded for a chunk: its context header, then its text (the text alone without a context)."""
    return f"{context}\n{text}" if context else text


def contextual_key(context: str, text: str, text_hash: str) -> str:
    """The embedding-cache key of a chunk (``text``, sha256 ``text_hash``) embedded with ``context``: the sha256 of
    what is embedded, so a chunk whose context changed is embedded again; without a context, the chunk's own key
    (:func:`openclaw_memory.text.chunker.indexed_hash`)."""
    if not context:
        return indexed_hash(text, text_hash)
    return hashlib.sha256(with_context(context, indexed_text(text)).encode("utf-8")).hexdigest()
