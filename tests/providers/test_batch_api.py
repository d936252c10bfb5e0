"""Vendor batch APIs end to end through the real SDKs, and the 2-failure session switch."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from openclaw_memory.config import MemoryConfig
from openclaw_memory.providers.batch import BatchState, embed_for_index, supports_batch_api
from openclaw_memory.providers.batching import RetryPolicy
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from test_remote_providers import OPENAI_KEY, VOYAGE_KEY, gemini_provider, openai_provider, voyage_provider
from tests.helpers.vendor_server import DIMS, Fault, VendorServer, vector_for

TEXTS = ["first chunk", "second chunk", "third chunk"]


def state(**kw: object) -> BatchState:
    kw.setdefault("enabled", True)
    kw.setdefault("poll_interval_ms", 5)
    return BatchState(**kw)  # type: ignore[arg-type]


def unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def lines_of(vendor: VendorServer, file_id: str) -> list[dict]:
    return [json.loads(x) for x in vendor.files[file_id].decode().splitlines() if x.strip()]


def test_openai_batch_flow(vendor: VendorServer) -> None:
    p = openai_provider(vendor, dimensions=16)
    st = state()
    cfg = MemoryConfig(agent_id="ops")
    vendor.batch_polls = 2
    vecs = embed_for_index(p, TEXTS, cfg, st)
    np.testing.assert_allclose(vecs[2], unit(vector_for("third chunk", 16)), rtol=1e-5)
    assert vendor.count("openai.embeddings") == 0
    assert vendor.bodies("openai.files") == [{"purpose": "batch"}]
    create = vendor.bodies("openai.batches.create")[0]
    assert create["endpoint"] == "/v1/embeddings" and create["completion_window"] == "24h"
    assert create["metadata"] == {"source": "openclaw-memory", "agent": "ops"}
    lines = lines_of(vendor, create["input_file_id"])
    assert lines[1] == {
        "custom_id": "1",
        "method": "POST",
        "url": "/v1/embeddings",
        "body": {"model": "text-embedding-3-small", "input": "second chunk", "encoding_format": "float", "dimensions": 16},
    }
    assert vendor.count("openai.batches.get") == 3  # in_progress, in_progress, completed
    assert vendor.count("openai.files.content") == 1
    assert vendor.headers("openai.batches.create")[0]["authorization"] == f"Bearer {OPENAI_KEY}"
    assert st.to_dict()["failures"] == 0 and st.enabled


def test_gemini_batch_flow(vendor: VendorServer) -> None:
    p = gemini_provider(vendor, output_dimensionality=20)
    vecs = embed_for_index(p, TEXTS, MemoryConfig(agent_id="main"), state())
    np.testing.assert_allclose(vecs[0], unit(vector_for("first chunk", 20)), rtol=1e-5)
    assert vendor.count("gemini.batchEmbedContents") == 0
    assert vendor.headers("gemini.files.upload")[0]["x-goog-upload-protocol"] == "resumable"
    create = vendor.bodies("gemini.asyncBatchEmbedContent")[0]
    assert create["model"] == "gemini-embedding-001"
    assert create["batch"]["displayName"] == "memory-embeddings-main"
    file_id = (create["batch"]["inputConfig"].get("file_name") or create["batch"]["inputConfig"]["fileName"]).split("/")[-1]
    line = lines_of(vendor, file_id)[2]
    assert line == {
        "key": "2",
        "request": {
            "model": "models/gemini-embedding-001",
            "content": {"parts": [{"text": "third chunk"}]},
            "taskType": "RETRIEVAL_DOCUMENT",
            "outputDimensionality": 20,
        },
    }
    assert vendor.count("gemini.files.download") == 1


def test_voyage_batch_flow(vendor: VendorServer) -> None:
    p = voyage_provider(vendor, headers={"X-Proxy-Tenant": "t9"})
    vecs = embed_for_index(p, TEXTS, None, state())
    np.testing.assert_allclose(vecs[1], unit(vector_for("second chunk", DIMS["voyage"])), rtol=1e-5)
    assert vendor.count("voyage.embeddings") == 0
    create = vendor.bodies("voyage.batches.create")[0]
    assert create["completion_window"] == "12h" and create["endpoint"] == "/v1/embeddings"
    assert create["request_params"] == {"model": "voyage-4-large", "input_type": "document"}
    assert lines_of(vendor, create["input_file_id"])[0] == {"custom_id": "0", "body": {"input": ["first chunk"]}}
    headers = vendor.headers("voyage.batches.create")[0]
    assert headers["authorization"] == f"Bearer {VOYAGE_KEY}" and headers["x-proxy-tenant"] == "t9"


def test_groups_split_and_run_concurrently(vendor: VendorServer) -> None:
    p = openai_provider(vendor)
    vecs = embed_for_index(p, [f"t{i}" for i in range(7)], None, state(concurrency=2, max_requests=3))
    assert len(vecs) == 7 and vendor.count("openai.batches.create") == 3
    np.testing.assert_allclose(vecs[6], unit(vector_for("t6", DIMS["openai"])), rtol=1e-5)


def test_two_failures_disable_batch_mode_and_fall_back(vendor: VendorServer, caplog: pytest.LogCaptureFixture) -> None:
    p = openai_provider(vendor)
    st = state()
    vendor.batch_outcome = "failed"
    with caplog.at_level(logging.WARNING):
        first = embed_for_index(p, TEXTS, None, st, retry=RetryPolicy(retries=0))
    assert len(first) == 3 and vendor.count("openai.embeddings") == 1  # normal path served it
    assert st.failures == 1 and st.enabled and "quota exceeded" in (st.last_error or "")
    embed_for_index(p, TEXTS, None, st)
    assert st.failures == 2 and not st.enabled
    assert st.to_dict() == {
        "enabled": False, "failures": 2, "limit": 2, "wait": True, "concurrency": 2,
        "poll_interval_ms": 5, "timeout_ms": 3_600_000, "last_error": st.last_error, "last_provider": "openai",
    }
    creates = vendor.count("openai.batches.create")
    embed_for_index(p, TEXTS, None, st)
    assert vendor.count("openai.batches.create") == creates  # no more batch attempts this session
    assert vendor.count("openai.embeddings") == 3
    assert "batch API disabled" in caplog.text


def test_timeout_is_retried_once_and_counts_twice(vendor: VendorServer) -> None:
    p = voyage_provider(vendor)
    vendor.batch_outcome = "never"
    st = state(timeout_ms=60)
    vecs = embed_for_index(p, TEXTS, None, st)
    assert len(vecs) == 3 and vendor.count("voyage.batches.create") == 2
    assert st.failures == 2 and not st.enabled and "timed out" in (st.last_error or "")


def test_success_resets_the_failure_counter(vendor: VendorServer) -> None:
    p = openai_provider(vendor)
    st = state()
    vendor.batch_outcome = "error_lines"
    embed_for_index(p, TEXTS, None, st)
    assert st.failures == 1 and "bad input" in (st.last_error or "")
    vendor.batch_outcome = "completed"
    embed_for_index(p, TEXTS, None, st)
    assert st.failures == 0 and st.enabled


def test_gemini_without_batch_endpoint_disables_at_once(vendor: VendorServer) -> None:
    p = gemini_provider(vendor)
    vendor.fail("gemini.asyncBatchEmbedContent", Fault(status=404))
    st = state()
    vecs = embed_for_index(p, TEXTS, None, st)
    assert len(vecs) == 3 and st.failures >= 2 and not st.enabled
    assert "not available" in (st.last_error or "")


def test_wait_false_is_a_failure_with_a_hint(vendor: VendorServer) -> None:
    p = openai_provider(vendor)
    st = state(wait=False)
    embed_for_index(p, TEXTS, None, st)
    assert st.failures == 1 and "remote.batch.wait" in (st.last_error or "")


def test_batch_create_retries_on_429(vendor: VendorServer) -> None:
    p = openai_provider(vendor)
    vendor.fail("openai.batches.create", Fault(status=429, headers={"retry-after-ms": "10"}))
    st = state()
    embed_for_index(p, TEXTS, None, st)
    assert vendor.count("openai.batches.create") == 2 and st.failures == 0


def test_bad_batch_vectors_count_as_a_batch_failure(vendor: VendorServer) -> None:
    p = openai_provider(vendor)
    vendor.vectors["second chunk"] = [0.0] * DIMS["openai"]
    st = state()
    with pytest.raises(Exception, match="all-zero"):
        embed_for_index(p, TEXTS, None, st, retry=RetryPolicy(retries=0))
    assert st.failures == 1 and "all-zero" in (st.last_error or "")
    assert vendor.count("openai.embeddings") == 1  # the normal path was tried after the batch


def test_batch_state_from_config_and_providers_without_batch_api(vendor: VendorServer) -> None:
    cfg = MemoryConfig(remote={"batch": {"enabled": True, "wait": False, "concurrency": 3, "poll_interval_ms": 50, "timeout_minutes": 0.5}})
    st = BatchState.from_config(cfg)
    assert (st.enabled, st.wait, st.concurrency, st.poll_interval_ms, st.timeout_ms) == (True, False, 3, 50, 30_000)
    fake = FakeEmbeddingProvider()
    assert not supports_batch_api(fake) and supports_batch_api(openai_provider(vendor))
    assert len(embed_for_index(fake, ["a", "b"], cfg, st)) == 2 and st.failures == 0
