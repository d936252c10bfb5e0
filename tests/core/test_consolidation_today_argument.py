"""``consolidate(..., today=...)`` given a datetime (``datetime.now()``, a natural thing to pass) used to fail deep
inside with "TypeError: can't compare datetime.datetime to datetime.date"; it stands for its date now, and a value
that is no date at all is a MemoryArgumentError naming ``today``."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

import pytest

from openclaw_memory.consolidation import aconsolidate, consolidate
from openclaw_memory.errors import MemoryArgumentError
from tests.helpers.consolidation import MEMORY, config_for, make_workspace, scripted


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


def test_a_datetime_stands_for_its_date(ws: Path) -> None:
    model = scripted({"decisions": [{"op": "add", "candidate": "C3"}]})
    report = consolidate(config_for(ws), model, today=datetime(2026, 11, 27, 21, 30))
    assert report.applied and "## Promoted 2026-11-27" in (ws / "MEMORY.md").read_text()


def test_the_async_twin_takes_a_datetime_too(ws: Path) -> None:
    report = asyncio.run(aconsolidate(config_for(ws), scripted({"decisions": []}), apply=False,
                                      today=datetime(2026, 11, 27, 8)))
    assert len(report.candidates) == 3


def test_a_string_is_refused_with_the_arguments_name(ws: Path) -> None:
    with pytest.raises(MemoryArgumentError, match="today must be a date"):
        consolidate(config_for(ws), scripted({"decisions": []}), today="2026-11-27")  # type: ignore[arg-type]
    assert (ws / "MEMORY.md").read_text() == MEMORY
