"""Fixtures for the LanceDB long-term memory: a real LanceDB folder per test, the fake embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_memory.long_term import LongTermMemory
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.helpers.long_term_memory import MakeMemory

pytest.importorskip("lancedb")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "lancedb"


@pytest.fixture
def make_ltm(db_path: Path, fake_provider: FakeEmbeddingProvider) -> Iterator[MakeMemory]:
    """``make_ltm(agent_id="main", **kwargs)``: a LongTermMemory over the test's LanceDB folder."""
    opened: list[LongTermMemory] = []

    def _make(agent_id: str = "main", **kwargs: object) -> LongTermMemory:
        kwargs.setdefault("provider", fake_provider)
        memory = LongTermMemory(kwargs.pop("db_path", db_path), agent_id=agent_id, **kwargs)  # type: ignore[arg-type]
        opened.append(memory)
        return memory

    yield _make
    for memory in opened:
        memory.close()


@pytest.fixture
def ltm(make_ltm: MakeMemory) -> LongTermMemory:
    return make_ltm()
