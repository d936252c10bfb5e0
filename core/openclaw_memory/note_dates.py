"""Dates of daily notes: the date a ``memory/[…/]YYYY-MM-DD[-slug].md`` path names, that date as words, and
which notes are evergreen (never decay).

The keyword index (``store.fts.note_dates``), keyword coverage (``query.keyword.note_dates``), temporal
decay and the LlamaIndex node conversion all read a note's date from here.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

__all__ = ["NOTE_DATES_IN_KEYWORD_INDEX", "dated_path_timestamp", "is_evergreen", "note_date_words"]

#: Whether the keyword index holds a dated note's date as words with each of its chunks, unless told otherwise:
#: the default of ``store.fts.note_dates`` and of the stores' ``fts_note_dates`` (one default for both).
NOTE_DATES_IN_KEYWORD_INDEX = True

_DATED = re.compile(r"(?:^|/)memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})(?:-[^/]*)?\.md$", re.IGNORECASE)


def dated_path_timestamp(path: str) -> datetime | None:
    """UTC midnight of ``memory/[…/]YYYY-MM-DD[-slug].md``, or None (undated or invalid date)."""
    m = _DATED.search(path.replace("\\", "/"))
    if not m:
        return None
    try:
        return datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=timezone.utc)
    except ValueError:
        return None


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def note_date_words(path: str) -> str | None:
    """The date of a dated note (``memory/[…/]YYYY-MM-DD[-slug].md``) as words, ``"13 October 2023"``
    (English month names), or None for any other path."""
    d = dated_path_timestamp(path)
    return None if d is None else f"{d.day} {_MONTHS[d.month - 1]} {d.year}"


def is_evergreen(path: str, source: str) -> bool:
    """MEMORY.md, memory.md and undated files under memory/ never decay."""
    p = path.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    if source != "memory" or dated_path_timestamp(p) is not None:
        return False
    return p in ("MEMORY.md", "memory.md") or p.startswith("memory/")
