"""Questions about time: ``after`` / ``before`` restrict a search to a period, relative dates read against ``now``,
a period the question names lifts its notes, and an undated MEMORY.md fact is never lost."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from openclaw_memory import MemoryArgumentError, MemoryIndex
from openclaw_memory.cli import main
from openclaw_memory.text.time_ranges import DayRange, day_range, periods_said, resolve_day
from openclaw_memory.agent.tools import MemorySearchArgs, memory_search

NOW = datetime(2026, 11, 27, 12)  # a Friday
TODAY = NOW.date()

NOTES = {
    "MEMORY.md": "# Decisions\n\nThe billing database is PostgreSQL 16 (decided for good).\n",
    "memory/2026-11-18.md": "# 2026-11-18\n\nWe decided to move the billing database to PostgreSQL.\n",
    "memory/2026-10-02.md": "# 2026-10-02\n\nWe decided to keep the billing database on MySQL for now.\n",
    "memory/2025-03-10.md": "# 2025-03-10\n\nFirst talk about the billing database: MySQL or PostgreSQL?\n",
}


@pytest.mark.parametrize(("text", "expected"), [
    ("what did we decide last week?", [DayRange(date(2026, 11, 16), date(2026, 11, 22))]),
    ("anything yesterday?", [DayRange(date(2026, 11, 26), date(2026, 11, 26))]),
    ("what happened in March", [DayRange(date(2026, 3, 1), date(2026, 3, 31))]),
    ("what happened in December", [DayRange(date(2025, 12, 1), date(2025, 12, 31))]),  # the latest December
    ("notes from March 2024? in March 2024", [DayRange(date(2024, 3, 1), date(2024, 3, 31))]),
    ("what changed since 2024-05-01?", [DayRange(first=date(2024, 5, 1))]),
    ("what changed since last week?", [DayRange(first=date(2026, 11, 16))]),
    ("before 1 May 2024", [DayRange(last=date(2024, 4, 30))]),
    ("3 days ago", [DayRange(date(2026, 11, 24), date(2026, 11, 24))]),
    ("what did we do before the launch?", []),
    ("what did Melanie do after the road trip?", []),
])
def test_periods_a_question_names(text: str, expected: list[DayRange]) -> None:
    assert periods_said(text, now=NOW) == expected


def test_day_range_arguments() -> None:
    assert day_range("last week", None, now=NOW) == DayRange(first=date(2026, 11, 16))
    assert day_range(None, "last month", now=NOW) == DayRange(last=date(2026, 9, 30))
    assert day_range("2026-11-01", "2026-11-20", now=NOW) == DayRange(date(2026, 11, 1), date(2026, 11, 19))
    assert day_range(date(2024, 1, 1), None) == DayRange(first=date(2024, 1, 1))
    assert day_range(None, None) is None
    assert resolve_day("2 weeks ago", now=NOW) == date(2026, 11, 13)
    with pytest.raises(MemoryArgumentError, match="names no date"):
        day_range("the launch", None, now=NOW)
    with pytest.raises(MemoryArgumentError, match="no day"):
        day_range("2026-11-20", "2026-11-01")


@pytest.fixture
def memory(write: Any, make_index: Any, fake_provider: Any) -> MemoryIndex:
    write(NOTES)
    index = make_index(fake_provider)
    index.sync()
    return index


def _paths(result: Any) -> list[str]:
    return [hit.path for hit in result.hits]


def test_after_and_before_keep_the_period_and_every_undated_note(memory: MemoryIndex) -> None:
    question = "billing database decision"
    everything = _paths(memory.search(question, min_score=0))
    assert set(everything) == set(NOTES)
    recent = _paths(memory.search(question, min_score=0, after="last month", now=NOW))
    assert set(recent) == {"MEMORY.md", "memory/2026-11-18.md", "memory/2026-10-02.md"}
    older = _paths(memory.search(question, min_score=0, before="2026-01-01", now=NOW))
    assert set(older) == {"MEMORY.md", "memory/2025-03-10.md"}
    # the undated curated fact is never lost to a date restriction
    assert "MEMORY.md" in _paths(memory.search(question, min_score=0, after="yesterday", now=NOW))


def test_bad_dates_are_argument_errors(memory: MemoryIndex) -> None:
    with pytest.raises(MemoryArgumentError, match="after"):
        memory.search("billing", after="the launch")
    payload = memory_search(memory, "billing", after="the launch")
    assert payload["results"] == [] and "names no date" in payload["error"]


def test_a_period_the_question_names_lifts_its_notes(memory: MemoryIndex) -> None:
    plain = memory.search("what did we decide about the billing database?", min_score=0, now=NOW)
    asked = memory.search("what did we decide about the billing database last week?", min_score=0, now=NOW)
    score = {hit.path: hit.score for hit in plain.hits}
    lifted = {hit.path: hit.score for hit in asked.hits}
    gain = {path: lifted[path] - score[path] for path in score}
    assert gain["memory/2026-11-18.md"] > gain["memory/2026-10-02.md"] + 0.15
    assert _paths(asked)[0] == "memory/2026-11-18.md"


def test_the_tool_schema_and_the_cli_take_after_and_before(memory: MemoryIndex, workspace: Path, tmp_path: Path) -> None:
    assert {"after", "before"} <= set(MemorySearchArgs.model_json_schema()["properties"])
    payload = memory_search(memory, "billing database", min_score=0, before="2026-01-01")
    assert {r["path"] for r in payload["results"]} == {"MEMORY.md", "memory/2025-03-10.md"}
    store = str(tmp_path / "cli.sqlite")
    out = CliRunner().invoke(main, ["-w", str(workspace), "-p", "none", "--store", store, "search", "billing database",
                                    "--min-score", "0", "--after", "2026-11-01", "--json"])
    assert out.exit_code == 0, out.output
    assert {h["path"] for h in json.loads(out.output)["results"]} == {"MEMORY.md", "memory/2026-11-18.md"}
    bad = CliRunner().invoke(main, ["-w", str(workspace), "-p", "none", "--store", store, "search", "billing",
                                    "--before", "the launch"])
    assert bad.exit_code != 0 and "names no date" in bad.output


def test_the_framework_retrievers_take_after_and_before(memory: MemoryIndex) -> None:
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from langchain_openclaw_memory import OpenClawMemoryRetriever as LangChainRetriever
    from llama_index_openclaw_memory import OpenClawMemoryRetriever as LlamaIndexRetriever

    docs = LangChainRetriever(memory, min_score=0, k=6).invoke("billing database", after="2026-11-01")
    assert {d.metadata["path"] for d in docs} == {"MEMORY.md", "memory/2026-11-18.md"}
    nodes = LlamaIndexRetriever(memory, min_score=0, before="2026-01-01").retrieve("billing database")
    assert {n.node.metadata["path"] for n in nodes} == {"MEMORY.md", "memory/2025-03-10.md"}
