"""Remote providers as a user configures them: proxy URLs, placeholder keys, vendor error messages, and
providers written from scratch whose exceptions quote their keys."""

from __future__ import annotations

import base64
import json

import pytest
from openclaw_memory import MemoryConfig, MemoryIndex
from openclaw_memory.errors import OpenClawMemoryError, ProviderError, ProviderRequestError, ProviderUnavailableError
from openclaw_memory.providers.base import provider_key
from openclaw_memory.providers.batching import embed_documents_batched, is_retryable
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.providers.gemini import GeminiEmbeddingProvider
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
from openclaw_memory.providers.registry import ProviderResolution, probe_provider, resolve_provider
from tests.helpers.vendor_server import Fault, VendorServer
from tests.providers.test_remote_providers import (
    GEMINI_KEY,
    OPENAI_KEY,
    gemini_provider,
    openai_provider,
    voyage_provider,
)

PROXY_PASSWORD = "proxy-pass-0f9e8d7c"


@pytest.mark.parametrize("make", [
    lambda url: OpenAIEmbeddingProvider(api_key=OPENAI_KEY, base_url=url + "/v1"),
    lambda url: GeminiEmbeddingProvider(api_key=GEMINI_KEY, base_url=url + "/v1beta"),
])  # Voyage refuses such a URL (tests/providers/test_url_credentials.py)
def test_a_base_url_password_is_not_in_the_fingerprint(make) -> None:  # type: ignore[no-untyped-def]
    with_password = make(f"http://team:{PROXY_PASSWORD}@proxy.internal:8080")
    fingerprint = with_password.fingerprint()
    assert PROXY_PASSWORD not in repr(fingerprint)
    assert "proxy.internal:8080" in fingerprint["baseUrl"]
    rotated = make("http://team:another-pass-123456@proxy.internal:8080")
    assert provider_key(rotated.fingerprint()) == provider_key(fingerprint)


@pytest.mark.parametrize("status, hint", [(403, "VOYAGE_API_KEY"), (404, "remote.base_url"), (500, None)])
def test_a_voyage_http_error_says_what_the_server_said_once(vendor: VendorServer, status: int, hint: str | None) -> None:
    provider = voyage_provider(vendor)
    vendor.fail("voyage.embeddings", Fault(status=status))
    with pytest.raises(ProviderRequestError) as info:
        provider.embed_query("x")
    message = str(info.value)
    assert f"HTTP {status}: " in message and ".." not in message
    assert "content-type" not in message.lower() and "'date'" not in message  # no response headers dumped
    if hint is not None:
        assert message.count("injected error") == 1 and hint in message


# What each vendor answers a wrong API key with (Gemini says it with HTTP 400, not 401).
OPENAI_BAD_KEY = {"error": {"message": "Incorrect API key provided: sk-wrong. You can find your API key at "
                                      "https://platform.openai.com/account/api-keys.",
                           "type": "invalid_request_error", "code": "invalid_api_key"}}
GEMINI_BAD_KEY = {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                            "status": "INVALID_ARGUMENT",
                            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                                         "domain": "googleapis.com"}]}}
BAD_KEY = [
    ("openai", "openai.embeddings", 401, OPENAI_BAD_KEY),
    ("gemini", "gemini.batchEmbedContents", 400, GEMINI_BAD_KEY),
    ("voyage", "voyage.embeddings", 401, {"detail": "Provided API key is invalid."}),
]


@pytest.mark.parametrize("vendor_name, route, status, body", BAD_KEY)
def test_a_wrong_api_key_is_named_with_where_to_set_it(vendor: VendorServer, vendor_name: str, route: str, status: int,
                                                       body: dict) -> None:  # type: ignore[type-arg]
    provider = {"openai": openai_provider, "gemini": gemini_provider, "voyage": voyage_provider}[vendor_name](vendor)
    vendor.fail(route, Fault(status=status, body=body))
    with pytest.raises(ProviderRequestError) as info:
        provider.embed_query("x")
    message = str(info.value)
    assert "remote.api_key" in message and ".." not in message and not info.value.retryable


def test_a_placeholder_key_for_a_local_openai_compatible_server_is_sent(vendor: VendorServer,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM and other OpenAI-compatible servers are configured with ``api_key="EMPTY"`` in their docs: a key in
    capitals that names no set variable is the key, not the name of a missing variable."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("EMPTY", raising=False)
    config = MemoryConfig(provider="openai", remote={"apiKey": "EMPTY", "baseUrl": f"{vendor.url}/openai/v1"})
    resolution = resolve_provider(config)
    assert resolution.key_source == "config"
    resolution.provider.embed_query("hello")  # type: ignore[union-attr]
    assert vendor.headers("openai.embeddings")[0]["authorization"] == "Bearer EMPTY"


@pytest.mark.parametrize("provider", ["auto", "openai"])
def test_the_openai_sdk_base_url_variable_is_where_the_environment_key_goes(vendor: VendorServer, provider: str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``OPENAI_API_KEY`` with ``OPENAI_BASE_URL`` (a LiteLLM or company proxy, as the OpenAI SDK and LangChain read
    them): the key was sent to api.openai.com, with the notes, instead of the proxy it belongs to."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proxy-key-0123456789")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{vendor.url}/openai/v1/")
    resolution = resolve_provider(MemoryConfig(provider=provider))
    assert resolution.provider is not None and resolution.provider.id == "openai"
    resolution.provider.embed_query("hello")
    assert vendor.headers("openai.embeddings")[0]["authorization"] == "Bearer sk-proxy-key-0123456789"
    configured = resolve_provider(MemoryConfig(provider="openai", remote={"baseUrl": f"{vendor.url}/other/v1"}))
    assert configured.provider.base_url == f"{vendor.url}/other/v1"  # type: ignore[union-attr]  # remote.baseUrl wins


def test_openai_base_url_is_taken_as_remote_base_url_is(vendor: VendorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """``OPENAI_BASE_URL`` passes the checks ``remote.base_url`` does: the line break read with it dropped, a token in
    it sent as the ``Authorization: Basic`` header and in no ``base_url``, fingerprint or message, and a URL
    without its scheme refused."""
    token = "gw-token-5d4c3b2a19f8"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proxy-key-0123456789")
    monkeypatch.setenv("OPENAI_BASE_URL", " " + vendor.url.replace("http://", f"http://{token}@") + "/openai/v1/\n")
    provider = resolve_provider(MemoryConfig(provider="openai")).provider
    assert provider is not None
    provider.embed_query("hello")
    assert provider.base_url == f"{vendor.url}/openai/v1"  # type: ignore[attr-defined]
    assert token not in json.dumps(provider.fingerprint())
    basic = base64.b64encode(f"{token}:".encode()).decode()
    assert vendor.headers("openai.embeddings")[0]["authorization"] == f"Basic {basic}"
    monkeypatch.setenv("OPENAI_BASE_URL", f"{token}@127.0.0.1:9/v1")
    with pytest.raises(ProviderUnavailableError) as info:
        resolve_provider(MemoryConfig(provider="openai"))
    assert "127.0.0.1:9/v1" in str(info.value) and token not in str(info.value)


def test_gemini_rate_limit_waits_the_retry_delay_google_asks_for(vendor: VendorServer) -> None:
    """Google says how long to wait in the body (RetryInfo.retryDelay), not in a Retry-After header."""
    body = {"error": {"code": 429, "message": "You exceeded your current quota, please check your plan and billing details.",
                      "status": "RESOURCE_EXHAUSTED",
                      "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
                                  {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]}}
    vendor.fail("gemini.batchEmbedContents", Fault(status=429, body=body))
    with pytest.raises(ProviderRequestError) as info:
        gemini_provider(vendor).embed_documents(["note"])
    assert info.value.retryable and info.value.retry_after == 37.0  # type: ignore[attr-defined]


def test_an_openai_account_out_of_credit_is_not_retried(vendor: VendorServer, fast_retry) -> None:  # type: ignore[no-untyped-def]
    """OpenAI answers an exhausted balance with HTTP 429 ``insufficient_quota``: waiting does not help."""
    body = {"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                      "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}
    vendor.fail("openai.embeddings", *[Fault(status=429, body=body)] * 4)
    with pytest.raises(ProviderRequestError) as info:
        embed_documents_batched(openai_provider(vendor), ["note"], retry=fast_retry)
    assert not info.value.retryable and vendor.count("openai.embeddings") == 1


def test_a_deep_status_probe_of_a_custom_provider_does_not_show_its_key() -> None:
    """A provider written from scratch raises its SDK's own exception, which may quote the key."""
    secret = "sk-proj-abcdefghijklmnop1234567890"
    provider = FakeEmbeddingProvider()
    provider.fail_with = RuntimeError(f"401 Unauthorized: invalid key {secret}")
    report = probe_provider(ProviderResolution(provider=provider, requested="fake"))
    assert not report["ok"] and "401 Unauthorized" in report["error"] and secret not in report["error"]


def test_a_retried_custom_provider_error_is_logged_without_its_key(caplog: pytest.LogCaptureFixture,
                                                                   fast_retry) -> None:  # type: ignore[no-untyped-def]
    secret = "sk-proj-abcdefghijklmnop1234567890"
    provider = FakeEmbeddingProvider()
    provider.fail_with = RuntimeError(f"429 Too Many Requests for key {secret}")
    with caplog.at_level("WARNING"), pytest.raises(ProviderRequestError) as info:
        embed_documents_batched(provider, ["note"], retry=fast_retry)
    assert "retry 1/3" in caplog.text and secret not in caplog.text and secret not in str(info.value)


def test_a_custom_provider_failing_in_a_sync_is_a_library_error_without_its_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A provider written from scratch raises its SDK's exception: the sync reports it as the library's error
    (keyword index kept), redacted, as it does a vendor provider's."""
    secret = "sk-proj-abcdefghijklmnop1234567890"
    (tmp_path / "MEMORY.md").write_text("# Notes\n\nWe chose PostgreSQL for billing.\n")
    provider = FakeEmbeddingProvider()
    provider.fail_with = RuntimeError(f"invalid key {secret}")
    memory = MemoryIndex(workspace=tmp_path, provider=provider, watch=False,
                         config=MemoryConfig(store={"path": str(tmp_path / "index.sqlite")}))
    try:
        with pytest.raises(OpenClawMemoryError) as info:
            memory.sync()
        assert "invalid key" in str(info.value) and secret not in str(info.value)
        assert [hit.path for hit in memory.search("PostgreSQL billing").hits] == ["MEMORY.md"]
    finally:
        memory.close()


def test_a_number_inside_a_word_is_no_http_status() -> None:
    """A 5xx or 429 is retryable; the digits of a key, a hash or a size are no status."""
    assert is_retryable(RuntimeError("HTTP 503 Service Unavailable")) and is_retryable(RuntimeError("error 429"))
    assert not is_retryable(RuntimeError("invalid key sk-proj-abcdefghijklmnop1234567890"))
    assert not is_retryable(RuntimeError("model file model-q4_0.gguf is 5120 bytes short"))


def test_a_custom_provider_failing_on_a_query_is_logged_without_its_key(tmp_path, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    secret = "sk-proj-abcdefghijklmnop1234567890"
    (tmp_path / "MEMORY.md").write_text("# Notes\n\nWe chose PostgreSQL for billing.\n")
    provider = FakeEmbeddingProvider()
    memory = MemoryIndex(workspace=tmp_path, provider=provider, watch=False,
                         config=MemoryConfig(store={"path": str(tmp_path / "index.sqlite")}))
    try:
        memory.sync()
        provider.fail_with = RuntimeError(f"invalid key {secret}")
        with caplog.at_level("WARNING"):
            result = memory.search("PostgreSQL billing")
        assert result.mode == "keyword" and "invalid key" in caplog.text
        assert secret not in caplog.text and secret not in repr(result)
    finally:
        memory.close()


def test_voyage_says_at_warning_level_that_it_cannot_send_custom_headers(vendor: VendorServer,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    """The voyageai SDK sends no custom headers: a gateway expecting one would refuse every request, so the
    user is told where logging shows it by default (warnings), naming the headers but not their values."""
    with caplog.at_level("WARNING"):
        provider = voyage_provider(vendor, headers={"X-Gateway-Token": "gateway-secret-123456"})
    provider.embed_query("x")
    assert "x-gateway-token" not in vendor.headers("voyage.embeddings")[0]
    assert "X-Gateway-Token" in caplog.text and "gateway-secret-123456" not in caplog.text


def test_a_server_ignoring_the_configured_dimension_says_which_setting(vendor: VendorServer) -> None:
    """An OpenAI-compatible server that does not honour ``dimensions`` (the model has a fixed size)."""
    vendor.vectors["note"] = [1.0] * 8
    with pytest.raises(ProviderError) as info:
        openai_provider(vendor, dimensions=16).embed_documents(["note"])
    assert "output_dimensionality" in str(info.value) and "8" in str(info.value)
