"""A base URL with a space or a line break around it (pasted, or read from a file or an environment variable with
its newline) reaches the server: OpenAI and Voyage sent it as written and every request failed (HTTP 404, "Request
URL is missing an 'http://' or 'https://' protocol", or httpx's ``InvalidURL``), while Gemini took it."""

from __future__ import annotations

import pytest
from openclaw_memory import MemoryConfig
from openclaw_memory.providers.gemini import GeminiEmbeddingProvider
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
from openclaw_memory.providers.registry import resolve_provider
from openclaw_memory.providers.voyage import VoyageEmbeddingProvider
from tests.helpers.vendor_server import VendorServer
from tests.providers.test_remote_providers import GEMINI_KEY, OPENAI_KEY, VOYAGE_KEY

PROVIDERS = [("openai", OpenAIEmbeddingProvider, "/openai/v1", OPENAI_KEY, "openai.embeddings"),
             ("gemini", GeminiEmbeddingProvider, "/gemini/v1beta", GEMINI_KEY, "gemini.batchEmbedContents"),
             ("voyage", VoyageEmbeddingProvider, "/voyage/v1", VOYAGE_KEY, "voyage.embeddings")]
AROUND = [("", " "), (" ", ""), ("", "\n"), ("\t", "/\r\n")]


@pytest.mark.parametrize("name, cls, path, key, route", PROVIDERS, ids=[p[0] for p in PROVIDERS])
@pytest.mark.parametrize("before, after", AROUND)
def test_a_base_url_with_whitespace_around_it_reaches_the_server(  # type: ignore[no-untyped-def]
    vendor: VendorServer, name: str, cls, path: str, key: str, route: str, before: str, after: str
) -> None:
    url = before + vendor.url + path + after
    configured = resolve_provider(MemoryConfig(provider=name, remote={"base_url": url, "api_key": key})).provider
    direct = cls(api_key=key, base_url=url)
    for provider in (configured, direct):
        assert provider is not None
        provider.embed_query("where is the gateway?")
        assert provider.base_url == vendor.url + path
        provider.close()
    assert vendor.count(route) == 2
