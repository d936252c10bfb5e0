"""The embedding bridges: LlamaIndex model -> openclaw provider, and openclaw provider -> LlamaIndex model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.embeddings import MockEmbedding

from llama_index_openclaw_memory import LlamaIndexEmbeddingProvider, OpenClawMemoryEmbedding
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ProviderError
from openclaw_memory.providers.fake import FakeEmbeddingProvider


class RecordingEmbedding(BaseEmbedding):
    """Query and text embeddings differ, and every call is recorded."""

    calls: list[str] = []

    def _get_query_embedding(self, query: str) -> list[float]:
        self.calls.append("query")
        return [3.0, 4.0, 0.0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        self.calls.append("aquery")
        return [3.0, 4.0, 0.0]

    def _get_text_embedding(self, text: str) -> list[float]:
        self.calls.append("text")
        return [0.0, 0.0, 2.0]

    async def _aget_text_embedding(self, text: str) -> list[float]:
        self.calls.append("atext")
        return [0.0, 0.0, 2.0]


def test_provider_uses_query_and_text_methods_and_normalises() -> None:
    model = RecordingEmbedding(calls=[])
    provider = LlamaIndexEmbeddingProvider(model)
    assert np.allclose(provider.embed_query("q"), [0.6, 0.8, 0.0])
    docs = provider.embed_documents(["a", "b"])
    assert [d.tolist() for d in docs] == [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    assert model.calls == ["query", "text", "text"]
    assert provider.dims == 3
    assert provider.fingerprint() == {"provider": "llamaindex", "model": "RecordingEmbedding:unknown"}


async def test_provider_async_twins() -> None:
    model = RecordingEmbedding(calls=[])
    provider = LlamaIndexEmbeddingProvider(model)
    assert np.allclose(await provider.aembed_query("q"), [0.6, 0.8, 0.0])
    assert len(await provider.aembed_documents(["a"])) == 1
    assert model.calls == ["aquery", "atext"]


def test_provider_rejects_non_embeddings_and_bad_vectors() -> None:
    with pytest.raises(TypeError, match="BaseEmbedding"):
        LlamaIndexEmbeddingProvider("text-embedding-3-small")  # type: ignore[arg-type]
    provider = LlamaIndexEmbeddingProvider(MockEmbedding(embed_dim=4))
    provider.embed_model.embed_dim = 5  # type: ignore[attr-defined]  # the model now answers in another size
    with pytest.raises(ProviderError, match="expected 4"):
        provider.embed_query("x")


def test_mock_embedding_can_index_a_workspace(
    write: Callable[[dict[str, str]], Path], make_index: Callable[..., MemoryIndex]
) -> None:
    write({"MEMORY.md": "# Notes\n\nThe office plant is a fern.\n"})
    memory = make_index(LlamaIndexEmbeddingProvider(MockEmbedding(embed_dim=8)))
    result = memory.search("office plant fern")
    assert result.mode == "hybrid" and result.hits[0].path == "MEMORY.md"
    assert memory.status().model == "MockEmbedding:unknown"


def test_openclaw_embedding_returns_the_providers_vectors(fake_provider: FakeEmbeddingProvider) -> None:
    embed = OpenClawMemoryEmbedding(fake_provider)
    assert embed.model_name == "fake:fake-hash"
    assert embed.provider is fake_provider
    assert np.allclose(embed.get_query_embedding("dark roast"), fake_provider.embed_query("dark roast"))
    batch = embed.get_text_embedding_batch(["a b", "c d"])
    assert np.allclose(batch, [v.tolist() for v in fake_provider.embed_documents(["a b", "c d"])])


async def test_openclaw_embedding_async(fake_provider: FakeEmbeddingProvider) -> None:
    embed = OpenClawMemoryEmbedding(fake_provider)
    assert np.allclose(await embed.aget_query_embedding("x y"), fake_provider.embed_query("x y"))
    assert np.allclose(await embed.aget_text_embedding("x y"), fake_provider.embed_documents(["x y"])[0])
    assert len(await embed.aget_text_embedding_batch(["a", "b", "c"])) == 3


def test_openclaw_embedding_needs_a_provider() -> None:
    with pytest.raises(TypeError, match="keyword-only memory index has no provider"):
        OpenClawMemoryEmbedding(None)  # type: ignore[arg-type]


def test_an_embed_model_with_another_dimension_rebuilds_the_index(
        write: Callable[[dict[str, str]], Path], tmp_path: Path) -> None:
    """The same LlamaIndex class and model name with another dimension (``MockEmbedding(embed_dim=...)``,
    ``OpenAIEmbedding(dimensions=...)``) is another vector space: the index is embedded again (vector search
    found nothing: the queries had the new dimension, the stored vectors the old)."""
    workspace = write({"MEMORY.md": "# Prefs\n\n- The user prefers dark roast coffee.\n"})
    for dims in (8, 16):
        provider = LlamaIndexEmbeddingProvider(MockEmbedding(embed_dim=dims))
        with MemoryIndex(workspace=workspace, provider=provider, store={"path": str(tmp_path / "i.sqlite")},
                         watch=False) as memory:
            memory.sync()
            result = memory.search("coffee", mode="vector", min_score=0)
            assert [h.path for h in result.hits] == ["MEMORY.md"], (dims, result.empty_reason)
            assert memory.status().vector["dims"] == dims


class FailingEmbedding(RecordingEmbedding):
    """A LlamaIndex model whose calls fail as a vendor SDK's do: a rate limit whose message echoes the key."""

    message: str = "Error code: 429 - rate limited for key=sk-proj-abcdefghijklmnop1234567890"

    def _get_query_embedding(self, query: str) -> list[float]:
        raise RuntimeError(self.message)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        raise RuntimeError(self.message)

    def _get_text_embedding(self, text: str) -> list[float]:
        raise RuntimeError(self.message)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        raise RuntimeError(self.message)


@pytest.mark.parametrize("kind", ["documents", "query"])
@pytest.mark.parametrize("asynchronous", [False, True])
async def test_a_failing_llamaindex_model_is_a_provider_error_without_its_secret(kind: str, asynchronous: bool) -> None:
    # as LangChainEmbeddingProvider's: the SDK's own exception escaped sync() and was logged with the key it echoed
    provider = LlamaIndexEmbeddingProvider(FailingEmbedding(calls=[]))
    with pytest.raises(ProviderError, match="429") as raised:
        if kind == "documents":
            await provider.aembed_documents(["x"]) if asynchronous else provider.embed_documents(["x"])
        else:
            await provider.aembed_query("x") if asynchronous else provider.embed_query("x")
    assert raised.value.retryable  # a rate limit is retried, as a vendor provider's is
    assert "sk-proj" not in str(raised.value) and raised.value.__cause__ is None


def test_the_fingerprint_is_the_one_existing_indexes_were_built_with() -> None:
    """Pinned: a change re-embeds every index built with a LlamaIndex model."""
    assert LlamaIndexEmbeddingProvider(MockEmbedding(embed_dim=8)).fingerprint() == {
        "provider": "llamaindex", "model": "MockEmbedding:unknown", "dims": 8}
