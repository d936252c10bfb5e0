"""Embedding providers: the protocol, the vendors (OpenAI, Gemini, Voyage), on-device models,
selection/fallback, batching and vendor batch APIs.

Vendor SDKs and local model libraries are imported only when a provider is created.
"""

from __future__ import annotations

from openclaw_memory.providers.base import (
    BaseEmbeddingProvider,
    EmbeddingProvider,
    EmbedKind,
    normalize_vectors,
    provider_key,
)
from openclaw_memory.providers.batch import BatchState, embed_for_index, supports_batch_api
from openclaw_memory.providers.batching import (
    CachedQueryEmbedder,
    RetryPolicy,
    embed_documents_batched,
    split_batches,
)
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.providers.registry import (
    NO_PROVIDER_FINGERPRINT,
    ProviderResolution,
    create_fallback,
    create_provider,
    fallback_resolution,
    probe_provider,
    resolve_provider,
)

__all__ = [
    "NO_PROVIDER_FINGERPRINT",
    "BaseEmbeddingProvider",
    "BatchState",
    "CachedQueryEmbedder",
    "EmbedKind",
    "EmbeddingProvider",
    "FakeEmbeddingProvider",
    "ProviderResolution",
    "RetryPolicy",
    "create_fallback",
    "create_provider",
    "embed_documents_batched",
    "embed_for_index",
    "fallback_resolution",
    "normalize_vectors",
    "probe_provider",
    "provider_key",
    "resolve_provider",
    "split_batches",
    "supports_batch_api",
]
