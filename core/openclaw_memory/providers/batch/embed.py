"""Choosing between a vendor batch API and normal batched requests when indexing.

With ``remote.batch.enabled`` (OpenAI, Gemini, Voyage), documents go through the vendor's
asynchronous batch API (cheaper for big reindexes). A failed batch job falls back to the
normal path for that call; after 2 failed attempts (a timed-out job is retried once and
counts twice; an endpoint without a batch API counts as the limit) batch mode is switched off
for the rest of the session. :class:`BatchState` is what status reports.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from openclaw_memory.config import MemoryConfig
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbeddingProvider
from openclaw_memory.providers.batch.common import (
    MAX_REQUESTS_PER_BATCH,
    BatchJobError,
    BatchOptions,
    BatchTimeoutError,
    BatchUnavailableError,
)
from openclaw_memory.providers.batching import (
    DEFAULT_RETRY,
    Patience,
    ProgressCallback,
    RetryPolicy,
    embed_documents_batched,
)

__all__ = [
    "BATCH_FAILURE_LIMIT",
    "BatchJobError",
    "BatchState",
    "BatchTimeoutError",
    "BatchUnavailableError",
    "embed_for_index",
    "run_batch_api",
    "supports_batch_api",
]

log = logging.getLogger(__name__)

BATCH_FAILURE_LIMIT = 2


@dataclass
class BatchState:
    """Batch-API mode for one session: whether it is on, failures so far and the last error."""

    enabled: bool = False
    wait: bool = True
    concurrency: int = 2
    poll_interval_ms: int = 2000
    timeout_ms: int = 60 * 60_000
    failures: int = 0
    limit: int = BATCH_FAILURE_LIMIT
    last_error: str | None = None
    last_provider: str | None = None
    max_requests: int = MAX_REQUESTS_PER_BATCH
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def from_config(cls, config: MemoryConfig) -> BatchState:
        """Initial state from ``remote.batch``."""
        b = config.remote.batch
        return cls(
            enabled=b.enabled,
            wait=b.wait,
            concurrency=max(1, b.concurrency),
            poll_interval_ms=b.poll_interval_ms,
            timeout_ms=int(b.timeout_minutes * 60_000),
        )

    def options(self, agent_id: str = "main") -> BatchOptions:
        """The runner options these settings describe."""
        return BatchOptions(
            wait=self.wait,
            concurrency=self.concurrency,
            poll_interval_s=self.poll_interval_ms / 1000.0,
            timeout_s=self.timeout_ms / 1000.0,
            agent_id=agent_id,
            max_requests=self.max_requests,
        )

    def record_failure(self, error: BaseException, *, provider: str | None = None) -> None:
        """Count a failed batch attempt; at the limit batch mode is disabled for the session."""
        with self._lock:
            if isinstance(error, BatchUnavailableError):
                self.failures = max(self.failures + 1, self.limit)
            else:
                self.failures += max(1, int(getattr(error, "attempts", 1)))
            self.last_error = str(error)
            self.last_provider = provider
            if self.failures >= self.limit and self.enabled:
                self.enabled = False
                log.warning("memory embeddings: batch API disabled for this session after %d failures: %s", self.failures, error)

    def record_success(self, *, provider: str | None = None) -> None:
        """A batch succeeded: the failure counter resets (a disabled mode stays off)."""
        with self._lock:
            self.failures = 0
            self.last_provider = provider

    def to_dict(self) -> dict[str, Any]:
        """Status form: enabled, failures, limit, wait, concurrency, poll_interval_ms,
        timeout_ms, last_error, last_provider."""
        with self._lock:
            return {
                "enabled": self.enabled,
                "failures": self.failures,
                "limit": self.limit,
                "wait": self.wait,
                "concurrency": self.concurrency,
                "poll_interval_ms": self.poll_interval_ms,
                "timeout_ms": self.timeout_ms,
                "last_error": self.last_error,
                "last_provider": self.last_provider,
            }


def supports_batch_api(provider: EmbeddingProvider) -> bool:
    """True for the OpenAI, Gemini and Voyage providers."""
    return isinstance(provider, _batch_providers())


def _batch_providers() -> tuple[type[BaseEmbeddingProvider], ...]:
    """The provider classes with a vendor batch API (their SDKs are imported only when used)."""
    from openclaw_memory.providers.gemini import GeminiEmbeddingProvider
    from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
    from openclaw_memory.providers.voyage import VoyageEmbeddingProvider

    return (OpenAIEmbeddingProvider, GeminiEmbeddingProvider, VoyageEmbeddingProvider)


def _dispatch(provider: EmbeddingProvider, texts: Sequence[str], opts: BatchOptions) -> list[list[float]]:
    pid = provider.id
    if pid == "openai":
        from openclaw_memory.providers.batch.openai import run_openai_batch

        return run_openai_batch(provider, texts, opts)  # type: ignore[arg-type]
    if pid == "gemini":
        from openclaw_memory.providers.batch.gemini import run_gemini_batch

        return run_gemini_batch(provider, texts, opts)  # type: ignore[arg-type]
    if pid == "voyage":
        from openclaw_memory.providers.batch.voyage import run_voyage_batch

        return run_voyage_batch(provider, texts, opts)  # type: ignore[arg-type]
    raise BatchUnavailableError(f"provider {pid!r} has no batch API")


def run_batch_api(provider: EmbeddingProvider, texts: Sequence[str], opts: BatchOptions) -> list[np.ndarray]:
    """Embed documents through the provider's batch API: unit vectors in input order. A timed-out
    job is retried once (a second timeout raises with ``attempts == 2``)."""
    if not isinstance(provider, _batch_providers()):
        raise BatchUnavailableError(f"provider {provider.id!r} has no batch API")
    items = list(texts)
    try:
        raw = _dispatch(provider, items, opts)
    except BatchTimeoutError as first:
        log.warning("memory embeddings: %s; retrying the batch once", first)
        try:
            raw = _dispatch(provider, items, opts)
        except Exception as second:
            second.attempts = 2  # type: ignore[attr-defined]  # both tries count toward the limit
            raise
    return provider.check_vectors(raw, via="batch")


def embed_for_index(
    provider: EmbeddingProvider,
    texts: Sequence[str],
    config: MemoryConfig | None,
    state: BatchState | None,
    *,
    progress: ProgressCallback | None = None,
    retry: RetryPolicy = DEFAULT_RETRY,
    concurrency: int | None = None,
    patience: Patience | None = None,
) -> list[np.ndarray]:
    """Embed chunks for the index: the vendor batch API when ``state.enabled`` and the provider
    has one, otherwise (or after a batch failure) normal batched requests with retries.
    Returns one unit vector per text, in order; raises ProviderError if the normal path fails."""
    items = list(texts)
    if not items:
        return []
    if state is not None and state.enabled and supports_batch_api(provider):
        agent = config.agent_id if config is not None else "main"
        try:
            vecs = run_batch_api(provider, items, state.options(agent))
        except Exception as exc:  # noqa: BLE001 - every batch failure falls back to the normal path
            state.record_failure(exc, provider=provider.id)
            log.warning("memory embeddings: batch API failed (%s); using normal requests", exc)
        else:
            state.record_success(provider=provider.id)
            if progress is not None:
                progress(len(items), len(items))
            return vecs
    return embed_documents_batched(provider, items, progress=progress, retry=retry, concurrency=concurrency,
                                   patience=patience)
