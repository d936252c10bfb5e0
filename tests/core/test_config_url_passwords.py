"""A serialised config (``model_dump()``, ``model_dump_json()``) holds no endpoint password: an endpoint URL's
``user:password@`` is redacted there, as in its ``repr``, while the library still uses the real URL; the redacted URL
given back is refused (it would send ``[REDACTED]`` as the password)."""

from __future__ import annotations

import base64

import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError
from openclaw_memory.providers.registry import resolve_provider
from tests.helpers.vendor_server import VendorServer

SECRETS = ("remote-pass-1", "rerank-pass-2", "dream-pass-3")


def _config() -> MemoryConfig:
    return MemoryConfig.from_dict({
        "provider": "openai",
        "remote": {"base_url": "http://team:remote-pass-1@gateway.internal:8080/v1", "api_key": "sk-placeholder-1234"},
        "query": {"rerank": {"base_url": "http://team:rerank-pass-2@rerank.internal/v1"}},
        "dreaming": {"base_url": "http://team:dream-pass-3@chat.internal/v1"},
    })


@pytest.mark.parametrize("dump", [
    lambda c: c.model_dump_json(),
    lambda c: repr(c.model_dump()),
    lambda c: repr(c.model_dump(mode="json", by_alias=True)),
    lambda c: c.remote.model_dump_json(),
])
def test_a_dumped_config_shows_no_endpoint_password(dump) -> None:  # type: ignore[no-untyped-def]
    text = dump(_config())
    assert not [s for s in SECRETS if s in text], text
    assert "gateway.internal:8080" in text or "rerank.internal" in text


def test_the_library_still_uses_the_real_url() -> None:
    config = _config()
    assert config.remote.base_url == "http://team:remote-pass-1@gateway.internal:8080/v1"
    assert MemoryConfig.load(config, agent_id="other").remote.base_url == config.remote.base_url  # overrides keep it
    server = VendorServer()
    server.start()
    try:  # the provider sends the real password (as the Basic credential its URL stands for), not "[REDACTED]"
        url = server.url.replace("http://", "http://team:remote-pass-1@") + "/openai/v1"
        served = MemoryConfig.from_dict({"provider": "openai", "remote": {"base_url": url, "api_key": "sk-test-1234"}})
        provider = resolve_provider(MemoryConfig.load(served, agent_id="other")).provider
        assert provider is not None
        provider.embed_query("where is the gateway?")
        provider.close()
        sent = [headers.get("authorization") for headers in server.headers("openai.embeddings")]
    finally:
        server.stop()
    assert sent == ["Basic " + base64.b64encode(b"team:remote-pass-1").decode()]


def test_a_redacted_url_given_back_is_refused() -> None:
    with pytest.raises(ConfigError, match="remote.base_url"):
        MemoryConfig.from_dict(_config().model_dump())
