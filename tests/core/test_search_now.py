"""A search's ``now``: a date is accepted (its midnight), anything else but a datetime is a MemoryArgumentError,
and without ``now`` relative dates are read in the configured ``timezone``, the zone today's daily note is named
in."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from openclaw_memory import ConfigError, MemoryArgumentError, MemoryConfig, MemoryIndex


def _open(workspace: Path, **overrides: object) -> MemoryIndex:
    return MemoryIndex(workspace=workspace, state_dir=str(workspace / ".state"), provider=None, watch=False,
                       **overrides)


def test_now_may_be_a_date(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-11-27.md").write_text("The billing database moved.\n")
    (tmp_path / "memory" / "2026-11-20.md").write_text("The billing database was slow.\n")
    with _open(tmp_path, query={"hybrid": {"temporal_decay": {"enabled": True}}}) as memory:
        memory.sync()
        hits = memory.search("billing database", min_score=0, after="yesterday", now=date(2026, 11, 28)).hits
        assert [hit.path for hit in hits] == ["memory/2026-11-27.md"]


@pytest.mark.parametrize("now", ["2026-11-28", 1764288000, "yesterday"])
def test_now_of_another_type_is_an_argument_error(tmp_path: Path, now: object) -> None:
    with _open(tmp_path) as memory, pytest.raises(MemoryArgumentError, match="now must be a datetime"):
        memory.search("billing", now=now)  # type: ignore[arg-type]


def test_relative_dates_are_read_in_the_configured_timezone(tmp_path: Path) -> None:
    # a zone whose date differs from UTC's right now (UTC+14 from 10:00 UTC, UTC-12 before 12:00 UTC)
    zone = "Etc/GMT-14" if datetime.now(timezone.utc).hour >= 10 else "Etc/GMT+12"
    local_today = datetime.now(ZoneInfo(zone)).date()
    (tmp_path / "memory").mkdir()
    for day in (local_today, local_today - timedelta(days=1)):
        (tmp_path / "memory" / f"{day.isoformat()}.md").write_text(f"Billing database notes of {day}.\n")
    with _open(tmp_path, timezone=zone) as memory:
        memory.sync()
        hits = [hit.path for hit in memory.search("billing database notes", min_score=0, after="today").hits]
    assert hits == [f"memory/{local_today.isoformat()}.md"]


def test_an_unknown_timezone_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="timezone"):
        MemoryConfig(timezone="Mars/Olympus_Mons")
