"""A question's "since March" started on today's day of March (dateparser reads "March" alone as March 28th when
today is the 28th), so notes of March 1st-27th fell outside the period; "before March" ended on the 27th. A month
named alone in a "since / after / before" bound now stands for the whole month: since its first day, after its
last, before its first (the latest such month not after today, as "in March" does)."""

from __future__ import annotations

from datetime import date

import pytest

from openclaw_memory.text.time_ranges import DayRange, periods_said

NOW = date(2026, 11, 28)


@pytest.mark.parametrize(("question", "period"), [
    ("what happened since March?", DayRange(first=date(2026, 3, 1))),
    ("anything new since december", DayRange(first=date(2025, 12, 1))),  # the latest December not after today
    ("since November", DayRange(first=date(2026, 11, 1))),
    ("what did we decide before March?", DayRange(last=date(2026, 2, 28))),
    ("what was done after March, then?", DayRange(first=date(2026, 4, 1))),
    # a day or a year with the month keeps its meaning
    ("since March 5", DayRange(first=date(2026, 3, 5))),
    ("since March 2025", DayRange(first=date(2025, 3, 1))),
    ("after March 2025", DayRange(first=date(2025, 4, 1))),
])
def test_a_month_named_alone_in_a_bound_stands_for_the_whole_month(question: str, period: DayRange) -> None:
    assert periods_said(question, now=NOW) == [period]


def test_open_periods_are_not_among_those_that_lift_dated_notes() -> None:
    """Ranking lifts notes of the closed periods a question names only (open ones span no bounded number of days):
    reading "since March" differently leaves it as it was."""
    from openclaw_memory.retrieval.pipeline import _LONGEST_PERIOD

    said = periods_said("what happened since March?", now=NOW)
    assert said and all(p.days is None for p in said)
    assert not [p for p in said if (p.days or _LONGEST_PERIOD + 1) <= _LONGEST_PERIOD]
