"""Session bootstrap context: today + yesterday, MEMORY.md only in direct sessions, budget."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from openclaw_memory.agent.bootstrap import build_session_context
from openclaw_memory.agent.tools import memory_recall_prompt
from openclaw_memory.config import MemoryConfig

NOW = datetime(2026, 1, 16, 10, 0, tzinfo=timezone.utc)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "memory").mkdir()
    (tmp_path / "MEMORY.md").write_text("# Long term\n- prefers tea\n")
    (tmp_path / "memory" / "2026-01-16.md").write_text("today: shipped v1\n")
    (tmp_path / "memory" / "2026-01-15.md").write_text("yesterday: planned v1\n")
    (tmp_path / "memory" / "2026-01-14.md").write_text("two days ago: kickoff\n")
    return tmp_path


def test_private_session_includes_memory_md_and_two_days(ws: Path) -> None:
    out = build_session_context(MemoryConfig(workspace=ws, timezone="UTC"), now=NOW)
    assert "prefers tea" in out
    assert "today: shipped v1" in out and "yesterday: planned v1" in out
    assert "kickoff" not in out
    assert "### memory/2026-01-16.md (today)" in out
    assert "### memory/2026-01-15.md (yesterday)" in out
    assert "## Memory Recall" in out and "memory_search" in out


@pytest.mark.parametrize("kind", ["group", "channel"])
def test_group_and_channel_sessions_exclude_memory_md(ws: Path, kind: str) -> None:
    out = build_session_context(MemoryConfig(workspace=ws, timezone="UTC"), session_kind=kind, now=NOW)  # type: ignore[arg-type]
    assert "prefers tea" not in out and "MEMORY.md (" not in out
    assert "today: shipped v1" in out
    # citations "auto" are off outside direct sessions
    assert "Citations are disabled" in out


def test_lowercase_memory_md_fallback(tmp_path: Path) -> None:
    (tmp_path / "memory.md").write_text("lowercase long-term\n")
    out = build_session_context(MemoryConfig(workspace=tmp_path, timezone="UTC"), now=NOW)
    assert "### memory.md (long-term memory)" in out and "lowercase long-term" in out


def test_dates_follow_configured_timezone(ws: Path) -> None:
    late = datetime(2026, 1, 15, 20, 0, tzinfo=timezone.utc)  # 2026-01-16 05:00 in Tokyo
    tokyo = build_session_context(MemoryConfig(workspace=ws, timezone="Asia/Tokyo"), now=late)
    assert "today: shipped v1" in tokyo
    utc = build_session_context(MemoryConfig(workspace=ws, timezone="UTC"), now=late)
    assert "today: shipped v1" not in utc and "kickoff" in utc


def test_recall_instructions_optional_and_overridable(ws: Path) -> None:
    cfg = MemoryConfig(workspace=ws, timezone="UTC")
    assert "Memory Recall" not in build_session_context(cfg, now=NOW, include_recall_instructions=False)
    custom = build_session_context(cfg, now=NOW, recall_prompt="## Recall\nUse the tools.")
    assert custom.rstrip().endswith("## Recall\nUse the tools.")
    assert "memory_search on MEMORY.md" not in custom
    assert "session transcripts" in memory_recall_prompt(MemoryConfig(sources=["memory", "sessions"]))
    assert "Citations are disabled" in memory_recall_prompt(MemoryConfig(citations="off"))


def test_empty_workspace(tmp_path: Path) -> None:
    cfg = MemoryConfig(workspace=tmp_path / "missing", timezone="UTC")
    assert build_session_context(cfg, now=NOW, include_recall_instructions=False) == ""
    assert build_session_context(cfg, now=NOW).startswith("## Memory Recall")


def test_truncation_marker_names_path_and_line(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    lines = [f"line {i:03d} " + "x" * 40 for i in range(1, 301)]
    (tmp_path / "MEMORY.md").write_text("\n".join(lines) + "\n")
    (tmp_path / "memory" / "2026-01-16.md").write_text("small today note\n")
    out = build_session_context(MemoryConfig(workspace=tmp_path, timezone="UTC"), now=NOW, max_chars=3000)
    assert len(out) <= 3000
    assert "small today note" in out  # a big MEMORY.md does not starve the daily note
    m = re.search(
        r'truncated: MEMORY\.md continues at line (\d+) of 300; use memory_get\(path="MEMORY\.md", from=(\d+)\)', out
    )
    assert m and m.group(1) == m.group(2)
    cont = int(m.group(1))
    assert f"line {cont - 1:03d}" in out and f"line {cont:03d}" not in out
    assert "## Memory Recall" in out


@pytest.mark.parametrize("max_chars", [600, 1000, 2500, 5000, 20_000])
def test_output_never_exceeds_budget(tmp_path: Path, max_chars: int) -> None:
    (tmp_path / "memory").mkdir()
    for rel in ("MEMORY.md", "memory/2026-01-16.md", "memory/2026-01-15.md"):
        (tmp_path / rel).write_text("\n".join("中文 note " * 5 for _ in range(400)))
    out = build_session_context(MemoryConfig(workspace=tmp_path, timezone="UTC"), now=NOW, max_chars=max_chars)
    assert len(out) <= max_chars
    assert out.count("use memory_get(") == 3


def test_whole_file_dropped_when_no_line_fits(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("y" * 5000)
    out = build_session_context(MemoryConfig(workspace=tmp_path, timezone="UTC"), now=NOW, max_chars=800)
    assert "MEMORY.md not shown (1 lines)" in out and "from=1)" in out
    assert "yyyy" not in out


def test_rejects_bad_arguments(tmp_path: Path) -> None:
    cfg = MemoryConfig(workspace=tmp_path)
    with pytest.raises(ValueError, match="session_kind"):
        build_session_context(cfg, session_kind="public")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_chars"):
        build_session_context(cfg, max_chars=10)


def test_symlinked_memory_md_is_not_loaded(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("outside secret\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").symlink_to(secret)
    out = build_session_context(MemoryConfig(workspace=ws, timezone="UTC"), now=NOW)
    assert "outside secret" not in out
