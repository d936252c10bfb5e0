"""Undo picks the last change written even when the machine's time zone changed in between (a laptop that
travelled west, the hour repeated when daylight saving time ends): preimages used to be ordered by their names,
the local time, so an earlier change made further east sorted as the newer one and undo refused (or, with
``force``, restored the wrong preimage and lost the later change)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_memory.consolidation import forget, undo
from tests.helpers.consolidation import config_for

MEMORY = "# Memory\n\n- The VPN rotates monthly.\n- The ferry leaves at 08:30.\n- Backups run nightly.\n"


@pytest.fixture
def local_zone() -> Iterator[object]:
    """Set the process's local time zone (as travelling does), restored afterwards."""
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset is POSIX-only")
    saved = os.environ.get("TZ")

    def set_zone(name: str) -> None:
        os.environ["TZ"] = name
        time.tzset()

    yield set_zone
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


def test_undo_restores_the_change_made_last_after_travelling_west(tmp_path: Path, local_zone) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(MEMORY)
    config = config_for(ws)
    local_zone("Asia/Tokyo")
    assert forget(config, "The VPN rotates monthly.") == 1
    local_zone("America/Los_Angeles")  # 17 hours earlier on the wall clock
    assert forget(config, "The ferry leaves at 08:30.") == 1
    undo(config)  # the ferry comes back: it was forgotten last
    assert (ws / "MEMORY.md").read_text() == "# Memory\n\n- The ferry leaves at 08:30.\n- Backups run nightly.\n"
    undo(config)
    assert (ws / "MEMORY.md").read_text() == MEMORY
