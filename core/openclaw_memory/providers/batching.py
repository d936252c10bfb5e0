"""Embedding many documents efficiently and robustly, and cheap repeated queries.

* :func:`embed_documents_batched`: requests bounded by
  UTF-8 bytes (an upper bound of tokens; a text above the cap goes alone; a larger budget for
  in-process models) and by the provider's item limit, run with bounded concurrency, results in input order.
* Retries with exponential backoff and jitter (500 ms → 1 s → 2 s, capped at 8 s, 3 retries)
  on 429/5xx/timeouts, waiting what ``Retry-After`` asks for instead when the server says.
* Per-request timeouts: remote SDK clients carry their own (60 s); in-process models are
  guarded here (5 min). :class:`Patience` bounds all requests and retries of a remote provider together:
  indexing gives up once none has succeeded for ``provider_limits.sync_give_up_seconds``.
* :class:`CachedQueryEmbedder`: an in-memory LRU of query vectors.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from openclaw_memory.errors import ProviderError, ProviderRequestError, ProviderUnresponsiveError
from openclaw_memory.providers._util import (
    RemoteRequestError,
    call_with_timeout,
    parse_retry_after,
    status_is_retryable,
    transport_error_kind,
)
from openclaw_memory.providers.base import DEFAULT_CONCURRENCY, EmbeddingProvider
from openclaw_memory.providers.lru import LruCache
from openclaw_memory.redaction import redact

__all__ = [
    "DEFAULT_MAX_BATCH_TOKENS",
    "CachedQueryEmbedder",
    "Patience",
    "ProgressCallback",
    "RetryPolicy",
    "embed_documents_batched",
    "is_retryable",
    "request_error",
    "split_batches",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done_texts, total_texts)`` after each finished request."""

DEFAULT_MAX_BATCH_TOKENS = 8000
#: in-process models: no request limit to respect, only the call's timeout and how soon a sync can
#: stop; 32 KB is ~20 chunks of 1,600 characters (the fast first-index tier reads 192 bytes of each,
#: so it needs many per call to keep both cores busy)
IN_PROCESS_BATCH_BYTES = 32_000
REMOTE_TIMEOUT = 60.0
LOCAL_TIMEOUT = 300.0

_RETRY_TEXT = re.compile(
    r"(rate[_ ]limit|too many requests|\b429\b|resource has been exhausted|\b5\d\d\b|cloudflare|tokens per day)",
    re.IGNORECASE
)


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for retryable failures: ``base_delay * 2**attempt * (1 + jitter*rand)`` capped at
    ``max_delay``; a server ``Retry-After`` (capped at ``max_retry_after``) replaces it."""

    retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.2
    max_retry_after: float = 60.0

    def delay(self, attempt: int, exc: BaseException | None = None) -> float:
        """Seconds to sleep before retry number ``attempt + 1`` (attempt counts from 0)."""
        retry_after = getattr(exc, "retry_after", None)
        if isinstance(retry_after, (int, float)) and retry_after >= 0:
            return float(min(retry_after, self.max_retry_after))
        base = self.base_delay * (2**attempt) * (1 + random.random() * self.jitter)
        return float(min(base, self.max_delay))


DEFAULT_RETRY = RetryPolicy()
NO_RETRY = RetryPolicy(retries=0)


#: a request cut at the end of the patience window leaves a few milliseconds of it: that is none
_PATIENCE_EPSILON = 0.05


class Patience:
    """How long indexing keeps waiting for a remote provider: ``seconds`` from the first request or the last one
    that succeeded. Bounds every request and retry sleep, whatever their own timeouts. Thread-safe."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = float(seconds)
        self._clock = clock
        self._lock = threading.Lock()
        self._since = clock()

    def remaining(self) -> float:
        """Seconds left before giving up (0 when none)."""
        with self._lock:
            return max(0.0, self.seconds - (self._clock() - self._since))

    def answered(self) -> None:
        """A request succeeded: the provider is alive, the wait starts again."""
        with self._lock:
            self._since = self._clock()

    def give_up(self, what: str, cause: BaseException | None) -> ProviderUnresponsiveError:
        """The error that ends the wait."""
        last = f" (last: {cause})" if cause is not None else ""
        return ProviderUnresponsiveError(
            f"{what}: no answer from the embedding provider for {self.seconds:g}s{last}; giving up for now "
            "(provider_limits.sync_give_up_seconds)")


def is_retryable(exc: BaseException) -> bool:
    """Whether a failed embedding request is worth retrying (rate limits, 5xx, timeouts)."""
    if isinstance(exc, ProviderRequestError):
        return bool(exc.retryable)
    if isinstance(exc, ProviderError):
        return False  # bad vectors, missing keys, … will not improve by retrying
    if transport_error_kind(exc) is not None:
        return True
    return bool(_RETRY_TEXT.search(str(exc)))


def request_error(exc: Exception, what: str) -> ProviderError:
    """The library's error for a failed call of an embedding model wrapped from another library (``what``
    names it): ``exc`` itself when it is one already, else a RemoteRequestError with ``exc``'s message redacted
    (SDK errors echo keys) and retryable as a vendor provider's error is (rate limits, 5xx, timeouts, connection
    failures), with the status code and ``Retry-After`` the exception carries."""
    if isinstance(exc, ProviderError):
        return exc
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) and not isinstance(status, bool) else None
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return RemoteRequestError(
        f"{what} failed: {type(exc).__name__}: {exc}",
        status_code=status,
        retryable=status_is_retryable(status) if status is not None else is_retryable(exc),
        retry_after=parse_retry_after(headers) if headers is not None else None,
    )


def split_batches(texts: Sequence[str], *, max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS, max_items: int | None = None) -> list[list[int]]:
    """Group text indices into requests of at most ``max_batch_tokens`` UTF-8 bytes and
    ``max_items`` texts, keeping order. A text larger than the cap forms a batch of its own."""
    batches: list[list[int]] = []
    current: list[int] = []
    size = 0
    for i, text in enumerate(texts):
        n = len(text.encode("utf-8"))
        full = bool(current) and (size + n > max_batch_tokens or (max_items is not None and len(current) >= max_items))
        if full:
            batches.append(current)
            current, size = [], 0
        current.append(i)
        size += n
    if current:
        batches.append(current)
    return batches


def _timeout_for(provider: EmbeddingProvider) -> float:
    default = LOCAL_TIMEOUT if provider.in_process else REMOTE_TIMEOUT
    return float(provider.request_timeout or default)


def _call_once(provider: EmbeddingProvider, texts: list[str], patience: Patience | None = None) -> list[np.ndarray]:
    """One request for ``texts``; a provider's own exception (one written from scratch raises its SDK's) is the
    library's RemoteRequestError (redacted, as retryable as a vendor's) via :func:`request_error`."""
    try:
        return _request(provider, texts, patience)
    except Exception as exc:
        raise request_error(exc, f"{provider.id}:{provider.model}") from None  # the cause may quote the key


def _request(provider: EmbeddingProvider, texts: list[str], patience: Patience | None) -> list[np.ndarray]:
    what = f"{provider.id} embedding batch"
    if provider.in_process:
        return call_with_timeout(lambda: provider.embed_documents(texts), _timeout_for(provider), what=what)
    if patience is None:
        return provider.embed_documents(texts)
    left = patience.remaining()
    if left <= 0:
        raise patience.give_up(what, None)
    return call_with_timeout(lambda: provider.embed_documents(texts), min(left, _timeout_for(provider)), what=what)


def _refuse_long_wait(exc: Exception, policy: RetryPolicy) -> None:
    """A server asking to be left alone for longer than ``policy.max_retry_after`` is not waited
    for: raise a non-retryable error at once instead of sleeping (and blocking a sync) that long."""
    wait = getattr(exc, "retry_after", None)
    if isinstance(wait, (int, float)) and wait > policy.max_retry_after:
        raise RemoteRequestError(
            f"{exc} The server asks to retry after {wait:g}s, longer than the {policy.max_retry_after:g}s "
            "this library waits (provider_limits.max_retry_after_seconds); giving up for now",
            status_code=getattr(exc, "status_code", None), retryable=False,
        ) from exc


def with_retries(fn: Callable[[], T], *, policy: RetryPolicy = DEFAULT_RETRY, what: str = "embedding request",
                 patience: Patience | None = None) -> T:
    """Call ``fn``; on a retryable failure sleep per ``policy`` and try again. With ``patience``, give up
    (ProviderUnresponsiveError) once it runs out instead of retrying or sleeping past it."""
    attempt = 0
    while True:
        try:
            result = fn()
        except ProviderUnresponsiveError:
            raise
        except Exception as exc:
            if patience is not None and is_retryable(exc) and patience.remaining() < _PATIENCE_EPSILON:
                raise patience.give_up(what, exc) from exc
            if attempt >= policy.retries or not is_retryable(exc):
                raise
            _refuse_long_wait(exc, policy)
            delay = policy.delay(attempt, exc)
            if patience is not None and delay >= patience.remaining():
                raise patience.give_up(what, exc) from exc
            log.warning("%s failed (%s); retry %d/%d in %.2fs", what, redact(str(exc)), attempt + 1, policy.retries,
                        delay)
            time.sleep(delay)
            attempt += 1
        else:
            if patience is not None:
                patience.answered()
            return result


def _plan(provider: EmbeddingProvider, texts: Sequence[str], max_batch_tokens: int | None,
          concurrency: int | None) -> tuple[list[list[int]], int]:
    max_items = provider.max_batch_size
    if max_batch_tokens is None:
        max_batch_tokens = IN_PROCESS_BATCH_BYTES if provider.in_process else DEFAULT_MAX_BATCH_TOKENS
    batches = split_batches(texts, max_batch_tokens=max_batch_tokens, max_items=max_items)
    workers = concurrency or int(provider.default_concurrency or DEFAULT_CONCURRENCY)
    return batches, max(1, min(workers, len(batches) or 1))


def embed_documents_batched(
    provider: EmbeddingProvider,
    texts: Sequence[str],
    *,
    max_batch_tokens: int | None = None,
    concurrency: int | None = None,
    progress: ProgressCallback | None = None,
    retry: RetryPolicy = DEFAULT_RETRY,
    patience: Patience | None = None,
) -> list[np.ndarray]:
    """Embed ``texts`` as documents: one unit vector per text, in input order.

    Requests hold at most ``max_batch_tokens`` UTF-8 bytes (default: 8,000 for remote providers,
    32,000 for in-process models) and the provider's ``max_batch_size`` texts.

    ``concurrency`` defaults to the provider's ``default_concurrency`` (4 remote, 1 local).
    Raises the last ProviderError when a request still fails after retries, ProviderUnresponsiveError when a
    remote provider gave no answer for ``patience`` (see :class:`Patience`).
    """
    items = list(texts)
    if not items:
        return []
    batches, workers = _plan(provider, items, max_batch_tokens, concurrency)
    out: list[np.ndarray | None] = [None] * len(items)
    done = 0
    lock = threading.Lock()

    def run(batch: list[int]) -> None:
        nonlocal done
        chunk = [items[i] for i in batch]
        vecs = with_retries(lambda: _call_once(provider, chunk, patience), policy=retry,
                            what=f"{provider.id} embedding batch", patience=patience)
        if len(vecs) != len(batch):
            raise ProviderError(f"{provider.id} returned {len(vecs)} vectors for {len(batch)} inputs")
        with lock:
            for i, v in zip(batch, vecs):
                out[i] = v
            done += len(batch)
            current = done
        if progress is not None:
            progress(current, len(items))

    if workers == 1:
        for batch in batches:
            run(batch)
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openclaw-embed") as pool:
            futures = [pool.submit(run, b) for b in batches]
            try:
                for f in futures:
                    f.result()
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
    return _complete(out)


def _complete(out: list[np.ndarray | None]) -> list[np.ndarray]:
    missing = sum(v is None for v in out)
    if missing:
        raise ProviderError(f"{missing} of {len(out)} texts were not embedded")
    return [v for v in out if v is not None]


class CachedQueryEmbedder:
    """Query embeddings with an in-memory LRU: a repeated query costs no model call.

    Thread-safe. Cached vectors are read-only arrays. Queries are not retried (a user is
    waiting); they are bounded by the provider's request timeout. The cache belongs to one
    provider: after switching provider (e.g. to the fallback) create a new embedder.
    """

    def __init__(self, provider: EmbeddingProvider, *, max_entries: int = 512, guard: bool = True) -> None:
        """``guard=False``: the caller bounds each call itself, so an in-process model is called in
        the caller's thread (no helper thread per query)."""
        self.provider = provider
        self.guard = guard
        self.max_entries = max(1, int(max_entries))
        self._cache: LruCache[str, np.ndarray] = LruCache(self.max_entries)
        self._lock = threading.Lock()  # the hit and miss counts
        self.hits = 0
        self.misses = 0

    def _get(self, text: str) -> np.ndarray | None:
        """:meth:`lookup`, a miss counted too (the caller embeds the query)."""
        vec = self.lookup(text)
        if vec is None:
            with self._lock:
                self.misses += 1
        return vec

    def _put(self, text: str, vec: np.ndarray) -> np.ndarray:
        vec = np.array(vec, dtype=np.float32, copy=True)
        vec.setflags(write=False)
        self._cache.put(text, vec)
        return vec

    def lookup(self, text: str) -> np.ndarray | None:
        """The cached vector for ``text``, or None (never calls the provider)."""
        vec = self._cache.get(text)
        if vec is not None:
            with self._lock:
                self.hits += 1
        return vec

    def embed_query(self, text: str) -> np.ndarray:
        """The unit vector for ``text`` (from the cache when seen before)."""
        cached = self._get(text)
        if cached is not None:
            return cached
        try:
            if self.provider.in_process and self.guard:
                vec = call_with_timeout(lambda: self.provider.embed_query(text), _timeout_for(self.provider),
                                        what="query embedding")
            else:
                vec = self.provider.embed_query(text)
        except Exception as exc:
            raise self._error(exc) from None  # the cause may quote the key
        return self._put(text, vec)

    def _error(self, exc: Exception) -> ProviderError:
        """The library's redacted error for a failed query embedding (see :func:`request_error`)."""
        return request_error(exc, f"{self.provider.id}:{self.provider.model} query embedding")

    async def aembed_query(self, text: str) -> np.ndarray:
        """Async twin of :meth:`embed_query`."""
        cached = self._get(text)
        if cached is not None:
            return cached
        timeout = _timeout_for(self.provider)
        try:
            vec = await asyncio.wait_for(self.provider.aembed_query(text), timeout)
        except asyncio.TimeoutError:
            raise RemoteRequestError(f"query embedding timed out after {timeout:g}s", retryable=True) from None
        except Exception as exc:
            raise self._error(exc) from None
        return self._put(text, vec)

    def clear(self) -> None:
        """Forget every cached query."""
        self._cache.clear()

    def stats(self) -> dict[str, Any]:
        """``{size, max_entries, hits, misses, hit_rate}`` for status output."""
        with self._lock:
            total = self.hits + self.misses
            return {
                "size": len(self._cache),
                "max_entries": self.max_entries,
                "hits": self.hits,
                "misses": self.misses,
                "hit_rate": (self.hits / total) if total else 0.0,
            }
