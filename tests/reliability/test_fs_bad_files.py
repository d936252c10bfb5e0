"""Bad files and names never disable the index (issue 20, items 1, 7 and 8): a file name that is
not valid UTF-8, ~1,000 nested directories, binary files, a symlink that vanishes mid-sync.

Real names on disk: ``os.fsencode`` bytes, as unzipping an old archive leaves them.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from openclaw_memory.files import discovery
from openclaw_memory.cli import main
from openclaw_memory.files.discovery import MAX_DIR_DEPTH, list_memory_files, scan_memory_files

BAD_NAME = b"caf\xe9 notes.md"  # Latin-1 "café": not valid UTF-8
BAD_SHOWN = "memory/caf\\xe9 notes.md"

pytestmark = pytest.mark.skipif(sys.platform in ("win32", "darwin"),
                                reason="the filesystem must accept names that are not UTF-8")


def make_bad_file(ws: Path, name: bytes = BAD_NAME, text: str = "# old archive\nzanzibar ledger\n") -> bytes:
    path = os.path.join(os.fsencode(ws / "memory"), name)
    with open(path, "wb") as fh:
        fh.write(text.encode("utf-8"))
    return path


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def base(ws: Path, tmp_path: Path) -> list[str]:
    return ["--workspace", str(ws), "--store", str(tmp_path / "cli.sqlite"), "--provider", "none"]


NOTES = {"MEMORY.md": "# Memory\n- Priya runs the deployment pipeline.\n",
         "memory/2026-11-20.md": "# 2026-11-20\n- Root cause was commit a828e60.\n"}


# ---- item 1: a file name that is not valid UTF-8 --------------------------------------------------


def test_first_index_skips_and_reports_a_name_that_is_not_utf8(write, make_index, fake_provider):
    ws = write(NOTES)
    make_bad_file(ws)
    idx = make_index(fake_provider)
    report = idx.sync()
    assert report.files_skipped == [BAD_SHOWN]
    assert any(BAD_SHOWN in w and "not valid UTF-8" in w for w in report.warnings)
    assert {c.path for c in idx.store.iter_chunks()} == {"MEMORY.md", "memory/2026-11-20.md"}
    assert idx.search("a828e60").hits
    assert any(BAD_SHOWN in issue for issue in idx.status().issues)


def test_later_syncs_keep_working_with_a_name_that_is_not_utf8(write, make_index, fake_provider):
    ws = write(NOTES | {"memory/old.md": "# old\n- obsolete kumquat note\n"})
    idx = make_index(fake_provider)
    idx.sync()
    make_bad_file(ws)
    (ws / "memory" / "old.md").unlink()  # a deleted note must leave the index
    (ws / "MEMORY.md").write_text("# Memory\n- Priya hands the pipeline to Tomasz.\n", encoding="utf-8")
    report = idx.sync()
    assert report.files_deleted == 1 and report.files_indexed == 1 and report.files_skipped == [BAD_SHOWN]
    assert not idx.search("kumquat").hits
    assert idx.search("Tomasz").hits


def test_a_directory_whose_name_is_not_utf8_is_skipped_with_its_files(write, make_index):
    ws = write(NOTES)
    bad_dir = os.path.join(os.fsencode(ws / "memory"), b"\xff\xfe-archive")
    os.mkdir(bad_dir)
    with open(os.path.join(bad_dir, b"inside.md"), "wb") as fh:
        fh.write(b"# inside\nzanzibar\n")
    report = make_index(None).sync()
    assert report.files_indexed == 2
    assert any("\\xff\\xfe-archive" in w and "directory name is not valid UTF-8" in w for w in report.warnings)


def test_a_transcript_name_that_is_not_utf8_is_skipped(write, make_index, tmp_path):
    ws = write(NOTES)
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    line = json.dumps({"type": "message", "message": {"role": "user", "content": "hello zanzibar"}})
    (sessions / "good.jsonl").write_text(line + "\n", encoding="utf-8")
    with open(os.path.join(os.fsencode(sessions), b"\xe9t\xe9.jsonl"), "wb") as fh:
        fh.write((line + "\n").encode())
    idx = make_index(None, sources=["memory", "sessions"], experimental={"sessionMemory": True},
                     sessions_dir=str(sessions))
    report = idx.sync()
    assert "sessions/\\xe9t\\xe9.jsonl" in report.files_skipped
    assert {c.path for c in idx.store.iter_chunks()} >= {"MEMORY.md", "sessions/good.jsonl"}
    assert ws.is_dir()


def test_cli_index_and_search_work_and_report_the_name(write, tmp_path):
    ws = write(NOTES)
    make_bad_file(ws)
    res = run(*base(ws, tmp_path), "index")
    assert res.exit_code == 0, res.output
    assert "2 indexed" in res.output and BAD_SHOWN in res.output and "not valid UTF-8" in res.output
    res = run(*base(ws, tmp_path), "search", "a828e60")
    assert res.exit_code == 0 and "memory/2026-11-20.md" in res.output
    res = run(*base(ws, tmp_path), "status")
    assert res.exit_code == 0 and BAD_SHOWN in res.output


# ---- item 7: deep nesting -----------------------------------------------------------------------------


def _nest(root: Path, depth: int) -> Path:
    """root/d/d/.../d (``depth`` levels) made with relative mkdirs (the full path exceeds PATH_MAX)."""
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        with open(os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
            fh.write("# bottom\n- deepest zanzibar\n")
    finally:
        os.close(fd)
    return root


def _remove_nested(root: Path) -> None:
    """Delete what :func:`_nest` made, deepest level first and without recursion (``shutil.rmtree`` and
    pytest's own temp-dir cleanup recurse, and fail with RecursionError at this depth)."""
    depth = 0
    while (root / ("d/" * (depth + 1))).is_dir():
        depth += 1
    for level in range(depth, 0, -1):
        here = root / ("d/" * level)
        for entry in os.scandir(here):
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        os.rmdir(here)


@pytest.fixture
def nest(request):
    """``_nest``, with the deep tree removed after the test."""
    def make(root: Path, depth: int) -> Path:
        request.addfinalizer(lambda: _remove_nested(root))
        return _nest(root, depth)
    return make


def test_a_thousand_nested_directories_index_and_search_with_a_warning(write, make_index, caplog, nest):
    ws = write(NOTES | {"memory/d/d/shallow.md": "# shallow\n- shallow quokka\n"})
    nest(ws / "memory" / "d" / "d", 1000)
    idx = make_index(None)
    with caplog.at_level(logging.WARNING, logger="openclaw_memory.files.discovery"):
        report = idx.sync()
    assert report.files_indexed == 3  # MEMORY.md, the daily note, shallow.md: the deep file is past the cap
    assert any(f"nested more than {MAX_DIR_DEPTH} directories deep" in w for w in report.warnings)
    assert "directories deep" in caplog.text
    assert idx.search("quokka").hits and not idx.search("zanzibar").hits


def test_files_within_the_depth_cap_are_indexed(write, make_index, nest):
    ws = write(NOTES)
    nest(ws / "memory", MAX_DIR_DEPTH)
    files = list_memory_files(ws, [])
    assert len(files) == 3 and files[-1].name == "deep.md"
    assert not scan_memory_files(ws, []).skipped


def test_cli_index_and_search_survive_deep_nesting(write, tmp_path, nest):
    ws = write(NOTES)
    nest(ws / "memory", 1000)
    res = run(*base(ws, tmp_path), "index")
    assert res.exit_code == 0, res.output
    res = run(*base(ws, tmp_path), "search", "a828e60")
    assert res.exit_code == 0 and "memory/2026-11-20.md" in res.output


# ---- item 8: skipped files are not pending changes; a vanishing symlink --------------------------


@pytest.mark.parametrize("kind", ["binary", "bad-name"])
def test_a_skipped_file_does_not_make_searches_report_a_stale_index(write, tmp_path, kind):
    ws = write(NOTES)
    if kind == "binary":
        (ws / "memory" / "scan.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    else:
        make_bad_file(ws)
    assert run(*base(ws, tmp_path), "index").exit_code == 0
    res = run(*base(ws, tmp_path), "search", "--no-sync", "a828e60", "--json")
    payload = json.loads(res.output)
    assert payload["results"] and "stale" not in payload
    res = run(*base(ws, tmp_path), "search", "--no-sync", "zebra xylophone")
    assert "out of date" not in res.output
    # a real edit is still reported
    (ws / "memory" / "2026-11-21.md").write_text("# new\n- kiwi crates\n", encoding="utf-8")
    res = run(*base(ws, tmp_path), "search", "--no-sync", "a828e60")
    assert "out of date" in res.output and "memory/2026-11-21.md" in res.output


def test_a_binary_file_that_becomes_text_is_a_pending_change(write, make_index):
    ws = write(NOTES | {"memory/scan.md": b"\x00binary"})
    idx = make_index(None)
    idx.sync()
    assert idx.changed_files() == []
    (ws / "memory" / "scan.md").write_text("# now text\n", encoding="utf-8")
    assert idx.changed_files() == ["memory/scan.md"]


def test_a_symlink_removed_while_the_sync_resolves_it_does_not_fail_the_sync(write, make_index, monkeypatch):
    ws = write(NOTES)
    real = os.path.realpath

    def vanishing(path, *args, **kwargs):
        # what realpath raises when a link it met is removed before it reads it
        if str(path).endswith("2026-11-20.md"):
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(discovery.os.path, "realpath", vanishing)
    report = make_index(None).sync()
    assert report.files_indexed == 2
    assert ws.is_dir()


def test_symlinks_appearing_and_vanishing_during_syncs_never_fail_them(write, make_index, tmp_path):
    import threading

    ws = write(NOTES)
    target = tmp_path / "target.md"
    target.write_text("# t\n", encoding="utf-8")
    stop = threading.Event()

    def churn() -> None:
        link = ws / "memory" / "flicker.md"
        while not stop.is_set():
            try:
                link.symlink_to(target)
                link.unlink()
                link.write_text("# real for a moment\n", encoding="utf-8")
                link.unlink()
            except OSError:
                pass

    idx = make_index(None)
    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        for _ in range(40):
            idx.sync()
    finally:
        stop.set()
        thread.join(5)
    assert {"MEMORY.md", "memory/2026-11-20.md"} <= {c.path for c in idx.store.iter_chunks()}


def test_a_transcript_with_a_lone_surrogate_escape_is_indexed_not_fatal(write, make_index, tmp_path):
    # found by the hypothesis run over text with surrogates: json.loads("\ud800") gives a str UTF-8 cannot hold;
    # it was skipped whole, with every other message of the transcript: it is U+FFFD
    # (tests/postgres/test_transcript_text.py)
    write(NOTES)
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    good = json.dumps({"type": "message", "message": {"role": "user", "content": "hello zanzibar"}})
    bad = json.dumps({"type": "message", "message": {"role": "user", "content": "bad \ud800 quokka"}})
    (sessions / "good.jsonl").write_text(good + "\n", encoding="utf-8")
    (sessions / "bad.jsonl").write_text(bad + "\n", encoding="ascii")  # json.dumps escapes it: \\ud800
    idx = make_index(None, sources=["memory", "sessions"], experimental={"sessionMemory": True},
                     sessions_dir=str(sessions))
    report = idx.sync()
    assert report.files_skipped == []
    assert idx.search("zanzibar").hits and idx.search("a828e60").hits
    assert any("bad \ufffd quokka" in h.text for h in idx.search("quokka").hits)
