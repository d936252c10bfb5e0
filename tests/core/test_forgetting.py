"""Forgetting: several memories at once, as an agent's parallel tool calls do (LangGraph's ToolNode
runs them in threads), and a promoted entry named by its text; each is removed from MEMORY.md and
never promoted again."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory.consolidation import consolidate, forget
from openclaw_memory.text.citations import format_citation

from tests.helpers.consolidation import TODAY, config_for, scripted
from tests.helpers.threads import errors_in_threads

ITEMS = [f"The retired service number {i} ran on host {i}." for i in range(12)]


def _forget_all_at_once(config: object) -> list[BaseException]:
    return errors_in_threads(lambda text: forget(config, text), ITEMS, together=True)  # type: ignore[arg-type]


def test_parallel_forgets_each_remove_their_entry_and_are_all_remembered(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n" + "".join(f"- {text}\n" for text in ITEMS) + "- Kept.\n")
    (ws / "memory" / "2026-11-26.md").write_text("".join(f"- {text}\n" for text in ITEMS))
    config = config_for(ws)
    assert _forget_all_at_once(config) == []
    assert (ws / "MEMORY.md").read_text() == "# Memory\n\n- Kept.\n"
    report = consolidate(config, scripted("garbage"), today=TODAY)  # append-only would take every candidate
    assert report.counts.forgotten == len(ITEMS) and "retired" not in (ws / "MEMORY.md").read_text()


def test_forgetting_a_cut_promoted_entry_by_its_text_keeps_its_long_note_out_for_good(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n")
    long_note = "- The migration plan for the billing service: " + "then move one more table, " * 40 + "done."
    (ws / "memory" / "2026-11-26.md").write_text(long_note + "\n")
    config = config_for(ws)
    consolidate(config, scripted({"decisions": [{"op": "add", "candidate": "C1"}]}), today=TODAY)
    entry = next(line for line in (ws / "MEMORY.md").read_text().split("\n") if "billing" in line)
    assert "…" in entry  # cut to max_entry_chars
    shown = entry.split(" — Source:")[0]  # the entry's text as a search shows it to the agent
    assert forget(config, shown) == 1
    report = consolidate(config, scripted("garbage"), today=TODAY)  # append-only would take every candidate
    assert "billing" not in (ws / "MEMORY.md").read_text() and report.counts.forgotten == 1


def test_a_one_line_citation_as_a_search_shows_it_forgets_that_line(tmp_path: Path) -> None:
    # memory_forget_entry takes "the path#Lx-Ly a search cited"; a search cites a one-line hit as path#L2
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n")
    (ws / "memory" / "2026-11-26.md").write_text("- Deploys happen on Fridays.\n- The office cat is called Miso.\n")
    config = config_for(ws)
    consolidate(config, scripted({"decisions": [{"op": "add", "candidate": "C1"}, {"op": "add", "candidate": "C2"}]}),
                today=TODAY)
    assert "Miso" in (ws / "MEMORY.md").read_text()
    assert forget(config, format_citation("memory/2026-11-26.md", 2, 2)) == 1
    assert "Miso" not in (ws / "MEMORY.md").read_text() and "Fridays" in (ws / "MEMORY.md").read_text()
    consolidate(config, scripted("garbage"), today=TODAY)  # append-only would take every candidate
    assert "Miso" not in (ws / "MEMORY.md").read_text()
