"""``query.hybrid.note_date_weight`` (issue 13, round 7): in the weighted hybrid fusion, the chunks of the daily
note whose date the question names rise by the weight × the share of that date (day, month, year) the question
says. The vector side knows nothing of dates; before, only the keyword side's index held the note's date."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.config import MemoryConfig
from openclaw_memory.text.note_dates import dates_said, note_date_share
from openclaw_memory.providers.fake import FakeEmbeddingProvider

DOCS = {
    # the day asked about
    "memory/2023-07-07.md": "Maria: my plan for the evening at the shelter: bake bread with Ana.\n",
    # another day of the same month, which says the question's words alone
    "memory/2023-07-14.md": "Maria: my plan for the evening at the shelter.\n",
}
QUERY = "What did Maria plan for the evening at the shelter on 7 July, 2023?"


def _first(write, tmp_path: Path, name: str, **hybrid: object) -> str:  # noqa: ANN001
    with MemoryIndex(provider=FakeEmbeddingProvider(dims=64, model="fake-date-fusion"), workspace=write(DOCS),
                     watch=False, store={"path": str(tmp_path / f"{name}.sqlite")}, query={"hybrid": hybrid}) as m:
        m.sync()
        result = m.search(QUERY, min_score=0, max_results=2)
    assert result.mode == "hybrid"
    assert {h.path for h in result.hits} == set(DOCS)
    return result.hits[0].path


def test_a_question_naming_a_date_ranks_that_days_note_first(write, tmp_path: Path) -> None:
    assert _first(write, tmp_path, "default") == "memory/2023-07-07.md"  # on by default
    # without it the other day's note, which says the question's words, comes first
    assert _first(write, tmp_path, "off", noteDateWeight=0.0) == "memory/2023-07-14.md"


@pytest.mark.parametrize(("text", "said"), [
    ("on 7 July, 2023?", [(7, 7, 2023)]),
    ("the 7th of July 2023", [(7, 7, 2023)]),
    ("on July 7th, 2023", [(7, 7, 2023)]),
    ("Oct. 13, 2023", [(13, 10, 2023)]),
    ("in August 2023", [(None, 8, 2023)]),
    ("on 7 July", [(7, 7, None)]),
    ("see memory/2023-07-07.md", [(7, 7, 2023)]),
    ("in May 2023", [(None, 5, 2023)]),
    # no date: a month alone, a year alone, a bare number, "may" the verb
    ("in July", []),
    ("back in 2023 with 7 dogs", []),
    ("I may 7 things", []),
])
def test_dates_said(text: str, said: list[tuple[int | None, int, int | None]]) -> None:
    assert dates_said(text) == said


def test_note_date_share() -> None:
    note = "memory/2023-07-07.md"
    assert note_date_share(dates_said("on 7 July 2023"), note) == 1.0
    assert note_date_share(dates_said("in July 2023"), note) == pytest.approx(2 / 3)
    assert note_date_share(dates_said("on July 7"), note) == pytest.approx(2 / 3)
    assert note_date_share(dates_said("on 8 July 2023"), note) == 0.0  # another day
    assert note_date_share(dates_said("in July 2022"), note) == 0.0  # another year
    assert note_date_share(dates_said("on 7 July 2023"), "MEMORY.md") == 0.0  # not a daily note


def test_config_key() -> None:
    assert MemoryConfig().query.hybrid.note_date_weight == 0.2
    assert MemoryConfig.load(None, query={"hybrid": {"noteDateWeight": 0.2}}).query.hybrid.note_date_weight == 0.2
