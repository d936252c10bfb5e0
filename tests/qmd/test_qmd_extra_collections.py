"""``memorySearch.qmd.extraCollections`` (spec §9.2): more folders QMD indexes as collections of their
own, named and deduplicated as the original does, searched with the other collections."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.backends.qmd import plan_collections
from openclaw_memory.config import MemoryConfig


def test_extra_collections_are_named_and_deduplicated_as_the_original(memory_ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "team-notes"
    cfg = MemoryConfig(workspace=memory_ws, agent_id="Ops.Bot", qmd={"extra_collections": [
        {"path": str(outside), "name": "Team"},             # outside the workspace: its name, verbatim (slugged)
        {"path": "docs", "name": "docs"},                     # inside: <name>-<agent>
        {"path": "wiki"},                                      # no name: custom-<N>-<agent>
        {"path": str(memory_ws / "docs")},                    # the same folder and pattern again: dropped
        {"path": str(memory_ws / "docs"), "pattern": "*.txt"},  # same folder, another pattern: its own
    ]})
    got = [(c.name, c.root, c.pattern) for c in plan_collections(cfg)]
    ws = memory_ws.resolve()
    assert got == [
        ("memory-root-ops-bot", ws, "MEMORY.md"),
        ("memory-dir-ops-bot", ws / "memory", "**/*.md"),
        ("team", outside, "**/*.md"),
        ("docs-ops-bot", ws / "docs", "**/*.md"),
        ("custom-3-ops-bot", ws / "wiki", "**/*.md"),
        ("custom-5-ops-bot", ws / "docs", "*.txt"),
    ]


def test_extra_collections_are_read_from_memory_search_qmd_in_openclaw_json(tmp_path: Path) -> None:
    cfg_file = tmp_path / "openclaw.json"
    cfg_file.write_text(json.dumps({
        "agents": {"defaults": {"workspace": str(tmp_path / "ws"),
                                "memorySearch": {"qmd": {"extraCollections": [{"path": "/srv/a", "name": "a"}]}}},
                   "list": [{"id": "main", "memorySearch": {"qmd": {"extraCollections": [
                       {"path": "/srv/b", "pattern": "*.md"}]}}}]},
        "memory": {"backend": "qmd", "qmd": {"searchMode": "search"}},
    }))
    qmd = MemoryConfig.from_openclaw_file(cfg_file).qmd
    assert qmd.search_mode == "search"  # memory.qmd is kept
    assert [(c.path, c.name, c.pattern) for c in qmd.extra_collections] == [
        ("/srv/a", "a", "**/*.md"), ("/srv/b", None, "*.md")]


def test_other_memory_search_qmd_settings_are_reported_as_ignored(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    cfg_file = tmp_path / "openclaw.json"
    cfg_file.write_text(json.dumps({
        "agents": {"defaults": {"workspace": str(tmp_path / "ws"),
                                "memorySearch": {"qmd": {"searchMode": "query", "extraCollections": [{"path": "a"}]}}}},
        "memory": {"backend": "qmd"},
    }))
    with caplog.at_level("WARNING", logger="openclaw_memory.config"):
        qmd = MemoryConfig.from_openclaw_file(cfg_file).qmd
    assert qmd.search_mode == "search"  # not taken from memorySearch.qmd: OpenClaw reads it from memory.qmd
    assert [c.path for c in qmd.extra_collections] == ["a"]
    assert any("memorySearch.qmd.searchMode ignored" in r.getMessage() and "memory.qmd" in r.getMessage()
               for r in caplog.records)


@pytest.mark.slow  # real QMD (node)
def test_extra_collections_are_searched_with_the_others_and_reported_by_collection(
    qmd_index: Callable[..., MemoryIndex], memory_ws: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "team-notes"
    outside.mkdir()
    (outside / "pager.md").write_text("# Pager\n\nThe pager rotation starts on Mondays.\n")
    (memory_ws / "docs").mkdir()
    (memory_ws / "docs" / "hangar.md").write_text("# Hangar\n\nThe zeppelin hangar is in Friedrichshafen.\n")
    mem = qmd_index(extraCollections=[{"path": str(outside), "name": "team"},
                                      {"path": "docs", "name": "docs"}, {"path": str(memory_ws / "docs")}])

    assert [h.path for h in mem.search("pager rotation").hits] == ["qmd/team/pager.md"]  # outside: by collection
    assert [h.path for h in mem.search("zeppelin hangar").hits] == ["docs/hangar.md"]  # inside: workspace path
    assert [h.path for h in mem.search("pgbouncer").hits] == ["memory/2026-01-02.md"]  # the default ones too
    assert mem.get("docs/hangar.md").text.startswith("# Hangar")
    assert mem.get("qmd/team/pager.md").text.startswith("# Pager")
    names = [c["name"] for c in mem.status().backend_info["collections"]]
    assert names == ["memory-root-main", "memory-dir-main", "team", "docs-main"]  # the duplicate is dropped
