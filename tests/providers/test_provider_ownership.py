"""Who closes an embedding provider: a MemoryIndex closes the providers it created (from its configuration, a
fallback, the copy an unpickled index holds); a provider passed in is the caller's, as LangChain's vector stores
leave the embeddings they are given open and an SDK leaves an httpx client it is given open, so one embedder can
serve several agents' memories."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider
from tests.helpers.vendor_server import Fault, VendorServer

OPENAI_KEY = "sk-test-abcdef1234567890"


class ClosableFake(FakeEmbeddingProvider):
    """The fake provider, recording whether it was closed (module level, so an index holding it pickles)."""

    closed = False

    def close(self) -> None:
        self.closed = True


def _workspace(root: Path, name: str, text: str) -> Path:
    ws = root / name
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(f"# Notes\n\n{text}\n", encoding="utf-8")
    return ws


def _openai(vendor: VendorServer) -> OpenAIEmbeddingProvider:
    return OpenAIEmbeddingProvider(api_key=OPENAI_KEY, base_url=f"{vendor.url}/openai/v1")


def test_one_provider_serves_two_indexes_after_the_first_closes(tmp_path: Path, vendor: VendorServer) -> None:
    shared = _openai(vendor)
    first = MemoryIndex(workspace=_workspace(tmp_path, "a", "The heron count was 4."), provider=shared,
                        store={"path": str(tmp_path / "a.sqlite")}, watch=False)
    second = MemoryIndex(workspace=_workspace(tmp_path, "b", "The otter count was 7."), provider=shared,
                         store={"path": str(tmp_path / "b.sqlite")}, watch=False)
    try:
        first.sync()
        first.close()
        second.sync()  # its embeddings go through the provider the first index was given
        result = second.search("otter count")
        assert result.mode == "hybrid" and result.hits
        assert not shared.client.is_closed()  # the caller's to close
    finally:
        second.close()
        shared.close()
    assert shared.client.is_closed()


def test_a_given_provider_is_left_open_and_a_configured_one_is_closed(tmp_path: Path, vendor: VendorServer) -> None:
    given = ClosableFake(dims=32)
    with MemoryIndex(workspace=_workspace(tmp_path, "a", "Given."), provider=given, watch=False,
                     store={"path": str(tmp_path / "a.sqlite")}) as memory:
        memory.sync()  # the index uses it
    assert not given.closed
    configured = MemoryIndex(workspace=_workspace(tmp_path, "b", "Configured."), provider="openai", watch=False,
                             remote={"api_key": OPENAI_KEY, "base_url": f"{vendor.url}/openai/v1"},
                             store={"path": str(tmp_path / "b.sqlite")})
    created = configured.provider
    assert isinstance(created, OpenAIEmbeddingProvider) and not created.client.is_closed()
    configured.close()
    assert created.client.is_closed()  # the index made it, the index closes it


def test_an_unpickled_index_closes_its_own_copy_of_the_provider(tmp_path: Path) -> None:
    given = ClosableFake(dims=32)
    with MemoryIndex(workspace=_workspace(tmp_path, "a", "Pickled."), provider=given, watch=False,
                     store={"path": str(tmp_path / "a.sqlite")}) as memory:
        copy = pickle.loads(pickle.dumps(memory))
    copied = copy.provider
    assert isinstance(copied, ClosableFake) and copied is not given
    copy.close()
    assert copied.closed and not given.closed  # no one else holds the copy


def test_a_fallback_closes_the_primary_provider_that_failed(tmp_path: Path, vendor: VendorServer) -> None:
    memory = MemoryIndex(workspace=_workspace(tmp_path, "a", "The heron count was 4."), provider="openai",
                         fallback="fake", watch=False, store={"path": str(tmp_path / "a.sqlite")},
                         remote={"api_key": OPENAI_KEY, "base_url": f"{vendor.url}/openai/v1"},
                         provider_limits={"retries": 0})
    try:
        primary = memory.provider
        assert isinstance(primary, OpenAIEmbeddingProvider)
        vendor.fail("openai.embeddings", *[Fault(status=500) for _ in range(20)])
        memory.sync()
        assert memory.status().fallback is not None and memory.provider is not primary
        assert primary.client.is_closed()  # its HTTP connections are released, not left until exit
        assert memory.search("heron count").hits
    finally:
        memory.close()


@pytest.mark.parametrize("use_async", [False, True])
def test_closing_twice_is_harmless_and_use_after_close_says_closed(tmp_path: Path, use_async: bool) -> None:
    import asyncio

    from openclaw_memory.errors import IndexClosedError

    memory = MemoryIndex(workspace=_workspace(tmp_path, "a", "Closed."), provider=ClosableFake(dims=32), watch=False,
                         store={"path": str(tmp_path / "a.sqlite")})
    memory.close()
    memory.close()
    with pytest.raises(IndexClosedError):
        if use_async:
            asyncio.run(memory.asearch("closed"))
        else:
            memory.search("closed")


def test_a_closed_index_creates_no_provider_of_its_own(tmp_path: Path, vendor: VendorServer) -> None:
    from openclaw_memory.errors import IndexClosedError

    memory = MemoryIndex(workspace=_workspace(tmp_path, "a", "Never searched."), provider="openai", watch=False,
                         remote={"api_key": OPENAI_KEY, "base_url": f"{vendor.url}/openai/v1"},
                         store={"path": str(tmp_path / "a.sqlite")})
    memory.close()  # before the provider was ever needed
    with pytest.raises(IndexClosedError):
        memory.provider  # noqa: B018 - it created a provider (with its HTTP clients) that nothing would close
