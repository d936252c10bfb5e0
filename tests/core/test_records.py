"""Records (openclaw_memory.files.records): the marker-delimited blocks adapters write into memory files."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from openclaw_memory.files.append import append_memory
from openclaw_memory.errors import MemoryPathError
from openclaw_memory.files.records import (
    RecordFiles,
    append_record,
    parse_records,
    remove_records,
    render_record,
    replace_record,
)

HAND = "# Notes\n\nHand-written line.\n"


def test_render_parse_replace_and_append_round_trip() -> None:
    a = render_record("item", {"key": "a", "note": "x --> y"}, "first\nsecond")
    text = append_record(append_record(HAND, a), render_record("item", {"key": "b"}, "other"))
    assert text.startswith(HAND + "\n<!-- openclaw-memory:item ")
    recs = parse_records(text, "item")
    assert [(r.attrs["key"], r.body) for r in recs] == [("a", "first\nsecond"), ("b", "other")]
    assert recs[0].attrs["note"] == "x --> y" and a.count("-->") == 2  # the value cannot end the comment
    assert text.split("\n")[recs[0].start_line - 1:recs[0].end_line] == ["first", "second"]
    assert parse_records(text, "node") == []  # another kind's records are hand-written text to it
    swapped = replace_record(text, recs[0], render_record("item", {"key": "a"}, "new"))
    assert swapped.startswith(HAND) and [r.body for r in parse_records(swapped, "item")] == ["new", "other"]
    assert append_record("", a, header="# Items") == "# Items\n\n" + a


def test_remove_keeps_every_other_byte() -> None:
    a, b = render_record("node", {"id": "a"}, "A"), render_record("node", {"id": "b"}, "B")
    text = HAND + "\n" + a + "\n" + b
    recs = parse_records(text, "node")
    assert remove_records(text, recs[:1]) == HAND + "\n" + b
    assert remove_records(text, recs) == HAND
    assert remove_records(text, []) == text


def test_check_and_malformed_markers_make_hand_written_text(caplog: pytest.LogCaptureFixture) -> None:
    good = render_record("node", {"id": "ok"}, "kept")
    text = "<!-- openclaw-memory:node {not json} -->\nx\n<!-- /openclaw-memory:node -->\n" + good
    assert [r.attrs["id"] for r in parse_records(text, "node", where="memory/x.md")] == ["ok"]
    assert "memory/x.md" in caplog.text
    assert parse_records(good, "node", check=lambda a: isinstance(a.get("key"), str)) == []


def test_render_refuses_what_cannot_round_trip() -> None:
    refused = {"has no text": ("  \n", {}), "marker line": ("a\n<!-- /openclaw-memory:item -->", {}),
               "JSON-serializable": ("ok", {"bad": object()}), "kind": ("x", {"nan": float("nan")})}
    for message, (body, attrs) in refused.items():
        with pytest.raises(ValueError, match=message):
            render_record("item" if message != "kind" else "Bad Kind", attrs, body)
    with pytest.raises(ValueError, match="JSON-serializable"):
        render_record("item", {"nan": float("nan")}, "ok")


def test_edit_replaces_atomically_and_deletes_a_file_left_blank(workspace: Path) -> None:
    files = RecordFiles(workspace, "item")
    block = render_record("item", {"key": "k"}, "v")
    assert files.edit("memory/items.md", lambda cur: append_record(cur.text, block)) is False  # missing: no-op
    assert not (workspace / "memory/items.md").exists()
    assert files.edit("memory/items.md", lambda cur: append_record(cur.text, block), create=True)
    path = workspace / "memory/items.md"
    assert path.read_text(encoding="utf-8") == block
    path.chmod(0o600)
    assert files.edit("memory/items.md", lambda cur: HAND + "\n" + cur.text)
    assert path.stat().st_mode & 0o777 == 0o600  # the file's mode is kept

    def broken(cur: object) -> str:
        raise RuntimeError("boom")

    before = path.read_bytes()
    with pytest.raises(RuntimeError):
        files.edit("memory/items.md", broken)
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["items.md"]  # no temp or lock file left
    assert files.remove(["memory/items.md"], lambda rel, r: True) == 1
    assert path.read_text(encoding="utf-8") == HAND
    assert files.edit("memory/items.md", lambda cur: "\n") and not path.exists()


def test_edit_never_follows_a_symlink(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text(HAND, encoding="utf-8")
    (workspace / "memory").mkdir()
    (workspace / "memory/link").symlink_to(outside, target_is_directory=True)
    (workspace / "memory/file.md").symlink_to(outside / "x.md")
    files = RecordFiles(workspace, "item")
    for rel in ("memory/link/x.md", "memory/file.md"):
        with pytest.raises(MemoryPathError, match="symlink"):
            files.edit(rel, lambda cur: cur.text + "more\n", create=True)
    assert (outside / "x.md").read_text(encoding="utf-8") == HAND and sorted(outside.iterdir()) == [outside / "x.md"]
    with pytest.raises(MemoryPathError, match=r"\.\."):
        files.edit("../x.md", lambda cur: "x")


def test_edits_and_appends_at_once_lose_nothing(workspace: Path) -> None:
    files = RecordFiles(workspace, "item")
    rel = "memory/log.md"

    def edits() -> None:
        for i in range(15):
            files.edit(rel, lambda cur, i=i: append_record(cur.text, render_record("item", {"key": f"e{i}"}, "v")),
                       create=True)

    def appends() -> None:
        for i in range(15):
            append_memory(workspace, rel, f"- appended {i}", allowed={rel})

    threads = [threading.Thread(target=edits), threading.Thread(target=appends)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    text = (workspace / rel).read_text(encoding="utf-8")
    assert sorted(r.attrs["key"] for r in parse_records(text, "item")) == sorted(f"e{i}" for i in range(15))
    assert all(f"- appended {i}\n" in text for i in range(15))


def test_appends_and_rewrites_refuse_a_non_directory_component_with_one_message(workspace: Path) -> None:
    """One refusal for both writers (issue 17: append.py and records.py each had their own): it
    names what was refused, the offending component and the rule."""
    (workspace / "memory").write_text("not a folder\n", encoding="utf-8")
    with pytest.raises(MemoryPathError) as appended:
        append_memory(workspace, "memory/x.md", "- a line", allowed={"memory/x.md"})
    with pytest.raises(MemoryPathError) as rewritten:
        RecordFiles(workspace, "item").edit("memory/x.md", lambda cur: "- a line\n", create=True)
    rule = "memory files must be regular files inside the workspace (no symlink is followed)"
    where = str(workspace / "memory")
    assert str(appended.value).startswith(f"refusing to append to memory/x.md through {where}: it ")
    assert str(rewritten.value).startswith(f"refusing to rewrite memory/x.md through {where}: it ")
    assert str(appended.value).endswith(rule) and str(rewritten.value).endswith(rule)
    assert (workspace / "memory").read_text(encoding="utf-8") == "not a folder\n"
