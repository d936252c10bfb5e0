"""An endpoint URL that names no host, holds a port that is no port or does not parse (``http://127.0.0.1:80a/v1``,
``http:///v1``, ``http://[::1/v1``) is refused where it is given, as one without its scheme is: it was taken, and every
request then failed as "could not connect" (retried as if the server were down), or the provider raised the HTTP
library's own ``InvalidURL``/``ValueError``."""

from __future__ import annotations

import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError, ProviderUnavailableError
from openclaw_memory.providers.gemini import GeminiEmbeddingProvider
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
from openclaw_memory.providers.voyage import VoyageEmbeddingProvider

BAD = ["http://127.0.0.1:99999/v1", "http://127.0.0.1:80a/v1", "http:///v1", "http://:8000/v1", "http://[::1/v1"]


@pytest.mark.parametrize("url", BAD)
def test_a_config_refuses_an_endpoint_url_that_cannot_be_reached(url: str) -> None:
    with pytest.raises(ConfigError, match="remote.base_url"):
        MemoryConfig.from_dict({"remote": {"base_url": url}})


@pytest.mark.parametrize("url", BAD)
@pytest.mark.parametrize("cls, key", [(OpenAIEmbeddingProvider, "sk-test-abcdef1234567890"),
                                      (GeminiEmbeddingProvider, "AIzaTestKey1234567890"),
                                      (VoyageEmbeddingProvider, "pa-test-voyage-1234567890")])
def test_a_provider_refuses_it_too(cls, key: str, url: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ProviderUnavailableError, match="base URL"):
        cls(api_key=key, base_url=url)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "https://[::1]:8443/v1", "HTTP://gateway/v1",
                                 "http://team:p%40ss@proxy.internal:8080/v1"])
def test_ordinary_urls_are_taken(url: str) -> None:
    assert MemoryConfig.from_dict({"remote": {"base_url": url}}).remote.base_url == url
