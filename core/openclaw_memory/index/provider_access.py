"""The embedding provider of one :class:`~openclaw_memory.index.MemoryIndex`: resolved on first use, its
fallback, its circuit breaker, the query embedder with its cache, and the bundled model's two tiers."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

import numpy as np

from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import IndexClosedError, ProviderError, ProviderUnresponsiveError
from openclaw_memory.providers.base import EmbeddingProvider
from openclaw_memory.providers.breaker import CircuitBreaker
from openclaw_memory.storage import MemoryStore
from openclaw_memory.types import FallbackInfo

if TYPE_CHECKING:
    from openclaw_memory.providers.batch import BatchState
    from openclaw_memory.indexing.two_tier import EmbeddingUpgrade

__all__ = ["AUTO", "ProviderAccess"]

log = logging.getLogger(__name__)


class _Auto:
    """The "provider from the configuration" default (a singleton that survives pickling)."""

    def __reduce__(self) -> str:
        return "AUTO"

    def __repr__(self) -> str:
        return "<configured provider>"


#: ``MemoryIndex(provider=AUTO)``: the provider named by the configuration
AUTO: Any = _Auto()


class ProviderAccess:
    """Which provider an index embeds with, and the calls to it.

    ``explicit`` is the provider given to the index (an instance, None for keyword-only, or
    :data:`AUTO`: resolved from ``config`` on first use). ``cancel`` stops the bundled model's
    background upgrade. Thread-safe.

    Ownership: the providers this object creates (from the configuration, or a fallback) are its own and
    :meth:`close` closes them; a given instance is the caller's (other indexes may share it) and stays open,
    unless ``owns_explicit`` says the index holds the only reference (an unpickled copy).
    """

    def __init__(self, config: MemoryConfig, store: MemoryStore, explicit: EmbeddingProvider | None | Any, *,
                 cancel: threading.Event) -> None:
        self.config = config
        self.store = store
        self.explicit = explicit
        #: whether :meth:`close` closes the given provider too (it does not by default: it is the caller's)
        self.owns_explicit = False
        self._cancel = cancel
        self._provider: EmbeddingProvider | None = None
        self._provider_ready = False
        #: the provider asked for (a configuration name, the given provider's id, or "none")
        self.requested: str = config.provider if explicit is AUTO else (explicit.id if explicit else "none")
        #: the switch to the fallback provider, once it happened
        self.fallback: FallbackInfo | None = None
        #: why there is no provider (keyword-only mode)
        self.keyword_only_reason: str | None = None
        #: where the provider's API key came from
        self.key_source: str | None = None
        #: held while the provider is resolved or switched (and while the upgrade thread starts)
        self.lock = threading.Lock()
        #: the embedding state of batched indexing (created on first use)
        self.embed_state: BatchState | None = None
        #: the query embedder's LRU cache (created on first use)
        self.query_cache: Any = None
        #: the bundled model's fast first index and its upgrade (None without tiers)
        self.upgrade: EmbeddingUpgrade | None = None
        limits = config.provider_limits
        self.breaker = CircuitBreaker(limits.breaker_failures, limits.breaker_cooldown_seconds)
        # query embeddings running at once, counting ones a search stopped waiting for
        self._query_slots = threading.BoundedSemaphore(2)

    def ensure(self) -> EmbeddingProvider | None:
        """The provider in use, resolved on the first call; None in keyword-only mode. IndexClosedError when the
        index closed before one was resolved (a provider created then would never be closed)."""
        if self._provider_ready:
            return self._provider
        with self.lock:
            if self._provider_ready:
                return self._provider
            if self._cancel.is_set():
                raise IndexClosedError("this MemoryIndex is closed; create a new one")
            if self.explicit is not AUTO:
                self._provider = self.explicit
                if self._provider is None:
                    self.keyword_only_reason = "no embedding provider given (keyword-only mode)"
            else:
                from openclaw_memory.providers.registry import resolve_provider

                res = resolve_provider(self.config)
                self._provider = res.provider
                self.fallback = res.fallback
                self.keyword_only_reason = res.unavailable_reason if res.provider is None else None
                self.key_source = res.key_source
                from openclaw_memory.indexing.two_tier import first_index_upgrade

                self.upgrade = first_index_upgrade(self.config, res.provider, self.store, cancel=self._cancel)
            self._provider_ready = True
            return self._provider

    def query_embedder(self, provider: EmbeddingProvider | None) -> Any:
        """Query embeddings through an LRU cache, so a repeated query costs no model call."""
        if provider is None:
            return None
        if self.upgrade is not None and provider is self.upgrade.fast:
            provider = self.upgrade.full  # the fast tier's queries are the full model's: one cache for both tiers
        from openclaw_memory.providers.batching import CachedQueryEmbedder

        from openclaw_memory.providers._util import call_with_timeout

        cached = self.query_cache
        if cached is None or cached.provider is not provider:
            cached = self.query_cache = CachedQueryEmbedder(provider, guard=False)  # embed() below bounds each call
        limits = self.config.provider_limits
        breaker, slots, embed_query, lookup = self.breaker, self._query_slots, cached.embed_query, cached.lookup

        def embed(text: str) -> np.ndarray:
            text = text[: limits.query_max_chars]  # the keyword side searches the whole query
            hit = lookup(text)
            if hit is not None:
                return hit
            if not breaker.allow():
                raise ProviderError(breaker.reason())
            try:
                vec = call_with_timeout(lambda: embed_query(text), limits.query_timeout_seconds,
                                        what="query embedding", slots=slots)
            except Exception as exc:
                breaker.record_failure(exc)
                raise
            breaker.record_success()
            return vec

        return embed

    def embed_documents(self, provider: EmbeddingProvider, texts: list[str]) -> list[np.ndarray]:
        """Embed texts for the index (batched, retried, guarded by the circuit breaker). A remote provider that
        gives no answer for ``provider_limits.sync_give_up_seconds`` opens the breaker at once (searches stop
        waiting for it too) and raises ProviderUnresponsiveError, as does a call while the breaker is open."""
        from openclaw_memory.providers.batch import embed_for_index
        from openclaw_memory.providers.batching import Patience, RetryPolicy

        if not self.breaker.allow():
            raise ProviderUnresponsiveError(self.breaker.reason())
        limits = self.config.provider_limits
        retry = RetryPolicy(retries=limits.retries, max_retry_after=limits.max_retry_after_seconds)
        patience = None if provider.in_process else Patience(limits.sync_give_up_seconds)
        try:
            vectors = embed_for_index(provider, texts, self.config, self.batch_state(), retry=retry, patience=patience)
        except ProviderUnresponsiveError as exc:
            self.breaker.trip(exc)
            raise
        except Exception as exc:
            self.breaker.record_failure(exc)
            raise
        self.breaker.record_success()
        return vectors

    def batch_state(self) -> BatchState:
        """The batched-indexing state (created on first use)."""
        if self.embed_state is None:
            from openclaw_memory.providers.batch import BatchState

            self.embed_state = BatchState.from_config(self.config)
        return self.embed_state

    def tier_provider(self, provider: EmbeddingProvider | None, *, query: bool) -> EmbeddingProvider | None:
        """With the bundled model's two tiers: the provider a sync writes with, or (``query``) the one
        whose model the live index names; ``provider`` itself otherwise (or after a fallback)."""
        upgrade = self.upgrade
        if upgrade is None or provider is not upgrade.full:
            return provider
        return upgrade.query_provider() if query else upgrade.sync_provider()

    def search_config(self, provider: EmbeddingProvider | None,
                      tuned: Callable[[MemoryConfig], MemoryConfig] | None = None) -> MemoryConfig:
        """The settings a search with ``provider`` runs with (the fast tier has its own vector weight),
        with ``tuned`` (one search's own changes) applied (see :meth:`EmbeddingUpgrade.search_config`)."""
        if self.upgrade is not None:
            return self.upgrade.search_config(provider, self.config, tuned)
        return tuned(self.config) if tuned is not None else self.config

    def activate_fallback(self, exc: Exception) -> bool:
        """Switch to the configured fallback provider after an embedding failure (one hop)."""
        if self.explicit is not AUTO or self.fallback is not None:
            return False
        if self.config.fallback in ("none", self.config.provider) or not isinstance(exc.__cause__, ProviderError):
            return False
        from openclaw_memory.providers.registry import create_fallback

        primary = self._provider.id if self._provider else self.config.provider
        try:
            fb = create_fallback(self.config, exc.__cause__, primary=primary)
        except Exception as fb_exc:
            log.warning("fallback provider %s failed to start: %s", self.config.fallback, fb_exc)
            return False
        with self.lock:
            failed, self._provider = self._provider, fb
            self.fallback = FallbackInfo(from_provider=primary, reason=str(exc.__cause__))
        self.breaker.reset()  # the primary's failures say nothing about the fallback
        log.warning("embedding provider %s failed (%s); switched to fallback %s", primary, exc.__cause__, fb.id)
        _close_quietly(failed)  # created from the configuration, so this index's: its clients are released now
        return True

    def close(self) -> None:
        """Close the provider in use when this index created it (see the class docstring); a given one is the
        caller's to close."""
        with self.lock:  # one being resolved now is closed once it is there
            provider = self._provider if self.explicit is AUTO or self.owns_explicit else None
        if provider is not None:
            provider.close()


def _close_quietly(provider: EmbeddingProvider | None) -> None:
    """Close a provider no longer used; a failure to close is logged (the switch away from it has happened)."""
    if provider is None:
        return
    try:
        provider.close()
    except Exception as exc:  # noqa: BLE001 - closing a failed provider must not fail the sync that left it
        log.warning("closing the failed embedding provider %s raised %s: %s", provider.id, type(exc).__name__, exc)
