"""A base URL whose user info is a token alone (``https://TOKEN@gateway/v1``, a common way to hand a gateway its
credential): the token is a secret like a password. It is in no log line, no ``base_url``, no fingerprint (rotating
it keeps the index) and no error message (a config: tests/core/test_config_url_tokens.py), while the server still
gets the credential httpx sends for that URL (``Authorization: Basic`` of ``TOKEN:``)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest
from openclaw_memory import MemoryConfig, MemoryIndex
from openclaw_memory.errors import OpenClawMemoryError, ProviderError, ProviderUnavailableError
from openclaw_memory.providers.base import provider_key
from openclaw_memory.providers.gemini import GeminiEmbeddingProvider
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
from openclaw_memory.providers.voyage import VoyageEmbeddingProvider
from openclaw_memory.providers._util import fingerprint_url
from openclaw_memory.redaction import redact, url_without_password
from tests.helpers.vendor_server import VendorServer, embed_logged
from tests.providers.test_remote_providers import GEMINI_KEY, OPENAI_KEY, VOYAGE_KEY

TOKEN = "gw-token-5d4c3b2a19f8"


def _with_token(url: str, token: str = TOKEN) -> str:
    return url.replace("http://", f"http://{token}@")


def _openai(url: str) -> OpenAIEmbeddingProvider:
    return OpenAIEmbeddingProvider(api_key=OPENAI_KEY, base_url=url + "/openai/v1")


def _gemini(url: str) -> GeminiEmbeddingProvider:
    return GeminiEmbeddingProvider(api_key=GEMINI_KEY, base_url=url + "/gemini/v1beta")


def _what_httpx_sends(vendor: VendorServer) -> str | None:
    """The Authorization header httpx itself sends for the URL with the token (what the SDK sent when given it)."""
    httpx.post(_with_token(vendor.url) + "/openai/v1/embeddings", json={"model": "m", "input": ["probe"]})
    sent = vendor.headers("openai.embeddings")[-1].get("authorization")
    vendor.reset()
    return sent


@pytest.mark.parametrize("make, route", [(_openai, "openai.embeddings"), (_gemini, "gemini.batchEmbedContents")])
def test_a_base_url_token_is_in_no_log_line_base_url_or_fingerprint_and_still_sent(
    vendor: VendorServer, caplog: pytest.LogCaptureFixture, make, route: str  # type: ignore[no-untyped-def]
) -> None:
    expected = _what_httpx_sends(vendor)
    caplog.set_level(logging.DEBUG)
    provider = make(_with_token(vendor.url))
    logged = embed_logged(provider, caplog)
    assert "HTTP Request: POST" in logged and TOKEN not in logged
    assert TOKEN not in provider.base_url and TOKEN not in json.dumps(provider.fingerprint())
    assert expected is not None and expected.startswith("Basic ")
    assert [h.get("authorization") for h in vendor.headers(route)] == [expected, expected]


@pytest.mark.parametrize("make", [_openai, _gemini])
def test_rotating_a_base_url_token_keeps_the_index(vendor: VendorServer, make) -> None:  # type: ignore[no-untyped-def]
    bare = make(vendor.url).fingerprint()
    assert bare["baseUrl"].startswith(vendor.url)  # a URL without credentials is fingerprinted as before
    with_token = make(_with_token(vendor.url)).fingerprint()
    rotated = make(_with_token(vendor.url, "gw-token-0000rotated")).fingerprint()
    assert provider_key(with_token) == provider_key(rotated) == provider_key(bare)


@pytest.mark.parametrize("make", [_openai, _gemini])
def test_a_connection_error_shows_no_base_url_token(make) -> None:  # type: ignore[no-untyped-def]
    provider = make(_with_token("http://127.0.0.1:9"))
    with pytest.raises(ProviderError) as info:
        provider.embed_query("x")
    provider.close()
    assert "127.0.0.1:9" in str(info.value) and TOKEN not in str(info.value)


_SCHEMELESS = [f"{TOKEN}@127.0.0.1:9/v1", f"team:{TOKEN}@127.0.0.1:9/v1"]


@pytest.mark.parametrize("make, url", [
    *[(lambda url: OpenAIEmbeddingProvider(api_key=OPENAI_KEY, base_url=url), url) for url in _SCHEMELESS],
    *[(lambda url: GeminiEmbeddingProvider(api_key=GEMINI_KEY, base_url=url), url) for url in _SCHEMELESS],
    *[(lambda url: VoyageEmbeddingProvider(api_key=VOYAGE_KEY, base_url=url), url)
      for url in [f"http://{TOKEN}@127.0.0.1:9/v1", *_SCHEMELESS]],
])
def test_a_refused_base_url_is_quoted_without_its_token(make, url: str) -> None:  # type: ignore[no-untyped-def]
    """Every provider refuses a URL without a scheme; Voyage refuses user info in its URL (its SDK would log it)."""
    with pytest.raises(ProviderUnavailableError) as info:
        make(url)
    assert "127.0.0.1:9" in str(info.value) and TOKEN not in str(info.value)


def test_a_url_token_is_redacted_by_its_shape() -> None:
    unseen = "never-registered-9f8e7d6c"
    assert redact(f"POST https://{unseen}@gateway.internal/v1/embeddings failed") == \
        "POST https://[REDACTED]@gateway.internal/v1/embeddings failed"
    assert redact("ssh://git@github.com and user@example.com") == "ssh://git@github.com and user@example.com"


def test_an_index_whose_endpoint_is_down_shows_no_token_in_status_search_or_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("# Memory\n\nThe heron count was three.\n", encoding="utf-8")
    config = MemoryConfig(workspace=str(tmp_path / "ws"), state_dir=str(tmp_path / "state"), provider="openai",
                          remote={"base_url": _with_token("http://127.0.0.1:9") + "/v1", "api_key": OPENAI_KEY},
                          provider_limits={"retries": 0})
    caplog.set_level(logging.DEBUG)
    with MemoryIndex(config, watch=False) as memory:
        try:
            memory.sync()
        except OpenClawMemoryError as exc:
            shown = [str(exc)]
        else:
            shown = []
        result = memory.search("heron")
        status = memory.status(deep=True)
    shown += [repr(result), json.dumps(status.to_dict(), default=str), caplog.text]
    assert "127.0.0.1:9" in "".join(shown) and not [text for text in shown if TOKEN in text]


@pytest.mark.parametrize("url", ["https://api.openai.com/v1", "http://127.0.0.1:8000/v1/", "HTTP://Gateway:8080/v1?x=1",
                                 "https://team:pass-1234@proxy.internal/v1", "http://[::1]:8080/v1"])
def test_a_url_without_a_lone_token_is_fingerprinted_as_before(url: str) -> None:
    """Only a token alone is new to the fingerprint's URL: other URLs keep their index (no embedding again)."""
    assert fingerprint_url(url) == (url_without_password(url) or url)  # what the fingerprint held before


@pytest.mark.parametrize("make", [_openai, _gemini])
def test_a_base_url_with_user_and_password_keeps_its_fingerprint(make) -> None:  # type: ignore[no-untyped-def]
    """The user name of ``user:password@`` stays in the fingerprint, as before (no embedding again)."""
    assert make("http://team:pass-1234@proxy.internal:8080").fingerprint()["baseUrl"].startswith(
        "http://team@proxy.internal:8080/")
