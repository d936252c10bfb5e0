"""Fixtures for the LangChain adapter: a small memory workspace and a scripted chat model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.helpers.chat_model import Responder, ScriptedChatModel

CORPUS = {
    "MEMORY.md": (
        "# Long-term memory\n\n"
        "- The user prefers SQLite for local caches.\n"
        "- Deployments run on Fly.io in the Frankfurt region.\n"
    ),
    "memory/2026-01-15.md": (
        "# 2026-01-15\n\n"
        "- Decided the cache layer uses SQLite with WAL mode.\n"
        "- Alice owns the billing service.\n"
    ),
    "memory/2026-01-16.md": (
        "# 2026-01-16\n\n"
        "- Benchmarked the SQLite cache: 2 ms p95 reads.\n"
        "- Error ECONNRESET seen in the payments worker.\n"
    ),
    "memory/projects/api.md": (
        "# API project\n\n"
        "- The public API caches sessions in SQLite.\n"
        "- Rate limit is 100 requests per minute.\n"
    ),
}


@pytest.fixture
def corpus(write: Callable[[dict[str, str | bytes]], Path]) -> Path:
    """A workspace with MEMORY.md and three notes (four files that mention SQLite)."""
    return write(dict(CORPUS))


@pytest.fixture
def memory(corpus: Path, make_index: Callable[..., MemoryIndex], fake_provider: FakeEmbeddingProvider) -> MemoryIndex:
    """A synced index over the corpus, with the offline fake embedder and UTC dates."""
    index = make_index(fake_provider, timezone="UTC")
    index.sync()
    return index


@pytest.fixture
def scripted() -> Callable[[Responder], ScriptedChatModel]:
    """Build a :class:`ScriptedChatModel` from a responder function."""
    return lambda responder: ScriptedChatModel(responder=responder)
