"""Consolidation ("dreaming"): real files, a real SQLite index for the recall signals, scripted
models (plain ``str -> str`` functions returning the decisions a model would)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from datetime import date
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.config import MemoryConfig
from openclaw_memory.consolidation import aconsolidate, consolidate, undo
from openclaw_memory.errors import OpenClawMemoryError
from tests.helpers.consolidation import TODAY, MEMORY, NOTE, scripted, config_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (workspace / "memory" / "2026-11-26.md").write_text(NOTE, encoding="utf-8")
    (workspace / "memory" / "2026-10-01.md").write_text("- An old note outside the lookback window.\n")
    return workspace


def test_the_model_sees_grounded_deduplicated_candidates_only(ws: Path) -> None:
    (ws / "memory" / "2026-11-25.md").write_text("- Deploys now happen on Fridays only, after the freeze.\n"
                                                 "- The project uses SQLite for the index.\n")
    model = scripted({"decisions": []})
    report = consolidate(config_for(ws), model, apply=False, today=TODAY)
    prompt = model.prompts[0]
    # newest note first: the repeated line is grounded in the 26th; the line already in MEMORY.md and
    # the two-word line are not candidates; the note outside the lookback window is not read
    assert "C1 (memory/2026-11-26.md#L3-L3): - Deploys now happen on Fridays only" in prompt
    assert "memory/2026-11-25.md" not in prompt
    assert "lunch" not in prompt.split("## Candidates")[1]
    assert "old note" not in prompt
    assert "E2: - Deploys happen on Tuesdays." in prompt
    assert [c.source for c in report.candidates] == [
        "memory/2026-11-26.md#L3-L3", "memory/2026-11-26.md#L4-L4", "memory/2026-11-26.md#L6-L6"]
    assert report.counts.already_in_memory == 1


def test_add_promotes_a_bounded_sourced_entry_and_keeps_every_prior_byte(ws: Path) -> None:
    model = scripted({"decisions": [
        {"op": "add", "candidate": "C3", "triggers": ["carol", "french", "language", "replies", "x"],
         "importance": 42},
        {"op": "skip", "candidate": "C1"}]})
    report = consolidate(config_for(ws), model, today=TODAY)
    text = (ws / "MEMORY.md").read_text()
    assert report.applied and report.mode == "rewrite" and report.added == ["memory/2026-11-26.md#L6-L6"]
    assert text.startswith(MEMORY)
    entry = text.splitlines()[-1]
    assert entry == ("- Carol prefers answers in French when she writes in French. — Source: "
                     "memory/2026-11-26.md#L6-L6 <!-- trigger: carol, french, language --> <!-- importance: 10 -->")
    assert "## Promoted 2026-11-27" in text and "Fridays" not in text
    dreams = (ws / "DREAMS.md").read_text()
    assert "rewrite: added 1, merged 0, superseded 0" in dreams and "+ Carol prefers" in dreams
    assert report.preimage is not None and json.loads(report.preimage.read_text())["before"] == MEMORY


def test_a_long_candidate_is_cut_to_the_entry_bound(ws: Path) -> None:
    long_line = "- The migration plan: " + "step " * 400 + "\n"
    (ws / "memory" / "2026-11-27.md").write_text(long_line)
    consolidate(config_for(ws, max_entry_chars=120), scripted({"decisions": [{"op": "add", "candidate": "C1"}]}),
                today=TODAY)
    entry = (ws / "MEMORY.md").read_text().splitlines()[-1]
    text_part = entry.split(" — Source: ")[0]
    assert len(text_part) <= len("- ") + 120 and text_part.endswith("…")
    assert "Source: memory/2026-11-27.md#L1-L1" in entry


def test_merge_adds_the_candidate_under_the_existing_entry(ws: Path) -> None:
    model = scripted({"decisions": [{"op": "merge", "candidate": "C2", "entry": "E1", "importance": 6}]})
    report = consolidate(config_for(ws), model, today=TODAY)
    lines = (ws / "MEMORY.md").read_text().splitlines()
    at = lines.index("- The project uses SQLite for the index.")
    assert lines[at + 1].startswith("  - The index also supports PostgreSQL with pgvector since this week. — "
                                    "Source: memory/2026-11-26.md#L4-L4")
    assert report.merged == ["memory/2026-11-26.md#L4-L4"]
    assert all(line in lines for line in MEMORY.splitlines())


def test_supersede_replaces_the_outdated_entry_in_place(ws: Path) -> None:
    model = scripted({"decisions": [{"op": "supersede", "candidate": "C1", "entry": "E2",
                                     "triggers": ["deploy day"], "importance": 8}]})
    report = consolidate(config_for(ws), model, today=TODAY)
    lines = (ws / "MEMORY.md").read_text().splitlines()
    assert "- Deploys happen on Tuesdays." not in lines
    assert lines[3] == ("- Deploys now happen on Fridays only, after the freeze. — Source: memory/2026-11-26.md#L3-L3 "
                        "<!-- trigger: deploy day --> <!-- importance: 8 -->")
    assert report.superseded == ["memory/2026-11-26.md#L3-L3"]
    assert "- Deploys happen on Tuesdays." in (ws / "DREAMS.md").read_text()
    # the other entries are untouched
    for kept in ("- The project uses SQLite for the index.", "- The team lead is Dana.", "- Backups run nightly at 02:00."):
        assert kept in lines


@pytest.mark.parametrize("answer", [
    "Sure! I added the deploy change to your memory.",
    '{"decisions": [{"op": "rewrite_everything", "candidate": "C1"}]}',
    '{"decisions": [{"op": "supersede", "candidate": "C1", "entry": "E99"}]}',
    '{"decisions": [{"op": "add", "candidate": "C7"}]}',
    '{"decisions": [{"op": "add", "candidate": "C1"}, {"op": "add", "candidate": "C1"}]}',
    "```json\n{\"decisions\": [{\"op\": \"add\", \"candidate\": \"C1\", \"importance\": \"high\"}]}\n```",
])
def test_garbage_from_the_model_falls_back_to_append_only_and_loses_nothing(ws: Path, answer: str) -> None:
    report = consolidate(config_for(ws), scripted(answer), today=TODAY)
    text = (ws / "MEMORY.md").read_text()
    assert report.mode == "append-only" and report.fallback_reason
    assert text.startswith(MEMORY)
    for source in ("memory/2026-11-26.md#L3-L3", "memory/2026-11-26.md#L4-L4", "memory/2026-11-26.md#L6-L6"):
        assert f"Source: {source}" in text
    assert "fallback:" in (ws / "DREAMS.md").read_text()


def test_a_failing_model_falls_back_to_append_only(ws: Path) -> None:
    def down(prompt: str) -> str:
        raise ConnectionError("endpoint unreachable")

    report = consolidate(config_for(ws), down, today=TODAY)
    assert report.mode == "append-only" and "endpoint unreachable" in str(report.fallback_reason)
    assert (ws / "MEMORY.md").read_text().startswith(MEMORY)


def test_the_loss_limit_refuses_a_rewrite_that_drops_too_many_entries(ws: Path) -> None:
    model = scripted({"decisions": [{"op": "supersede", "candidate": "C1", "entry": "E1"},
                                    {"op": "supersede", "candidate": "C2", "entry": "E2"}]})
    report = consolidate(config_for(ws, max_prior_entry_loss_fraction=0.25), model, today=TODAY)
    text = (ws / "MEMORY.md").read_text()
    assert report.mode == "append-only" and "max_prior_entry_loss_fraction" in str(report.fallback_reason)
    assert text.startswith(MEMORY)  # every prior entry kept
    assert "Source: memory/2026-11-26.md#L3-L3" in text and "Source: memory/2026-11-26.md#L4-L4" in text
    assert "#L6-L6" not in text  # the model did not choose it


def test_the_budget_keeps_memory_md_within_its_size(ws: Path) -> None:
    budget = len(MEMORY) + 200
    model = scripted({"decisions": [{"op": "add", "candidate": c} for c in ("C1", "C2", "C3")]})
    report = consolidate(config_for(ws, max_memory_chars=budget), model, today=TODAY)
    text = (ws / "MEMORY.md").read_text()
    assert len(text) <= budget and text.startswith(MEMORY)
    assert report.mode == "append-only" and "max_memory_chars" in str(report.fallback_reason)
    assert len(report.added) == 1 and len(report.deferred) == 2
    # the deferred candidates are still candidates next time
    again = consolidate(config_for(ws), scripted({"decisions": []}), apply=False, today=TODAY)
    assert {c.source for c in again.candidates} == set(report.deferred)


def test_dry_run_writes_nothing_and_shows_the_diff(ws: Path) -> None:
    model = scripted({"decisions": [{"op": "supersede", "candidate": "C1", "entry": "E2"}]})
    report = consolidate(config_for(ws), model, apply=False, today=TODAY)
    assert not report.applied
    assert (ws / "MEMORY.md").read_text() == MEMORY and not (ws / "DREAMS.md").exists()
    assert "-- Deploys happen on Tuesdays." in report.diff
    assert "+- Deploys now happen on Fridays only" in report.diff


def test_undo_restores_the_preimage_and_refuses_to_drop_later_edits(ws: Path) -> None:
    config = config_for(ws)
    consolidate(config, scripted({"decisions": [{"op": "supersede", "candidate": "C1", "entry": "E2"}]}), today=TODAY)
    assert (ws / "MEMORY.md").read_text() != MEMORY
    undo(config)
    assert (ws / "MEMORY.md").read_text() == MEMORY
    assert "## Undone" in (ws / "DREAMS.md").read_text()
    with pytest.raises(OpenClawMemoryError, match="nothing to undo"):
        undo(config)
    consolidate(config, scripted({"decisions": [{"op": "add", "candidate": "C2"}]}), today=TODAY)
    with (ws / "MEMORY.md").open("a") as handle:
        handle.write("- Edited by hand after the sweep.\n")
    with pytest.raises(OpenClawMemoryError, match="changed after the last consolidation"):
        undo(config)
    assert "Edited by hand" in (ws / "MEMORY.md").read_text()
    undo(config, force=True)
    assert (ws / "MEMORY.md").read_text() == MEMORY


def test_a_hand_edit_during_the_sweep_is_kept_and_the_sweep_replans(ws: Path) -> None:
    seen: list[str] = []

    def model(prompt: str) -> str:
        seen.append(prompt)
        if len(seen) == 1:  # the user edits MEMORY.md while the model thinks
            with (ws / "MEMORY.md").open("a") as handle:
                handle.write("- Added by hand during the sweep.\n")
        return json.dumps({"decisions": [{"op": "supersede", "candidate": "C1", "entry": "E2"}]})

    report = consolidate(config_for(ws), model, today=TODAY)
    text = (ws / "MEMORY.md").read_text()
    assert len(seen) == 2 and "Added by hand during the sweep." in seen[1]
    assert report.applied and "- Added by hand during the sweep." in text
    assert "Source: memory/2026-11-26.md#L3-L3" in text


def test_edits_during_every_attempt_leave_memory_md_alone(ws: Path) -> None:
    def model(prompt: str) -> str:
        with (ws / "MEMORY.md").open("a") as handle:
            handle.write("- Another hand edit.\n")
        return json.dumps({"decisions": [{"op": "add", "candidate": "C1"}]})

    report = consolidate(config_for(ws), model, today=TODAY)
    assert not report.applied and "edited during the sweep" in str(report.skipped_reason)
    assert (ws / "MEMORY.md").read_text() == MEMORY + "- Another hand edit.\n" * 2
    assert not (ws / "DREAMS.md").exists()


def test_a_candidate_whose_note_changed_meanwhile_is_not_promoted(ws: Path) -> None:
    def model(prompt: str) -> str:
        note = ws / "memory" / "2026-11-26.md"
        note.write_text(note.read_text().replace("Fridays only", "Mondays"))
        return json.dumps({"decisions": [{"op": "add", "candidate": "C1"}, {"op": "add", "candidate": "C2"}]})

    report = consolidate(config_for(ws), model, today=TODAY)
    text = (ws / "MEMORY.md").read_text()
    assert "Fridays" not in text and "Mondays" not in text
    assert report.added == ["memory/2026-11-26.md#L4-L4"] and report.counts.stale == 1


def test_a_second_sweep_does_not_promote_the_same_line_again(ws: Path) -> None:
    config = config_for(ws)
    consolidate(config, scripted({"decisions": [{"op": "add", "candidate": "C1"}]}), today=TODAY)
    model = scripted({"decisions": []})
    report = consolidate(config, model, apply=False, today=TODAY)
    assert "Fridays" not in model.prompts[0].split("## Candidates")[1]
    assert report.counts.already_in_memory == 1


def test_the_gates_use_the_recall_signals_of_real_searches(ws: Path, tmp_path: Path) -> None:
    config = config_for(ws, min_recall_count=2, min_unique_queries=2)
    with MemoryIndex(config, store={"path": str(tmp_path / "index.sqlite")}, watch=False) as memory:
        memory.sync()
        for query in ("pgvector PostgreSQL", "which database extension pgvector", "pgvector PostgreSQL"):
            assert any(hit.path == "memory/2026-11-26.md" for hit in memory.search(query, min_score=0).hits)
        model = scripted({"decisions": []})
        report = consolidate(memory, model, apply=False, today=TODAY)
    # the note is one chunk, returned 3 times for 2 distinct queries; only the line holding the queries'
    # words counts as recalled, the other lines of the chunk stay below the gates
    assert [c.source for c in report.candidates] == ["memory/2026-11-26.md#L4-L4"]
    assert (report.candidates[0].stats.recall_count, report.candidates[0].stats.unique_queries) == (3, 2)
    assert report.counts.below_gates == 2
    strict = config_for(ws, min_recall_count=2, min_unique_queries=3)
    report = consolidate(strict, scripted({"decisions": []}), apply=False, today=TODAY)
    assert report.candidates == [] and report.counts.below_gates == 3


def test_without_recalls_the_default_gates_keep_everything_from_the_model(ws: Path) -> None:
    config = MemoryConfig(workspace=ws, state_dir=ws.parent / "state", provider="none")
    model = scripted({"decisions": [{"op": "add", "candidate": "C1"}]})
    report = consolidate(config, model, today=TODAY)
    assert model.prompts == [] and report.mode == "none" and report.counts.below_gates == 3
    assert (ws / "MEMORY.md").read_text() == MEMORY


def test_the_async_twin_applies_the_same_decisions(ws: Path) -> None:
    async def model(prompt: str) -> str:
        return json.dumps({"decisions": [{"op": "add", "candidate": "C2", "importance": 3}]})

    report = asyncio.run(aconsolidate(config_for(ws), model, today=TODAY))
    assert report.applied and "Source: memory/2026-11-26.md#L4-L4" in (ws / "MEMORY.md").read_text()


_KILLED_CHILD = textwrap.dedent("""
    import json, os, sys, time
    from datetime import date
    from openclaw_memory.config import MemoryConfig
    from openclaw_memory.consolidation import consolidate, sweep

    ws, state, marker, where = sys.argv[1:5]
    real_replace, real_append = os.replace, sweep.append_memory

    def hang(what):
        open(marker, "w").write(what)
        time.sleep(60)

    def replace(src, dst, **kwargs):
        if where == "replace" and str(dst).endswith("MEMORY.md"):
            hang("replace")
        return real_replace(src, dst, **kwargs)

    def append(*args, **kwargs):
        if where == "diary":
            hang("diary")
        return real_append(*args, **kwargs)

    os.replace = replace
    sweep.append_memory = append
    config = MemoryConfig(workspace=ws, state_dir=state, provider="none",
                          dreaming={"min_recall_count": 0, "min_unique_queries": 0})
    answer = json.dumps({"decisions": [{"op": "supersede", "candidate": "C1", "entry": "E2"},
                                       {"op": "add", "candidate": "C3"}]})
    consolidate(config, lambda prompt: answer, today=date(2026, 11, 27))
""")


def _sweep_killed_at(ws: Path, tmp_path: Path, where: str) -> None:
    """Run a sweep in a child process and kill -9 it at ``where`` (see :data:`_KILLED_CHILD`)."""
    marker = tmp_path / "marker"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "core"), str(ROOT)])}
    child = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, str(ws), str(ws.parent / "state"), str(marker),
                              where], env=env)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None, "the sweep ended before reaching the write"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()


@pytest.mark.parametrize("where", ["replace", "diary"])
def test_kill_9_mid_apply_leaves_memory_md_old_or_new_never_half(ws: Path, tmp_path: Path, where: str) -> None:
    _sweep_killed_at(ws, tmp_path, where)
    text = (ws / "MEMORY.md").read_text()
    if where == "replace":  # killed with the new text written to a temporary file, before the rename
        assert text == MEMORY
    else:  # killed after the rename, before the diary
        assert "- Deploys happen on Tuesdays." not in text
        assert text.endswith("Source: memory/2026-11-26.md#L6-L6 <!-- importance: 5 -->\n")
        assert re.search(r"^- Deploys now happen on Fridays only.*#L3-L3", text, re.M)
    # the next sweep still works, and undo (after the rename) restores the preimage
    if where == "diary":
        undo(config_for(ws))
        assert (ws / "MEMORY.md").read_text() == MEMORY


def test_recall_signals_keep_no_query_text_and_survive_a_removed_file(tmp_path: Path) -> None:
    from openclaw_memory.consolidation import RecallSignals

    signals = RecallSignals(tmp_path / "recalls.sqlite")
    signals.record("where is the API key for billing", [("memory/2026-11-26.md", 1, 8, 0.7)])
    signals.record("Where is the   API key for billing", [("memory/2026-11-26.md", 1, 8, 0.5)])  # the same query
    stats = signals.stats("memory/2026-11-26.md", 3, 3)
    assert (stats.recall_count, stats.unique_queries, stats.max_score) == (2, 1, 0.7)
    assert signals.stats("memory/2026-11-26.md", 9, 9).recall_count == 0
    assert b"billing" not in (tmp_path / "recalls.sqlite").read_bytes()
    (tmp_path / "recalls.sqlite").unlink()
    signals.record("a new query", [("memory/2026-11-26.md", 1, 8, 0.4)])
    assert signals.stats("memory/2026-11-26.md", 1, 1).recall_count == 1


def test_searches_drop_recall_signals_older_than_the_lookback_window(ws: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    import openclaw_memory.retrieval.recall_signals as recall_signals

    config = config_for(ws, lookback_days=3)
    signals_file = ws.parent / "state" / "dreaming" / config.agent_id / "recalls.sqlite"
    with MemoryIndex(config, store={"path": str(tmp_path / "a.sqlite")}, watch=False) as memory:
        memory.search("pgvector PostgreSQL", min_score=0)  # creates the signals file
        day = 86_400
        with sqlite3.connect(signals_file) as connection:  # signals recorded 10 and 2 days ago
            connection.executemany("INSERT INTO recalls VALUES (?, ?, ?, ?, ?, ?)", [
                ("memory/old.md", 1, 1, "a" * 32, 0.5, time.time() - 10 * day),
                ("memory/recent.md", 1, 1, "b" * 32, 0.5, time.time() - 2 * day)])
        monkeypatch.setattr(recall_signals, "PRUNE_INTERVAL", 0.0, raising=False)  # as after an hour
        memory.search("pgvector PostgreSQL", min_score=0)
    with sqlite3.connect(signals_file) as connection:
        paths = {row[0] for row in connection.execute("SELECT path FROM recalls")}
    assert "memory/old.md" not in paths and "memory/recent.md" in paths
    assert paths - {"memory/recent.md"}  # the searches' own signals stay


def test_searches_record_nothing_when_disabled_and_never_fail_for_the_signals(ws: Path, tmp_path: Path) -> None:
    off = config_for(ws, record_recalls=False)
    with MemoryIndex(off, store={"path": str(tmp_path / "a.sqlite")}, watch=False) as memory:
        assert memory.search("pgvector PostgreSQL", min_score=0).hits
    assert not (ws.parent / "state" / "dreaming").exists()
    (ws.parent / "state").mkdir()
    (ws.parent / "state" / "dreaming").write_text("not a directory")
    with MemoryIndex(config_for(ws), store={"path": str(tmp_path / "b.sqlite")}, watch=False) as memory:
        assert memory.search("pgvector PostgreSQL", min_score=0).hits  # the signals could not be written


def test_a_model_error_naming_a_key_leaves_no_secret_in_dreams_md(ws: Path) -> None:
    def leaky(prompt: str) -> str:
        raise PermissionError("401: Incorrect API key provided: sk-proj-abcdefghijklmnop1234567890")

    report = consolidate(config_for(ws), leaky, today=TODAY)
    assert "sk-proj" not in str(report.fallback_reason)
    assert "sk-proj" not in (ws / "DREAMS.md").read_text() and "[REDACTED]" in (ws / "DREAMS.md").read_text()


def test_undo_after_a_sweep_killed_before_its_write_undoes_the_last_sweep_that_wrote(ws: Path, tmp_path: Path) -> None:
    consolidate(config_for(ws), scripted({"decisions": [{"op": "add", "candidate": "C2"}]}), today=TODAY)
    assert "PostgreSQL" in (ws / "MEMORY.md").read_text()
    _sweep_killed_at(ws, tmp_path, "replace")
    assert "PostgreSQL" in (ws / "MEMORY.md").read_text()  # the killed sweep wrote nothing
    undo(config_for(ws))  # no edit since the first sweep: no force needed
    assert (ws / "MEMORY.md").read_text() == MEMORY
