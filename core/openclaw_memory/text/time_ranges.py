"""Dates and periods a search is about: ``after=`` / ``before=`` arguments and the periods a question names.

``resolve_day`` turns an argument (a date, a datetime, ``"2024-05-01"``, ``"yesterday"``, ``"3 weeks ago"``,
``"1 May 2024"``) into a day, relative to a reference time (now by default), with ``dateparser``.
``periods_said`` finds the periods a question names relative to that time ("yesterday", "last week", "this
month", "in March", "in 2024", "3 days ago", "since 2024-05-01", "before 1 May", "late March", "the end of
October") as inclusive day ranges.
A note's day comes from its path (``memory/YYYY-MM-DD.md``, :mod:`openclaw_memory.text.note_dates`); undated files
(``MEMORY.md``, topic notes) belong to every period.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.text.note_dates import MONTH_NAMES, dated_path_timestamp

__all__ = ["DayRange", "day_range", "note_day", "period_share", "periods_said", "resolve_day"]

_MONTHS = tuple(name.lower() for name in MONTH_NAMES)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


@dataclass(frozen=True)
class DayRange:
    """Days from ``first`` to ``last``, both included; None leaves that end open."""

    first: date | None = None
    last: date | None = None

    def holds(self, day: date) -> bool:
        """Whether ``day`` lies in the range."""
        return (self.first is None or day >= self.first) and (self.last is None or day <= self.last)

    def holds_note(self, path: str) -> bool:
        """Whether the note at ``path`` belongs to the range: a dated note by its day, an undated one always."""
        day = note_day(path)
        return day is None or self.holds(day)

    @property
    def days(self) -> int | None:
        """How many days the range spans, None when an end is open."""
        if self.first is None or self.last is None:
            return None
        return (self.last - self.first).days + 1


def note_day(path: str) -> date | None:
    """The day of a dated note (``memory/[…/]YYYY-MM-DD[-slug].md``), None for any other file."""
    stamp = dated_path_timestamp(path)
    return None if stamp is None else stamp.date()


def _today(now: datetime | date | None) -> date:
    if now is None:
        return date.today()
    return now.date() if isinstance(now, datetime) else now


@lru_cache(maxsize=1)
def _dateparser() -> Any:
    import dateparser

    return dateparser


_ORDINAL_DAY = re.compile(r"^(?:on\s+)?(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)$", re.I)


def _ordinal_day(text: str, today: date) -> date | None:
    """The latest day not after ``today`` that is the day of the month ``text`` names alone ("the 5th", "21st");
    None for other words (dateparser reads "the 5th" as May)."""
    match = _ORDINAL_DAY.match(text)
    if match is None or not 1 <= int(match.group(1)) <= 31:
        return None
    year, month = today.year, today.month
    for _ in range(12):  # the 31st: the latest month that has one
        try:
            day = date(year, month, int(match.group(1)))
        except ValueError:
            day = None
        if day is not None and day <= today:
            return day
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    return None


def _parse(text: str, today: date) -> date | None:
    ordinal = _ordinal_day(text, today)
    if ordinal is not None:
        return ordinal
    settings = {"RELATIVE_BASE": datetime(today.year, today.month, today.day, 12), "PREFER_DATES_FROM": "past",
                "RETURN_AS_TIMEZONE_AWARE": False, "STRICT_PARSING": False}
    parsed = _dateparser().parse(text, settings=settings, languages=None)
    return None if parsed is None else parsed.date()


def resolve_day(value: str | date | datetime, *, now: datetime | date | None = None, name: str = "date") -> date:
    """The day ``value`` names: a date, a datetime, an ISO date, or words such as ``"yesterday"``,
    ``"3 weeks ago"`` or ``"1 May 2024"`` read relative to ``now`` (default: today).

    Raises MemoryArgumentError (naming ``name``) for a value that names no day.
    """
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not value.strip():
        raise MemoryArgumentError(f"{name} must be a date, an ISO date string or words such as 'yesterday', "
                                  f"not {value!r}")
    text = value.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}(?:[T ].*)?", text):
            return date.fromisoformat(text[:10])
        part = _part_bound(text, _today(now))
        return part.first if part is not None and part.first is not None else \
            _required(_parse(text, _today(now)), text, name)
    except MemoryArgumentError:
        raise
    except ValueError as exc:
        raise MemoryArgumentError(f"{name}: {text!r} is not a valid date ({exc})") from None


def _required(day: date | None, text: str, name: str) -> date:
    if day is None:
        raise MemoryArgumentError(f"{name}: {text!r} names no date; give an ISO date (2024-05-01) or words such as "
                                  "'yesterday' or '3 weeks ago'")
    return day


def day_range(after: Any = None, before: Any = None, *, now: datetime | date | None = None) -> DayRange | None:
    """The days on or after ``after`` and before ``before`` (either may be None: that end is open), or None when
    neither is given. A value naming a period ("last week", "March 2024", "2024") stands for its first day, so
    ``after="last week"`` starts on last week's Monday and ``before="last month"`` ends before last month began;
    "late October" stands for October 21st, "the end of October" for October 31st.
    Raises MemoryArgumentError for a value that names no day, or for an empty range."""
    if after is None and before is None:
        return None
    first = _first_day(after, now, "after") if after is not None else None
    last = _first_day(before, now, "before") - timedelta(days=1) if before is not None else None
    if first is not None and last is not None and first > last:
        raise MemoryArgumentError(f"no day is on or after {after!r} and before {before!r}")
    return DayRange(first, last)


def _first_day(value: Any, now: datetime | date | None, name: str) -> date:
    """The day ``value`` names, or the first day of the period it names."""
    if isinstance(value, str):
        part = _part_bound(value, _today(now))
        if part is not None and part.first is not None:
            return part.first
        month_or_week = _month_or_week(value, _today(now), name)
        if month_or_week is not None:
            return month_or_week
        period = _calendar_unit(value) or (_periods(value, _today(now)) if _only_periods(value) else [])
        if period and period[0].first is not None:
            return period[0].first
        try:
            return resolve_day(value, now=now, name=name)
        except MemoryArgumentError:  # words around a period ("notes from last week"): the period they name
            period = _periods(value, _today(now))
            if period and period[0].first is not None:
                return period[0].first
            raise
    return resolve_day(value, now=now, name=name)


#: words that may stand around a period in an ``after`` / ``before`` value ("during the last week")
_FILLER = frozenset({"the", "in", "during", "since", "from", "of", "on", "at", "over", "within", "around", "about"})


def _only_periods(text: str) -> bool:
    """True when ``text`` is periods :func:`_periods` reads and filler words alone: "the day before yesterday"
    is a day of its own, not "yesterday"."""
    rest = text
    for pattern in (_PART, _ONE_DAY, _PAST_N, _LAST, _AGO, _IN_MONTH, _IN_YEAR):
        rest = pattern.sub(" ", rest)
    return not set(re.findall(r"[\w']+", rest.lower())) - _FILLER


_MONTH_WORD = r"((?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*)\.?"
_NUMERIC_MONTH = re.compile(r"^\s*((?:19|20)\d\d)[-/.](\d{1,2})\s*$|^\s*(\d{1,2})[-/.]((?:19|20)\d\d)\s*$")
_WORD_MONTH = re.compile(rf"^\s*(?:{_MONTH_WORD},?\s*((?:19|20)\d\d)?|((?:19|20)\d\d),?\s+{_MONTH_WORD})\s*$", re.I)
_ISO_WEEK = re.compile(r"^\s*((?:19|20)\d\d)-?W(\d{2})\s*$", re.I)


def _month_or_week(text: str, today: date, name: str) -> date | None:
    """The first day of the month ``text`` names alone ("2024-05", "05/2024", "May 2024", "Sept 2024", "2024 May",
    "May": the latest May not after today) or of the ISO week ("2024-W19"); None for anything else.
    MemoryArgumentError (naming ``name``) for a month or week that does not exist ("2024-13")."""
    numeric, words, week = _NUMERIC_MONTH.match(text), _WORD_MONTH.match(text), _ISO_WEEK.match(text)
    try:
        if week:
            return date.fromisocalendar(int(week.group(1)), int(week.group(2)), 1)
        if numeric:
            year, month = numeric.group(1, 2) if numeric.group(1) else numeric.group(4, 3)
            return date(int(year), int(month), 1)
    except ValueError as exc:
        raise MemoryArgumentError(f"{name}: {text.strip()!r} is not a valid month or week ({exc})") from None
    if not words:
        return None
    word, year = words.group(1, 2) if words.group(1) else words.group(4, 3)
    number = next((index for index, month in enumerate(_MONTHS, 1) if month.startswith(word.lower())), None)
    if number is None:
        return None  # "Mayday", "Decade": not a month
    return date(int(year) if year else today.year - (number > today.month), number, 1)


def _month_range(year: int, month: int) -> DayRange:
    following = date(year + (month == 12), month % 12 + 1, 1)
    return DayRange(date(year, month, 1), following - timedelta(days=1))


def _week_of(day: date) -> DayRange:
    monday = day - timedelta(days=day.weekday())
    return DayRange(monday, monday + timedelta(days=6))


def _period(unit: str, day: date) -> DayRange:
    if unit == "day":
        return DayRange(day, day)
    if unit == "week":
        return _week_of(day)
    if unit == "month":
        return _month_range(day.year, day.month)
    return DayRange(date(day.year, 1, 1), date(day.year, 12, 31))


def _back(today: date, unit: str, count: int) -> date:
    if unit == "day":
        return today - timedelta(days=count)
    if unit == "week":
        return today - timedelta(weeks=count)
    if unit == "month":
        months = today.year * 12 + today.month - 1 - count
        return date(months // 12, months % 12 + 1, 1)
    return date(today.year - count, 1, 1)


_UNIT = r"(day|week|month|year)s?"
_COUNT = r"(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_MONTH_NAME = r"(" + "|".join(m for m in _MONTHS) + r")"
_AGO = re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", re.I)
_LAST = re.compile(rf"\b(last|previous|past|this)\s+(day|week|month|year)\b", re.I)
_PAST_N = re.compile(rf"\b(?:past|last)\s+{_COUNT}\s+{_UNIT}\b", re.I)
_IN_MONTH = re.compile(rf"\b(?:in|during|of)\s+{_MONTH_NAME}(?:\s+(?:of\s+)?((?:19|20)\d\d))?\b", re.I)
_IN_YEAR = re.compile(r"\b(?:in|during)\s+((?:19|20)\d\d)\b", re.I)
_BOUND = re.compile(r"\b(since|after|before)\s+([^?.!;,]{1,40})", re.I)
_ONE_DAY = re.compile(r"\b(today|yesterday)\b", re.I)


def _bound_day(words: str, today: date) -> date | None:
    """The day the start of ``words`` names ("2024-05-01", "1 May 2024", "yesterday"), trying shorter starts."""
    tokens = words.split()
    for size in range(min(len(tokens), 4), 0, -1):
        text = " ".join(tokens[:size])
        if not re.search(r"\d|yesterday|today|ago|week|month|year|" + _MONTH_NAME, text, re.I):
            continue
        try:
            return resolve_day(text, now=today)
        except MemoryArgumentError:
            continue
    return None


_PART = re.compile(
    r"\b(?:(?:the\s+)?(beginning|start|middle|end)\s+of|(early|mid|late))[\s-]+(?:the\s+)?"
    rf"(?:{_MONTH_NAME}(?:,?\s+(?:of\s+)?((?:19|20)\d\d))?|((?:19|20)\d\d)|(?:(this|last|previous)\s+)?(month|year))\b",
    re.I)
#: which third of a month (days) or of a year (months) each word names
_THIRDS = {"beginning": 0, "start": 0, "early": 0, "middle": 1, "mid": 1, "late": 2, "end": 2}


def _part_range(match: re.Match[str], today: date) -> DayRange:
    """The part of a month or year a match of ``_PART`` names: "early/mid/late March" (and "the beginning/middle/end
    of March") its days 1-10, 11-20 or 21 to the last; of a year, January-April, May-August or September-December."""
    third = _THIRDS[(match.group(1) or match.group(2)).lower()]
    month_name, year, alone_year, which, unit = match.group(3, 4, 5, 6, 7)
    back = bool(which) and which.lower() != "this"  # "last month", "previous year"
    if month_name:
        number = _MONTHS.index(month_name.lower()) + 1
        return _month_part(_month_range(int(year) if year else today.year - (number > today.month), number), third)
    if unit and unit.lower() == "month":
        return _month_part(_period("month", _back(today, "month", 1) if back else today), third)
    return _year_part(int(alone_year) if alone_year else today.year - back, third)


def _month_part(month: DayRange, third: int) -> DayRange:
    first = date(month.first.year, month.first.month, 1 + 10 * third)  # type: ignore[union-attr]
    return DayRange(first, month.last if third == 2 else first + timedelta(days=9))


def _year_part(year: int, third: int) -> DayRange:
    last = date(year, 12, 31) if third == 2 else date(year, 5 + 4 * third, 1) - timedelta(days=1)
    return DayRange(date(year, 1 + 4 * third, 1), last)


def _part_bound(words: str, today: date) -> DayRange | None:
    """The period that ``words`` (a bound: after ``since``, ``after``, ``before``) start with when they name part of a
    month or year: "the end of October" is its last day, "late October" its last ten days; None for other words."""
    match = _PART.match(words.strip())
    if match is None:
        return None
    part = _part_range(match, today)
    return DayRange(part.last, part.last) if (match.group(1) or "").lower() == "end" else part


def periods_said(text: str, *, now: datetime | date | None = None) -> list[DayRange]:
    """The periods ``text`` names relative to ``now`` (default: today), as inclusive day ranges.

    Understood: "today", "yesterday"; "last/this/past week|month|year" (a calendar period; "past" the last 7, 30
    or 365 days); "past N days/weeks/…"; "N days/weeks/months/years ago" (the calendar period holding that
    day); "in March" (the latest March not after today), "in March 2024", "in 2024"; "early/mid/late March" or
    "the beginning/middle/end of March" (also of a year, "the month", "last year"): that third of it; "since X",
    "after X", "before X" with X a date or one of those periods ("2024-05-01", "1 May 2024", "last week"; "March"
    alone: since its first day, after its last; "the end of October" is its last day there). Words that name no
    date ("before the launch") name no period.
    """
    today = _today(now)
    found: list[DayRange] = []
    taken: list[tuple[int, int]] = []  # the spans of "since/after/before X": X is not a period of its own
    for match in _BOUND.finditer(text):
        part = _part_bound(match.group(2), today)
        period = [part] if part is not None else \
            _calendar_unit(match.group(2)) or _month_alone(match.group(2), today) or _periods(match.group(2), today)
        day = None if period else _bound_day(match.group(2), today)
        if not period and day is None:
            continue
        word = match.group(1).lower()
        if word == "before":
            found.append(DayRange(last=(period[0].first if period else day) - timedelta(days=1)))
        elif word == "since":
            found.append(DayRange(first=period[0].first if period else day))
        else:
            after = period[0].last if period and period[0].last is not None else day
            found.append(DayRange(first=after + timedelta(days=1)))
        taken.append(match.span())
    found += _periods(text, today, skip=taken)
    return found


_MONTH_YEAR = re.compile(rf"^\s*{_MONTH_NAME}\s+((?:19|20)\d\d)\b", re.I)
_YEAR = re.compile(r"^\s*((?:19|20)\d\d)\b(?![-/]\d)")


def _calendar_unit(words: str) -> list[DayRange]:
    """The month ("March 2024") or year ("2024") ``words`` start with, as a one-element list, else []."""
    match = _MONTH_YEAR.match(words)
    if match:
        return [_month_range(int(match.group(2)), _MONTHS.index(match.group(1).lower()) + 1)]
    match = _YEAR.match(words)
    if match:
        return [DayRange(date(int(match.group(1)), 1, 1), date(int(match.group(1)), 12, 31))]
    return []


_MONTH_ALONE = re.compile(rf"^\s*{_MONTH_NAME}\b(?![\s,]*\d)", re.I)


def _month_alone(words: str, today: date) -> list[DayRange]:
    """The month ``words`` start with when named without a day or year ("March": the latest March not after
    ``today``), as a one-element list, else []: "since March" starts on March 1st, not on today's day of March."""
    match = _MONTH_ALONE.match(words)
    if match is None:
        return []
    month = _MONTHS.index(match.group(1).lower()) + 1
    return [_month_range(today.year - (month > today.month), month)]


def _periods(text: str, today: date, skip: list[tuple[int, int]] = ()) -> list[DayRange]:  # type: ignore[assignment]
    """The closed periods ``text`` names (not "since/after/before"), outside the ``skip`` spans."""
    found: list[DayRange] = []
    skip = list(skip)

    def free(match: re.Match[str]) -> bool:
        return not any(start <= match.start() < end for start, end in skip)

    for match in list(filter(free, _PART.finditer(text))):  # "end of October": not all of October
        found.append(_part_range(match, today))
        skip.append(match.span())
    for match in filter(free, _ONE_DAY.finditer(text)):
        day = today - timedelta(days=match.group(1).lower() == "yesterday")
        found.append(DayRange(day, day))
    for match in filter(free, _PAST_N.finditer(text)):
        count = _NUMBERS.get(match.group(1).lower()) or int(match.group(1))
        found.append(DayRange(_back(today, match.group(2).lower(), count), today))
    for match in filter(free, _LAST.finditer(text)):
        which, unit = match.group(1).lower(), match.group(2).lower()
        if which == "this":
            found.append(DayRange(_period(unit, today).first, today))
        elif which == "past":
            span = {"day": 1, "week": 7, "month": 30, "year": 365}[unit]
            found.append(DayRange(today - timedelta(days=span), today))
        else:
            found.append(_period(unit, _back(today, unit, 1)))
    for match in filter(free, _AGO.finditer(text)):
        count = _NUMBERS.get(match.group(1).lower()) or int(match.group(1))
        unit = match.group(2).lower()
        found.append(_period(unit, _back(today, unit, count)))
    for match in filter(free, _IN_MONTH.finditer(text)):
        month = _MONTHS.index(match.group(1).lower()) + 1
        year = int(match.group(2)) if match.group(2) else today.year - (month > today.month)
        found.append(_month_range(year, month))
    for match in filter(free, _IN_YEAR.finditer(text)):
        year = int(match.group(1))
        found.append(DayRange(date(year, 1, 1), date(year, 12, 31)))
    return found


def period_share(periods: list[DayRange], path: str) -> float:
    """1.0 when the note at ``path`` is dated and lies in one of ``periods``, else 0.0 (undated notes: 0)."""
    day = note_day(path) if periods else None
    return 1.0 if day is not None and any(period.holds(day) for period in periods) else 0.0
