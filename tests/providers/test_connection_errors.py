"""A remote provider that cannot reach its server says why (the refused connection, the unknown host, the
certificate), through the real SDKs: OpenAI's said only "could not connect (Connection error.)" and Voyage's async
one "Error communicating with Voyage", whatever the cause."""

from __future__ import annotations

import asyncio
import socket

import pytest
from openclaw_memory.errors import RemoteRequestError
from openclaw_memory.providers.gemini import GeminiEmbeddingProvider
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
from openclaw_memory.providers.voyage import VoyageEmbeddingProvider
from tests.providers.test_remote_providers import GEMINI_KEY, OPENAI_KEY, VOYAGE_KEY


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("cls, key", [(OpenAIEmbeddingProvider, OPENAI_KEY), (GeminiEmbeddingProvider, GEMINI_KEY),
                                      (VoyageEmbeddingProvider, VOYAGE_KEY)], ids=["openai", "gemini", "voyage"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_refused_connection_says_so(cls, key: str, asynchronous: bool) -> None:  # type: ignore[no-untyped-def]
    provider = cls(api_key=key, base_url=f"http://127.0.0.1:{_closed_port()}/v1", timeout=5)
    try:
        with pytest.raises(RemoteRequestError) as info:
            if asynchronous:
                asyncio.run(provider.aembed_query("x"))
            else:
                provider.embed_query("x")
    finally:
        provider.close()
    message = str(info.value)
    assert "could not connect" in message and "refused" in message.lower(), message
    assert info.value.retryable and "SSLContext object" not in message
