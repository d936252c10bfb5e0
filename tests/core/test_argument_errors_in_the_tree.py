"""Bad arguments of the session helpers raise the library's MemoryArgumentError (still a ValueError), so
``except OpenClawMemoryError`` catches them like every other refusal; they used to be plain ValueErrors."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory.agent.bootstrap import build_session_context
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import MemoryArgumentError, OpenClawMemoryError
from openclaw_memory.files.session_state import SessionStateStore
from openclaw_memory.text.citations import normalize_session_kind


def test_an_unknown_session_kind(tmp_path: Path) -> None:
    with pytest.raises(MemoryArgumentError, match="session_kind must be"):
        normalize_session_kind("dm")
    with pytest.raises(OpenClawMemoryError, match="session_kind must be"):
        build_session_context(MemoryConfig(workspace=tmp_path), session_kind="dm")  # type: ignore[arg-type]


def test_a_budget_too_small(tmp_path: Path) -> None:
    with pytest.raises(MemoryArgumentError, match="max_chars must be at least"):
        build_session_context(MemoryConfig(workspace=tmp_path), max_chars=10)


def test_a_negative_compaction_count(tmp_path: Path) -> None:
    store = SessionStateStore(tmp_path / "sessions.json")
    with pytest.raises(MemoryArgumentError, match="compaction_count"):
        store.set_compaction_count("agent:main:main", -1)
    with pytest.raises(ValueError, match="compaction_count"):  # still a ValueError
        store.claim_flush("agent:main:main", -1)
