"""Dates of daily notes: the date a ``memory/[…/]YYYY-MM-DD[-slug].md`` path names, that date as words, and
which notes are evergreen (never decay).

The keyword index (``store.fts.note_dates``), keyword coverage (``query.keyword.note_dates``), the hybrid
fusion's note-date bonus (``query.hybrid.note_date_weight``), temporal decay and the LlamaIndex node conversion all
read a note's date from here.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

__all__ = ["MONTH_NAMES", "NOTE_DATES_IN_KEYWORD_INDEX", "DateSaid", "dated_path_timestamp", "dates_said",
           "is_evergreen", "note_date_share", "note_date_words"]

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


#: English month names, January first (a daily note's date as words, dates a question says)
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def note_date_words(path: str) -> str | None:
    """The date of a dated note (``memory/[…/]YYYY-MM-DD[-slug].md``) as words, ``"13 October 2023"``
    (English month names), or None for any other path."""
    d = dated_path_timestamp(path)
    return None if d is None else f"{d.day} {MONTH_NAMES[d.month - 1]} {d.year}"


#: A date a text says: (day or None, month 1-12, year or None); at least one of day and year is set.
DateSaid = tuple[int | None, int, int | None]

_MONTH_RE = (r"(?P<{0}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|(?-i:May)|june?|july?|aug(?:ust)?"
             r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DAY_RE = r"(?P<{0}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR_RE = r"(?P<{0}>(?:19|20)\d\d)"
_SAID = re.compile(
    r"(?<![\w-])(?:"
    # 7 July 2023, 7th of July, 2023, 7 July
    + _DAY_RE.format("d1") + r"(?:\s+of)?\s+" + _MONTH_RE.format("m1") + r"(?:,?\s+" + _YEAR_RE.format("y1") + ")?"
    # July 7, 2023, July 7th, July 2023, July of 2023
    + r"|" + _MONTH_RE.format("m2") + r"(?:\s+" + _DAY_RE.format("d2") + r"(?![\d:]))?(?:,?\s+(?:of\s+)?"
    + _YEAR_RE.format("y2") + ")?"
    # 2023-07-07 (the daily notes' file names)
    + r"|(?P<y3>\d{4})-(?P<m3>\d{2})-(?P<d3>\d{2})"
    + r")(?![\w-])",
    re.IGNORECASE,
)


def dates_said(text: str) -> list[DateSaid]:
    """The dates ``text`` names by a month with a day and/or a year ("7 July, 2023", "July 7th", "July 2023",
    "the 7th of July", "2023-07-07"). A month alone, a year alone or any other bare number names no date."""
    out: list[DateSaid] = []
    for m in _SAID.finditer(text):
        if m.group("m3"):
            day, month, year = int(m.group("d3")), int(m.group("m3")), int(m.group("y3"))
        else:
            name = (m.group("m1") or m.group("m2")).lower()[:3]
            month = 1 + [n[:3].lower() for n in MONTH_NAMES].index(name)
            d, y = m.group("d1") or m.group("d2"), m.group("y1") or m.group("y2")
            day, year = (int(d) if d else None), (int(y) if y else None)
        if day is None and year is None or not 1 <= month <= 12 or day is not None and not 1 <= day <= 31:
            continue
        out.append((day, month, year))
    return out


def note_date_share(said: list[DateSaid], path: str) -> float:
    """How much of a dated note's date (day, month, year) one of the dates ``said`` names, 0..1: 1 for its day,
    month and year, 2/3 for its month and year or its day and month, 0 when every date said differs from it in a
    part it names (another day, month or year) or the note is not dated."""
    d = dated_path_timestamp(path) if said else None
    if d is None:
        return 0.0
    best = 0.0
    for day, month, year in said:
        if month != d.month or (day is not None and day != d.day) or (year is not None and year != d.year):
            continue
        best = max(best, (1 + (day is not None) + (year is not None)) / 3)
    return best


def is_evergreen(path: str, source: str) -> bool:
    """MEMORY.md, memory.md, USER.md and undated files under memory/ never decay."""
    p = path.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    if source != "memory" or dated_path_timestamp(p) is not None:
        return False
    return p in ("MEMORY.md", "memory.md", "USER.md") or p.startswith("memory/")
