"""Property-based tests (hypothesis) of ``memory_get`` with hostile paths and line arguments: it
never reads outside the workspace and its extra paths, never follows a symlink, and never raises
(a refused path or argument is the documented error payload) (issue 20, standing suite).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openclaw_memory import MemoryIndex
from openclaw_memory.files.discovery import resolve_memory_path
from openclaw_memory.errors import MemoryPathError
from openclaw_memory.agent.tools import memory_get

SECRET = "OUTSIDESECRET"
PROFILE = settings(max_examples=200, deadline=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("paths")
    ws, outside, extra = base / "ws", base / "outside", base / "extra"
    for d in (ws / "memory" / "sub", outside / "memory", extra / "notes"):
        d.mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# inside root\n", encoding="utf-8")
    (ws / "memory" / "a.md").write_text("# inside a\nline 2\n", encoding="utf-8")
    (ws / "memory" / "sub" / "b.md").write_text("# inside b\n", encoding="utf-8")
    (ws / "notes.md").write_text("# inside but not a memory file\n", encoding="utf-8")
    (extra / "notes" / "e.md").write_text("# inside extra\n", encoding="utf-8")
    for name in ("secret.md", "MEMORY.md", "a.md", "memory/a.md"):
        (outside / name).write_text(f"{SECRET}\n", encoding="utf-8")
    (ws / "memory" / "link.md").symlink_to(outside / "secret.md")
    (ws / "memory" / "linkdir").symlink_to(outside)
    (ws / "escape").symlink_to(outside)
    (extra / "notes" / "out").symlink_to(outside)
    os.mkfifo(ws / "memory" / "fifo.md")  # must never block a read
    idx = MemoryIndex(workspace=ws, store={"path": str(base / "index.sqlite")}, watch=False,
                      extra_paths=[str(extra)])
    yield ws, outside, extra, idx
    idx.close()


def _parts(ws: Path, outside: Path, extra: Path) -> st.SearchStrategy[str]:
    words = st.sampled_from([
        "..", ".", "", "memory", "sub", "a.md", "b.md", "link.md", "linkdir", "escape", "secret.md", "MEMORY.md",
        "memory.md", "notes.md", "outside", "notes", "e.md", "out", "fifo.md", "~", "%2e%2e", "..\\..", "a.md\x00",
        "A.MD", "a.md/", " a.md", "a.md ", "\u2024\u2024", "memory\\sub", "con", "*", "?",
    ]) | st.text(max_size=8)
    rel = st.tuples(st.lists(words, max_size=7), st.sampled_from(["/", "\\", "//"])).map(lambda t: t[1].join(t[0]))
    prefixes = st.sampled_from(["", "/", "./", "../", str(ws) + "/", str(outside) + "/", str(extra) + "/",
                                str(ws / "memory") + "/", "~/", "\\\\?\\", "C:\\"])
    return st.builds(lambda p, r: p + r, prefixes, rel)


def _line_args() -> st.SearchStrategy[object]:
    return (st.none() | st.integers(-10**12, 10**12) | st.floats(allow_nan=True, allow_infinity=True)
            | st.booleans() | st.text(max_size=6) | st.sampled_from(["2", " 3 ", "1e3", "nan", "-1", "0x10"])
            | st.lists(st.integers(), max_size=2))


@PROFILE
@given(data=st.data())
def test_memory_get_never_escapes_and_never_raises(env, data):
    ws, outside, extra, idx = env
    path = data.draw(_parts(ws, outside, extra) | st.text(max_size=40), label="path")
    from_line, lines = data.draw(_line_args(), label="from"), data.draw(_line_args(), label="lines")
    got = memory_get(idx, path, from_line, lines)  # must not raise
    assert isinstance(got, dict) and isinstance(got.get("text"), str)
    assert SECRET not in got["text"]
    if "error" in got:
        assert got["disabled"] is True and got["text"] == "" and got["error"]
    else:
        assert set(got) - {"exists"} == {"path", "text", "start_line", "end_line"}
        if "exists" in got:  # only for a missing (allowed) file, which has no text
            assert got["exists"] is False and got["text"] == ""
        assert got["start_line"] >= 1 and got["end_line"] >= got["start_line"] - 1
        if got["text"]:
            assert got["text"].startswith("# inside") or got["start_line"] > 1


@PROFILE
@given(data=st.data())
def test_resolved_paths_stay_in_the_allowed_roots_or_are_refused(env, data):
    ws, outside, extra, _ = env
    path = data.draw(_parts(ws, outside, extra) | st.text(max_size=40), label="path")
    try:
        abs_path, rel = resolve_memory_path(ws, [extra], path)
    except MemoryPathError as exc:
        assert str(exc)
        return
    assert abs_path.name.endswith(".md")
    root = extra if abs_path.is_relative_to(extra) else ws
    assert abs_path.is_relative_to(root)
    current = root
    for part in abs_path.relative_to(root).parts:  # no symlink anywhere below the root
        current = current / part
        assert not current.is_symlink(), f"{path!r} resolved through the symlink {current}"
    assert os.path.realpath(abs_path).startswith((os.path.realpath(ws) + os.sep, os.path.realpath(extra) + os.sep))
    assert rel == os.path.relpath(abs_path, ws).replace(os.sep, "/")


@PROFILE
@given(value=_line_args())
def test_line_arguments_are_truncated_or_refused(env, value):
    idx = env[3]
    got = memory_get(idx, "memory/a.md", value, None)
    if "error" in got:
        assert "from_line" in got["error"]
    else:
        expected = max(1, math.trunc(float(str(value).strip())) if value is not None else 1)
        assert got["start_line"] == expected
