"""Four processes acting as hosts (own state dirs, one workspace, one database namespace) search, sync
and append at once for a bounded time: no error, no lost or torn line, searches always answered."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from tests.postgres.mp_host import ANCHOR, SHARED_NOTE, run_host

HOSTS = 4
SECONDS = 8.0


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_four_hosts_search_sync_and_append_together(pg: Any, workspace: Path, tmp_path: Path) -> None:
    (workspace / "memory").mkdir()
    (workspace / "MEMORY.md").write_text(f"# Memory\n\nThe {ANCHOR} project keeps its notes here.\n")
    for d in range(1, 6):
        (workspace / f"memory/2026-02-0{d}.md").write_text(f"# Day {d}\n\nWorked on task number {d} today.\n")
    namespace = pg.namespace()
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=run_host, args=(h, pg.url, pg.schema, namespace, str(workspace),
                                               str(tmp_path / f"state-{h}"), SECONDS, out)) for h in range(HOSTS)]
    for p in procs:
        p.start()
    reports = [out.get(timeout=200) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    errors = [e for _, _, _, errs in reports for e in errs]
    print({h: done for h, _, done, _ in reports})
    assert not errors, errors[0]
    totals = Counter()
    for _, _, done, _ in reports:
        totals.update(done)
    assert totals["search"] > 10 and totals["sync"] > 2 and totals["append"] > 10 and totals["rebuild"] == 1, totals
    written = Counter(line for _, lines, _, _ in reports for line in lines)
    on_disk = Counter(line for rel in (SHARED_NOTE, "MEMORY.md")
                      for line in (workspace / rel).read_text().splitlines() if line.startswith("- host"))
    assert on_disk == written  # every line once, whole (a torn or interleaved line would not match)
    with MemoryIndex(workspace=workspace, state_dir=str(tmp_path / "state-check"), watch=False, provider=None,
                     store={"url": pg.url, "namespace": namespace, "pg_schema": pg.schema}) as idx:
        idx.sync()
        assert idx.store.integrity()["problems"] == []
        last = max(written, key=len)
        assert any(h.path in (SHARED_NOTE, "MEMORY.md") for h in idx.search(last.split()[1] + " " + last.split()[2],
                                                                             max_results=20).hits)
