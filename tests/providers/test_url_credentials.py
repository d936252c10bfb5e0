"""A base URL carrying ``user:password@`` (a gateway behind basic auth): the password never reaches a log line, the
SDK's own HTTP log included (``httpx2``/``httpx`` log each request's URL at INFO), while the server still gets the
credential as before (``Authorization: Basic``, as httpx sends a URL's user info)."""

from __future__ import annotations

import base64
import logging

import pytest
from openclaw_memory.errors import ProviderUnavailableError
from openclaw_memory.providers.gemini import GeminiEmbeddingProvider
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
from openclaw_memory.providers.voyage import VoyageEmbeddingProvider
from tests.helpers.vendor_server import VendorServer, embed_logged
from tests.providers.test_remote_providers import GEMINI_KEY, OPENAI_KEY, VOYAGE_KEY

PASSWORD = "gw-pass-7c6b5a49"
BASIC = "Basic " + base64.b64encode(f"team:{PASSWORD}".encode()).decode()


def _with_credentials(vendor: VendorServer) -> str:
    return vendor.url.replace("http://", f"http://team:{PASSWORD}@")


def _openai(vendor: VendorServer) -> OpenAIEmbeddingProvider:
    return OpenAIEmbeddingProvider(api_key=OPENAI_KEY, base_url=_with_credentials(vendor) + "/openai/v1")


def _gemini(vendor: VendorServer) -> GeminiEmbeddingProvider:
    return GeminiEmbeddingProvider(api_key=GEMINI_KEY, base_url=_with_credentials(vendor) + "/gemini/v1beta")


@pytest.mark.parametrize("make, route", [(_openai, "openai.embeddings"), (_gemini, "gemini.batchEmbedContents")])
def test_a_base_url_password_is_in_no_log_line_and_still_sent(
    vendor: VendorServer, caplog: pytest.LogCaptureFixture, make, route: str  # type: ignore[no-untyped-def]
) -> None:
    caplog.set_level(logging.DEBUG)
    provider = make(vendor)
    logged = embed_logged(provider, caplog)
    assert "HTTP Request: POST" in logged  # the SDK's HTTP log was on
    assert PASSWORD not in logged
    assert PASSWORD not in repr(provider.base_url) and PASSWORD not in repr(provider.fingerprint())
    assert [h.get("authorization") for h in vendor.headers(route)] == [BASIC, BASIC]  # the credential as before


def test_voyage_refuses_a_base_url_password_its_sdk_would_log(vendor: VendorServer) -> None:
    with pytest.raises(ProviderUnavailableError) as info:
        VoyageEmbeddingProvider(api_key=VOYAGE_KEY, base_url=_with_credentials(vendor) + "/voyage/v1")
    assert PASSWORD not in str(info.value) and "remote.base_url" in str(info.value)


def test_the_consolidation_models_base_url_password_is_in_no_log_line(
    vendor: VendorServer, caplog: pytest.LogCaptureFixture
) -> None:
    from openclaw_memory.config import DreamingConfig
    from openclaw_memory.consolidation.openai_model import openai_completion

    caplog.set_level(logging.INFO)
    vendor.chat_answers.append('{"promote": []}')
    complete = openai_completion(DreamingConfig(model="gpt-test", api_key="sk-dream-0123456789abcdef",
                                                base_url=_with_credentials(vendor) + "/openai/v1"))
    assert complete("consolidate") == '{"promote": []}'
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "HTTP Request: POST" in logged and PASSWORD not in logged
    assert [h.get("authorization") for h in vendor.headers("openai.chat")] == [BASIC]
