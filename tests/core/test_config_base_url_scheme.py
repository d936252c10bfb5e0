"""An endpoint URL without its scheme (``localhost:8000/v1``, a common slip) is a ConfigError naming the key: it
was accepted, and every embedding request then failed as "could not connect (Connection error.)" (and was retried),
as if the server were down."""

from __future__ import annotations

import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError, ProviderUnavailableError
from openclaw_memory.providers.gemini import GeminiEmbeddingProvider
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
from openclaw_memory.providers.voyage import VoyageEmbeddingProvider


@pytest.mark.parametrize("settings, key", [
    ({"remote": {"base_url": "localhost:8000/v1"}}, "remote.base_url"),
    ({"query": {"rerank": {"base_url": "127.0.0.1:8080/v1"}}}, "query.rerank.base_url"),
    ({"dreaming": {"base_url": "api.example.com/v1"}}, "dreaming.base_url"),
])
def test_an_endpoint_url_without_scheme_is_a_config_error(settings: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=key) as info:
        MemoryConfig.from_dict(settings)
    assert "http://" in str(info.value)


def test_urls_with_a_scheme_are_taken() -> None:
    config = MemoryConfig.from_dict({"remote": {"base_url": "HTTP://localhost:8000/v1"},
                                     "query": {"rerank": {"base_url": "https://rerank.example/v1"}}})
    assert config.remote.base_url == "HTTP://localhost:8000/v1"


@pytest.mark.parametrize("cls, key", [(OpenAIEmbeddingProvider, "sk-test-abcdef1234567890"),
                                      (GeminiEmbeddingProvider, "AIzaTestKey1234567890"),
                                      (VoyageEmbeddingProvider, "pa-test-voyage-1234567890")])
def test_a_provider_given_a_url_without_scheme_says_so(cls, key: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ProviderUnavailableError, match="http://"):
        cls(api_key=key, base_url="localhost:8000/v1")
