"""Odd arguments to ``MemoryIndex``: an empty workspace, a flag that is not a bool, a path given as the config."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import ConfigError, MemoryConfig, MemoryIndex


def test_an_empty_workspace_is_refused_not_the_current_folder(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # an unset environment variable must not index whatever folder we are in
    with pytest.raises(ConfigError, match="workspace: empty folder name"):
        MemoryIndex(workspace="", state_dir=str(tmp_path / "state"), provider=None, watch=False)
    with pytest.raises(ConfigError, match="sessions_dir|sessionsDir"):
        MemoryConfig(workspace=str(tmp_path), sessions_dir="  ")


def test_create_must_be_a_flag(tmp_path: Path) -> None:
    target = tmp_path / "new-agent"
    with pytest.raises(ConfigError, match="create must be True or False"):
        MemoryIndex(workspace=target, state_dir=str(tmp_path / "state"), provider=None, watch=False, create="no")
    assert not target.exists()  # "no" did not create it


def test_watch_must_be_a_flag_or_none(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="watch must be True, False or None"):
        MemoryIndex(workspace=tmp_path, state_dir=str(tmp_path / "state"), provider=None, watch="false")


def test_a_path_given_as_the_config_says_to_pass_workspace(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"workspace=") as caught:
        MemoryIndex(str(tmp_path), provider=None, watch=False)  # type: ignore[arg-type]
    assert str(tmp_path) in str(caught.value)
    with pytest.raises(ConfigError, match=r"workspace="):
        MemoryIndex(tmp_path, provider=None, watch=False)  # type: ignore[arg-type]


def test_a_folder_as_store_path_is_a_config_error_not_advice_to_delete_it(tmp_path: Path) -> None:
    folder = tmp_path / "indexes"
    (folder / "keep").mkdir(parents=True)
    with pytest.raises(ConfigError, match="store.path: .* is a folder; give the index file's path") as caught:
        MemoryIndex(workspace=tmp_path, state_dir=str(tmp_path / "state"), provider=None, watch=False,
                    store={"path": str(folder)})
    assert "delete" not in str(caught.value)
    assert (folder / "keep").is_dir()


@pytest.mark.parametrize("settings", [{"sync": {"interval_minutes": float("inf")}},
                                      {"provider_limits": {"request_timeout_seconds": float("inf")}},
                                      {"query": {"hybrid": {"vector_weight": float("nan")}}}])
def test_infinite_or_nan_settings_are_config_errors(tmp_path: Path, settings: dict[str, object]) -> None:
    # an infinite interval killed the interval timer's thread (OverflowError) and the timer never ran
    with pytest.raises(ConfigError, match="finite number"):
        MemoryIndex(workspace=tmp_path, state_dir=str(tmp_path / "state"), provider=None, watch=False, **settings)


def test_a_source_typo_or_a_force_that_is_no_flag_is_an_argument_error(tmp_path: Path) -> None:
    from openclaw_memory import MemoryArgumentError

    (tmp_path / "MEMORY.md").write_text("The billing database is PostgreSQL.\n")
    with MemoryIndex(workspace=tmp_path, state_dir=str(tmp_path / "state"), provider=None, watch=False) as memory:
        memory.sync()
        with pytest.raises(MemoryArgumentError, match="source must be 'memory' or 'sessions'"):
            memory.indexed_files("memories")  # listed nothing, as if the index were empty
        with pytest.raises(MemoryArgumentError, match="source must be"):
            list(memory.iter_chunks("mem"))
        with pytest.raises(MemoryArgumentError, match="force must be True or False"):
            memory.sync(force="no")  # a non-empty string forced a full rebuild
        assert memory.indexed_files("memory") == ["MEMORY.md"]
