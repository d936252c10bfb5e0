"""``after`` / ``before`` values that name a day in words: "the 5th" used to be read as May (dateparser took the 5
for the month), "the 1st" as January; "the day before yesterday" as yesterday (the word "yesterday" inside it was
taken for the period)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from openclaw_memory.text.time_ranges import DayRange, day_range, resolve_day
from tests.helpers.dated_notes import NOW, paths_found_after


@pytest.mark.parametrize(("value", "day"), [
    ("the 5th", date(2026, 11, 5)),
    ("5th", date(2026, 11, 5)),
    ("on the 1st", date(2026, 11, 1)),
    ("the 21st", date(2026, 11, 21)),
    ("the 30th", date(2026, 10, 30)),  # not after today: last month's
    ("the 31st", date(2026, 10, 31)),
    ("the day before yesterday", date(2026, 11, 26)),
    ("2 weeks before yesterday", date(2026, 11, 13)),
])
def test_a_day_in_words_is_that_day(value: str, day: date) -> None:
    assert day_range(value, None, now=NOW) == DayRange(first=day)
    assert resolve_day(value, now=NOW) == day


@pytest.mark.parametrize(("value", "first"), [
    ("yesterday", date(2026, 11, 27)),
    ("last week", date(2026, 11, 16)),
    ("during the last week", date(2026, 11, 16)),
    ("notes from last week", date(2026, 11, 16)),
    ("in the past 3 days", date(2026, 11, 25)),
    ("3 days ago", date(2026, 11, 25)),
    ("from last month", date(2026, 10, 1)),
])
def test_periods_still_stand_for_their_first_day(value: str, first: date) -> None:
    assert day_range(value, None, now=NOW) == DayRange(first=first)


def test_a_search_after_the_5th_keeps_this_months_notes(tmp_path: Path) -> None:
    notes = {f"memory/{day}.md": "The billing database moved.\n" for day in ("2026-11-03", "2026-11-06", "2026-06-01")}
    assert paths_found_after(tmp_path, notes, "the 5th") == [{"memory/2026-11-06.md"}]
