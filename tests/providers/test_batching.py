"""Request batching, bounded concurrency, retries/backoff/Retry-After, timeouts, query cache."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest
from openclaw_memory.errors import ProviderError, ProviderRequestError
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbedKind
from openclaw_memory.providers.batching import (
    NO_RETRY,
    CachedQueryEmbedder,
    RetryPolicy,
    embed_documents_batched,
    is_retryable,
    split_batches,
)
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from test_remote_providers import gemini_provider, openai_provider, voyage_provider
from tests.helpers.vendor_server import Fault, VendorServer


class SlowProvider(BaseEmbeddingProvider):
    """Records how many calls run at once; sleeps a random short time per call."""

    id = "slow"

    def __init__(self, *, delay: float = 0.02, in_process: bool = False, timeout: float = 60.0) -> None:
        super().__init__(model="slow", dims=4)
        self.delay = delay
        self.in_process = in_process
        self.request_timeout = timeout
        self.active = 0
        self.peak = 0
        self.calls = 0
        self._lock = threading.Lock()

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        with self._lock:
            self.active += 1
            self.calls += 1
            self.peak = max(self.peak, self.active)
        time.sleep(self.delay * random.random() + self.delay)
        with self._lock:
            self.active -= 1
        return [[float(len(t)), 1.0, float(i), 1.0] for i, t in enumerate(texts)]


# ---- splitting ---------------------------------------------------------------------------


def test_split_batches_respects_bytes_items_and_order() -> None:
    texts = ["a" * 3000, "b" * 3000, "c" * 3000, "d" * 9000, "é" * 1000, "f"]
    batches = split_batches(texts, max_batch_tokens=8000)
    assert batches == [[0, 1], [2], [3], [4, 5]]  # "é" is 2 bytes: 2000 + 1
    assert split_batches(["x"] * 7, max_batch_tokens=8000, max_items=3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert split_batches([]) == []


def test_requests_to_a_real_sdk_stay_within_the_byte_cap(vendor: VendorServer, fast_retry: RetryPolicy) -> None:
    p = openai_provider(vendor)
    texts = [f"{i:03d} " + "x" * 996 for i in range(20)] + ["huge " + "y" * 9000]
    vecs = embed_documents_batched(p, texts, max_batch_tokens=4000, concurrency=3, retry=fast_retry)
    assert len(vecs) == 21
    sizes = [sum(len(t.encode()) for t in body["input"]) for body in vendor.bodies("openai.embeddings")]
    assert all(s <= 4000 for s in sizes[:-1] if s < 9000)
    assert max(len(b["input"]) for b in vendor.bodies("openai.embeddings")) == 4
    assert any(b["input"] == [texts[-1]] for b in vendor.bodies("openai.embeddings"))  # oversize alone
    single = openai_provider(vendor).embed_documents([texts[7]])[0]
    np.testing.assert_allclose(vecs[7], single, rtol=1e-6)  # order preserved


def test_gemini_requests_are_capped_at_100_items(vendor: VendorServer) -> None:
    p = gemini_provider(vendor)
    vecs = embed_documents_batched(p, [f"t{i}" for i in range(250)])
    assert len(vecs) == 250
    assert sorted(len(b["requests"]) for b in vendor.bodies("gemini.batchEmbedContents")) == [50, 100, 100]


def test_concurrency_is_bounded_and_order_preserved() -> None:
    p = SlowProvider()
    texts = [f"text number {i}" * (i % 5 + 1) for i in range(40)]
    vecs = embed_documents_batched(p, texts, max_batch_tokens=60, concurrency=3)
    assert p.calls > 6 and 1 < p.peak <= 3
    for v, t in zip(vecs, texts):
        assert v[0] / v[1] == pytest.approx(len(t), rel=1e-4)


def test_progress_reports_every_request() -> None:
    seen: list[tuple[int, int]] = []
    embed_documents_batched(FakeEmbeddingProvider(), ["a" * 50] * 10, max_batch_tokens=100, progress=lambda d, t: seen.append((d, t)))
    assert [d for d, _ in seen] == [2, 4, 6, 8, 10] and {t for _, t in seen} == {10}


# ---- retries -----------------------------------------------------------------------------


def test_retry_after_is_honoured(vendor: VendorServer, fast_retry: RetryPolicy) -> None:
    p = voyage_provider(vendor)
    vendor.fail("voyage.embeddings", Fault(status=429, headers={"Retry-After": "1"}))
    start = time.monotonic()
    vecs = embed_documents_batched(p, ["a", "b"], retry=fast_retry)
    assert time.monotonic() - start >= 0.95
    assert len(vecs) == 2 and vendor.count("voyage.embeddings") == 2


def test_retry_after_ms_header(vendor: VendorServer, fast_retry: RetryPolicy) -> None:
    p = openai_provider(vendor)
    vendor.fail("openai.embeddings", Fault(status=429, headers={"retry-after-ms": "300"}))
    start = time.monotonic()
    embed_documents_batched(p, ["a"], retry=fast_retry)
    assert 0.28 <= time.monotonic() - start < 2.0


def test_5xx_retried_with_backoff_then_success(vendor: VendorServer) -> None:
    p = gemini_provider(vendor)
    vendor.fail("gemini.batchEmbedContents", Fault(status=500), Fault(status=503))
    policy = RetryPolicy(base_delay=0.1, max_delay=8.0, jitter=0.2)
    start = time.monotonic()
    vecs = embed_documents_batched(p, ["a"], retry=policy)
    elapsed = time.monotonic() - start
    assert len(vecs) == 1 and vendor.count("gemini.batchEmbedContents") == 3
    assert 0.3 <= elapsed < 2.0  # 0.1 + 0.2 (each up to +20% jitter)


def test_gives_up_after_three_retries(vendor: VendorServer, fast_retry: RetryPolicy) -> None:
    p = openai_provider(vendor)
    vendor.fail("openai.embeddings", *[Fault(status=429)] * 5)
    with pytest.raises(ProviderRequestError) as info:
        embed_documents_batched(p, ["a"], retry=fast_retry)
    assert info.value.status_code == 429
    assert vendor.count("openai.embeddings") == 4


def test_client_errors_are_not_retried(vendor: VendorServer, fast_retry: RetryPolicy) -> None:
    p = openai_provider(vendor)
    vendor.fail("openai.embeddings", Fault(status=400))
    with pytest.raises(ProviderRequestError):
        embed_documents_batched(p, ["a"], retry=fast_retry)
    assert vendor.count("openai.embeddings") == 1


def test_timeouts_are_retried(vendor: VendorServer, fast_retry: RetryPolicy) -> None:
    p = openai_provider(vendor, timeout=0.3)
    vendor.fail("openai.embeddings", Fault(delay=1.0))
    vecs = embed_documents_batched(p, ["a"], retry=fast_retry)
    assert len(vecs) == 1 and vendor.count("openai.embeddings") == 2


def test_in_process_models_get_a_timeout() -> None:
    p = SlowProvider(delay=0.5, in_process=True, timeout=0.1)
    start = time.monotonic()
    with pytest.raises(ProviderRequestError, match="timed out") as info:
        embed_documents_batched(p, ["a"], retry=NO_RETRY)
    assert info.value.retryable and time.monotonic() - start < 0.4


def test_retry_policy_delays() -> None:
    policy = RetryPolicy()
    delays = [policy.delay(i) for i in range(6)]
    assert 0.5 <= delays[0] <= 0.6 and 1.0 <= delays[1] <= 1.2 and 2.0 <= delays[2] <= 2.4
    assert max(delays) <= 8.0

    class E(Exception):
        retry_after = 2.5

    assert policy.delay(0, E()) == 2.5
    assert is_retryable(RuntimeError("429 Too Many Requests")) and is_retryable(TimeoutError())
    assert not is_retryable(ProviderError("returned a 512-dimensional vector"))
    assert not is_retryable(ValueError("bad input"))


# ---- query cache -------------------------------------------------------------------------


def test_query_cache_makes_repeats_free(vendor: VendorServer) -> None:
    cache = CachedQueryEmbedder(openai_provider(vendor), max_entries=2)
    a1 = cache.embed_query("alpha")
    a2 = cache.embed_query("alpha")
    assert vendor.count("openai.embeddings") == 1
    np.testing.assert_array_equal(a1, a2)
    with pytest.raises(ValueError):
        a1[0] = 5.0  # cached vectors are read-only
    cache.embed_query("beta")
    cache.embed_query("gamma")  # evicts alpha (least recently used)
    cache.embed_query("alpha")
    assert vendor.count("openai.embeddings") == 4
    stats = cache.stats()
    assert stats["size"] == 2 and stats["hits"] == 1 and stats["misses"] == 4
    assert stats["hit_rate"] == pytest.approx(0.2)


async def test_async_query_cache(vendor: VendorServer) -> None:
    cache = CachedQueryEmbedder(gemini_provider(vendor))
    await cache.aembed_query("q")
    await cache.aembed_query("q")
    cache.embed_query("q")
    assert vendor.count("gemini.batchEmbedContents") == 1
    assert vendor.bodies("gemini.batchEmbedContents")[0]["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
