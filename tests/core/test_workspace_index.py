"""One index per workspace by default, an index of another workspace refused, agent ids that cannot
name a path outside the state directory, and a workspace that must exist unless created."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from openclaw_memory import MemoryConfig, MemoryIndex
from openclaw_memory.errors import ConfigError


def _workspace(root: Path, name: str, note: str) -> Path:
    ws = root / name
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(f"# Memory\n\n{note}\n", encoding="utf-8")
    return ws


def _paths(hit_lists: list) -> list[str]:
    return [h.path for h in hit_lists]


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    return (_workspace(tmp_path, "notes", "The coffee order is an oat flat white."),
            _workspace(tmp_path, "clawd", "The launch codename is Bluebird."))


def test_two_workspaces_keep_their_own_index_by_default(two: tuple[Path, Path]) -> None:
    a_ws, b_ws = two
    with MemoryIndex(workspace=a_ws, provider=None, watch=False) as a, \
            MemoryIndex(workspace=b_ws, provider=None, watch=False) as b:
        a.sync()
        assert _paths(a.search("coffee order").hits) == ["MEMORY.md"]
        b.sync()
        assert a.search("launch codename").hits == []  # B's note is not in A's memory
        assert _paths(a.search("coffee order").hits) == ["MEMORY.md"]  # B's sync removed nothing of A's
        assert _paths(b.search("launch codename").hits) == ["MEMORY.md"]
        assert a.store.path != b.store.path
        assert a.config.agent_id == b.config.agent_id == "main"


def test_agents_of_one_workspace_keep_their_own_index(two: tuple[Path, Path]) -> None:
    a_ws, _ = two
    main = MemoryConfig(workspace=a_ws).resolved_store_path()
    ops = MemoryConfig(workspace=a_ws, agent_id="ops").resolved_store_path()
    assert main != ops and main.parent == ops.parent


def test_an_index_of_another_workspace_is_refused_and_left_as_it_was(two: tuple[Path, Path], tmp_path: Path) -> None:
    a_ws, b_ws = two
    store = {"path": str(tmp_path / "shared.sqlite")}
    with MemoryIndex(workspace=a_ws, store=store, provider=None, watch=False) as a:
        a.sync()
    before = Path(store["path"]).read_bytes()
    with pytest.raises(ConfigError, match=r"holds the memory of the workspace .*notes.*store\.path"):
        MemoryIndex(workspace=b_ws, store=store, provider=None, watch=False)
    assert Path(store["path"]).read_bytes() == before
    with MemoryIndex(workspace=a_ws, store=store, provider=None, watch=False) as a:
        assert _paths(a.search("coffee order").hits) == ["MEMORY.md"]


def _forget_workspace(store: Path) -> None:
    """Make an index look like one of an earlier version (no workspace recorded)."""
    con = sqlite3.connect(store)
    con.execute("DELETE FROM meta WHERE key = 'workspace'")
    con.commit()
    con.close()


def test_an_index_at_the_earlier_default_path_keeps_being_used(two: tuple[Path, Path]) -> None:
    a_ws, b_ws = two
    legacy = MemoryConfig(workspace=a_ws).legacy_store_path()
    with MemoryIndex(workspace=a_ws, store={"path": str(legacy)}, provider=None, watch=False) as a:
        a.sync()
    _forget_workspace(legacy)
    with MemoryIndex(workspace=a_ws, provider=None, watch=False) as a:
        assert a.store.path == legacy  # adopted: no rebuild, its files are unchanged
        assert _paths(a.search("coffee order").hits) == ["MEMORY.md"]
        assert a.sync().files_indexed == 0
    with MemoryIndex(workspace=a_ws, provider=None, watch=False) as a:  # now recorded as A's
        assert a.store.path == legacy
    with MemoryIndex(workspace=b_ws, provider=None, watch=False) as b:  # another workspace: its own file
        assert b.store.path != legacy
        b.sync()
    with MemoryIndex(workspace=a_ws, provider=None, watch=False) as a:
        assert _paths(a.search("coffee order").hits) == ["MEMORY.md"]
        assert a.search("launch codename").hits == []


@pytest.mark.parametrize("agent_id", ["../../escaped", "../evil", "a/b", "/abs", "", ".hidden", "x" * 200, "a\\b", 7])
def test_an_agent_id_that_could_name_another_path_is_refused(two: tuple[Path, Path], tmp_path: Path,
                                                            agent_id: object) -> None:
    a_ws, _ = two
    state = Path(os.environ["OPENCLAW_STATE_DIR"])
    before, state_before = _tree(tmp_path), _tree(state)
    with pytest.raises(ConfigError, match=r"agent_id: not a valid agent id \(agent_id: .*never a path"):
        MemoryIndex(workspace=a_ws, agent_id=agent_id, provider=None, watch=False)
    with pytest.raises(ConfigError, match="agentId: not a valid agent id"):
        MemoryConfig.from_dict({"agentId": agent_id})
    assert _tree(tmp_path) == before and _tree(state) == state_before  # nothing created anywhere


def test_a_missing_workspace_is_an_error_and_nothing_is_created(tmp_path: Path) -> None:
    missing = tmp_path / "notse"
    state = Path(os.environ["OPENCLAW_STATE_DIR"])
    state_before = _tree(state)
    with pytest.raises(ConfigError, match=r"workspace: .*notse does not exist.*create=True"):
        MemoryIndex(workspace=missing, provider=None, watch=False)
    assert not missing.exists() and _tree(state) == state_before
    (tmp_path / "file.md").write_text("x")
    with pytest.raises(ConfigError, match="not a folder"):
        MemoryIndex(workspace=tmp_path / "file.md", provider=None, watch=False)


def test_create_starts_an_empty_memory_in_a_new_workspace(tmp_path: Path) -> None:
    fresh = tmp_path / "agents" / "new"
    with MemoryIndex(workspace=fresh, create=True, provider=None, watch=False) as memory:
        assert fresh.is_dir()
        result = memory.search("anything")
        assert result.hits == [] and result.empty_reason == "empty_index"
