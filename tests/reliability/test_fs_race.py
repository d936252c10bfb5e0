"""Reads and writes never leave the workspace, even while a directory is swapped for a symlink
to an outside directory in a loop (issue 20, item 3).

A swapper thread renames a directory away, puts a symlink to an outside directory in its place,
removes it and renames the directory back, as fast as it can, while the main thread calls
``memory_get``, runs forced syncs or appends. Each test runs for a bounded time and asserts that
not one read returned outside content and not one write landed outside.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import append_memory
from openclaw_memory.errors import IndexingError, MemoryPathError
from openclaw_memory.agent.tools import memory_get
from tests.helpers.fs_race import SECRET, RUN_S, fast_switching, Swapper, snapshot


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symlink swapping needs POSIX rename semantics")


def outside_dir(tmp_path: Path, name: str = "note.md") -> Path:
    """A directory outside the workspace holding files named like the workspace's."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / name).write_text(f"# stolen\n{SECRET} must never be read or indexed\n", encoding="utf-8")
    (outside / "2026-01-16.md").write_text(f"{SECRET}\n", encoding="utf-8")
    return outside


def test_memory_get_never_reads_outside_while_a_directory_is_swapped(write, make_index, tmp_path):
    ws = write({"MEMORY.md": "# root\n", "memory/sub/note.md": "# inside\nthe real note\n"})
    outside = outside_dir(tmp_path)
    idx: MemoryIndex = make_index(None)
    inside = leaked = refused = 0
    deadline = time.monotonic() + RUN_S
    with fast_switching(), Swapper(ws / "memory" / "sub", outside) as swapper:
        while time.monotonic() < deadline:
            got = memory_get(idx, "memory/sub/note.md")
            text = got.get("text", "")
            if SECRET in text:
                leaked += 1
            elif "the real note" in text:
                inside += 1
            else:
                refused += 1  # an error payload (a symlink in the way) or empty text (renamed away)
                assert set(got) <= {"path", "text", "start_line", "end_line", "exists", "disabled", "error"}
    print(f"memory_get: {inside + leaked + refused} calls, {swapper.swaps} swaps, {inside} inside, {refused} refused, "
          f"{leaked} outside")
    assert swapper.swaps > 50, "the swapper did not run; the test proves nothing"
    assert inside > 0
    assert leaked == 0, f"{leaked} of {inside + leaked + refused} memory_get calls returned outside content"


def test_forced_sync_never_indexes_outside_content_while_a_directory_is_swapped(write, make_index, tmp_path):
    notes = {f"memory/sub/note{i:02d}.md": f"# inside {i}\nthe real note\n" for i in range(30)}
    ws = write({"MEMORY.md": "# root\n", **notes})
    outside = outside_dir(tmp_path)
    for i in range(30):  # namesakes of every note: a read through the symlink finds one
        (outside / f"note{i:02d}.md").write_text(f"{SECRET} {i}\n", encoding="utf-8")
    idx: MemoryIndex = make_index(None)
    idx.sync()
    syncs = leaked = failed = 0
    deadline = time.monotonic() + RUN_S
    with fast_switching(), Swapper(ws / "memory" / "sub", outside, dwell=0.002) as swapper:
        while time.monotonic() < deadline:
            try:
                idx.sync(force=True)
            except IndexingError:
                failed += 1
                continue
            syncs += 1
            if any(SECRET in c.text for c in idx.store.iter_chunks()):
                leaked += 1
    print(f"forced sync: {syncs} syncs, {failed} failed, {swapper.swaps} swaps, {leaked} with outside content")
    assert swapper.swaps > 20 and syncs > 0
    assert failed == 0, "a swapped directory must be skipped, not fail the sync"
    assert leaked == 0, f"{leaked} of {syncs} forced syncs indexed outside content"


def test_append_never_writes_outside_while_the_memory_directory_is_swapped(write, tmp_path):
    ws = write({"MEMORY.md": "# root\n", "memory/2026-01-16.md": "# day\n"})
    outside = outside_dir(tmp_path)
    before = snapshot(outside)
    written = refused = 0
    unexpected: list[OSError] = []
    deadline = time.monotonic() + RUN_S
    with fast_switching(), Swapper(ws / "memory", outside) as swapper:
        while time.monotonic() < deadline:
            try:
                append_memory(ws, "memory/2026-01-16.md", f"- append {written + refused}")
                written += 1
            except MemoryPathError:
                refused += 1
            except OSError as exc:
                unexpected.append(exc)
    after = snapshot(outside)
    print(f"append: {written} written, {refused} refused, {len(unexpected)} raw errors, {swapper.swaps} swaps, "
          f"outside changed: {after != before}")
    assert swapper.swaps > 50 and written > 0
    assert after == before, f"appends wrote into the outside directory: {sorted(after)} {after.get('2026-01-16.md')!r}"
    assert not unexpected, f"appends failed with raw errors: {unexpected[:3]}"
    # and no append that succeeded is lost: every one is in a daily note inside the workspace
    landed = sum(
        p.read_text(encoding="utf-8").count("- append ")
        for p in ws.rglob("2026-01-16.md") if not p.is_symlink() and not any(q.is_symlink() for q in p.parents)
    )
    assert landed == written
