"""Many concurrent searches and reads on one shared MemoryIndex, from threads and from asyncio,
including while a forced (atomic) rebuild runs: every call answers correctly, none raises."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.agent.tools import amemory_get, amemory_search, memory_search

N_NOTES = 20


@pytest.fixture
def notes(write) -> Path:
    return write({f"memory/2026-01-{i + 1:02d}.md": f"# Note {i}\n\nmarker{i} shared words about the project\n"
                  for i in range(N_NOTES)})


def expected_path(i: int) -> str:
    return f"memory/2026-01-{i % N_NOTES + 1:02d}.md"


def test_threads_share_one_index_from_its_first_search(notes: Path, make_index) -> None:
    memory: MemoryIndex = make_index(FakeEmbeddingProvider())  # empty: the first searches build it

    def worker(t: int) -> list[tuple[int, dict]]:
        return [(t * 10 + k, memory_search(memory, f"marker{(t * 10 + k) % N_NOTES}")) for k in range(10)]

    with ThreadPoolExecutor(16) as pool:
        results = [r for batch in pool.map(worker, range(16)) for r in batch]
    assert len(results) == 160
    for i, payload in results:
        assert "error" not in payload, payload
        assert payload["results"] and payload["results"][0]["path"] == expected_path(i), (i, payload)


async def test_asyncio_gather_while_a_forced_sync_runs(notes: Path, make_index) -> None:
    memory: MemoryIndex = make_index(FakeEmbeddingProvider())
    await memory.async_sync()
    stop = threading.Event()
    rebuilds = 0

    def rebuild_forever() -> None:
        nonlocal rebuilds
        while not stop.is_set():
            memory.sync(force=True)
            rebuilds += 1

    syncer = threading.Thread(target=rebuild_forever)
    syncer.start()
    try:
        searches = [amemory_search(memory, f"marker{i % N_NOTES}") for i in range(100)]
        reads = [amemory_get(memory, expected_path(i), from_line=3, lines=1) for i in range(20)]
        out = await asyncio.gather(*searches, *reads)
    finally:
        stop.set()
        await asyncio.to_thread(syncer.join)
    assert rebuilds >= 1
    for i, payload in enumerate(out[:100]):
        assert "error" not in payload, payload
        assert payload["results"] and payload["results"][0]["path"] == expected_path(i), (i, payload)
    for i, got in enumerate(out[100:]):
        assert got == {"path": expected_path(i), "text": f"marker{i} shared words about the project",
                       "start_line": 3, "end_line": 3}


async def test_async_searches_on_an_empty_index_all_wait_for_the_first_build(notes: Path, make_index) -> None:
    memory: MemoryIndex = make_index(FakeEmbeddingProvider())
    out = await asyncio.gather(*(memory.asearch(f"marker{i % N_NOTES}") for i in range(50)))
    for i, res in enumerate(out):
        assert res.hits and res.hits[0].path == expected_path(i), (i, res.empty_reason)
