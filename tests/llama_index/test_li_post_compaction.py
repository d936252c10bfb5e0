"""The post-compaction transcript sync through OpenClawMemoryBlock: when ``Memory`` evicts messages
from its short-term buffer (LlamaIndex's compaction), the session's transcript is indexed, although
it grew far less than the ``sync.sessions`` delta thresholds."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory
from llama_index.core.storage.chat_store.base_db import MessageStatus

from llama_index_openclaw_memory import OpenClawMemoryBlock
from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.files.sessions import TranscriptWriter

PHRASE = "quokka ledger reconciliation"
TIMEOUT = 15.0


def sessions_index(make_index: Callable[..., MemoryIndex], **overrides: Any) -> MemoryIndex:
    overrides.setdefault("sources", ["memory", "sessions"])
    return make_index(FakeEmbeddingProvider(), timezone="UTC", chunking={"tokens": 16, "overlap": 0}, **overrides)


def found(memory: MemoryIndex) -> bool:
    hits = memory.search(PHRASE, sources=["sessions"], min_score=0.0, max_results=20).hits
    return any("quokka" in h.text for h in hits)


def small_memory(block: OpenClawMemoryBlock, session_id: str) -> Memory:
    """A Memory whose short-term buffer holds ~100 tokens, so a conversation overflows it."""
    return Memory.from_defaults(
        session_id=session_id, token_limit=200, chat_history_token_ratio=0.5, token_flush_size=40,
        memory_blocks=[block],
    )


async def chat_until_eviction(block: OpenClawMemoryBlock, session_id: str) -> Memory:
    """Talk until Memory evicts messages from its short-term buffer to the block."""
    chat = small_memory(block, session_id)
    for i in range(30):
        for role, text in ((MessageRole.USER, f"fact {i}: the heron cluster has {i} nodes in eu-west"),
                           (MessageRole.ASSISTANT, f"Noted ({i}).")):
            await chat.aput(ChatMessage(role=role, content=text))
        if await chat.aget_all(status=MessageStatus.ARCHIVED):
            return chat
    raise AssertionError("the conversation never overflowed the short-term buffer")


async def test_eviction_indexes_the_sessions_transcript(
    corpus: Path, make_index: Callable[..., MemoryIndex]
) -> None:
    memory = sessions_index(make_index)  # default post_index_sync: async
    writer = TranscriptWriter(memory.transcript_path("session-a"))
    writer.append_messages([("user", "hello"), ("assistant", "hi")])
    memory.sync()
    writer.append_messages([("user", f"remember the {PHRASE}"), ("assistant", "noted")])
    assert memory.sync().files_indexed == 0 and not found(memory)  # below the thresholds

    block = OpenClawMemoryBlock(memory=memory, bootstrap="off")
    await chat_until_eviction(block, "session-a")
    deadline = time.monotonic() + TIMEOUT
    while not found(memory):
        assert time.monotonic() < deadline, "the transcript was not indexed after the eviction"
        time.sleep(0.02)
    hit = next(h for h in memory.search(PHRASE, sources=["sessions"], min_score=0.0).hits if "quokka" in h.text)
    assert hit.path == "sessions/session-a.jsonl"


async def test_off_mode_leaves_the_transcript_to_the_thresholds(
    corpus: Path, make_index: Callable[..., MemoryIndex]
) -> None:
    memory = sessions_index(make_index, compaction={"post_index_sync": "off"})
    writer = TranscriptWriter(memory.transcript_path("session-b"))
    writer.append_messages([("user", "hello"), ("assistant", "hi")])
    memory.sync()
    writer.append_messages([("user", f"remember the {PHRASE}"), ("assistant", "noted")])
    block = OpenClawMemoryBlock(memory=memory, bootstrap="off")
    await chat_until_eviction(block, "session-b")
    memory.sync()  # anything scheduled would have run before this one
    assert not found(memory)
