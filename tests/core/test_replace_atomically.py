"""The one temp-file-and-rename writer of the state directory's files (session state, the forgotten set,
consolidation preimages): old or new file, never half; the permissions each had (private session state, the
umask's for the others); no temporary file left behind by a failed write."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from openclaw_memory.consolidation.forgetting import ForgottenSet
from openclaw_memory.files.memory_writes import replace_atomically
from openclaw_memory.files.session_state import SessionStateStore


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> object:
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_it_replaces_the_file_with_the_umasks_or_the_given_permissions(tmp_path: Path, umask_022: object) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    replace_atomically(target, b"new")
    assert target.read_bytes() == b"new" and _mode(target) == 0o644
    replace_atomically(target, b"private", mode=0o600)
    assert target.read_bytes() == b"private" and _mode(target) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_failed_replace_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "inside").write_text("x")  # a directory where the file should go
    with pytest.raises(OSError):
        replace_atomically(tmp_path / "taken", b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_the_state_files_keep_their_permissions(tmp_path: Path, umask_022: object) -> None:
    sessions = SessionStateStore(tmp_path / "sessions.json")
    sessions.update("agent:main:s1", lambda state: state)
    assert _mode(tmp_path / "sessions.json") == 0o600
    forgotten = ForgottenSet(tmp_path / "forgotten.json")
    forgotten.add("memory/2026-01-01.md#L1-L1", "a line")
    assert _mode(tmp_path / "forgotten.json") == 0o644
    assert json.loads((tmp_path / "forgotten.json").read_text())["sources"] == ["memory/2026-01-01.md#L1-L1"]
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp" in p.name) == []
