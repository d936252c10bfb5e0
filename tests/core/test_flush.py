"""Pre-compaction flush: trigger arithmetic, once per cycle (across restarts), guards, prompts,
NO_REPLY suppression and append-only writes."""

from __future__ import annotations

import logging
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.agent.flush import (
    DEFAULT_FLUSH_PROMPT,
    FlushPolicy,
    apply_flush_writes,
    build_flush_messages,
    estimate_tokens,
    is_no_reply,
    text_weight,
)

KEY = "agent:main:main"
THRESHOLD = 200_000 - 20_000 - 4000


@pytest.fixture
def cfg(tmp_path: Path) -> MemoryConfig:
    (tmp_path / "ws").mkdir()
    return MemoryConfig(workspace=tmp_path / "ws", state_dir=tmp_path / "state", timezone="UTC")


def test_threshold_boundary(cfg: MemoryConfig) -> None:
    policy = FlushPolicy(cfg)
    assert policy.threshold == THRESHOLD == 176_000
    below = policy.should_flush(KEY, THRESHOLD - 1)
    assert not below.flush and below.reason == "below_threshold" and below.threshold == THRESHOLD
    at = policy.should_flush(KEY, THRESHOLD)
    assert at.flush and at.reason == "threshold_reached" and at.token_source == "usage"


def test_threshold_follows_config(tmp_path: Path) -> None:
    cfg = MemoryConfig(
        workspace=tmp_path,
        state_dir=tmp_path,
        compaction={
            "context_window": 32_000,
            "reserve_tokens_floor": 2000,
            "memory_flush": {"soft_threshold_tokens": 1000},
        },
    )
    policy = FlushPolicy(cfg)
    assert policy.threshold == 29_000
    assert not policy.should_flush(KEY, 28_999).flush
    assert policy.should_flush(KEY, 29_000).flush
    assert FlushPolicy(cfg, context_window=8000).threshold == 5000


def test_non_positive_threshold_never_fires_on_tokens(tmp_path: Path) -> None:
    cfg = MemoryConfig(workspace=tmp_path, state_dir=tmp_path, compaction={"context_window": 10_000})
    d = FlushPolicy(cfg).should_flush(KEY, 10**9)
    assert not d.flush and d.reason == "threshold_not_positive"


def test_once_per_cycle_across_restarts(cfg: MemoryConfig) -> None:
    first = FlushPolicy(cfg)
    assert first.should_flush(KEY, THRESHOLD + 10).flush
    first.mark_flushed(KEY)
    again = first.should_flush(KEY, THRESHOLD + 20)
    assert not again.flush and again.reason == "already_flushed_this_cycle"

    restarted = FlushPolicy(cfg)  # a new process reading the same state file
    d = restarted.should_flush(KEY, THRESHOLD + 30)
    assert not d.flush and d.reason == "already_flushed_this_cycle"
    assert d.compaction_count == 0 and d.flushed_at_count == 0

    assert restarted.record_compaction(KEY) == 1
    assert FlushPolicy(cfg).should_flush(KEY, THRESHOLD).flush  # new cycle
    # other sessions are independent
    assert restarted.should_flush("agent:main:other", THRESHOLD).flush
    assert (cfg.resolved_state_dir() / "memory" / "main.sessions.json").is_file()


def test_caller_supplied_compaction_count(cfg: MemoryConfig) -> None:
    policy = FlushPolicy(cfg)
    policy.mark_flushed(KEY, compaction_count=4)
    assert not policy.should_flush(KEY, THRESHOLD, compaction_count=4).flush
    d = policy.should_flush(KEY, THRESHOLD, compaction_count=5)
    assert d.flush and d.compaction_count == 5
    assert policy.store.get(KEY).compaction_count == 5


def test_custom_store_path(cfg: MemoryConfig, tmp_path: Path) -> None:
    path = tmp_path / "elsewhere" / "sessions.json"
    policy = FlushPolicy(cfg, store_path=path)
    policy.mark_flushed(KEY)
    assert path.is_file()
    assert not FlushPolicy(cfg, store_path=path).should_flush(KEY, THRESHOLD).flush
    assert FlushPolicy(cfg).should_flush(KEY, THRESHOLD).flush  # default store untouched


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"workspace_access": "ro"}, "workspace_read_only"),
        ({"workspace_access": "none"}, "workspace_unavailable"),
        ({"is_heartbeat": True}, "heartbeat"),
        ({"provider_supports_flush": False}, "provider_unsupported"),
    ],
)
def test_guards_skip(cfg: MemoryConfig, kwargs: dict, reason: str) -> None:
    d = FlushPolicy(cfg).should_flush(KEY, THRESHOLD * 2, **kwargs)
    assert not d.flush and d.reason == reason


def test_disabled_skips(tmp_path: Path) -> None:
    cfg = MemoryConfig(workspace=tmp_path, state_dir=tmp_path, compaction={"memory_flush": {"enabled": False}})
    d = FlushPolicy(cfg).should_flush(KEY, 10**9)
    assert not d.flush and d.reason == "disabled"


def test_estimate_used_when_usage_absent(cfg: MemoryConfig) -> None:
    policy = FlushPolicy(cfg, token_counter=lambda msgs: len(msgs) * 1000)
    d = policy.should_flush(KEY, messages=[{"role": "user", "content": "x"}] * 176)
    assert d.flush and d.token_source == "estimate" and d.total_tokens == 176_000
    d2 = policy.should_flush(KEY, 5, messages=[{}] * 500)  # reported usage wins over the estimate
    assert not d2.flush and d2.token_source == "usage"
    none = policy.should_flush(KEY)
    assert not none.flush and none.reason == "no_token_count"


def test_transcript_bytes_trigger(tmp_path: Path) -> None:
    cfg = MemoryConfig(
        workspace=tmp_path, state_dir=tmp_path, compaction={"memory_flush": {"force_flush_transcript_bytes": 1000}}
    )
    policy = FlushPolicy(cfg)
    assert not policy.should_flush(KEY, 10, transcript_bytes=999).flush
    d = policy.should_flush(KEY, 10, transcript_bytes=1000)
    assert d.flush and d.reason == "transcript_bytes_reached"
    policy.mark_flushed(KEY)
    assert policy.should_flush(KEY, None, transcript_bytes=5000).reason == "already_flushed_this_cycle"


def test_decisions_are_recorded_and_logged(cfg: MemoryConfig, caplog: pytest.LogCaptureFixture) -> None:
    policy = FlushPolicy(cfg, max_decisions=3)
    with caplog.at_level(logging.DEBUG, logger="openclaw_memory.agent.flush"):
        policy.should_flush(KEY, 1)
        policy.should_flush(KEY, THRESHOLD, is_heartbeat=True)
        policy.should_flush(KEY, THRESHOLD)
        policy.should_flush(KEY, THRESHOLD, workspace_access="ro")
    assert [d.reason for d in policy.decisions] == ["heartbeat", "threshold_reached", "workspace_read_only"]
    msgs = [r.getMessage() for r in caplog.records]
    assert any("below_threshold" in m for m in msgs)
    assert any("flush (threshold_reached" in m for m in msgs)


def test_estimate_tokens_weights_cjk() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert text_weight("中文") == 8
    assert estimate_tokens("中文字") == 3
    msgs = [
        {"role": "user", "content": "abcd" * 10},
        {"role": "assistant", "content": [{"type": "text", "text": "abcd" * 5}]},
    ]
    assert estimate_tokens(msgs) == 15

    class Msg:
        content = "abcdabcd"

    assert estimate_tokens([Msg()]) == 2


@pytest.mark.parametrize(
    "reply",
    ["NO_REPLY", "  no_reply \n", "NO_REPLY.", "`NO_REPLY`", "**NO_REPLY**", '"NO_REPLY"', '{"action": "NO_REPLY"}'],
)
def test_no_reply_variants_are_swallowed(reply: str) -> None:
    assert is_no_reply(reply)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   ",
        "NO_REPLY but I saved the file",
        "I wrote notes. NO_REPLY",
        "NOREPLY",
        "NO_REPLY NO_REPLY",
        '{"action": "reply"}',
        None,
    ],
)
def test_real_replies_are_not_swallowed(reply: str) -> None:
    assert not is_no_reply(reply)


def test_flush_turn_substitutes_local_date(tmp_path: Path) -> None:
    cfg = MemoryConfig(workspace=tmp_path, timezone="Asia/Tokyo")
    now = datetime(2026, 1, 16, 20, 0, tzinfo=timezone.utc)  # already the 17th in Tokyo
    turn = build_flush_messages(cfg, now=now)
    assert turn.date == date(2026, 1, 17)
    assert turn.target_path == "memory/2026-01-17.md"
    assert "memory/2026-01-17.md" in turn.user_prompt and "YYYY-MM-DD" not in turn.user_prompt
    assert "memory/2026-01-17.md" in turn.system_prompt and "NO_REPLY" in turn.system_prompt
    assert "Current time: 2026-01-17 05:00 (Asia/Tokyo) / 2026-01-16 20:00 UTC" in turn.user_prompt
    assert turn.allowed_paths == ("memory/2026-01-17.md", "MEMORY.md")
    assert DEFAULT_FLUSH_PROMPT.startswith("Pre-compaction memory flush.")


def test_custom_prompts_get_safety_hints_and_no_reply(tmp_path: Path) -> None:
    cfg = MemoryConfig(
        workspace=tmp_path,
        timezone="UTC",
        compaction={
            "memory_flush": {
                "prompt": "Write any lasting notes to memory/YYYY-MM-DD.md.",
                "system_prompt": "Session nearing compaction. Store durable memories now.",
            }
        },
    )
    turn = build_flush_messages(cfg, now=datetime(2026, 3, 1, 12, tzinfo=timezone.utc))
    assert turn.user_prompt.startswith("Write any lasting notes to memory/2026-03-01.md.")
    assert "APPEND new content only" in turn.user_prompt
    assert "read-only" in turn.user_prompt
    assert "NO_REPLY" in turn.user_prompt and "NO_REPLY" in turn.system_prompt
    assert turn.system_prompt.startswith("Session nearing compaction.")


def test_apply_flush_writes_append_only(cfg: MemoryConfig) -> None:
    ws = cfg.resolved_workspace()
    (ws / "memory").mkdir()
    daily = ws / "memory" / "2026-01-16.md"
    daily.write_text("# existing\n- kept")
    (ws / "SOUL.md").write_text("soul")
    policy = FlushPolicy(cfg)
    turn = policy.build_flush_messages(now=datetime(2026, 1, 16, 9, tzinfo=timezone.utc))
    results = policy.apply_flush_writes(
        [
            ("memory/2026-01-16.md", "- new fact"),
            {"path": "MEMORY.md", "content": "- long-term"},
            ("SOUL.md", "overwrite attempt"),
            ("memory/2026-01-15.md", "yesterday"),
            ("memory/2026-01-16-1200.md", "variant"),
            ("../escape.md", "escape"),
            (str(ws.parent / "abs.md"), "absolute escape"),
        ],
        turn=turn,
    )
    assert [r.ok for r in results] == [True, True, False, False, False, False, False]
    assert "restricted to memory/2026-01-16.md" in (results[2].error or "")
    # the flush's notes are the agent's: each entry says so (provenance), the rest is kept byte for byte
    assert daily.read_text() == "# existing\n- kept\n- new fact <!-- origin: agent -->\n"
    assert (ws / "MEMORY.md").read_text() == "- long-term <!-- origin: agent -->\n"
    assert (ws / "SOUL.md").read_text() == "soul"
    assert sorted(p.name for p in (ws / "memory").iterdir() if not p.name.startswith(".")) == ["2026-01-16.md"]
    assert not (ws.parent / "escape.md").exists() and not (ws.parent / "abs.md").exists()


def test_apply_flush_writes_without_memory_md(tmp_path: Path) -> None:
    results = apply_flush_writes(
        tmp_path, [("MEMORY.md", "x"), ("memory/2026-01-16.md", "y")], day=date(2026, 1, 16), allow_memory_md=False
    )
    assert [r.ok for r in results] == [False, True]
    assert not (tmp_path / "MEMORY.md").exists()
    turn = build_flush_messages(MemoryConfig(workspace=tmp_path, timezone="UTC"), allow_memory_md=False)
    assert turn.allowed_paths == (turn.target_path,)
    assert "MEMORY.md, DREAMS.md" in turn.system_prompt  # listed as read-only


def test_a_flush_write_holding_half_an_emoji_is_kept_and_the_writes_after_it_too(tmp_path: Path) -> None:
    # a model's tool arguments can decode to a lone surrogate ("\ud83d": an emoji cut in half)
    writes = [("memory/2026-01-16.md", "- Dana loves \ud83d climbing."),
              ("memory/2026-01-16.md", "- Standup moved to 9.")]
    results = apply_flush_writes(tmp_path, writes, day=date(2026, 1, 16))
    assert [r.ok for r in results] == [True, True]
    text = (tmp_path / "memory" / "2026-01-16.md").read_text(encoding="utf-8")
    assert "- Dana loves \ufffd climbing." in text and "- Standup moved to 9." in text
