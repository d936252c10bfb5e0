"""OpenAI, Gemini and Voyage providers through their real SDKs against the loopback server."""

from __future__ import annotations

import math

import numpy as np
import pytest
from openclaw_memory.errors import ProviderError, ProviderRequestError, ProviderUnavailableError
from openclaw_memory.providers.base import provider_key
from openclaw_memory.providers.gemini import GeminiEmbeddingProvider, split_gemini_base_url
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
from openclaw_memory.providers.voyage import VoyageEmbeddingProvider
from tests.helpers.vendor_server import DIMS, Fault, VendorServer, vector_for

OPENAI_KEY = "sk-test-abcdef1234567890"
GEMINI_KEY = "AIzaTestKey1234567890"
VOYAGE_KEY = "pa-test-voyage-1234567890"


def openai_provider(vendor: VendorServer, **kw: object) -> OpenAIEmbeddingProvider:
    kw.setdefault("api_key", OPENAI_KEY)
    return OpenAIEmbeddingProvider(base_url=f"{vendor.url}/openai/v1", **kw)  # type: ignore[arg-type]


def gemini_provider(vendor: VendorServer, **kw: object) -> GeminiEmbeddingProvider:
    kw.setdefault("api_key", GEMINI_KEY)
    return GeminiEmbeddingProvider(base_url=f"{vendor.url}/gemini/v1beta", **kw)  # type: ignore[arg-type]


def voyage_provider(vendor: VendorServer, **kw: object) -> VoyageEmbeddingProvider:
    kw.setdefault("api_key", VOYAGE_KEY)
    return VoyageEmbeddingProvider(base_url=f"{vendor.url}/voyage/v1", **kw)  # type: ignore[arg-type]


def unit(vec: list[float]) -> np.ndarray:
    arr = np.asarray(vec, dtype=np.float32)
    return arr / np.linalg.norm(arr)


# ---- request shapes ----------------------------------------------------------------------


def test_openai_request_shape_and_vectors(vendor: VendorServer) -> None:
    p = openai_provider(vendor, model="openai/text-embedding-3-large", headers={"X-Team": "memory"}, dimensions=16)
    vecs = p.embed_documents(["alpha", "beta"])
    q = p.embed_query("gamma")
    body = vendor.bodies("openai.embeddings")[0]
    assert body == {"model": "text-embedding-3-large", "input": ["alpha", "beta"], "encoding_format": "float", "dimensions": 16}
    headers = vendor.headers("openai.embeddings")[0]
    assert headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert headers["x-team"] == "memory"
    np.testing.assert_allclose(vecs[1], unit(vector_for("beta", 16)), rtol=1e-5)
    assert q.shape == (16,) and p.dims == 16
    assert vendor.bodies("openai.embeddings")[1]["input"] == ["gamma"]


def test_openai_default_model_and_no_dimensions(vendor: VendorServer) -> None:
    p = openai_provider(vendor)
    p.embed_query("x")
    body = vendor.bodies("openai.embeddings")[0]
    assert body["model"] == "text-embedding-3-small" and "dimensions" not in body
    assert p.dims == DIMS["openai"]


def test_gemini_task_types_and_output_dimensionality(vendor: VendorServer) -> None:
    p = gemini_provider(vendor, model="models/gemini-embedding-001", output_dimensionality=24, headers={"X-Trace": "t1"})
    p.embed_query("what did we decide")
    docs = p.embed_documents(["decision log", "meeting notes"])
    q_body, d_body = vendor.bodies("gemini.batchEmbedContents")
    assert q_body["model"] == "gemini-embedding-001"
    assert [r["taskType"] for r in q_body["requests"]] == ["RETRIEVAL_QUERY"]
    assert [r["taskType"] for r in d_body["requests"]] == ["RETRIEVAL_DOCUMENT"] * 2
    assert all(r["outputDimensionality"] == 24 for r in d_body["requests"])
    assert d_body["requests"][1]["content"]["parts"][0]["text"] == "meeting notes"
    headers = vendor.headers("gemini.batchEmbedContents")[0]
    assert headers["x-goog-api-key"] == GEMINI_KEY and headers["x-trace"] == "t1"
    np.testing.assert_allclose(docs[0], unit(vector_for("decision log", 24)), rtol=1e-5)


def test_gemini_base_url_split() -> None:
    assert split_gemini_base_url(None) == ("https://generativelanguage.googleapis.com/", "v1beta")
    assert split_gemini_base_url("https://proxy.example/gemini/v1/openai/") == ("https://proxy.example/gemini/", "v1")
    assert split_gemini_base_url("http://127.0.0.1:9/base") == ("http://127.0.0.1:9/base/", "v1beta")


def test_voyage_input_types_and_output_dimension(vendor: VendorServer) -> None:
    p = voyage_provider(vendor, model="voyage/voyage-4-large", output_dimension=32)
    p.embed_query("where is the spec")
    vecs = p.embed_documents(["spec lives in docs/", "unrelated"])
    q_body, d_body = vendor.bodies("voyage.embeddings")
    assert q_body["input_type"] == "query" and d_body["input_type"] == "document"
    assert q_body["model"] == "voyage-4-large" and d_body["output_dimension"] == 32
    assert d_body["input"] == ["spec lives in docs/", "unrelated"]
    assert vendor.headers("voyage.embeddings")[0]["authorization"] == f"Bearer {VOYAGE_KEY}"
    assert vecs[0].shape == (32,)


async def test_async_twins_use_the_same_wire_format(vendor: VendorServer) -> None:
    o, g, v = openai_provider(vendor), gemini_provider(vendor), voyage_provider(vendor)
    assert (await o.aembed_query("a")).shape == (DIMS["openai"],)
    assert len(await g.aembed_documents(["a", "b"])) == 2
    assert (await v.aembed_query("a")).shape == (DIMS["voyage"],)
    assert vendor.count("openai.embeddings") == 1
    assert vendor.bodies("gemini.batchEmbedContents")[0]["requests"][0]["taskType"] == "RETRIEVAL_DOCUMENT"
    assert vendor.bodies("voyage.embeddings")[0]["input_type"] == "query"


# ---- bad vectors and bad responses -------------------------------------------------------


@pytest.mark.parametrize(
    "vector, message",
    [([math.nan] * 8, "NaN"), ([0.0] * 8, "all-zero"), ([1.0] * 5, "5-dimensional")],
)
def test_bad_vectors_raise_provider_error(vendor: VendorServer, vector: list[float], message: str) -> None:
    p = openai_provider(vendor)
    vendor.vectors["bad"] = vector
    with pytest.raises(ProviderError, match=message):
        p.embed_documents(["good", "bad"])


def test_wrong_dimension_against_known_dims(vendor: VendorServer) -> None:
    p = gemini_provider(vendor)
    p.embed_query("first")  # fixes dims at 12
    vendor.vectors["second"] = [1.0] * 7
    with pytest.raises(ProviderError, match="7-dimensional"):
        p.embed_query("second")


@pytest.mark.parametrize("factory, route", [(openai_provider, "openai.embeddings"), (gemini_provider, "gemini.batchEmbedContents"), (voyage_provider, "voyage.embeddings")])
def test_malformed_body_is_a_provider_error(vendor: VendorServer, factory, route: str) -> None:  # type: ignore[no-untyped-def]
    p = factory(vendor)
    vendor.fail(route, Fault(malformed=True))
    with pytest.raises(ProviderError) as info:
        p.embed_documents(["x"])
    assert not getattr(info.value, "retryable", False)


@pytest.mark.parametrize("factory, route", [(openai_provider, "openai.embeddings"), (gemini_provider, "gemini.batchEmbedContents"), (voyage_provider, "voyage.embeddings")])
def test_http_errors_carry_status_retryability_and_retry_after(vendor: VendorServer, factory, route: str) -> None:  # type: ignore[no-untyped-def]
    p = factory(vendor)
    vendor.fail(route, Fault(status=429, headers={"Retry-After": "3"}), Fault(status=401))
    with pytest.raises(ProviderRequestError) as rate:
        p.embed_query("x")
    assert rate.value.status_code == 429 and rate.value.retryable
    assert rate.value.retry_after == 3.0  # type: ignore[attr-defined]
    with pytest.raises(ProviderRequestError) as auth:
        p.embed_query("x")
    assert auth.value.status_code == 401 and not auth.value.retryable
    assert "api_key" in str(auth.value).lower() or "API key" in str(auth.value)


def test_connection_refused_is_retryable() -> None:
    p = OpenAIEmbeddingProvider(api_key=OPENAI_KEY, base_url="http://127.0.0.1:9/v1", timeout=2)
    with pytest.raises(ProviderRequestError) as info:
        p.embed_query("x")
    assert info.value.retryable and OPENAI_KEY not in str(info.value)


def test_missing_key_cannot_start() -> None:
    for cls in (OpenAIEmbeddingProvider, GeminiEmbeddingProvider, VoyageEmbeddingProvider):
        with pytest.raises(ProviderUnavailableError, match="No API key found"):
            cls(api_key="")


# ---- fingerprints ------------------------------------------------------------------------


def test_fingerprints_never_contain_keys_and_drop_auth_headers(vendor: VendorServer) -> None:
    o = openai_provider(vendor, headers={"Authorization": "Bearer other", "X-B": "2", "X-A": "1"})
    g = gemini_provider(vendor, headers={"x-goog-api-key": GEMINI_KEY, "authorization": "Bearer t", "X-Org": "o"})
    v = voyage_provider(vendor)
    fo, fg, fv = o.fingerprint(), g.fingerprint(), v.fingerprint()
    assert fo == {"provider": "openai", "baseUrl": f"{vendor.url}/openai/v1", "model": "text-embedding-3-small", "headers": [["X-A", "1"], ["X-B", "2"]]}
    assert fg["headers"] == [["X-Org", "o"]] and fg["baseUrl"] == f"{vendor.url}/gemini/v1beta"
    assert fg["outputDimensionality"] is None
    for fp, key in ((fo, OPENAI_KEY), (fg, GEMINI_KEY), (fv, VOYAGE_KEY)):
        text = repr(fp)
        assert key not in text and "Bearer" not in text


def test_provider_key_tracks_base_url_and_headers_not_the_key(vendor: VendorServer) -> None:
    base = provider_key(openai_provider(vendor).fingerprint())
    assert provider_key(openai_provider(vendor, api_key="sk-rotated-0000000000").fingerprint()) == base
    assert provider_key(openai_provider(vendor, headers={"X-Tenant": "b"}).fingerprint()) != base
    other = OpenAIEmbeddingProvider(api_key=OPENAI_KEY, base_url="http://127.0.0.1:1/v1")
    assert provider_key(other.fingerprint()) != base
    assert provider_key(openai_provider(vendor, dimensions=256).fingerprint()) != base


def test_error_messages_do_not_leak_the_key(vendor: VendorServer) -> None:
    p = openai_provider(vendor)
    vendor.fail("openai.embeddings", Fault(status=400, body={"error": {"message": f"bad key {OPENAI_KEY}"}}))
    with pytest.raises(ProviderRequestError) as info:
        p.embed_query("x")
    assert OPENAI_KEY not in str(info.value)
