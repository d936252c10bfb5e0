"""FrameworkEmbeddingProvider: the one bridge from another framework's embedding object (LangChain, LlamaIndex) to
a provider, calling the functions its adapter gives."""

from __future__ import annotations

import pickle
from collections.abc import Sequence

import numpy as np
import pytest
from openclaw_memory.errors import ProviderError, RemoteRequestError
from openclaw_memory.providers.base import FrameworkEmbeddingCalls, FrameworkEmbeddingProvider, provider_key


class Model:
    """A framework's embedding object: queries and documents land in different directions; calls are recorded."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[str] = []
        self.fail = fail

    def query(self, text: str) -> list[float]:
        self.calls.append("query")
        if self.fail:
            raise RuntimeError("401 from the vendor for key sk-proj-Zk4pQ8sW2mV6nX1cT7yB3hJ5")
        return [3.0, 4.0]

    def documents(self, texts: list[str]) -> Sequence[Sequence[float]]:
        self.calls.append("documents")
        return [[0.0, 2.0] for _ in texts]

    async def aquery(self, text: str) -> list[float]:
        self.calls.append("aquery")
        return [3.0, 4.0]

    async def adocuments(self, texts: list[str]) -> Sequence[Sequence[float]]:
        self.calls.append("adocuments")
        return [[0.0, 2.0] for _ in texts]


class Bridge(FrameworkEmbeddingProvider):
    id = "framework"


def _bridge(model: Model, declared_dims: int | None = None) -> Bridge:
    calls = FrameworkEmbeddingCalls(model.query, model.documents, model.aquery, model.adocuments)
    return Bridge(calls, model="m", declared_dims=declared_dims)


def test_queries_and_documents_go_through_their_own_calls_normalised() -> None:
    model = Model()
    provider = _bridge(model)
    assert np.allclose(provider.embed_query("q"), [0.6, 0.8])
    assert [v.tolist() for v in provider.embed_documents(["a", "b"])] == [[0.0, 1.0], [0.0, 1.0]]
    assert model.calls == ["query", "documents"] and provider.dims == 2


async def test_async_twins_use_the_async_calls() -> None:
    model = Model()
    provider = _bridge(model)
    assert np.allclose(await provider.aembed_query("q"), [0.6, 0.8])
    assert len(await provider.aembed_documents(["a"])) == 1
    assert model.calls == ["aquery", "adocuments"]


def test_a_failure_is_a_redacted_provider_error() -> None:
    with pytest.raises(RemoteRequestError, match="framework:m embeddings failed: RuntimeError") as caught:
        _bridge(Model(fail=True)).embed_query("q")
    assert isinstance(caught.value, ProviderError) and "Zk4pQ8sW2mV6nX1cT7yB3hJ5" not in str(caught.value)


def test_the_fingerprint_holds_a_declared_dimension_only() -> None:
    """As the adapters' providers wrote it before they shared this class: their indexes are not embedded again."""
    assert _bridge(Model()).fingerprint() == {"provider": "framework", "model": "m"}
    assert _bridge(Model(), declared_dims=2).fingerprint() == {"provider": "framework", "model": "m", "dims": 2}
    assert provider_key(_bridge(Model(), 2).fingerprint()) != provider_key(_bridge(Model(), 3).fingerprint())


def test_it_pickles_with_its_calls() -> None:
    copy = pickle.loads(pickle.dumps(_bridge(Model(), declared_dims=2)))
    assert np.allclose(copy.embed_query("q"), [0.6, 0.8]) and copy.fingerprint()["dims"] == 2
