"""The memory block's flush de-duplication is per session and bounded, as is its bootstrap cache.

It remembered the digest of every flush ever made, for every session alike: a long-running server's block grew
without bound (as did its per-session bootstrap cache), and a session whose evicted messages read like another
session's ("user: hi" / "assistant: hello") had its notes skipped. Now a flush is skipped only for the same
messages of the same session, and only the latest flushes / sessions are remembered.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory
from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import today

import llama_index_openclaw_memory.memory_block as memory_block
from llama_index_openclaw_memory import OpenClawMemoryBlock


def _evicted(session_id: str, text: str) -> list[ChatMessage]:
    """Messages as ``Memory`` hands them to a block: tagged with their session."""
    return [ChatMessage(role=MessageRole.USER, content=text, additional_kwargs={"session_id": session_id}),
            ChatMessage(role=MessageRole.ASSISTANT, content="Noted.", additional_kwargs={"session_id": session_id})]


def _daily(workspace: Path) -> str:
    return (workspace / f"memory/{today('UTC').isoformat()}.md").read_text(encoding="utf-8")


async def test_the_same_words_in_another_session_are_saved_for_that_session(memory: MemoryIndex,
                                                                             corpus: Path) -> None:
    block = OpenClawMemoryBlock(memory=memory, bootstrap="off")
    text = "The standup moved to 09:30 on Mondays."
    await block.aput(_evicted("alice", text), from_short_term_memory=True)
    await block.aput(_evicted("bob", text), from_short_term_memory=True)
    await block.aput(_evicted("bob", text), from_short_term_memory=True)  # the same session again: skipped
    daily = _daily(corpus)
    assert "session alice" in daily and "session bob" in daily
    assert daily.count(text) == 2


async def test_a_long_running_block_remembers_only_the_latest_flushes(memory: MemoryIndex, corpus: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_block, "REMEMBERED_FLUSHES", 3, raising=False)
    block = OpenClawMemoryBlock(memory=memory, bootstrap="off")
    for n in range(6):
        await block.aput(_evicted(f"s{n}", f"Fact number {n} about the quarterly report."),
                         from_short_term_memory=True)
    assert len(block._flushed) == 3
    await block.aput(_evicted("s5", "Fact number 5 about the quarterly report."), from_short_term_memory=True)
    assert _daily(corpus).count("Fact number 5 about") == 1  # the latest are still de-duplicated


async def test_a_server_with_many_sessions_keeps_a_bounded_bootstrap_cache(memory: MemoryIndex,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_block, "REMEMBERED_SESSIONS", 4, raising=False)
    block = OpenClawMemoryBlock(memory=memory)
    for n in range(10):
        chat = Memory.from_defaults(session_id=f"user-{n}", memory_blocks=[block])
        prompt = await chat.aget(input="hello")
        assert any("dark roast coffee" in (m.content or "") for m in prompt)  # each session's bootstrap
    assert len(block._bootstrap_cache) == 4
