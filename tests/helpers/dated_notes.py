"""Date-argument tests: the fixed "now" they resolve words against, and a search over dated notes."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from tests.helpers.workspaces import plain_index, write_files

#: The "now" date words are resolved against: Saturday 28 November 2026, noon.
NOW = datetime(2026, 11, 28, 12)


def paths_found_after(workspace: Path, notes: dict[str, str], *afters: str) -> list[set[str]]:
    """Write ``notes`` into ``workspace``, index them, and for each of ``afters`` the paths a search for "billing
    database" with that ``after`` value (at :data:`NOW`) finds."""
    write_files(workspace, notes)
    with plain_index(workspace, workspace / ".state") as memory:
        memory.sync()
        return [{hit.path for hit in memory.search("billing database", min_score=0, after=after, now=NOW).hits}
                for after in afters]
