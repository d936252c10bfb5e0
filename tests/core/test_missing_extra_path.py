"""A configured extra path that is missing at sync time (a drive not mounted, a folder moved, a typo). Its indexed
files used to be removed from the index without a word; they are now kept (searchable) until it is back, and the
sync says so in its report and the log. Removing the path from the configuration drops them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from tests.helpers.workspaces import plain_index, write_files


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Memory\n\n- The ferry leaves at 08:30.\n")
    return root


@pytest.fixture
def team(tmp_path: Path) -> Path:
    return write_files(tmp_path / "team-docs", {"it/vpn.md": "The VPN password rotates monthly.\n",
                                                 "onboarding.md": "New hires get a laptop on day one.\n"})


def _index(ws: Path, extra: list[str], **settings: object) -> MemoryIndex:
    return plain_index(ws, ws.parent / "state", extra_paths=extra, **settings)


@pytest.mark.parametrize("sources", [["memory"], ["memory", "sessions"]])
def test_files_of_a_missing_extra_path_are_kept_and_the_sync_says_so(ws: Path, team: Path, caplog,
                                                                     sources: list[str]) -> None:
    with _index(ws, [str(team)], sources=sources) as memory:
        memory.sync()
        team.rename(team.with_name("unmounted"))
        with caplog.at_level(logging.WARNING, logger="openclaw_memory"):
            report = memory.sync()
        assert report.files_deleted == 0
        assert [w for w in report.warnings if str(team) in w and "2 file(s)" in w and "extra path is missing" in w]
        assert str(team) in caplog.text
        assert memory.search("VPN password", min_score=0).hits[0].path == "../team-docs/it/vpn.md"
        assert memory.changed_files() == []  # not a change: searches do not sync again and again for it
        team.with_name("unmounted").rename(team)
        report = memory.sync()
        assert report.files_deleted == 0 and report.warnings == []
        (team / "onboarding.md").unlink()  # a file removed from a folder that is there is removed from the index
        assert memory.sync().files_deleted == 1


def test_an_extra_path_that_never_existed_is_named(ws: Path, tmp_path: Path) -> None:
    with _index(ws, [str(tmp_path / "team-dcos")]) as memory:
        report = memory.sync()
        assert any("team-dcos" in w and "nothing is indexed from it" in w for w in report.warnings), report.warnings


def test_removing_the_path_from_the_configuration_drops_its_files(ws: Path, team: Path) -> None:
    with _index(ws, [str(team)]) as memory:
        memory.sync()
    team.rename(team.with_name("unmounted"))
    with _index(ws, []) as memory:
        memory.sync()
        assert set(memory.indexed_files()) == {"MEMORY.md"}


def test_an_extra_path_inside_memory_that_is_deleted_is_deleted(ws: Path) -> None:
    """memory/ itself is walked, so the folder is seen gone: nothing is kept for it."""
    (ws / "memory" / "projects").mkdir()
    (ws / "memory" / "projects" / "plan.md").write_text("The plan.\n")
    with _index(ws, ["memory/projects"]) as memory:
        memory.sync()
        (ws / "memory" / "projects" / "plan.md").unlink()
        (ws / "memory" / "projects").rmdir()
        report = memory.sync()
        assert report.files_deleted == 1 and report.warnings == []


def test_memory_get_of_a_kept_file_says_it_is_missing_not_forbidden(ws: Path, team: Path) -> None:
    from openclaw_memory.agent.tools import memory_get

    with _index(ws, [str(team)]) as memory:
        memory.sync()
        team.rename(team.with_name("unmounted"))
        memory.sync()
        hit = memory.search("VPN password", min_score=0).hits[0]
        got = memory_get(memory, hit.citation)
        assert got.get("error") is None and got["exists"] is False and got["text"] == "", got
        team.with_name("unmounted").rename(team)
        assert "rotates monthly" in memory_get(memory, hit.citation)["text"]


def test_status_says_the_files_are_kept(ws: Path, team: Path) -> None:
    with _index(ws, [str(team)]) as memory:
        memory.sync()
        team.rename(team.with_name("unmounted"))
        memory.sync()
        assert [issue for issue in memory.status().issues
                if issue.startswith(f"additional memory path missing ({team})") and "kept" in issue]
