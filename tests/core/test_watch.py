"""The file watcher: relevance filter, debounce (a burst is one callback), trees appearing later,
and clean shutdown."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from watchfiles import Change

from openclaw_memory.index.watch import MemoryWatcher, is_relevant
from tests.helpers.waiting import wait_for
from tests.helpers.watcher_clock import SimClock, seen_now, settle

DEBOUNCE_MS = 200


class Recorder:
    """Collects the watcher's bursts."""

    def __init__(self) -> None:
        self.bursts: list[set[tuple[Change, str]]] = []
        self.lock = threading.Lock()

    def __call__(self, changes: set[tuple[Change, str]]) -> None:
        with self.lock:
            self.bursts.append(set(changes))

    def paths(self, i: int) -> set[str]:
        return {Path(p).name for _, p in self.bursts[i]}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    (root / "memory").mkdir(parents=True)
    return root


@pytest.fixture
def watcher_factory() -> Callable[..., tuple[MemoryWatcher, Recorder]]:
    made: list[MemoryWatcher] = []

    def make(workspace: Path, extra: list[Path] | None = None, **kw: object) -> tuple[MemoryWatcher, Recorder]:
        rec = Recorder()
        w = MemoryWatcher(workspace, extra or [], rec, debounce_ms=DEBOUNCE_MS, **kw)  # type: ignore[arg-type]
        made.append(w.start())
        return w, rec

    yield make
    for w in made:
        w.stop()


# ---- relevance ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("MEMORY.md", True),
        ("memory.md", True),
        ("memory", True),
        ("memory/2026-01-16.md", True),
        ("memory/deep/er/note.md", True),
        ("memory/sub", True),  # no extension: could be a directory
        ("memory/notes.txt", False),
        ("memory/data.json", False),
        ("memory/.note.md.swp", False),
        ("memory/node_modules/pkg/README.md", False),
        ("memory/.git/HEAD", False),
        ("memory/.venv/lib/x.md", False),
        ("memory/__pycache__/x.md", False),
        ("memory/Node_Modules/x.md", False),  # case-insensitive
        ("README.md", False),  # not a memory file
        ("notes/a.md", False),
        ("src/memory/a.md", False),
    ],
)
def test_is_relevant(ws: Path, rel: str, expected: bool) -> None:
    assert is_relevant(str(ws / rel), ws, []) is expected


def test_is_relevant_extra_paths_and_sessions(tmp_path: Path, ws: Path) -> None:
    extra_dir, extra_file = tmp_path / "notes", tmp_path / "one.md"
    sessions = tmp_path / "sessions"
    assert is_relevant(str(extra_dir / "x" / "a.md"), ws, [extra_dir, extra_file])
    assert is_relevant(str(extra_file), ws, [extra_dir, extra_file])
    assert not is_relevant(str(extra_dir / "node_modules" / "a.md"), ws, [extra_dir])
    assert not is_relevant(str(extra_dir / "a.py"), ws, [extra_dir])
    assert is_relevant(str(sessions / "abc.jsonl"), ws, [], sessions)
    assert is_relevant(str(sessions / "abc.jsonl.reset.2026-01-01T00-00-00Z"), ws, [], sessions)
    assert not is_relevant(str(sessions / "sessions.json"), ws, [], sessions)
    assert not is_relevant(str(sessions / "abc.jsonl"), ws, [])  # sessions not enabled


def test_ignored_names_only_count_below_the_watched_root(tmp_path: Path) -> None:
    # A workspace that itself lives under a directory called "venv" is still watched.
    ws = tmp_path / "venv" / "agent"
    assert is_relevant(str(ws / "memory" / "a.md"), ws, [])


# ---- debounce ------------------------------------------------------------------------------------


def test_a_burst_of_writes_is_one_callback(ws: Path, watcher_factory) -> None:
    clock = SimClock()
    w, rec = watcher_factory(ws, clock=clock)
    for i in range(30):  # 30 writes to 10 files, each well inside the quiet period
        (ws / "memory" / f"n{i % 10}.md").write_text(f"write {i}\n")
        seen_now(w, clock)
        clock.advance(0.015)  # spread over ~0.45 s of the watcher's time, never quiet for the debounce
    (ws / "MEMORY.md").write_text("root file\n")
    settle(w, clock, {str(ws / "memory" / f"n{i}.md") for i in range(10)} | {str(ws / "MEMORY.md")})
    assert rec.bursts == []  # longer than the debounce, but never quiet for it
    clock.advance(1.5 * DEBOUNCE_MS / 1000)
    wait_for(lambda: rec.bursts, timeout=30, what="the first burst")
    assert rec.paths(0) == {f"n{i}.md" for i in range(10)} | {"MEMORY.md"}
    # A later write is a second burst: nothing else was delivered in between.
    (ws / "memory" / "sentinel.md").write_text("later\n")
    settle(w, clock, {str(ws / "memory" / "sentinel.md")})
    clock.advance(1.5 * DEBOUNCE_MS / 1000)
    wait_for(lambda: len(rec.bursts) >= 2, timeout=30, what="the sentinel burst")
    assert rec.paths(1) == {"sentinel.md"}
    assert len(rec.bursts) == 2 and w.bursts == 2


def test_callback_waits_for_quiet(ws: Path, watcher_factory) -> None:
    _, rec = watcher_factory(ws)
    started = time.monotonic()
    (ws / "memory" / "a.md").write_text("a\n")
    wait_for(lambda: rec.bursts, what="a burst")
    assert time.monotonic() - started >= DEBOUNCE_MS / 1000 * 0.9


def test_irrelevant_churn_triggers_nothing(ws: Path, watcher_factory) -> None:
    _, rec = watcher_factory(ws)
    (ws / "memory" / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "memory" / "node_modules" / "pkg" / "README.md").write_text("x")
    (ws / "memory" / ".git").mkdir()
    (ws / "memory" / ".git" / "index.md").write_text("x")
    for i in range(20):
        (ws / "memory" / f"data{i}.json").write_text("{}")
        (ws / "memory" / "scratch.txt").write_text(str(i))
        (ws / "README.md").write_text(str(i))  # workspace files other than MEMORY.md are not memory
        (ws / f"other{i}.md").write_text(str(i))
    (ws / "memory" / "real.md").write_text("real\n")
    wait_for(lambda: rec.bursts, what="the burst of the real note")
    assert rec.paths(0) == {"real.md"}
    assert len(rec.bursts) == 1


def test_workspace_outside_memory_is_not_walked(ws: Path, watcher_factory) -> None:
    w, _ = watcher_factory(ws)
    assert w._roots() == (str(ws / "memory"),)


def test_trees_created_later_and_deleted_are_picked_up(ws: Path, tmp_path: Path, watcher_factory) -> None:
    shutil.rmtree(ws / "memory")
    sessions = tmp_path / "sessions"
    _, rec = watcher_factory(ws, sessions_dir=sessions)
    (ws / "memory").mkdir()
    wait_for(lambda: rec.bursts, what="memory/ appearing")
    (ws / "memory" / "new.md").write_text("new\n")  # inside a tree that did not exist at start
    wait_for(lambda: any("new.md" in rec.paths(i) for i in range(len(rec.bursts))), what="memory/new.md")
    sessions.mkdir()
    n = len(rec.bursts)
    wait_for(lambda: len(rec.bursts) > n, what="the sessions dir appearing")
    (sessions / "s.jsonl").write_text("{}\n")
    wait_for(lambda: any("s.jsonl" in rec.paths(i) for i in range(len(rec.bursts))), what="the transcript")
    n = len(rec.bursts)
    shutil.rmtree(ws / "memory")
    wait_for(lambda: len(rec.bursts) > n, what="memory/ vanishing")


def test_extra_file_and_root_file_replaced_atomically(ws: Path, tmp_path: Path, watcher_factory) -> None:
    extra = tmp_path / "elsewhere" / "facts.md"
    extra.parent.mkdir()
    extra.write_text("v1\n")
    _, rec = watcher_factory(ws, [extra])
    tmp = extra.with_suffix(".tmp")
    tmp.write_text("v2\n")
    tmp.replace(extra)  # editors save like this
    wait_for(lambda: rec.bursts, what="the extra file")
    assert rec.paths(0) == {"facts.md"}


def test_failing_callback_keeps_watching(ws: Path) -> None:
    calls: list[int] = []

    def boom(_changes: object) -> None:
        calls.append(1)
        raise RuntimeError("sync failed")

    w = MemoryWatcher(ws, [], boom, debounce_ms=DEBOUNCE_MS).start()
    try:
        (ws / "memory" / "a.md").write_text("a")
        wait_for(lambda: len(calls) == 1, what="the first call")
        (ws / "memory" / "b.md").write_text("b")
        wait_for(lambda: len(calls) == 2, what="the second call")
    finally:
        w.stop()
    assert not w.running


def test_stop_ends_the_thread(ws: Path) -> None:
    w = MemoryWatcher(ws, [], lambda _c: None, debounce_ms=1500).start()
    assert w.running
    started = time.monotonic()
    w.stop()
    assert time.monotonic() - started < 2
    assert not any(t.name == "openclaw-memory-watch" for t in threading.enumerate())
