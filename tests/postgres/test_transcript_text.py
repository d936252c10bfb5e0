"""Text a store cannot take as it is: a NUL (``\\u0000`` in a transcript's JSON, or deep in a memory file; PostgreSQL
text cannot hold one) and half an emoji (a lone surrogate ``\\ud83c``, as a client cutting a message mid-emoji writes
it, which UTF-8 cannot encode). The rest of the file, and every other file, is indexed all the same."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider

pytestmark = pytest.mark.both_stores  # on SQLite and on PostgreSQL (tests/conftest.py)


def _transcript(memory: MemoryIndex, *texts: str) -> None:
    path = memory.transcript_path("chat-1")
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [{"type": "session", "id": "chat-1"}] + [
        {"type": "message", "message": {"role": "user", "content": text, "timestamp": 1_760_000_000_000 + i}}
        for i, text in enumerate(texts)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


@pytest.fixture
def memory(make_index: Callable[..., MemoryIndex], write: Callable[[dict[str, str]], Path]) -> MemoryIndex:
    write({"MEMORY.md": "# Memory\nThe zebra ledger is in the blue cabinet.\n"})
    return make_index(FakeEmbeddingProvider(), sources=["memory", "sessions"])


def test_a_nul_character_in_a_message_neither_fails_the_sync_nor_hides_the_message(memory: MemoryIndex) -> None:
    _transcript(memory, "the narwhal budget \u0000 is approved", "the walrus plan is due")
    memory.sync()
    texts = " ".join(h.text for h in memory.search("narwhal budget approved", sources=["sessions"]).hits)
    assert "narwhal budget" in texts and "\x00" not in texts
    assert memory.search("zebra ledger").hits  # the memory files too


def test_half_an_emoji_in_a_message_leaves_the_transcript_indexed(memory: MemoryIndex) -> None:
    _transcript(memory, "the narwhal budget \ud83c is approved", "the walrus plan is due")
    memory.sync()
    hits = memory.search("walrus plan due", sources=["sessions"]).hits
    assert hits and "walrus plan" in hits[0].text
    assert any("narwhal budget \ufffd is approved" in h.text
               for h in memory.search("narwhal budget", sources=["sessions"]).hits)


def test_a_nul_character_deep_in_a_memory_file_does_not_fail_every_sync(
        make_index: Callable[..., MemoryIndex], write: Callable[[dict[str, str]], Path]) -> None:
    """Only the first 8 KiB of a file are looked at for NUL bytes (a binary file): one further on reached the store,
    and PostgreSQL refused the whole sync, on every host, until the file was changed."""
    long_note = "Filler words of a long note. " * 400
    write({"MEMORY.md": f"# Memory\n{long_note}\nThe narwhal \x00 budget is approved.\n",
           "memory/2026-03-01.md": "# Day\nThe walrus plan is due.\n"})
    memory = make_index(FakeEmbeddingProvider())
    memory.sync()
    assert memory.search("walrus plan due").hits
    assert any("narwhal" in h.text for h in memory.search("narwhal budget approved").hits)
