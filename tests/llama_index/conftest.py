"""Fixtures for the LlamaIndex adapter: a small hand-written memory workspace and stores over it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from llama_index_openclaw_memory import OpenClawMemoryEmbedding, OpenClawVectorStore
from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider

CORPUS = {
    "MEMORY.md": (
        "# Long-term memory\n\n"
        "- The user prefers dark roast coffee in the morning.\n"
        "- Deployments run on Fly.io in the Frankfurt region.\n"
    ),
    "memory/2026-01-16.md": (
        "# 2026-01-16\n\n"
        "- We chose SQLite with FTS5 and sqlite-vec for the memory index.\n"
        "- The payments worker failed with error E429-RL from the rate limiter.\n"
    ),
    "memory/2026-01-20.md": (
        "# 2026-01-20\n\n"
        "- Met Alice about the billing migration; she owns the Stripe webhooks.\n"
    ),
}


@pytest.fixture
def corpus(write: Callable[[dict[str, str | bytes]], Path]) -> Path:
    """The workspace with MEMORY.md and two dated notes."""
    return write(dict(CORPUS))


@pytest.fixture
def memory(corpus: Path, make_index: Callable[..., MemoryIndex], fake_provider: FakeEmbeddingProvider) -> MemoryIndex:
    """A synced index over the corpus with the offline fake embedder and UTC dates."""
    index = make_index(fake_provider, timezone="UTC")
    index.sync()
    return index


@pytest.fixture
def store(memory: MemoryIndex) -> Iterator[OpenClawVectorStore]:
    """The vector store over ``memory`` (appending to the default memory/llamaindex.md)."""
    yield OpenClawVectorStore(memory)


@pytest.fixture
def embed_model(fake_provider: FakeEmbeddingProvider) -> OpenClawMemoryEmbedding:
    """A LlamaIndex embed model in the same vector space as ``memory``."""
    return OpenClawMemoryEmbedding(fake_provider)


@pytest.fixture
def hand_written_intact(corpus: Path) -> Callable[[], None]:
    """Call it at the end of a test: fails unless every hand-written file is byte-for-byte unchanged."""
    before = {rel: (corpus / rel).read_bytes() for rel in CORPUS}

    def check() -> None:
        assert {rel: (corpus / rel).read_bytes() for rel in CORPUS} == before

    return check
