"""Session-memory hook: saved file layout, slug handling, never overwriting."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.agent.session_hook import format_conversation, sanitize_slug, save_session_memory, slug_prompt

NOW = datetime(2026, 1, 16, 14, 30, 5, tzinfo=timezone.utc)


def _messages(n: int) -> list[dict]:
    out = []
    for i in range(n):
        out.append({"role": "user", "content": f"question {i}"})
        out.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]})
    return out


def test_saves_last_messages_with_metadata(tmp_path: Path) -> None:
    cfg = MemoryConfig(workspace=tmp_path, timezone="UTC")
    msgs = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "/new"},
        *_messages(10),
        {"role": "tool", "content": "tool out"},
        {"role": "user", "content": ""},
    ]
    path = save_session_memory(
        cfg, msgs, now=NOW, session_id="abc123", session_key="agent:main:main", source="telegram"
    )
    assert path == tmp_path / "memory" / "2026-01-16-143005.md"
    text = path.read_text()
    assert text.startswith("# Session: 2026-01-16 14:30:05 UTC\n")
    assert "- **Session Key**: agent:main:main" in text
    assert "- **Session ID**: abc123" in text
    assert "- **Source**: telegram" in text
    assert "## Conversation Summary" in text
    body = text.split("## Conversation Summary\n\n", 1)[1].strip().split("\n")
    assert len(body) == 15  # filter first, then keep the last 15
    assert body[0] == "assistant: answer 2" and body[-1] == "assistant: answer 9"
    assert "sys" not in text and "/new" not in text and "tool out" not in text


def test_slug_from_llm_is_sanitized_and_gets_prompt(tmp_path: Path) -> None:
    seen: list[str] = []

    def slug_fn(prompt: str) -> str:
        seen.append(prompt)
        return '  "Vendor Pitch!!" \nextra line'

    path = save_session_memory(MemoryConfig(workspace=tmp_path, timezone="UTC"), _messages(2), slug_fn=slug_fn, now=NOW)
    assert path is not None and path.name == "2026-01-16-vendor-pitch.md"
    assert "user: question 0" in seen[0] and "Reply with ONLY the slug" in seen[0]


def test_failing_or_empty_slug_falls_back_to_time(tmp_path: Path) -> None:
    cfg = MemoryConfig(workspace=tmp_path, timezone="UTC")

    def boom(_: str) -> str:
        raise RuntimeError("LLM down")

    assert save_session_memory(cfg, _messages(1), slug_fn=boom, now=NOW).name == "2026-01-16-143005.md"  # type: ignore[union-attr]
    assert save_session_memory(cfg, _messages(1), slug_fn=lambda _: "!!!", now=NOW).name == "2026-01-16-143005-2.md"  # type: ignore[union-attr]


def test_never_overwrites(tmp_path: Path) -> None:
    cfg = MemoryConfig(workspace=tmp_path, timezone="UTC")
    existing = tmp_path / "memory" / "2026-01-16-design.md"
    existing.parent.mkdir()
    existing.write_text("precious")
    paths = [save_session_memory(cfg, _messages(1), slug_fn=lambda _: "design", now=NOW) for _ in range(3)]
    assert [p.name for p in paths] == ["2026-01-16-design-2.md", "2026-01-16-design-3.md", "2026-01-16-design-4.md"]  # type: ignore[union-attr]
    assert existing.read_text() == "precious"


def test_nothing_to_save_returns_none(tmp_path: Path) -> None:
    cfg = MemoryConfig(workspace=tmp_path, timezone="UTC")
    assert (
        save_session_memory(cfg, [{"role": "system", "content": "x"}, {"role": "user", "content": "/reset"}], now=NOW)
        is None
    )
    assert not (tmp_path / "memory").exists()


def test_date_uses_configured_timezone(tmp_path: Path) -> None:
    cfg = MemoryConfig(workspace=tmp_path, timezone="Asia/Tokyo")
    path = save_session_memory(cfg, _messages(1), now=datetime(2026, 1, 16, 20, 0, tzinfo=timezone.utc))
    assert path is not None and path.name == "2026-01-17-050000.md"
    assert "# Session: 2026-01-17 05:00:00 Asia/Tokyo" in path.read_text()


def test_symlinked_memory_dir_refused(tmp_path: Path) -> None:
    from openclaw_memory.errors import MemoryPathError

    other = tmp_path / "other"
    other.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "memory").symlink_to(other, target_is_directory=True)
    with pytest.raises(MemoryPathError):
        save_session_memory(MemoryConfig(workspace=ws), _messages(1), now=NOW)
    assert list(other.iterdir()) == []


def test_helpers() -> None:
    assert sanitize_slug("API Design / v2") == "api-design-v2"
    assert sanitize_slug("x" * 50) == "x" * 30
    assert sanitize_slug("") == ""
    assert len(slug_prompt("z" * 5000)) < 2500
    assert format_conversation(_messages(3), max_messages=2) == ["user: question 2", "assistant: answer 2"]
    assert format_conversation(_messages(3), max_messages=0) == []
