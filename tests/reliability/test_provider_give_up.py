"""A hung embedding endpoint (the loopback vendor server answering after minutes, real openai SDK): a sync gives
up within ``provider_limits.sync_give_up_seconds`` whatever the request timeout and retries, indexes the text,
opens the breaker that searches share, and a later sync adds the vectors once the endpoint answers.

The waits are scaled down (a 1.5 s give-up beside the default 60 s request timeout and 3 retries); the default
budget is checked by computing it from the defaults, not by waiting for it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.config import MemoryConfig, ProviderLimitsConfig  # noqa: E402
from openclaw_memory.errors import IndexingError  # noqa: E402
from tests.helpers.vendor_server import Fault, VendorServer

GIVE_UP = 1.5
SLACK = 3.0  # thread start-up, the keyword index, a loaded machine
NOTES = {"MEMORY.md": "# Preferences\n\nThe user prefers tea over coffee.\n",
         "memory/2026-01-10.md": "# Deploy\n\nWe deployed the zephyr billing service on Tuesday.\n",
         "memory/2026-01-11.md": "# Vendor\n\nThe quokka contract renews in March.\n"}


@pytest.fixture(scope="module")
def server() -> Iterator[VendorServer]:
    s = VendorServer()
    s.start()
    yield s
    s.stop()


@pytest.fixture
def vendor(server: VendorServer) -> Iterator[VendorServer]:
    server.reset()
    yield server
    server.reset()  # the hung requests still sleeping are not waited for


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _index(ws: Path, vendor: VendorServer, **sync: Any) -> MemoryIndex:
    # the default request timeout (60 s) and retries (3); only the give-up window is scaled down
    return MemoryIndex(workspace=str(ws), store={"path": str(ws.parent / "index.sqlite")}, provider="openai",
                       remote={"base_url": f"{vendor.url}/openai/v1", "api_key": "sk-test-giveup-1234567890"},
                       provider_limits={"sync_give_up_seconds": GIVE_UP}, sync=sync, watch=False)


def test_the_default_budget_for_a_dead_provider_is_about_30_seconds() -> None:
    limits = MemoryConfig().provider_limits
    old_budget = (limits.retries + 1) * limits.request_timeout_seconds  # what a sync waited before: 240 s
    assert old_budget > 200
    # a sync gives up after sync_give_up_seconds (every request and retry sleep is cut there), then the breaker is
    # open, so the search that waited for that sync does not wait again for its query embedding
    assert limits.sync_give_up_seconds + SLACK <= 35
    assert ProviderLimitsConfig(sync_give_up_seconds=5).sync_give_up_seconds == 5


def test_a_sync_gives_up_on_a_hung_provider_indexes_text_and_opens_the_shared_breaker(
        ws: Path, vendor: VendorServer) -> None:
    vendor.fail("openai.embeddings", *[Fault(delay=300)] * 20)
    with _index(ws, vendor) as m:
        start = time.monotonic()
        with pytest.raises(IndexingError, match="sync_give_up_seconds"):
            m.sync()
        assert time.monotonic() - start < GIVE_UP + SLACK  # not 4 x 60 s
        st = m.status()
        assert st.files == len(NOTES) and st.provider_breaker and st.provider_breaker["open"]
        asked = vendor.count("openai.embeddings")
        start = time.monotonic()  # the breaker opened by the sync spares the search its query timeout
        res = m.search("zephyr billing")
        assert time.monotonic() - start < 3  # not the 10 s query timeout
        assert res.mode == "keyword" and res.hits and res.hits[0].path == "memory/2026-01-10.md"
        assert vendor.count("openai.embeddings") == asked

        vendor.reset()  # the endpoint answers again: an explicit sync adds the vectors
        report = m.sync()
        assert report.embedded >= len(NOTES)
        assert m.search("zephyr billing").mode == "hybrid"


def test_an_incremental_sync_gives_up_too_and_indexes_the_changed_file(ws: Path, vendor: VendorServer) -> None:
    with _index(ws, vendor) as m:
        m.sync()
        (ws / "memory" / "2026-01-12.md").write_text("# Ops\n\nThe pelican runbook moved.\n")
        vendor.fail("openai.embeddings", *[Fault(delay=300)] * 20)
        start = time.monotonic()
        with pytest.raises(IndexingError, match="keyword search finds it"):
            m.sync()
        assert time.monotonic() - start < GIVE_UP + SLACK
        res = m.search("pelican runbook")
        assert res.hits and res.hits[0].path == "memory/2026-01-12.md"
        vendor.reset()
        m.sync()
        assert m.search("pelican runbook").mode == "hybrid"


def test_the_first_search_of_a_new_workspace_waits_only_for_the_give_up(ws: Path, vendor: VendorServer) -> None:
    vendor.fail("openai.embeddings", *[Fault(delay=300)] * 20)
    with _index(ws, vendor, on_search=True) as m:
        start = time.monotonic()
        res = m.search("quokka contract")
        first = time.monotonic() - start
        asked = vendor.count("openai.embeddings")
        start = time.monotonic()
        again = m.search("tea over coffee")
        second = time.monotonic() - start
        assert vendor.count("openai.embeddings") == asked  # the breaker the sync opened: not asked again
    assert first < GIVE_UP + SLACK and second < 3  # the second does not wait the 10 s query timeout
    assert res.hits and res.hits[0].path == "memory/2026-01-11.md" and res.mode == "keyword"
    assert again.hits and again.hits[0].path == "MEMORY.md"


def test_a_forced_rebuild_against_a_hung_provider_keeps_the_old_index(ws: Path, vendor: VendorServer) -> None:
    with _index(ws, vendor) as m:
        m.sync()
        (ws / "memory" / "2026-01-12.md").write_text("# Ops\n\nThe pelican runbook moved.\n")  # not cached
        vendor.fail("openai.embeddings", *[Fault(delay=300)] * 20)
        start = time.monotonic()
        with pytest.raises(IndexingError, match="previous index is unchanged"):
            m.sync(force=True)
        assert time.monotonic() - start < GIVE_UP + SLACK
        assert m.status().files == len(NOTES)  # the old index, its vectors with it
        assert m.store.info().vector_dims == 8


def test_without_retries_a_hung_request_still_gives_up_and_opens_the_breaker(ws: Path, vendor: VendorServer) -> None:
    with MemoryIndex(workspace=str(ws), store={"path": str(ws.parent / "index.sqlite")}, provider="openai",
                     remote={"base_url": f"{vendor.url}/openai/v1", "api_key": "sk-test-giveup-1234567890"},
                     provider_limits={"sync_give_up_seconds": GIVE_UP, "retries": 0}, watch=False) as m:
        m.sync()
        (ws / "memory" / "2026-01-12.md").write_text("# Ops\n\nThe pelican runbook moved.\n")
        vendor.fail("openai.embeddings", *[Fault(delay=300)] * 20)
        with pytest.raises(IndexingError, match="sync_give_up_seconds"):
            m.sync()
        assert m.status().provider_breaker["open"]  # type: ignore[index]
        assert m.search("pelican runbook").hits[0].path == "memory/2026-01-12.md"
