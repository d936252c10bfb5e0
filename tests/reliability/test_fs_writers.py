"""Every writer of a memory file stays inside the workspace and leaves nothing behind (issue 32, items 2,
4, 12, 13; issue 30, item 16).

The writers: ``append_memory``, the LanceDB Markdown mirror's ``forget``, the LangGraph store's ``put`` /
``delete`` (record rewrites). Each opens its file by descriptor from the workspace down and locks the file
itself, so no symlink or hard link takes a write outside, no lock or temporary file is left in the notes
folder, and every refusal is a ``MemoryPathError``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import append_memory
from openclaw_memory.errors import MemoryPathError
from openclaw_memory.long_term.mirror import MarkdownMirror, mirror_line
from openclaw_memory.files.records import RecordFiles, append_record, render_record
from openclaw_memory.agent.tools import MEMORY_GET_MAX_CHARS, memory_get

from tests.helpers.fs_race import RUN_S, SECRET, Swapper, fast_switching, snapshot

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symlinks, hard links and rename swaps need POSIX")

DAY_MS = 1_767_268_800_000  # 2026-01-01T12:00Z
DAY_NOTE = "2026-01-01.md"


def workspace_files(ws: Path) -> list[str]:
    """Every file and folder below ``ws`` (hidden ones too), workspace-relative."""
    return sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*"))


# ---- the LanceDB mirror (issue 32 item 2, issue 30 item 16) ---------------------------------------------


@pytest.fixture
def long_term(tmp_path: Path, fake_provider):
    pytest.importorskip("lancedb")
    from openclaw_memory.long_term import LongTermMemory

    opened = []

    def make(ws: Path):
        memory = LongTermMemory(tmp_path / "lancedb", provider=fake_provider, mirror_workspace=ws, tz="UTC")
        opened.append(memory)
        return memory

    yield make
    for memory in opened:
        memory.close()


def test_forget_never_rewrites_a_note_through_a_symlinked_memory_folder(long_term, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ltm = long_term(ws)
    stored = ltm.store("Lunch with Dana on Friday")
    assert stored.mirror_path is not None
    # the user moves the notes folder elsewhere and links it back: the note now lies outside the workspace
    outside = tmp_path / "outside"
    (ws / "memory").rename(outside)
    (ws / "memory").symlink_to(outside, target_is_directory=True)
    with (outside / Path(stored.mirror_path).name).open("a", encoding="utf-8") as fh:
        fh.write("hand-written outside line\n")
    before = snapshot(outside)
    ltm.forget(memory_id=stored.record.id)
    assert snapshot(outside) == before, "forget rewrote a file outside the workspace (or left a lock file there)"


def test_mirror_remove_through_a_symlinked_folder_is_refused_by_name(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    ws.mkdir()
    (outside / DAY_NOTE).write_text(mirror_line("m1", "a memory", "fact") + "\n", encoding="utf-8")
    (ws / "memory").symlink_to(outside, target_is_directory=True)
    with pytest.raises(MemoryPathError, match="symbolic link"):
        MarkdownMirror(ws, tz="UTC").remove("m1", DAY_MS)
    assert sorted(os.listdir(outside)) == [DAY_NOTE]


def test_forget_never_writes_outside_while_the_memory_folder_is_swapped(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "memory").mkdir(parents=True)
    outside.mkdir()
    ids = [f"m{i:05d}" for i in range(5000)]
    # the outside namesake holds every memory's line: a remove that follows the symlink changes it
    (outside / DAY_NOTE).write_text(
        f"# {SECRET}\n" + "".join(mirror_line(i, "remember this", "fact") + "\n" for i in ids), encoding="utf-8")
    before = snapshot(outside)
    mirror = MarkdownMirror(ws, tz="UTC")
    removed = refused = 0
    unexpected: list[BaseException] = []
    deadline = time.monotonic() + RUN_S
    with fast_switching(), Swapper(ws / "memory", outside) as swapper:
        for memory_id in ids:
            if time.monotonic() > deadline:
                break
            try:
                mirror.append(memory_id, "remember this", "fact", DAY_MS)
                removed += bool(mirror.remove(memory_id, DAY_MS))
            except MemoryPathError:
                refused += 1
            except OSError as exc:
                unexpected.append(exc)
    print(f"mirror: {removed} removed, {refused} refused, {swapper.swaps} swaps")
    assert swapper.swaps > 50 and removed > 0
    assert snapshot(outside) == before, f"the outside folder changed: {sorted(snapshot(outside))}"
    assert not unexpected, f"raw errors: {unexpected[:3]}"


def test_forget_deletes_a_note_it_emptied_and_keeps_hand_written_ones(long_term, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ltm = long_term(ws)
    only = ltm.store("The deploy server is called atlas")
    note = ws / str(only.mirror_path)
    ltm.forget(memory_id=only.record.id)
    assert not note.exists(), "a daily note holding only the mirror's line was left empty"
    assert workspace_files(ws) == ["memory"], "lock or temporary files were left in the notes folder"

    mixed = ltm.store("I prefer tea with lemon")
    with note.open("a", encoding="utf-8") as fh:
        fh.write("hand-written line\n")
    ltm.forget(memory_id=mixed.record.id)
    assert note.read_text(encoding="utf-8") == "hand-written line\n"
    assert workspace_files(ws) == ["memory", f"memory/{note.name}"]


# ---- no litter from any writer (issue 30 item 16) -------------------------------------------------------


def test_appends_rewrites_and_store_items_leave_no_lock_or_temp_file(memory_store) -> None:
    store, ws = memory_store
    append_memory(ws, f"memory/{DAY_NOTE}", "- an appended line")
    store.put(("users", "u1"), "k1", {"data": "first"}, index=False)
    store.put(("users", "u1"), "k1", {"data": "second"}, index=False)  # a rewrite of the file
    store.put(("users", "u1"), "k2", {"data": "other"}, index=False)
    store.delete(("users", "u1"), "k2")
    files = workspace_files(ws)
    assert [f for f in files if Path(f).name.startswith(".")] == [], f"hidden litter: {files}"
    assert store.get(("users", "u1"), "k1").value == {"data": "second"}


def test_legacy_lock_files_are_cleared_by_the_next_write(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / f".{DAY_NOTE}.lock").touch()  # left by an earlier version
    (ws / "memory" / ".keep.lock").write_text("not ours: it has content\n", encoding="utf-8")
    append_memory(ws, f"memory/{DAY_NOTE}", "- a line")
    assert workspace_files(ws) == ["memory", "memory/.keep.lock", f"memory/{DAY_NOTE}"]


# ---- hard links (issue 32 item 4) -----------------------------------------------------------------------


@pytest.fixture
def hard_linked(tmp_path: Path, write) -> tuple[Path, Path]:
    outside = tmp_path / "outside.md"
    outside.write_text(f"{SECRET} outside the workspace\n", encoding="utf-8")
    ws = write({"MEMORY.md": "# root\n"})
    (ws / "memory").mkdir(exist_ok=True)
    os.link(outside, ws / "memory" / DAY_NOTE)
    return ws, outside


def test_writes_refuse_a_hard_linked_note(hard_linked: tuple[Path, Path]) -> None:
    ws, outside = hard_linked
    rel = f"memory/{DAY_NOTE}"
    with pytest.raises(MemoryPathError, match="hard link"):
        append_memory(ws, rel, "- must not reach the outside file")
    with pytest.raises(MemoryPathError, match="hard link"):
        RecordFiles(ws, "item").edit(rel, lambda cur: append_record(cur.text, render_record("item", {"key": "k"}, "v")))
    (ws / "memory" / "extra.md").write_text(mirror_line("m1", "x", "fact") + "\n", encoding="utf-8")
    os.link(ws / "memory" / "extra.md", ws / "memory" / "twin.md")
    with pytest.raises(MemoryPathError, match="hard link"):
        MarkdownMirror(ws, tz="UTC").remove("m1")
    assert outside.read_text(encoding="utf-8") == f"{SECRET} outside the workspace\n"
    assert os.stat(outside).st_nlink == 2  # still linked: nothing replaced the name either


def test_reads_refuse_a_hard_linked_note(hard_linked: tuple[Path, Path], make_index) -> None:
    ws, _ = hard_linked
    idx: MemoryIndex = make_index(None)
    got = memory_get(idx, f"memory/{DAY_NOTE}")
    assert got.get("disabled") and "hard link" in got["error"] and SECRET not in got["text"]
    report = idx.sync()
    assert f"memory/{DAY_NOTE}" in report.files_skipped
    assert not any(SECRET in chunk.text for chunk in idx.store.iter_chunks())


# ---- memory_get's size cap (issue 32 item 12) -----------------------------------------------------------


def test_memory_get_cuts_a_huge_one_line_note_and_says_so(write, make_index) -> None:
    write({"memory/huge.md": "x" * 2_000_000 + "\nsecond line\n"})
    idx: MemoryIndex = make_index(None)
    got = memory_get(idx, "memory/huge.md", from_line=1, lines=1)
    assert got["truncated"] is True and len(got["text"]) < MEMORY_GET_MAX_CHARS + 200
    assert got["text"].startswith("x" * MEMORY_GET_MAX_CHARS) and "was cut" in got["text"]
    assert (got["start_line"], got["end_line"]) == (1, 1)
    whole = memory_get(idx, "memory/huge.md")
    assert whole["truncated"] and whole["next_from_line"] == 2 and len(whole["text"]) < MEMORY_GET_MAX_CHARS + 200


def test_memory_get_keeps_whole_lines_and_tells_where_to_read_on(write, make_index) -> None:
    lines = [f"line {i:05d} " + "y" * 90 for i in range(1, 1001)]
    write({"memory/long.md": "\n".join(lines) + "\n"})
    idx: MemoryIndex = make_index(None)
    got = memory_get(idx, "memory/long.md")
    body, notice = got["text"].rsplit("\n\n", 1)
    assert len(body) <= MEMORY_GET_MAX_CHARS and body.split("\n") == lines[:got["end_line"]]
    assert got["truncated"] and f"from_line={got['next_from_line']}" in notice
    follow = memory_get(idx, "memory/long.md", from_line=got["next_from_line"], lines=3)
    assert follow["text"] == "\n".join(lines[got["end_line"]:got["end_line"] + 3]) and "truncated" not in follow


# ---- permissive policies and races: MemoryPathError, never a raw OSError (issue 32 item 13) -------------


@pytest.mark.parametrize("path", ["memory", "memory/" + "a" * 5000 + ".md", "memory/" + "b" * 300 + "/x.md",
                                  123, None, b"memory/x.md"])
def test_a_permissive_policy_still_gets_memory_path_errors(tmp_path: Path, path: object) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    with pytest.raises(MemoryPathError):
        append_memory(ws, path, "- a line", allowed=lambda rel: True)  # type: ignore[arg-type]
    if isinstance(path, str):
        with pytest.raises(MemoryPathError):
            RecordFiles(ws, "item").edit(path, lambda cur: "text\n", create=True)
    assert workspace_files(ws) == ["memory"]


@pytest.fixture
def memory_store(make_index, write, fake_provider):
    from langchain_openclaw_memory import OpenClawMemoryStore

    ws = write({"MEMORY.md": "# root\n"})
    return OpenClawMemoryStore(make_index(fake_provider)), ws


def test_store_put_never_writes_outside_or_raises_raw_errors_while_its_folder_is_swapped(memory_store,
                                                                                         tmp_path: Path) -> None:
    store, ws = memory_store
    ns = ("users", "u1")
    store.put(ns, "k", {"data": "v0"}, index=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "u1.md").write_text(f"{SECRET}\n", encoding="utf-8")
    before = snapshot(outside)
    written = refused = 0
    unexpected: list[BaseException] = []
    deadline = time.monotonic() + RUN_S
    with fast_switching(), Swapper(ws / "memory" / "store" / "users", outside) as swapper:
        while time.monotonic() < deadline:
            try:
                store.put(ns, "k", {"data": f"v{written + refused}"}, index=False)  # an existing key: a rewrite
                written += 1
            except MemoryPathError:
                refused += 1
            except Exception as exc:  # noqa: BLE001  (the assertion names it)
                unexpected.append(exc)
    print(f"store put: {written} written, {refused} refused, {swapper.swaps} swaps")
    assert swapper.swaps > 50 and written > 0
    assert snapshot(outside) == before, f"the outside folder changed: {sorted(snapshot(outside))}"
    assert not unexpected, f"raw errors: {unexpected[:3]}"


# ---- one lock per file, whatever the process (issue 30 item 16) -----------------------------------------


_REWRITER = textwrap.dedent("""
    import sys
    from openclaw_memory.files.records import RecordFiles, append_record, render_record
    ws, rel, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    files = RecordFiles(ws, "item")
    for i in range(n):
        block = render_record("item", {"key": f"k{i}"}, f"value {i}")
        files.edit(rel, lambda cur: append_record(cur.text, block), create=True)
""")
_APPENDER = textwrap.dedent("""
    import sys
    from openclaw_memory.files.append import append_memory
    ws, rel, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i in range(n):
        append_memory(ws, rel, f"- appended {i}", allowed=lambda r: True)
""")


def test_rewrites_and_appends_from_two_processes_lose_nothing(tmp_path: Path) -> None:
    ws, rel, n = tmp_path / "ws", "memory/shared.md", 150
    (ws / "memory").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(ws), rel, str(n)], env=env)
             for code in (_REWRITER, _APPENDER, _APPENDER.replace("appended", "second"))]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    text = (ws / rel).read_text(encoding="utf-8")
    for word in ("appended", "second"):
        assert [line for line in text.split("\n") if line.startswith(f"- {word} ")] == [
            f"- {word} {i}" for i in range(n)]
    assert sum(f"value {i}\n" in text for i in range(n)) == n
    assert workspace_files(ws) == ["memory", "memory/shared.md"]


def test_session_memory_never_lands_outside_while_the_memory_folder_is_swapped(tmp_path: Path) -> None:
    from openclaw_memory.config import MemoryConfig
    from openclaw_memory.agent.session_hook import save_session_memory

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    config = MemoryConfig(workspace=ws, timezone="UTC")
    messages = [{"role": "user", "content": "we chose SQLite"}, {"role": "assistant", "content": "noted"}]
    saved = refused = 0
    unexpected: list[OSError] = []
    deadline = time.monotonic() + RUN_S
    with fast_switching(), Swapper(ws / "memory", outside) as swapper:
        while time.monotonic() < deadline:
            try:
                save_session_memory(config, messages, slug_fn=lambda prompt: f"s{saved}-{refused}-{len(unexpected)}")
                saved += 1
            except MemoryPathError:
                refused += 1
            except OSError as exc:
                unexpected.append(exc)
    print(f"session memory: {saved} saved, {refused} refused, {len(unexpected)} raw errors, {swapper.swaps} swaps")
    assert swapper.swaps > 50 and saved > 0
    assert sorted(os.listdir(outside)) == [], "session memory files were written outside the workspace"
    assert not unexpected, f"raw errors: {unexpected[:3]}"


_CYCLER = textwrap.dedent("""
    import sys
    from openclaw_memory.long_term.mirror import MarkdownMirror
    ws, who, n, day_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    mirror = MarkdownMirror(ws, tz="UTC")
    lost = 0
    for i in range(n):
        memory_id = f"{who}-{i}"
        mirror.append(memory_id, f"memory {i} of {who}", "fact", day_ms)
        lost += mirror.remove(memory_id, day_ms) != ["memory/2026-01-01.md"]
    print(lost)
""")


def test_appends_never_land_in_a_note_another_process_just_deleted(tmp_path: Path) -> None:
    """Two processes each append a mirror line and remove it again, so the note keeps being deleted
    (left blank) and made anew: an append that waited for the lock of a note deleted meanwhile must
    go to the new note, never to the deleted one (its remove would then find nothing)."""
    ws, n = tmp_path / "ws", 120
    ws.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", _CYCLER, str(ws), who, str(n), str(DAY_MS)], env=env,
                              stdout=subprocess.PIPE, text=True) for who in ("a", "b")]
    outputs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outputs == ["0", "0"], f"memories whose line was not found again: {outputs}"
    assert workspace_files(ws) == ["memory"]
