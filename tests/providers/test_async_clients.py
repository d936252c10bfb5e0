"""The remote providers' async clients, with the real SDKs against the loopback vendor server: ``close()`` closes
their connections too (it closed only the sync client's), and a provider serves one ``asyncio.run`` after another
(OpenAI's async client, bound to the first event loop, failed with "Event loop is closed")."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory.providers.base import BaseEmbeddingProvider
from tests.helpers.vendor_server import VendorServer
from tests.providers.test_remote_providers import gemini_provider, openai_provider, voyage_provider

PROVIDERS = [pytest.param(openai_provider, id="openai"), pytest.param(gemini_provider, id="gemini"),
             pytest.param(voyage_provider, id="voyage")]
#: the voyageai SDK keeps no async connections (an aiohttp session per request) and its sync ones in a requests
#: session of each thread, not of the client
POOLED = PROVIDERS[:2]


def open_connections(port: int) -> int:
    """This process's established TCP connections to ``port`` on 127.0.0.1 (Linux: /proc)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote_port, state, inode = int(fields[2].split(":")[1], 16), fields[3], fields[9]
        if remote_port == port and state == "01" and inode in inodes:
            count += 1
    return count


needs_proc = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts connections through /proc")


def _port(vendor: VendorServer) -> int:
    return int(vendor.url.rsplit(":", 1)[1])


def _others(vendor: VendorServer) -> int:
    """The connections to the server other tests left (their sockets freed by the garbage collector)."""
    gc.collect()
    return open_connections(_port(vendor))


@pytest.mark.parametrize("make", PROVIDERS)
def test_one_asyncio_run_after_another(vendor: VendorServer, make: Callable[..., BaseEmbeddingProvider]) -> None:
    provider = make(vendor)
    try:
        vectors = [asyncio.run(provider.aembed_query(f"question {i}")) for i in range(3)]
    finally:
        provider.close()
    assert len(vectors) == 3


@needs_proc
@pytest.mark.parametrize("make", POOLED)
def test_close_from_a_worker_thread_closes_the_async_connections(
    vendor: VendorServer, make: Callable[..., BaseEmbeddingProvider]
) -> None:
    # as `async with MemoryIndex(...)` closes its provider: asyncio.to_thread(close) while the loop runs
    provider = make(vendor)

    async def main() -> tuple[int, int, int]:
        others = _others(vendor)
        await provider.aembed_documents(["one", "two"])
        provider.embed_query("a sync request too")
        before = open_connections(_port(vendor))
        await asyncio.to_thread(provider.close)
        await asyncio.sleep(0.05)
        return others, before, open_connections(_port(vendor))

    others, before, after = asyncio.run(main())
    assert before > others and after <= others, (others, before, after)


@needs_proc
@pytest.mark.parametrize("make", POOLED)
def test_aclose_closes_the_async_connections(vendor: VendorServer, make: Callable[..., BaseEmbeddingProvider]) -> None:
    provider = make(vendor)

    async def main() -> tuple[int, int, int]:
        others = _others(vendor)
        await provider.aembed_query("question")
        before = open_connections(_port(vendor))
        await provider.aclose()
        await asyncio.sleep(0.05)
        return others, before, open_connections(_port(vendor))

    others, before, after = asyncio.run(main())
    assert before > others and after <= others, (others, before, after)


@pytest.mark.parametrize("make", PROVIDERS)
def test_close_leaves_the_threads_event_loop_set(
    vendor: VendorServer, make: Callable[..., BaseEmbeddingProvider]
) -> None:
    # an application driving its own loop (set_event_loop + run_until_complete) keeps it after closing a provider
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        provider = make(vendor)
        loop.run_until_complete(provider.aembed_query("question"))
        provider.close()
        assert asyncio.get_event_loop() is loop
    finally:
        asyncio.set_event_loop(None)
        loop.close()


@needs_proc
def test_each_asyncio_run_closes_the_connections_it_opened(vendor: VendorServer) -> None:
    # a loop that ended left its client's connection open until the garbage collector found it: one more socket
    # per asyncio.run (an application calling asyncio.run per request kept them piling up)
    provider = openai_provider(vendor)
    others = _others(vendor)
    gc.disable()
    try:
        left = []
        for i in range(3):
            asyncio.run(provider.aembed_query(f"question {i}"))
            left.append(open_connections(_port(vendor)) - others)
    finally:
        gc.enable()
        provider.close()
    assert left == [0, 0, 0]
