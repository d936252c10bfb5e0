"""One name per idea (issue 14): the session kind is "direct" (the old "private" still works and warns), one
``memory_recall_prompt``, and keyword-only mode names its model the same way in search results and status."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import openclaw_memory.agent.bootstrap as bootstrap
from openclaw_memory import MemoryIndex
from openclaw_memory.agent.bootstrap import build_session_context
from openclaw_memory.text.citations import ChatType, normalize_session_kind
from openclaw_memory.config import MemoryConfig
from openclaw_memory.indexing.fingerprint import FTS_ONLY_MODEL
from openclaw_memory.agent.tools import memory_recall_prompt


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "memory").mkdir()
    (tmp_path / "MEMORY.md").write_text("# Long term\n- prefers tea\n")
    return tmp_path


def test_direct_is_the_session_kind_that_loads_memory_md(ws: Path) -> None:
    cfg = MemoryConfig(workspace=ws, timezone="UTC")
    assert "prefers tea" in build_session_context(cfg, session_kind="direct")
    assert build_session_context(cfg) == build_session_context(cfg, session_kind="direct")
    with pytest.warns(DeprecationWarning, match='"private" is now called "direct"'):
        old = build_session_context(cfg, session_kind="private")  # type: ignore[arg-type]
    assert old == build_session_context(cfg, session_kind="direct")
    with pytest.raises(ValueError, match="'direct', 'group' or 'channel'"):
        normalize_session_kind("public")


def test_recall_prompt_follows_the_config_and_the_session_kind() -> None:
    cfg = MemoryConfig()
    direct = memory_recall_prompt(cfg)
    assert direct == memory_recall_prompt()  # no config: citations auto, no transcripts
    assert "Source: <path#line>" in direct
    assert "Citations are disabled" in memory_recall_prompt(cfg, session_kind="group")
    assert "Citations are disabled" in memory_recall_prompt(session_kind="channel")
    assert "Source: <path#line>" in memory_recall_prompt(cfg, session_kind="group", citations="on")
    assert "Citations are disabled" in memory_recall_prompt(MemoryConfig(citations="off"))
    assert "session transcripts" in memory_recall_prompt(MemoryConfig(sources=["memory", "sessions"]))
    assert "session transcripts" not in memory_recall_prompt(MemoryConfig(sources=["memory", "sessions"]),
                                                              sessions=False)
    assert memory_recall_prompt(MemoryConfig(enabled=False)) == ""


def test_old_bootstrap_names_warn_and_keep_their_signature() -> None:
    with pytest.warns(DeprecationWarning, match="openclaw_memory.agent.tools.memory_recall_prompt"):
        old = bootstrap.memory_recall_prompt
    cfg = MemoryConfig(citations="auto")
    assert old(cfg) == memory_recall_prompt(cfg)
    assert old(cfg, "group") == memory_recall_prompt(cfg, session_kind="group")
    with pytest.warns(DeprecationWarning, match="ChatType"):
        assert bootstrap.SessionKind is ChatType
    with pytest.raises(AttributeError):
        bootstrap.no_such_name  # noqa: B018


def test_keyword_only_search_names_the_model_as_status_does(
    write: Callable[[dict[str, str]], Path], make_index: Callable[..., MemoryIndex]
) -> None:
    write({"MEMORY.md": "# Notes\n- the walrus ledger lives in the attic\n"})
    memory = make_index(None)  # no embedding provider: keyword-only
    memory.sync()
    result = memory.search("walrus ledger")
    assert result.hits and result.mode == "keyword"
    assert result.model == memory.status().model == FTS_ONLY_MODEL
    assert memory.search("   ").model == FTS_ONLY_MODEL
