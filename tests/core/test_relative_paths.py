"""Relative ``workspace`` / ``state_dir`` / ``sessions_dir`` / ``store.path`` are taken from the current directory
when the config is built: an index keeps working after the process changes directory (before, the next sync scanned
the new directory's ``ws`` and found nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryConfig, MemoryIndex


def test_an_index_opened_with_relative_paths_survives_a_change_of_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("The billing database is PostgreSQL.\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(tmp_path)
    with MemoryIndex(workspace="ws", state_dir="state", provider=None, watch=False) as memory:
        memory.sync()
        monkeypatch.chdir(elsewhere)
        (tmp_path / "ws" / "memory.md").write_text("The quokka plan is approved.\n")
        assert memory.sync().files_indexed == 1
        assert [hit.path for hit in memory.search("quokka").hits] == ["memory.md"]
        assert [hit.path for hit in memory.search("billing").hits] == ["MEMORY.md"]
        assert memory.transcript_path("s1").is_relative_to(tmp_path / "state")
    assert list(elsewhere.iterdir()) == []


def test_relative_paths_are_made_absolute_when_the_config_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = MemoryConfig(workspace="ws", state_dir="state", sessions_dir="sessions", store={"path": "i.sqlite"})
    assert (config.workspace, config.state_dir, config.sessions_dir) == \
        (tmp_path / "ws", tmp_path / "state", tmp_path / "sessions")
    assert config.store.path == str(tmp_path / "i.sqlite")
    assert MemoryConfig(store={"path": "~/x/{agent_id}.sqlite"}).store.path == "~/x/{agent_id}.sqlite"
