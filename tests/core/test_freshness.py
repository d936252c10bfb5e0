"""Background freshness of a MemoryIndex: watcher-driven syncs (one per burst), edits and
deletions reaching search, the session-start and interval triggers, asyncio use, and shutdown
without stray threads."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import openclaw_memory.index.sync_runner as runner_mod
import openclaw_memory.index.watch as watch_mod
from openclaw_memory import MemoryIndex, SyncReport
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.index.watch import MemoryWatcher
from tests.helpers.waiting import wait_for
from tests.helpers.watcher_clock import SimClock, seen_now, settle

FAST = {"watch_debounce_ms": 200, "on_search": False}  # only the watcher keeps the index fresh


class SyncLog:
    """Counts every sync run of every index (wraps ``run_sync`` as MemoryIndex calls it)."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.finished: list[SyncReport] = []
        self.lock = threading.Lock()

    def reasons(self, reason: str) -> int:
        with self.lock:
            return sum(1 for r in self.finished if r.reason == reason)


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> SyncLog:
    log = SyncLog()
    real = runner_mod.run_sync

    def counting(store: Any, plan: Any, **kw: Any) -> SyncReport:
        with log.lock:
            log.started.append(kw.get("reason", "?"))
        report = real(store, plan, **kw)
        with log.lock:
            log.finished.append(report)
        return report

    monkeypatch.setattr(runner_mod, "run_sync", counting)
    return log


def words(memory: MemoryIndex) -> str:
    return "\n".join(c.text for c in memory.store.iter_chunks())


def found(memory: MemoryIndex, word: str) -> bool:
    return any(h.path for h in memory.search(word, max_results=5).hits if word in h.text)


@pytest.fixture
def watched(make_index, write, syncs: SyncLog) -> Iterator[MemoryIndex]:
    write({"MEMORY.md": "# Memory\nThe user prefers tea.\n", "memory/2026-01-15.md": "kickoff meeting\n"})
    memory = make_index(FakeEmbeddingProvider(), watch=True, sync=FAST)
    memory.sync()
    assert memory.watching
    yield memory


@pytest.fixture
def clocked(monkeypatch: pytest.MonkeyPatch) -> tuple[SimClock, list[MemoryWatcher]]:
    """Every watcher a MemoryIndex starts measures its debounce with one :class:`SimClock` (returned
    with the watchers made)."""
    clock, made = SimClock(), []

    def make(*args: Any, **kw: Any) -> MemoryWatcher:
        made.append(MemoryWatcher(*args, clock=clock, **kw))
        return made[-1]

    monkeypatch.setattr(watch_mod, "MemoryWatcher", make)
    return clock, made


def test_many_writes_cause_one_sync(clocked: tuple[SimClock, list[MemoryWatcher]], make_index, write,
                                    syncs: SyncLog, workspace: Path) -> None:
    write({"MEMORY.md": "# Memory\nThe user prefers tea.\n", "memory/2026-01-15.md": "kickoff meeting\n"})
    watched = make_index(FakeEmbeddingProvider(), watch=True, sync=FAST)
    watched.sync()
    clock, (watcher,) = clocked
    before = len(syncs.started)
    for i in range(40):
        clock.advance(0.01 if i else 0.0)  # spread over ~0.4 s of the watcher's time, never quiet for the debounce
        (workspace / "memory" / f"burst-{i % 8}.md").write_text(f"burstword{i % 8} entry {i}\n")
        seen_now(watcher, clock)
    settle(watcher, clock, {str(workspace / "memory" / f"burst-{k}.md") for k in range(8)})
    assert syncs.started[before:] == []
    clock.advance(1.5 * FAST["watch_debounce_ms"] / 1000)
    wait_for(lambda: syncs.reasons("watch") == 1 and not watched.syncing, timeout=30, what="the watch sync")
    assert all(f"burstword{k}" in words(watched) for k in range(8))  # the one sync saw every write
    (workspace / "memory" / "sentinel.md").write_text("sentinelword\n")
    settle(watcher, clock, {str(workspace / "memory" / "sentinel.md")})
    clock.advance(1.5 * FAST["watch_debounce_ms"] / 1000)
    wait_for(lambda: "sentinelword" in words(watched), timeout=30, what="the sentinel")
    assert syncs.started[before:] == ["watch", "watch"]


def test_edit_is_searchable_after_debounce(watched: MemoryIndex, workspace: Path) -> None:
    assert not found(watched, "zanzibar")
    (workspace / "memory" / "2026-01-15.md").write_text("kickoff meeting\nWe chose zanzibar as codename.\n")
    wait_for(lambda: found(watched, "zanzibar"), what="the edit in search")
    hit = next(h for h in watched.search("zanzibar").hits if "zanzibar" in h.text)
    assert hit.path == "memory/2026-01-15.md"


def test_deletion_removes_hits(watched: MemoryIndex, workspace: Path) -> None:
    assert found(watched, "kickoff")
    (workspace / "memory" / "2026-01-15.md").unlink()
    wait_for(lambda: not found(watched, "kickoff"), what="the deletion")
    assert "memory/2026-01-15.md" not in watched.store.file_records()


def test_non_markdown_churn_triggers_no_sync(watched: MemoryIndex, syncs: SyncLog, workspace: Path) -> None:
    before = len(syncs.started)
    (workspace / "node_modules" / "x").mkdir(parents=True)
    for i in range(20):
        (workspace / "memory" / f"blob{i}.json").write_text("{}")
        (workspace / "node_modules" / "x" / f"r{i}.md").write_text("x")
        (workspace / ".venv").mkdir(exist_ok=True)
        (workspace / "notes.txt").write_text(str(i))
    (workspace / "memory" / "real.md").write_text("realword\n")
    wait_for(lambda: "realword" in words(watched), what="the real note")
    assert syncs.started[before:] == ["watch"]


def test_change_during_a_running_sync_gets_its_own_sync(make_index, write, workspace: Path) -> None:
    gate = threading.Event()
    entered = threading.Event()

    class Gated(FakeEmbeddingProvider):
        def _embed(self, texts: list[str], kind: Any) -> Any:
            if kind != "query":
                entered.set()
                assert gate.wait(5)
            return super()._embed(texts, kind)

    write({"memory/a.md": "alpha\n"})
    memory = make_index(Gated(), watch=True, sync=FAST)
    memory.sync_in_background("manual")
    assert entered.wait(3)  # the sync has listed the files and is embedding
    (workspace / "memory" / "b.md").write_text("latecomer\n")
    wait_for(lambda: memory._freshness._watcher.bursts == 1, what="the watcher's burst")  # it joined the running sync
    assert memory.syncing
    gate.set()
    wait_for(lambda: "latecomer" in words(memory), what="the follow-up sync")


def test_session_start_syncs_once_per_session_key(make_index, write, syncs: SyncLog, workspace: Path) -> None:
    write({"MEMORY.md": "original\n"})
    memory = make_index(FakeEmbeddingProvider(), sync={"on_search": False})
    memory.sync()
    (workspace / "MEMORY.md").write_text("original plus papaya\n")
    memory.search("papaya", session_key="agent:main:one")
    wait_for(lambda: syncs.reasons("session-start") == 1 and not memory.syncing, what="the session-start sync")
    assert "papaya" in words(memory)

    memory.mark_dirty()
    memory.search("papaya", session_key="agent:main:one")  # same key: no second warm-up
    memory.search("papaya")  # no key: nothing either
    assert syncs.reasons("session-start") == 1
    memory.search("papaya", session_key="agent:main:two")  # a new key while dirty
    wait_for(lambda: syncs.reasons("session-start") == 2 and not memory.syncing, what="the second key's sync")

    memory.search("papaya", session_key="agent:main:three")  # clean now: nothing to do
    assert syncs.started.count("session-start") == 2


def test_session_start_can_be_disabled(make_index, write, syncs: SyncLog) -> None:
    write({"MEMORY.md": "x\n"})
    memory = make_index(FakeEmbeddingProvider(), sync={"on_search": False, "on_session_start": False})
    memory.sync()
    memory.mark_dirty()
    memory.search("x", session_key="agent:main:one")
    assert syncs.started.count("session-start") == 0


def test_interval_timer_syncs_and_stops(make_index, write, syncs: SyncLog) -> None:
    write({"MEMORY.md": "x\n"})
    memory = make_index(FakeEmbeddingProvider(), watch=None, sync={"interval_minutes": 0.002, "watch": False})
    memory.search("x")  # background work starts with the first search
    wait_for(lambda: syncs.reasons("interval") >= 2, what="two interval syncs")
    assert not memory.watching  # sync.watch off: the timer alone
    memory.close()
    n = len(syncs.started)
    assert not any(t.name.startswith("openclaw-memory") for t in threading.enumerate())
    time.sleep(0.3)  # two timer periods: a leftover timer would have fired
    assert len(syncs.started) == n


def test_interval_timer_runs_without_the_file_watcher(make_index, write, syncs: SyncLog) -> None:
    write({"MEMORY.md": "x\n"})
    memory = make_index(FakeEmbeddingProvider(), watch=False, sync={"interval_minutes": 0.002})
    wait_for(lambda: syncs.reasons("interval") >= 1, what="an interval sync without any search")
    assert not memory.watching
    memory.close()
    assert not any(t.name.startswith("openclaw-memory") for t in threading.enumerate())


def test_close_leaves_no_threads(make_index, write, workspace: Path) -> None:
    baseline = set(threading.enumerate())
    write({"MEMORY.md": "x\n"})
    memory = make_index(FakeEmbeddingProvider(), watch=True, sync={**FAST, "interval_minutes": 0.001})
    memory.sync()
    (workspace / "MEMORY.md").write_text("y\n")
    names = {t.name for t in threading.enumerate()}
    assert "openclaw-memory-watch" in names and "openclaw-memory-interval" in names
    memory.close()
    memory.close()  # idempotent
    assert set(threading.enumerate()) - baseline == set()
    with pytest.raises(RuntimeError):
        memory.start_watching()


def test_context_manager_closes_watcher(workspace: Path, write, tmp_path: Path) -> None:
    baseline = set(threading.enumerate())
    write({"MEMORY.md": "x\n"})
    with MemoryIndex(workspace=workspace, store={"path": str(tmp_path / "i.sqlite")},
                     provider=FakeEmbeddingProvider(), watch=True, sync=FAST) as memory:
        assert memory.watching
    assert set(threading.enumerate()) - baseline == set()


def test_watcher_starts_on_first_search_by_default(workspace: Path, write, tmp_path: Path) -> None:
    write({"MEMORY.md": "x\n"})
    with MemoryIndex(workspace=workspace, store={"path": str(tmp_path / "i.sqlite")},
                     provider=FakeEmbeddingProvider(), sync=FAST) as memory:
        assert not memory.watching
        memory.search("x")
        assert memory.watching
    with MemoryIndex(workspace=workspace, store={"path": str(tmp_path / "i.sqlite")},
                     provider=FakeEmbeddingProvider(), sync={**FAST, "watch": False}) as memory:
        memory.search("x")
        assert not memory.watching


async def test_asyncio_search_while_watching_does_not_block_the_loop(workspace: Path, write, tmp_path: Path) -> None:
    gaps: list[float] = []
    stop = asyncio.Event()
    blocked: list[str] = []

    class Slow(FakeEmbeddingProvider):
        def _embed(self, texts: list[str], kind: Any) -> Any:
            time.sleep(0.2)  # a network call, in a worker thread
            # the event loop goes on ticking while the call runs; had the call blocked the loop, it could not
            ticks = len(gaps)
            deadline = time.monotonic() + 30
            while len(gaps) < ticks + 3 and not stop.is_set():
                if time.monotonic() > deadline:
                    blocked.append(kind)
                    break
                time.sleep(0.01)
            return super()._embed(texts, kind)

    write({"MEMORY.md": "# Memory\nlemonade stand\n"})

    async def ticker() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    async with MemoryIndex(workspace=workspace, store={"path": str(tmp_path / "a.sqlite")},
                           provider=Slow(), watch=True, sync=FAST) as memory:
        tick = asyncio.create_task(ticker())
        await memory.async_sync()
        assert any("lemonade" in h.text for h in (await memory.asearch("lemonade")).hits)
        (workspace / "memory").mkdir()
        (workspace / "memory" / "2026-02-01.md").write_text("pineapple pizza decision\n")
        deadline = time.monotonic() + 30
        while not any("pineapple" in h.text for h in (await memory.asearch("pineapple")).hits):
            assert time.monotonic() < deadline, "edit never reached search"
            await asyncio.sleep(0.02)
        stop.set()
        await tick
    assert len(gaps) > 20
    assert blocked == []  # each embedding call (200 ms, then until the loop ticked) ran while the loop went on


# ---- the freshness metadata of search results (no watcher) ------------------------------------------


@pytest.fixture
def no_stale_check_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stat-only stale check of searches without a watcher runs at most every 2 s: make it run
    on every search, so tests need not sleep."""
    import openclaw_memory.index.freshness as freshness_mod

    monkeypatch.setattr(freshness_mod, "_STALE_CHECK_INTERVAL_S", 0.0)


def test_search_on_an_empty_index_builds_it_first(make_index, write, syncs: SyncLog) -> None:
    write({"MEMORY.md": "# Memory\nThe user prefers oolong tea.\n"})
    memory = make_index(FakeEmbeddingProvider(), sync={"watch": False})
    assert memory.store.is_empty()
    res = memory.search("oolong")
    assert res.hits and res.hits[0].path == "MEMORY.md" and res.empty_reason is None
    assert syncs.started[0] == "search" and not res.sync_scheduled  # awaited, nothing left to do


def test_hand_edit_schedules_a_background_sync(make_index, write, workspace: Path, syncs: SyncLog,
                                               no_stale_check_delay: None) -> None:
    write({"MEMORY.md": "# Memory\nThe user prefers oolong tea.\n"})
    memory = make_index(FakeEmbeddingProvider(), sync={"watch": False})
    memory.sync()
    assert not memory.search("oolong").sync_scheduled  # nothing changed: no sync
    (workspace / "MEMORY.md").write_text("# Memory\nThe user prefers oolong tea.\nAnd quince jam.\n")
    res = memory.search("oolong")
    assert res.hits and res.sync_scheduled  # the old content still answers meanwhile
    wait_for(lambda: not memory.syncing and syncs.reasons("search") == 1, what="the search-triggered sync")
    assert any("quince" in h.text for h in memory.search("quince").hits)


def test_stale_check_is_rate_limited(make_index, write, workspace: Path, syncs: SyncLog) -> None:
    write({"MEMORY.md": "x\n"})
    memory = make_index(FakeEmbeddingProvider(), sync={"watch": False})
    memory.sync()
    memory.search("x")  # this search's stale check found nothing
    (workspace / "MEMORY.md").write_text("x plus yuzu\n")
    assert not memory.search("x").sync_scheduled  # within 2 s of the last check: not looked at


def test_empty_result_is_stale_while_a_sync_runs(make_index, write, workspace: Path,
                                                 no_stale_check_delay: None) -> None:
    gate = threading.Event()
    entered = threading.Event()

    class Gated(FakeEmbeddingProvider):
        def _embed(self, texts: list[str], kind: Any) -> Any:
            if kind != "query" and self.calls:  # the first (building) sync passes
                entered.set()
                assert gate.wait(5)
            return super()._embed(texts, kind)

    write({"MEMORY.md": "# Memory\nkickoff meeting\n"})
    memory = make_index(Gated(), sync={"watch": False})
    memory.sync()
    (workspace / "memory").mkdir()
    (workspace / "memory" / "2026-02-01.md").write_text("rambutan harvest plan\n")
    try:
        res = memory.search("rambutan")
        assert res.sync_scheduled
        assert entered.wait(3)
        res = memory.search("rambutan")
        assert res.hits == [] and res.empty_reason == "stale" and res.sync_scheduled
        assert memory.search("kickoff").hits  # what was indexed stays searchable meanwhile
    finally:
        gate.set()
    wait_for(lambda: not memory.syncing, what="the gated sync")
    res = memory.search("rambutan")
    assert res.hits and res.hits[0].path == "memory/2026-02-01.md"


# ---- a write made while a sync runs (issue 12, item 1) ---------------------------------------------


class _GatedProvider(FakeEmbeddingProvider):
    """Holds every document-embedding call until ``gate`` is set, so a test can write while a
    sync is in the middle of its run (after it read the files)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.entered = threading.Event()

    def _embed(self, texts: list[str], kind: Any) -> Any:
        if kind != "query":
            self.entered.set()
            assert self.gate.wait(30)
        return super()._embed(texts, kind)


def test_a_write_during_a_background_sync_is_indexed_by_the_next_request(
    make_index, write, workspace: Path, no_stale_check_delay: None
) -> None:
    """The README flow with the default ``watch``: a background sync at session start, the flush
    appends while it runs, another sync is requested: the appended fact must become searchable."""
    write({"memory/2026-01-15.md": "# Notes\nkickoff meeting\n"})
    provider = _GatedProvider()
    memory = make_index(provider, watch=None)  # the default: the watcher starts on the first search
    first = memory.sync_in_background("session-start")
    assert provider.entered.wait(3)  # the running sync has read the file
    with (workspace / "memory" / "2026-01-15.md").open("a") as fh:
        fh.write("The staging database moved to Postgres 17.\n")
    second = memory.sync_in_background("flush")
    assert second is not first  # not merged into the sync that read the file before the write
    provider.gate.set()
    second.result(timeout=10)
    assert memory.changed_files() == []
    wait_for(lambda: any("Postgres" in h.text for h in memory.search("Postgres staging").hits),
             what="the appended fact in search results")


def test_a_write_during_a_sync_is_found_by_searches_alone(
    make_index, write, workspace: Path, no_stale_check_delay: None
) -> None:
    """No second sync is requested: the searches themselves (watcher started after the write, so
    it never saw it) must notice the change and sync."""
    write({"memory/2026-01-15.md": "# Notes\nkickoff meeting\n"})
    provider = _GatedProvider()
    memory = make_index(provider, watch=None)
    memory.sync_in_background("session-start")
    assert provider.entered.wait(30)
    with (workspace / "memory" / "2026-01-15.md").open("a") as fh:
        fh.write("The staging database moved to Postgres 17.\n")
    provider.gate.set()
    wait_for(lambda: not memory.syncing, timeout=30, what="the first sync")
    wait_for(lambda: any("Postgres" in h.text for h in memory.search("Postgres staging").hits), timeout=30,
             what="the appended fact in search results")
    # the searches may have queued a sync behind the one that indexed the fact: it finds nothing left to do
    wait_for(lambda: not memory.syncing and not memory.dirty, timeout=30, what="the searches' syncs to finish")
    assert memory.watching and memory.changed_files() == [] and not memory.dirty


@pytest.fixture
def stat_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the stat scans of the workspace that compare the files with the index."""
    import openclaw_memory.index.scheduler as scheduler_mod

    calls: list[int] = []
    real = scheduler_mod.stat_scan_and_kept

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(scheduler_mod, "stat_scan_and_kept", counting)
    return calls


def test_searches_with_a_watcher_running_do_not_stat_the_workspace(
    make_index, write, workspace: Path, syncs: SyncLog, no_stale_check_delay: None, stat_scans: list[int]
) -> None:
    write({"MEMORY.md": "# Memory\noolong\n"})
    memory = make_index(FakeEmbeddingProvider(), watch=True, sync={"watch_debounce_ms": 100})
    memory.sync()
    stat_scans.clear()
    for _ in range(5):
        assert not memory.search("oolong").sync_scheduled
    assert stat_scans == []  # the watcher reports changes: no scan of every file on the search path
    (workspace / "MEMORY.md").write_text("# Memory\noolong\nquince jam\n")
    wait_for(lambda: any("quince" in h.text for h in memory.search("quince").hits), what="the watcher's sync")
    assert stat_scans == []


def test_searches_without_a_watcher_still_notice_hand_edits(
    make_index, write, workspace: Path, syncs: SyncLog, no_stale_check_delay: None, stat_scans: list[int]
) -> None:
    write({"MEMORY.md": "# Memory\noolong\n"})
    memory = make_index(FakeEmbeddingProvider(), watch=False)
    memory.sync()
    (workspace / "MEMORY.md").write_text("# Memory\noolong\nquince jam\n")
    assert memory.search("quince").sync_scheduled and stat_scans
    wait_for(lambda: not memory.syncing, what="the search-triggered sync")
    assert any("quince" in h.text for h in memory.search("quince").hits)


@pytest.mark.parametrize("watch", [None, False])
def test_the_first_search_of_a_new_process_schedules_no_sync_when_nothing_changed(
    make_index, write, workspace: Path, syncs: SyncLog, watch: bool | None
) -> None:
    write({"MEMORY.md": "# Memory\noolong\n", "memory/2026-01-01.md": "# Day\nquince\n"})
    make_index(FakeEmbeddingProvider()).sync()
    syncs.finished.clear()
    fresh = make_index(FakeEmbeddingProvider(), watch=watch)  # as a new process opens it
    result = fresh.search("oolong")
    assert result.hits and not result.sync_scheduled
    assert fresh.changed_files() == [] and not fresh.dirty
    time.sleep(0.3)
    assert syncs.finished == []  # no sync that would index 0 files


def test_the_first_search_of_a_new_process_syncs_what_changed_while_it_was_closed(
    make_index, write, workspace: Path, syncs: SyncLog
) -> None:
    write({"MEMORY.md": "# Memory\noolong\n"})
    make_index(FakeEmbeddingProvider()).sync()
    (workspace / "MEMORY.md").write_text("# Memory\noolong\nquince jam\n")
    fresh = make_index(FakeEmbeddingProvider(), watch=False)
    assert fresh.search("quince").sync_scheduled
    wait_for(lambda: not fresh.syncing, what="the search-triggered sync")
    assert any("quince" in h.text for h in fresh.search("quince").hits)


def test_writes_made_before_the_watcher_started_are_synced_when_it_starts(
    make_index, write, workspace: Path, syncs: SyncLog
) -> None:
    write({"MEMORY.md": "# Memory\noolong\n"})
    memory = make_index(FakeEmbeddingProvider(), watch=False)
    memory.sync()
    (workspace / "MEMORY.md").write_text("# Memory\noolong\nquince jam\n")
    memory.start_watching()
    wait_for(lambda: syncs.reasons("watch") == 1 and not memory.syncing, what="the catch-up sync")
    assert "quince" in words(memory)
