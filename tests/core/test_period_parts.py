"""Part of a month or year in a date argument or a question: "the end of October", "late March", "early 2024",
"the end of the month". "after='end of October'" used to stand for October 1st (the words "of October" were read
as the month), which let the whole month through; "the end of the month" named no date at all."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from openclaw_memory.text.time_ranges import DayRange, day_range, periods_said, resolve_day
from tests.helpers.dated_notes import NOW, paths_found_after


@pytest.mark.parametrize(("value", "day"), [
    ("end of October", date(2026, 10, 31)),
    ("the end of October 2025", date(2025, 10, 31)),
    ("the end of the month", date(2026, 11, 30)),
    ("end of last month", date(2026, 10, 31)),
    ("the end of February 2024", date(2024, 2, 29)),
    ("end of 2025", date(2025, 12, 31)),
    ("late October", date(2026, 10, 21)),
    ("mid-October", date(2026, 10, 11)),
    ("the middle of October", date(2026, 10, 11)),
    ("early October", date(2026, 10, 1)),
    ("the beginning of October", date(2026, 10, 1)),
    ("late last year", date(2025, 9, 1)),
    ("early 2024", date(2024, 1, 1)),
])
def test_a_part_of_a_month_or_year_stands_for_its_day(value: str, day: date) -> None:
    assert day_range(value, None, now=NOW) == DayRange(first=day)
    assert day_range(None, value, now=NOW) == DayRange(last=date.fromordinal(day.toordinal() - 1))
    assert resolve_day(value, now=NOW) == day


@pytest.mark.parametrize(("question", "period"), [
    ("what did we decide at the end of October?", DayRange(date(2026, 10, 21), date(2026, 10, 31))),
    ("what broke in late March?", DayRange(date(2026, 3, 21), date(2026, 3, 31))),
    ("plans from mid-September 2025", DayRange(date(2025, 9, 11), date(2025, 9, 20))),
    ("what happened early last month", DayRange(date(2026, 10, 1), date(2026, 10, 10))),
    ("the trip at the end of last year", DayRange(date(2025, 9, 1), date(2025, 12, 31))),
])
def test_a_question_naming_part_of_a_month_names_that_part_only(question: str, period: DayRange) -> None:
    assert periods_said(question, now=NOW) == [period]


@pytest.mark.parametrize(("question", "period"), [
    ("what changed since the end of October?", DayRange(first=date(2026, 10, 31))),
    ("what changed after the end of October?", DayRange(first=date(2026, 11, 1))),
    ("what was planned before late March?", DayRange(last=date(2026, 3, 20))),
])
def test_a_bound_at_the_end_of_a_month_is_its_last_day(question: str, period: DayRange) -> None:
    assert periods_said(question, now=NOW) == [period]


def test_the_whole_month_is_still_the_whole_month() -> None:
    assert periods_said("what happened in October?", now=NOW) == [DayRange(date(2026, 10, 1), date(2026, 10, 31))]
    assert periods_said("what happened last month?", now=NOW) == [DayRange(date(2026, 10, 1), date(2026, 10, 31))]
    assert day_range("October", None, now=NOW) == DayRange(first=date(2026, 10, 1))


def test_after_the_end_of_a_month_leaves_its_earlier_notes_out(tmp_path: Path) -> None:
    notes = {
        "MEMORY.md": "The billing database is PostgreSQL 16.\n",
        "memory/2026-10-03.md": "The billing database backup policy.\n",
        "memory/2026-10-31.md": "We moved the billing database to a new host.\n",
        "memory/2026-11-02.md": "The billing database failover test passed.\n",
    }
    [hits] = paths_found_after(tmp_path, notes, "end of October")
    assert hits == {"MEMORY.md", "memory/2026-10-31.md", "memory/2026-11-02.md"}
