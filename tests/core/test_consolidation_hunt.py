"""Consolidation defects met by a user of the adapters: duplicates, misplaced promotions, odd model answers.
Real files, scripted models (plain ``str -> str`` functions)."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from openclaw_memory.consolidation import consolidate, forget, undo
from tests.helpers.consolidation import MEMORY, NOTE, TODAY, config_for, make_workspace, scripted



def add_everything(prompt: str) -> str:
    """A model adding every candidate the prompt offers."""
    offered = re.findall(r"^(C\d+) \(", prompt.split("## Candidates")[1], re.M)
    return json.dumps({"decisions": [{"op": "add", "candidate": c} for c in offered]})


def _shift_the_note(ws: Path) -> None:
    """A hand edit at the top of the daily note: every candidate's line number moves down by two."""
    (ws / "memory" / "2026-11-26.md").write_text("# 2026-11-26\n\nStandup notes below.\n" + NOTE.split("\n", 1)[1])


def test_a_merged_candidate_is_not_promoted_again_when_its_note_lines_move(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    merge = {"decisions": [{"op": "merge", "candidate": "C2", "entry": "E1"},
                           *({"op": "skip", "candidate": c} for c in ("C1", "C3"))]}
    consolidate(config_for(ws), scripted(merge), today=TODAY)
    _shift_the_note(ws)
    report = consolidate(config_for(ws), add_everything, today=TODAY)
    assert report.added and (ws / "MEMORY.md").read_text().count("supports PostgreSQL with pgvector") == 1


def test_a_clipped_promoted_candidate_is_not_promoted_again_when_its_note_lines_move(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    long_line = "- The staging cluster " + "keeps every nightly build for review " * 6 + "until Friday."
    (ws / "memory" / "2026-11-26.md").write_text(NOTE + long_line + "\n")
    settings = {"max_entry_chars": 80}
    add_long = {"decisions": [{"op": "add", "candidate": "C4"},
                              *({"op": "skip", "candidate": c} for c in ("C1", "C2", "C3"))]}
    consolidate(config_for(ws, **settings), scripted(add_long), today=TODAY)
    assert (ws / "MEMORY.md").read_text().count("The staging cluster") == 1
    (ws / "memory" / "2026-11-26.md").write_text("# 2026-11-26\n\nStandup notes below.\n"
                                                 + NOTE.split("\n", 1)[1] + long_line + "\n")
    report = consolidate(config_for(ws, **settings), add_everything, today=TODAY)
    assert report.added
    assert (ws / "MEMORY.md").read_text().count("The staging cluster") == 1


def test_a_second_sweep_of_the_day_adds_under_its_promoted_heading_not_under_a_later_one(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    first = {"decisions": [{"op": "add", "candidate": "C1"}, *({"op": "skip", "candidate": c} for c in ("C2", "C3"))]}
    consolidate(config_for(ws), scripted(first), today=TODAY)
    with (ws / "MEMORY.md").open("a") as memory:
        memory.write("\n## People\n\n- Erin joined the team as the new SRE.\n")
    report = consolidate(config_for(ws), add_everything, today=TODAY)
    assert report.added
    lines = (ws / "MEMORY.md").read_text().splitlines()
    promoted, people = lines.index("## Promoted 2026-11-27"), lines.index("## People")
    for source in report.added:
        at = next(i for i, line in enumerate(lines) if source in line)
        assert promoted < at < people, "\n".join(lines)
    assert lines[people:] == ["## People", "", "- Erin joined the team as the new SRE."]


def test_nulls_a_single_trigger_and_a_capitalised_op_are_read_not_turned_into_promoting_everything(
        tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    answer = {"decisions": [
        {"op": "Add", "candidate": "C1", "entry": None, "triggers": "deploy day", "importance": 8},
        {"op": "skip", "candidate": "C2", "entry": None, "triggers": None, "importance": None},
        {"op": "SKIP", "candidate": "C3", "entry": None, "triggers": [None], "importance": None}]}
    report = consolidate(config_for(ws), scripted(answer), today=TODAY)
    assert (report.mode, report.fallback_reason) == ("rewrite", None)
    assert report.added == ["memory/2026-11-26.md#L3-L3"]
    text = (ws / "MEMORY.md").read_text()
    assert "<!-- trigger: deploy day --> <!-- importance: 8 -->" in text
    assert "PostgreSQL" not in text and "Carol" not in text


def test_dreams_md_is_stamped_in_the_configured_time_zone_as_memory_md_is(tmp_path: Path) -> None:
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset is POSIX-only")
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        ws = make_workspace(tmp_path)
        config = config_for(ws).model_copy(update={"timezone": "Pacific/Kiritimati"})  # UTC+14: another hour
        zone = ZoneInfo("Pacific/Kiritimati")
        before = datetime.now(zone).strftime("%Y-%m-%d %H")
        consolidate(config, scripted({"decisions": [{"op": "add", "candidate": "C1"}]}), today=TODAY)
        undo(config)
        after = datetime.now(zone).strftime("%Y-%m-%d %H")
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()
    stamps = re.findall(r"^## (?:Deep Sleep|Undone) (\d{4}-\d\d-\d\d \d\d):\d\d$", (ws / "DREAMS.md").read_text(), re.M)
    assert len(stamps) == 2 and all(stamp in (before, after) for stamp in stamps), stamps


def _merged(tmp_path: Path) -> Path:
    """MEMORY.md with yesterday's PostgreSQL note merged under the owner's SQLite entry."""
    ws = make_workspace(tmp_path)
    merge = {"decisions": [{"op": "merge", "candidate": "C2", "entry": "E1"},
                           *({"op": "skip", "candidate": c} for c in ("C1", "C3"))]}
    consolidate(config_for(ws), scripted(merge), today=TODAY)
    assert "  - The index also supports PostgreSQL" in (ws / "MEMORY.md").read_text()
    return ws


def test_forgetting_a_merged_note_by_its_source_keeps_the_owner_entry_it_was_merged_under(tmp_path: Path) -> None:
    ws = _merged(tmp_path)
    assert forget(config_for(ws), "memory/2026-11-26.md#L4-L4") == 1
    text = (ws / "MEMORY.md").read_text()
    assert text == MEMORY, text


def test_forgetting_a_merged_note_as_a_search_cites_it_in_memory_md_removes_it(tmp_path: Path) -> None:
    ws = _merged(tmp_path)
    at = (ws / "MEMORY.md").read_text().split("\n").index(
        next(line for line in (ws / "MEMORY.md").read_text().split("\n") if "PostgreSQL" in line)) + 1
    assert forget(config_for(ws), f"MEMORY.md#L{at}") == 1
    assert (ws / "MEMORY.md").read_text() == MEMORY


def test_a_bare_json_array_of_decisions_is_read_not_turned_into_promoting_everything(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    answer = json.dumps([{"op": "add", "candidate": "C3", "importance": 7},
                         {"op": "skip", "candidate": "C1"}, {"op": "skip", "candidate": "C2"}])
    report = consolidate(config_for(ws), scripted(f"```json\n{answer}\n```"), today=TODAY)
    assert (report.mode, report.added) == ("rewrite", ["memory/2026-11-26.md#L6-L6"])
    text = (ws / "MEMORY.md").read_text()
    assert "Carol" in text and "Fridays" not in text and "PostgreSQL" not in text
