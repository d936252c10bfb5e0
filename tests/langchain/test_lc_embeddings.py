"""Embeddings both ways: openclaw provider -> LangChain Embeddings, LangChain Embeddings -> provider."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from openclaw_memory import MemoryIndex, ProviderError, ProviderUnavailableError
from openclaw_memory.errors import IndexingError
from openclaw_memory.providers.fake import FakeEmbeddingProvider

from langchain_openclaw_memory import LangChainEmbeddingProvider, OpenClawMemoryEmbeddings


class RecordingEmbeddings(Embeddings):
    """A LangChain Embeddings that delegates to the fake provider and records which method ran."""

    def __init__(self, dims: int = 64) -> None:
        self.inner = FakeEmbeddingProvider(dims=dims)
        self.log: list[tuple[str, int]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.log.append(("documents", len(texts)))
        return [(v * 3).tolist() for v in self.inner.embed_documents(texts)]  # not unit length on purpose

    def embed_query(self, text: str) -> list[float]:
        self.log.append(("query", 1))
        return self.inner.embed_query(text).tolist()


def test_memory_embeddings_expose_the_index_provider(memory: MemoryIndex) -> None:
    embeddings = OpenClawMemoryEmbeddings(memory=memory)
    vector = embeddings.embed_query("SQLite cache")
    assert np.allclose(vector, memory.provider.embed_query("SQLite cache"))  # type: ignore[union-attr]
    docs = embeddings.embed_documents(["a", "b c"])
    assert len(docs) == 2 and all(len(v) == 64 for v in docs)
    assert abs(float(np.linalg.norm(docs[1])) - 1.0) < 1e-5


def test_the_memory_or_provider_may_be_given_positionally(memory: MemoryIndex) -> None:
    # as OpenClawMemoryRetriever(memory) and OpenClawMemoryStore(memory) take it
    expected = memory.provider.embed_query("SQLite cache")  # type: ignore[union-attr]
    assert np.allclose(OpenClawMemoryEmbeddings(memory).embed_query("SQLite cache"), expected)
    assert np.allclose(OpenClawMemoryEmbeddings(memory.provider).embed_query("SQLite cache"), expected)
    with pytest.raises(TypeError, match="both positionally and by keyword"):
        OpenClawMemoryEmbeddings(memory, memory=memory)
    with pytest.raises(ValueError, match="EmbeddingProvider protocol"):
        OpenClawMemoryEmbeddings("openai")  # type: ignore[arg-type]


async def test_async_embeddings(memory: MemoryIndex) -> None:
    embeddings = OpenClawMemoryEmbeddings(memory=memory)
    assert np.allclose(await embeddings.aembed_query("x y"), embeddings.embed_query("x y"))
    assert len(await embeddings.aembed_documents(["x", "y", "z"])) == 3


def test_keyword_only_memory_has_no_embeddings(corpus: Path, tmp_path: Path) -> None:
    with MemoryIndex(workspace=corpus, store={"path": str(tmp_path / "kw.sqlite")}, provider=None, watch=False) as kw:
        with pytest.raises(ProviderUnavailableError, match="keyword-only"):
            OpenClawMemoryEmbeddings(memory=kw).embed_query("x")


def test_embeddings_need_a_source() -> None:
    with pytest.raises(ValueError, match="provider=<EmbeddingProvider> or memory=<MemoryIndex>"):
        OpenClawMemoryEmbeddings()
    with pytest.raises(ValueError, match="EmbeddingProvider protocol"):
        OpenClawMemoryEmbeddings(provider="openai")


def test_index_with_langchain_embeddings(corpus: Path, tmp_path: Path) -> None:
    lc = RecordingEmbeddings()
    provider = LangChainEmbeddingProvider(lc, model="recording-fake")
    via_lc = MemoryIndex(workspace=corpus, store={"path": str(tmp_path / "lc.sqlite")}, provider=provider, watch=False)
    direct = MemoryIndex(
        workspace=corpus, store={"path": str(tmp_path / "direct.sqlite")}, provider=FakeEmbeddingProvider(), watch=False
    )
    with via_lc, direct:
        got = via_lc.search("who owns billing", min_score=0.0)
        want = direct.search("who owns billing", min_score=0.0)
        assert got.mode == "hybrid"
        # Same vectors (up to scale) as the provider used directly: same ranking, same cosines.
        assert [(h.path, h.start_line, round(h.vector_score, 5)) for h in got.hits] == [
            (h.path, h.start_line, round(h.vector_score, 5)) for h in want.hits
        ]
        assert got.hits[0].path == "memory/2026-01-15.md" and got.hits[0].vector_score > 0
        assert ("query", 1) in lc.log and any(kind == "documents" for kind, _ in lc.log)
        assert via_lc.status().provider == "langchain" and via_lc.status().model == "recording-fake"
    assert provider.dims == 64
    assert provider.fingerprint()["class"].endswith("RecordingEmbeddings")


def test_provider_validates_langchain_vectors() -> None:
    class Broken(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[0.0, 0.0] for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return [float("nan"), 1.0]

    provider = LangChainEmbeddingProvider(Broken())
    assert provider.model == "Broken"
    with pytest.raises(ProviderError, match="all-zero"):
        provider.embed_documents(["x"])
    with pytest.raises(ProviderError, match="NaN"):
        provider.embed_query("x")
    with pytest.raises(TypeError, match="Embeddings"):
        LangChainEmbeddingProvider(FakeEmbeddingProvider())  # type: ignore[arg-type]


async def test_provider_async_uses_langchain_async_methods() -> None:
    lc = RecordingEmbeddings(dims=8)
    provider = LangChainEmbeddingProvider(lc)
    vecs = await provider.aembed_documents(["one", "two"])
    assert len(vecs) == 2 and abs(float(np.linalg.norm(vecs[0])) - 1.0) < 1e-5
    await provider.aembed_query("three")
    assert lc.log == [("documents", 2), ("query", 1)]


class FailingEmbeddings(RecordingEmbeddings):
    """Embeddings whose calls fail, once ``failing`` is set, as a vendor SDK's do: its message echoes the key."""

    failing = False
    message = "Error code: 429 - rate limited for key=sk-proj-abcdefghijklmnop1234567890"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.failing:
            raise RuntimeError(self.message)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        if self.failing:
            raise RuntimeError(self.message)
        return super().embed_query(text)


def test_a_failing_langchain_embeddings_is_a_provider_error_without_its_secret(
    corpus: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lc = FailingEmbeddings()
    provider = LangChainEmbeddingProvider(lc, model="failing-fake")
    limits = {"retries": 1, "max_retry_after_seconds": 0.1}
    with MemoryIndex(workspace=corpus, store={"path": str(tmp_path / "lc.sqlite")}, provider=provider,
                     provider_limits=limits, watch=False) as memory:
        memory.sync()
        lc.failing = True
        with pytest.raises(ProviderError, match="429") as raised:
            provider.embed_documents(["x"])
        assert raised.value.retryable  # a rate limit is retried, as a vendor provider's is
        assert "sk-proj" not in str(raised.value) and raised.value.__cause__ is None
        caplog.clear()
        found = memory.search("who owns billing", min_score=0.0)
        assert found.mode == "keyword" and "429" in (found.keyword_only_reason or "")
        (corpus / "memory/2026-01-17.md").write_text("- A new note.\n", encoding="utf-8")
        with pytest.raises(IndexingError, match="429"):  # not the SDK's own error, which carries the key
            memory.sync()
    assert "sk-proj" not in caplog.text and "sk-proj" not in (found.keyword_only_reason or "")


@pytest.mark.parametrize("declared", ["size", "dimensions", "dims"])
def test_embeddings_with_another_dimension_rebuild_the_index(declared: str, corpus: Path, tmp_path: Path) -> None:
    """The same LangChain class and model name with another dimension (``OpenAIEmbeddings(dimensions=...)``,
    ``DeterministicFakeEmbedding(size=...)``, or ``dims=`` given) is another vector space: the index is embedded
    again. Before, the fingerprint had no dimension: the stored vectors (and the embedding cache's) kept the old
    one, and a vector search found nothing or failed."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    class Dimensioned(DeterministicFakeEmbedding):
        model: str = "text-embedding-3-small"
        dimensions: int | None = None

    for dims in (8, 16):
        if declared == "size":
            provider = LangChainEmbeddingProvider(DeterministicFakeEmbedding(size=dims), model="fake")
        elif declared == "dimensions":
            provider = LangChainEmbeddingProvider(Dimensioned(size=dims, dimensions=dims))
        else:
            provider = LangChainEmbeddingProvider(DeterministicFakeEmbedding(size=dims), model="fake", dims=dims)
        assert provider.fingerprint()["dims"] == dims  # known before the first call
        with MemoryIndex(workspace=corpus, provider=provider, store={"path": str(tmp_path / "i.sqlite")},
                         watch=False) as memory:
            memory.sync()
            result = memory.search("who owns billing", mode="vector", min_score=0)
            assert result.hits, (dims, result.empty_reason)
            assert memory.status().vector["dims"] == dims


def test_the_fingerprint_is_the_one_existing_indexes_were_built_with() -> None:
    """Pinned: a change re-embeds every index built with LangChain embeddings."""
    from langchain_core.embeddings import FakeEmbeddings

    assert LangChainEmbeddingProvider(FakeEmbeddings(size=4)).fingerprint() == {
        "provider": "langchain", "model": "FakeEmbeddings", "class": "langchain_core.embeddings.fake.FakeEmbeddings",
        "dims": 4}
    assert LangChainEmbeddingProvider(RecordingEmbeddings(), model="m").fingerprint() == {
        "provider": "langchain", "model": "m", "class": f"{__name__}.RecordingEmbeddings"}
