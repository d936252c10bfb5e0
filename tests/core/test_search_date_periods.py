"""``after`` / ``before`` given a month ("2026-11", "Nov 2026", "November") or an ISO week ("2026-W47") stand
for that period's first day, as "March 2024" does; they used to stand for today's day of that month (or for
January 1st), which dropped the month's first notes."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from openclaw_memory import MemoryArgumentError
from openclaw_memory.text.time_ranges import DayRange, day_range
from tests.helpers.dated_notes import NOW, paths_found_after


@pytest.mark.parametrize(("value", "first"), [
    ("2026-11", date(2026, 11, 1)),
    ("2026/11", date(2026, 11, 1)),
    ("11/2026", date(2026, 11, 1)),
    ("Nov 2026", date(2026, 11, 1)),
    ("nov. 2026", date(2026, 11, 1)),
    ("Sept 2025", date(2025, 9, 1)),
    ("2025 November", date(2025, 11, 1)),
    ("November", date(2026, 11, 1)),
    ("dec", date(2025, 12, 1)),  # the latest December
    ("2026-W47", date(2026, 11, 16)),
])
def test_a_month_or_week_stands_for_its_first_day(value: str, first: date) -> None:
    assert day_range(value, None, now=NOW) == DayRange(first=first)
    assert day_range(None, value, now=NOW) == DayRange(last=date.fromordinal(first.toordinal() - 1))


def test_days_are_still_days() -> None:
    assert day_range("Nov 5, 2026", None, now=NOW) == DayRange(first=date(2026, 11, 5))
    assert day_range("5 May", None, now=NOW) == DayRange(first=date(2026, 5, 5))


def test_a_month_that_does_not_exist_is_an_argument_error() -> None:
    with pytest.raises(MemoryArgumentError, match="2026-13"):
        day_range("2026-13", None, now=NOW)


def test_a_value_naming_no_date_says_so_once() -> None:
    with pytest.raises(MemoryArgumentError) as caught:
        day_range("Novemberish", None, now=NOW)
    assert str(caught.value).count("Novemberish") == 1


def test_after_a_month_keeps_that_months_first_notes(tmp_path: Path) -> None:
    notes = {
        "MEMORY.md": "The billing database is PostgreSQL 16.\n",
        "memory/2026-11-03.md": "We moved the billing database to a new host.\n",
        "memory/2026-10-20.md": "The billing database backup policy.\n",
    }
    values = ("2026-11", "Nov 2026", "November")
    for value, hits in zip(values, paths_found_after(tmp_path, notes, *values), strict=True):
        assert hits == {"MEMORY.md", "memory/2026-11-03.md"}, value
