"""An endpoint URL whose user info is a token alone (``https://TOKEN@gateway/v1``) is a secret like a password: a
printed or dumped config, ``without_secrets()`` and a config error leave it out; the provider still gets the URL as
given (tests/providers/test_url_tokens.py)."""

from __future__ import annotations

import json

import pytest
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError

TOKEN = "gw-token-5d4c3b2a19f8"


def _config() -> MemoryConfig:
    return MemoryConfig.from_dict({
        "provider": "openai",
        "remote": {"base_url": f"https://{TOKEN}@gateway.internal/v1", "api_key": "sk-placeholder-1234"},
        "query": {"rerank": {"base_url": f"https://{TOKEN}@rerank.internal/v1"}},
        "dreaming": {"base_url": f"https://{TOKEN}@chat.internal/v1"},
    })


@pytest.mark.parametrize("show", [repr, str, lambda c: c.model_dump_json(), lambda c: repr(c.model_dump()),
                                  lambda c: repr(c.remote), lambda c: json.dumps(c.without_secrets())])
def test_a_printed_or_dumped_config_shows_no_url_token(show) -> None:  # type: ignore[no-untyped-def]
    config = _config()
    shown = show(config)
    assert TOKEN not in shown and "gateway.internal" in shown
    assert config.remote.base_url == f"https://{TOKEN}@gateway.internal/v1"  # what the provider is given


def test_without_secrets_gives_back_a_url_that_loads() -> None:
    data = _config().without_secrets()
    assert data["remote"]["base_url"] == "https://gateway.internal/v1"
    assert MemoryConfig.from_dict(data).remote.base_url == "https://gateway.internal/v1"


def test_a_config_error_quotes_no_url_token() -> None:
    with pytest.raises(ConfigError) as info:
        MemoryConfig.from_dict({"remote": {"base_url": f"{TOKEN}@localhost:8000/v1"}})
    assert "remote.base_url" in str(info.value) and TOKEN not in str(info.value)


@pytest.mark.parametrize("key", ["baseUrl", "base_url"])
def test_a_config_error_quotes_no_url_token_under_either_spelling_of_the_key(key: str) -> None:
    """openclaw.json spells the key ``baseUrl``: the error named ``remote.baseUrl`` and quoted the URL whole,
    token and all (only ``remote.base_url`` had the token left out)."""
    with pytest.raises(ConfigError) as info:
        MemoryConfig.from_dict({"remote": {key: f"{TOKEN}@localhost:8000/v1"}})
    assert "localhost:8000/v1" in str(info.value) and TOKEN not in str(info.value)
