"""A header the HTTP client cannot send (a name with a space, a value with a line break or a non-ASCII character, as a
value pasted from a file brings) is refused when the configuration is read, naming the header but never showing its
value: it was taken, then every request failed as "could not connect (Illegal header value ...)", retried as if the
server were down, or as "returned a malformed response"."""

from __future__ import annotations

import pytest
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError, ProviderUnavailableError
from openclaw_memory.providers.gemini import GeminiEmbeddingProvider
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
from tests.providers.test_remote_providers import GEMINI_KEY, OPENAI_KEY

SECRET = "tenant-secret-0123456789"

BAD = [({"X Team": "memory"}, "X Team"), ({"X-Api-Key": SECRET + "\n"}, "X-Api-Key"),
       ({"X-Team": "caf\u00e9-" + SECRET}, "X-Team")]


@pytest.mark.parametrize("headers, name", BAD)
def test_a_header_that_cannot_be_sent_is_a_config_error(headers: dict[str, str], name: str) -> None:
    with pytest.raises(ConfigError, match="remote.headers") as info:
        MemoryConfig.from_dict({"remote": {"headers": headers}})
    assert name in str(info.value) and SECRET not in str(info.value)


@pytest.mark.parametrize("cls, key", [(OpenAIEmbeddingProvider, OPENAI_KEY), (GeminiEmbeddingProvider, GEMINI_KEY)])
@pytest.mark.parametrize("headers, name", BAD)
def test_a_provider_given_such_a_header_says_which(  # type: ignore[no-untyped-def]
    cls, key: str, headers: dict[str, str], name: str
) -> None:
    with pytest.raises(ProviderUnavailableError, match="header") as info:
        cls(api_key=key, base_url="http://127.0.0.1:9/v1", headers=headers)
    assert name in str(info.value) and SECRET not in str(info.value)


@pytest.mark.parametrize("cls", [OpenAIEmbeddingProvider, GeminiEmbeddingProvider])
def test_a_key_pasted_with_typographic_quotes_says_so(cls) -> None:  # type: ignore[no-untyped-def]
    # it was sent, and the request failed as "returned a malformed response: 'ascii' codec can't encode ..."
    with pytest.raises(ProviderUnavailableError, match="API key") as info:
        cls(api_key=f"\u201c{SECRET}\u201d", base_url="http://127.0.0.1:9/v1")
    assert SECRET not in str(info.value)


def test_a_gemini_oauth_token_json_says_an_api_key_is_needed() -> None:
    with pytest.raises(ProviderUnavailableError, match="x-goog-api-key") as info:
        GeminiEmbeddingProvider(api_key='{"token": "ya29.' + SECRET + '"}', base_url="http://127.0.0.1:9/v1beta")
    assert SECRET not in str(info.value)
