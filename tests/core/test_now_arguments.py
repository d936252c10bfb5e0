"""The ``now=`` of the session bootstrap context, the session-memory hook and the flush turn given a date (as
``search(now=...)`` takes one) used to fail with "AttributeError: 'datetime.date' object has no attribute
'tzinfo'"; a date stands for its midnight, and anything else is a MemoryArgumentError naming ``now``."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from openclaw_memory.agent.bootstrap import build_session_context
from openclaw_memory.agent.session_hook import save_session_memory
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import MemoryArgumentError


@pytest.fixture
def config(tmp_path: Path) -> MemoryConfig:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-01-16.md").write_text("today: shipped v1\n")
    (tmp_path / "memory" / "2026-01-15.md").write_text("yesterday: planned v1\n")
    return MemoryConfig(workspace=tmp_path, timezone="Europe/Berlin")


def test_the_bootstrap_context_of_a_date(config: MemoryConfig) -> None:
    out = build_session_context(config, now=date(2026, 1, 16))
    assert "today: shipped v1" in out and "yesterday: planned v1" in out


def test_the_session_memory_file_of_a_date(config: MemoryConfig) -> None:
    saved = save_session_memory(config, [{"role": "user", "content": "we chose SQLite"}], now=date(2026, 1, 16))
    assert saved is not None and saved.name == "2026-01-16-000000.md"


def test_a_string_is_refused_naming_now(config: MemoryConfig) -> None:
    with pytest.raises(MemoryArgumentError, match="now must be a datetime or a date"):
        build_session_context(config, now="2026-01-16")  # type: ignore[arg-type]
