"""The EmbeddingProvider protocol is complete: a provider written from scratch works everywhere."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ConfigError, ProviderError
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbedKind, EmbeddingProvider, TokenEmbeddingProvider
from openclaw_memory.providers.fake import FakeEmbeddingProvider


class BareProvider:
    """Every member of the protocol, no base class."""

    id = "bare"
    model = "bare-model"
    dims = 64
    max_input_tokens = 512
    in_process = False
    request_timeout = None
    max_batch_size = 2
    default_concurrency = 1
    similarity_floor = None

    def __init__(self) -> None:
        self._inner = FakeEmbeddingProvider(dims=64)
        self.batches: list[int] = []
        self.closed = False

    def fingerprint(self) -> dict[str, Any]:
        return {"provider": self.id, "model": self.model}

    def embed_query(self, text: str) -> np.ndarray:
        return self._inner.embed_query(text)

    def embed_documents(self, texts: Sequence[str]) -> list[np.ndarray]:
        self.batches.append(len(texts))
        return self._inner.embed_documents(texts)

    async def aembed_query(self, text: str) -> np.ndarray:
        return self.embed_query(text)

    async def aembed_documents(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self.embed_documents(texts)

    def close(self) -> None:
        self.closed = True


def test_a_provider_without_the_base_class_indexes_searches_and_stays_the_callers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for i in range(3):
        (ws / "memory" / f"2026-01-0{i + 1}.md").write_text(f"# Day {i}\n\nThe heron count was {i}.\n", encoding="utf-8")
    provider = BareProvider()
    assert isinstance(provider, EmbeddingProvider)
    assert not isinstance(provider, TokenEmbeddingProvider)  # an optional capability, not part of the protocol
    with MemoryIndex(workspace=ws, provider=provider, store={"path": str(tmp_path / "i.sqlite")}, watch=False,
                     query={"hybrid": {"late_interaction": {"enabled": True}}}) as mem:
        mem.sync()
        result = mem.search("heron count")
        assert result.mode == "hybrid" and result.hits and result.rerank_error is None
    # a given provider is the caller's (another agent's index may share it), as LangChain's vector stores leave the
    # embeddings they are given open: the index closes only the providers it created (tests/providers/
    # test_provider_ownership.py); the caller closes this one
    assert not provider.closed
    assert provider.batches and max(provider.batches) <= 2  # its max_batch_size is honoured


def test_an_incomplete_provider_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    partial = type("Partial", (), {k: v for k, v in vars(BareProvider).items() if k != "close"})()
    assert not isinstance(partial, EmbeddingProvider)
    with pytest.raises(ConfigError, match="Partial does not implement the EmbeddingProvider protocol"):
        MemoryIndex(workspace=tmp_path, provider=partial, watch=False)


class _NoDims(BaseEmbeddingProvider):
    id = "nodims"

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        return [[1.0, 2.0, 2.0] for _ in texts]


def test_check_vectors_learns_dims_then_refuses_another_size() -> None:
    provider = _NoDims(model="m")
    assert provider.dims is None
    vecs = provider.check_vectors([[3.0, 4.0, 0.0, 0.0]], via="batch")
    assert provider.dims == 4
    np.testing.assert_allclose(vecs[0], [0.6, 0.8, 0.0, 0.0], rtol=1e-6)
    with pytest.raises(ProviderError, match=r"nodims:m batch returned a 3-dimensional vector"):
        provider.check_vectors([[1.0, 1.0, 1.0]], via="batch")
