"""With ``update.onBoot = false`` and an index from an earlier run (each CLI call, an agent restarted), the first
search ran a whole ``qmd update`` before the query, however long it took (up to ``updateTimeoutMs``), then found the
search timeout spent and fell back to the builtin index (remembered for five minutes). That first search now treats
the earlier index as the one to answer from: an update of changed files gets half the search timeout, as later
searches' do, and goes on in the background."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from openclaw_memory import MemoryIndex


def test_the_first_search_without_a_boot_update_waits_no_longer_than_its_timeout(
    indexes: Callable[..., MemoryIndex], fake_qmd: Callable[[str], str], memory_ws: Path, update_seconds: Path,
) -> None:
    settings = {"daemon": False, "update": {"debounceMs": 0, "onBoot": False}, "limits": {"timeoutMs": 1_500}}
    earlier = indexes(fake_qmd("noresults"), **settings)
    assert earlier.search("pgbouncer").fallback is None  # the index's first update (quick)
    earlier.close()
    update_seconds.write_text("8")  # from now on `qmd update` is slow
    (memory_ws / "memory" / "2026-01-03.md").write_text("# 2026-01-03\n\nA new note.\n", encoding="utf-8")
    later = indexes(fake_qmd("noresults"), **settings)  # another process on that index
    started = time.monotonic()
    result = later.search("pgbouncer")
    assert time.monotonic() - started < 1.5 + 2
    assert result.fallback is None  # QMD answered from its index as it was


def test_a_new_index_without_a_boot_update_is_still_updated_before_its_first_search(
    qmd_index: Callable[..., MemoryIndex],
) -> None:
    memory = qmd_index(update={"onBoot": False})
    result = memory.search("pgbouncer")
    assert result.fallback is None and result.hits[0].path == "memory/2026-01-02.md"
