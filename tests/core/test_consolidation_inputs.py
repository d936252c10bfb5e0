"""Consolidation over the files users really have: a MEMORY.md saved with a byte-order mark or in a
legacy encoding, daily notes with code fences, notes the agent wrote, models that think aloud.
Real files, scripted models (plain ``str -> str`` functions answering as a model would)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from openclaw_memory.consolidation import aconsolidate, consolidate, undo
from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.files.append import append_memory
from openclaw_memory.text.provenance import origin_of

from tests.helpers.consolidation import MEMORY, NOTE, TODAY, config_for, scripted

NOTE_PATH = "memory/2026-11-26.md"
ADD_C1 = {"decisions": [{"op": "add", "candidate": "C1", "triggers": ["deploy day"], "importance": 8}]}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (workspace / NOTE_PATH).write_text(NOTE, encoding="utf-8")
    return workspace


def test_a_memory_md_saved_with_a_byte_order_mark_is_consolidated_and_keeps_the_mark(ws: Path) -> None:
    before = b"\xef\xbb\xbf" + MEMORY.encode()  # as Notepad saves "UTF-8 with BOM"
    (ws / "MEMORY.md").write_bytes(before)
    report = consolidate(config_for(ws), scripted(ADD_C1), today=TODAY)
    assert report.applied and report.skipped_reason is None
    after = (ws / "MEMORY.md").read_bytes()
    assert after.startswith(before) and b"Fridays only" in after
    undo(config_for(ws))
    assert (ws / "MEMORY.md").read_bytes() == before


def test_a_memory_md_with_bytes_that_are_not_utf8_is_consolidated_and_keeps_those_bytes(ws: Path) -> None:
    before = MEMORY.encode() + b"- Caf\xe9 Lumen closes at five.\n"  # a line saved as Latin-1
    (ws / "MEMORY.md").write_bytes(before)
    model = scripted({"decisions": [{"op": "supersede", "candidate": "C1", "entry": "E2", "importance": 8}]})
    report = consolidate(config_for(ws), model, today=TODAY)
    assert report.applied and report.skipped_reason is None
    after = (ws / "MEMORY.md").read_bytes()
    assert b"- Caf\xe9 Lumen closes at five.\n" in after and b"Deploys happen on Tuesdays" not in after
    model.prompts[0].encode("utf-8")  # what goes to a model's API is valid text
    report.diff.encode("utf-8")
    assert "Deep Sleep" in (ws / "DREAMS.md").read_text(encoding="utf-8")
    undo(config_for(ws))
    assert (ws / "MEMORY.md").read_bytes() == before


def test_a_code_fence_showing_a_record_marker_hides_no_line_after_it(ws: Path) -> None:
    (ws / NOTE_PATH).write_text(
        "# 2026-11-26\n\nHow the vector store marks a node in the notes:\n\n"
        '```markdown\n<!-- openclaw-memory:node {"id": "n1"} -->\n```\n\n'
        "- Deploys now happen on Fridays only, after the freeze.\n"
        "- Carol prefers answers in French when she writes in French.\n", encoding="utf-8")
    model = scripted({"decisions": []})
    report = consolidate(config_for(ws), model, today=TODAY, apply=False)
    texts = [candidate.text for candidate in report.candidates]
    assert "- Deploys now happen on Fridays only, after the freeze." in texts
    assert "- Carol prefers answers in French when she writes in French." in texts


def test_a_promoted_note_the_agent_wrote_keeps_its_origin(ws: Path) -> None:
    (ws / NOTE_PATH).write_text("# 2026-11-26\n\n", encoding="utf-8")
    append_memory(ws, NOTE_PATH, "- The staging database moved to db-02 last week.", origin="agent")  # the flush
    consolidate(config_for(ws), scripted(ADD_C1), today=TODAY)
    promoted = [line for line in (ws / "MEMORY.md").read_text().split("\n") if "db-02" in line]
    assert len(promoted) == 1 and "Source: memory/2026-11-26.md#L3-L3" in promoted[0]
    assert origin_of(promoted[0]) == "agent"


def test_a_hand_written_note_is_promoted_without_an_origin_marker(ws: Path) -> None:
    consolidate(config_for(ws), scripted(ADD_C1), today=TODAY)
    promoted = [line for line in (ws / "MEMORY.md").read_text().split("\n") if "Fridays only" in line]
    assert len(promoted) == 1 and "origin:" not in promoted[0]


def test_the_decisions_after_a_thinking_models_reasoning_are_the_ones_applied(ws: Path) -> None:
    answer = ('<think>The shape is {"decisions": [...]}. C1 is durable; C2 and C3 are not worth keeping.</think>\n'
              '{"decisions": [{"op": "add", "candidate": "C1", "importance": 8}, '
              '{"op": "skip", "candidate": "C2"}, {"op": "skip", "candidate": "C3"}]}')
    report = consolidate(config_for(ws), scripted(answer), today=TODAY)
    assert report.mode == "rewrite" and report.fallback_reason is None
    text = (ws / "MEMORY.md").read_text()
    assert "Fridays only" in text and "PostgreSQL" not in text and "Carol" not in text


def test_a_memory_md_with_windows_line_endings_keeps_them_and_one_promoted_heading_a_day(ws: Path) -> None:
    (ws / "MEMORY.md").write_bytes(MEMORY.replace("\n", "\r\n").encode())
    consolidate(config_for(ws), scripted(ADD_C1), today=TODAY)
    merge = {"decisions": [{"op": "merge", "candidate": "C1", "entry": "E1"},
                           {"op": "add", "candidate": "C2"}]}
    consolidate(config_for(ws), scripted(merge), today=TODAY)
    after = (ws / "MEMORY.md").read_bytes()
    assert after.startswith(MEMORY.replace("\n", "\r\n").encode().split(b"\r\n- Deploys")[0])
    assert after.count(b"\n") == after.count(b"\r\n") and after.count(b"## Promoted 2026-11-27") == 1
    assert b"PostgreSQL" in after and b"Carol" in after


def test_notes_commented_out_over_several_lines_are_neither_promoted_nor_offered_as_entries(ws: Path) -> None:
    (ws / "MEMORY.md").write_text(MEMORY + "<!--\n- The old VPN password hint is blue cat.\n-->\n")
    (ws / NOTE_PATH).write_text("# 2026-11-26\n\n<!-- retracted, it was wrong:\n"
                                "- Deploys happen on Mondays from now on.\n-->\n"
                                "- Carol prefers answers in French when she writes in French.\n")
    model = scripted("garbage")  # append-only: every candidate is promoted
    consolidate(config_for(ws), model, today=TODAY)
    text = (ws / "MEMORY.md").read_text()
    assert "Carol prefers" in text and "Mondays" not in text and "retracted" not in text
    entries = model.prompts[0].split("## Current MEMORY.md entries")[1].split("## Candidates")[0]
    assert "<!--" not in entries and "VPN" not in entries
    assert text.startswith(MEMORY + "<!--\n- The old VPN password hint is blue cat.\n-->\n")


def test_a_very_long_line_is_shown_to_the_model_as_it_would_be_written_not_whole(ws: Path) -> None:
    log_line = "- Pasted build log: " + " ".join(f"step-{i} ok" for i in range(40_000))  # ~400 KB on one line
    (ws / "MEMORY.md").write_text(MEMORY + "- Notes on the release: " + "checked " * 1_500 + "\n")
    (ws / NOTE_PATH).write_text(NOTE + log_line + "\n")
    model = scripted({"decisions": [{"op": "add", "candidate": "C4"}]})
    consolidate(config_for(ws, max_entry_chars=300), model, today=TODAY)
    assert len(model.prompts[0]) < 6_000  # a model with a small context still sees the instructions and ids
    assert "step-0 ok" in model.prompts[0] and "Carol prefers" in model.prompts[0]
    promoted = [line for line in (ws / "MEMORY.md").read_text().split("\n") if "Pasted build log" in line]
    assert len(promoted) == 1 and len(promoted[0]) < 400


def test_aconsolidate_with_a_plain_function_applies_its_decisions(ws: Path) -> None:
    report = asyncio.run(aconsolidate(config_for(ws), scripted(ADD_C1), today=TODAY))
    assert report.mode == "rewrite" and report.fallback_reason is None
    text = (ws / "MEMORY.md").read_text()
    assert "Fridays only" in text and "Carol" not in text  # not every candidate appended


def test_consolidate_with_an_async_function_applies_its_decisions(ws: Path) -> None:
    model = scripted(ADD_C1)

    async def complete(prompt: str) -> str:
        return model(prompt)

    report = consolidate(config_for(ws), complete, today=TODAY)
    assert report.mode == "rewrite" and "Fridays only" in (ws / "MEMORY.md").read_text()


def test_a_chat_models_invoke_passed_as_the_completion_gets_an_error_naming_the_adapter(ws: Path) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    model = FakeListChatModel(responses=[json.dumps(ADD_C1)])
    with pytest.raises(MemoryArgumentError, match="langchain_openclaw_memory.consolidate"):
        consolidate(config_for(ws), model.invoke, today=TODAY)  # returns an AIMessage, not the answer's text
    assert (ws / "MEMORY.md").read_text() == MEMORY


def test_an_importance_given_as_a_quoted_number_is_read(ws: Path) -> None:
    answer = {"decisions": [{"op": "add", "candidate": "C1", "importance": "8"}, {"op": "skip", "candidate": "C2"},
                            {"op": "skip", "candidate": "C3"}]}
    report = consolidate(config_for(ws), scripted(answer), today=TODAY)
    assert report.mode == "rewrite" and report.fallback_reason is None
    text = (ws / "MEMORY.md").read_text()
    assert "Fridays only" in text and "<!-- importance: 8 -->" in text and "Carol" not in text


def test_an_infinite_importance_makes_the_answer_invalid_not_the_sweep_fail(ws: Path) -> None:
    answer = '{"decisions": [{"op": "add", "candidate": "C1", "importance": Infinity}]}'  # Python's json reads it
    report = consolidate(config_for(ws), scripted(answer), today=TODAY)
    assert report.mode == "append-only" and "importance" in (report.fallback_reason or "")


def test_ids_a_model_writes_as_bare_numbers_or_in_lower_case_are_read(ws: Path) -> None:
    answer = {"decisions": [{"op": "supersede", "candidate": "c1", "entry": 2, "importance": 8},
                            {"op": "skip", "candidate": 2}, {"op": "skip", "candidate": " C3 "}]}
    report = consolidate(config_for(ws), scripted(answer), today=TODAY)
    assert report.mode == "rewrite" and report.fallback_reason is None
    text = (ws / "MEMORY.md").read_text()
    assert "Fridays only" in text and "Tuesdays" not in text and "Carol" not in text
