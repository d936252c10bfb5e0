"""Provider faults through the real openai SDK against the loopback vendor server: an endpoint
that changes its output dimension, hangs, an absurd Retry-After, vectors sent as text."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers import vendor_server
from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.cli import main  # noqa: E402
from openclaw_memory.errors import IndexingError  # noqa: E402
from tests.helpers.vendor_server import Fault, VendorServer
from tests.helpers.workspaces import write_files

KEY = "sk-test-reliability-1234567890"
NOTES = {
    "MEMORY.md": "# Preferences\n\nThe user prefers tea over coffee.\n",
    "memory/2026-01-10.md": "# Deploy\n\nWe deployed the zephyr billing service on Tuesday.\n",
    "memory/2026-01-11.md": "# Vendor\n\nThe quokka contract renews in March.\n",
}


@pytest.fixture(scope="module")
def server() -> Iterator[VendorServer]:
    s = VendorServer()
    s.start()
    yield s
    s.stop()


@pytest.fixture
def vendor(server: VendorServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[VendorServer]:
    server.reset()
    monkeypatch.setitem(vendor_server.DIMS, "openai", 8)
    yield server
    server.reset()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_files(tmp_path / "ws", NOTES)


def _index(ws: Path, vendor: VendorServer, **limits: Any) -> MemoryIndex:
    return MemoryIndex(workspace=str(ws), store={"path": str(ws.parent / "index.sqlite")}, provider="openai",
                       remote={"base_url": f"{vendor.url}/openai/v1", "api_key": KEY},
                       watch=False, **({"provider_limits": limits} if limits else {}))


def _stored_dims(ws: Path) -> tuple[set[int], set[int]]:
    con = sqlite3.connect(ws.parent / "index.sqlite")
    try:
        chunks = {r[0] for r in con.execute("SELECT length(embedding) / 4 FROM chunks WHERE embedding IS NOT NULL")}
        cached = {r[0] for r in con.execute("SELECT length(embedding) / 4 FROM embedding_cache")}
    finally:
        con.close()
    return chunks, cached


# ---- a dimension change ------------------------------------------------------------------------


def test_dimension_change_is_refused_never_cached_and_reported(ws: Path, vendor: VendorServer,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with _index(ws, vendor) as m:
        m.sync()
        assert m.status().vector["dims"] == 8
    monkeypatch.setitem(vendor_server.DIMS, "openai", 16)  # the endpoint now serves another model
    (ws / "memory" / "2026-01-12.md").write_text("# Ops\n\nThe pelican runbook moved to the wiki.\n")
    for force in (False, True):  # a fresh process each time, as the CLI runs; --force must not launder it
        with _index(ws, vendor) as m:
            with pytest.raises(IndexingError, match=r"16-dimensional.*8-dimensional"):
                m.sync(force=force)
            st = m.status()
            assert any("16-dimensional" in n for n in st.notes), st.notes
            assert st.vector["dims"] == 8 and st.files == len(NOTES)
            hits = m.search("zephyr billing").hits  # the old index still answers
            assert hits and hits[0].path == "memory/2026-01-10.md"
        assert _stored_dims(ws) == ({8}, {8})
    monkeypatch.setitem(vendor_server.DIMS, "openai", 8)  # the endpoint is fixed: the next sync catches up
    with _index(ws, vendor) as m:
        report = m.sync()
        assert report.files_indexed == 1
        assert m.search("pelican runbook").hits[0].path == "memory/2026-01-12.md"
        assert m.status().chunks == 4
    assert _stored_dims(ws) == ({8}, {8})


def test_a_16_dim_vector_cached_by_an_older_version_is_not_reused(ws: Path, vendor: VendorServer) -> None:
    with _index(ws, vendor) as m:
        m.sync()
    con = sqlite3.connect(ws.parent / "index.sqlite")
    con.execute("UPDATE embedding_cache SET embedding = zeroblob(64), dims = 16")
    con.commit()
    con.close()
    with _index(ws, vendor) as m:
        m.sync(force=True)
    assert _stored_dims(ws)[0] == {8}


# ---- vectors that are not vectors ----------------------------------------------------------------


@pytest.mark.parametrize("embedding", ["0.1,0.2,0.3", ["0.1", "abc"], [[0.1, 0.2]], [], None])
def test_malformed_vectors_are_a_clear_indexing_error(tmp_path: Path, vendor: VendorServer, embedding: Any) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("# One\n\nA single short note.\n")
    body = {"object": "list", "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1},
            "data": [{"object": "embedding", "index": 0, "embedding": embedding}]}
    vendor.fail("openai.embeddings", *[Fault(status=200, body=body)] * 8)
    with _index(ws, vendor) as m:
        with pytest.raises(IndexingError, match="embedding failed"):
            m.sync()
    cfg = tmp_path / "openclaw.json"
    cfg.write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws), "memorySearch": {
        "provider": "openai", "remote": {"baseUrl": f"{vendor.url}/openai/v1", "apiKey": KEY},
        "store": {"path": str(tmp_path / "cli.sqlite")}}}}}))
    res = CliRunner().invoke(main, ["-c", str(cfg), "index"])
    assert res.exit_code == 1 and not isinstance(res.exception, ValueError), res.output
    assert "Traceback" not in res.output and "embedding failed" in res.output, res.output


# ---- a server that asks for a long pause ---------------------------------------------------------


def test_huge_retry_after_fails_fast(ws: Path, vendor: VendorServer) -> None:
    vendor.fail("openai.embeddings", *[Fault(status=429, headers={"Retry-After": "100000"})] * 8)
    start = time.monotonic()
    with _index(ws, vendor) as m:
        with pytest.raises(IndexingError, match="100000"):
            m.sync()
    assert time.monotonic() - start < 10
    assert vendor.count("openai.embeddings") == 1  # not retried at all


# ---- a hung provider --------------------------------------------------------------------------------


def test_hung_provider_timeouts_and_circuit_breaker(ws: Path, vendor: VendorServer) -> None:
    with _index(ws, vendor) as m:
        m.sync()
    vendor.fail("openai.embeddings", *[Fault(delay=4)] * 50)
    limits = {"request_timeout_seconds": 0.5, "query_timeout_seconds": 0.5, "retries": 1,
              "breaker_failures": 2, "breaker_cooldown_seconds": 30}
    with _index(ws, vendor, **limits) as m:
        for query in ("zephyr billing", "quokka contract"):
            start = time.monotonic()
            res = m.search(query)
            assert time.monotonic() - start < 3
            assert res.mode == "keyword" and "timed out" in (res.keyword_only_reason or "")
            assert res.hits
        asked = vendor.count("openai.embeddings")
        start = time.monotonic()
        res = m.search("tea over coffee")  # the breaker is open: the provider is not asked
        assert time.monotonic() - start < 1
        assert res.mode == "keyword" and "keyword-only for" in (res.keyword_only_reason or "")
        assert res.hits[0].path == "MEMORY.md"
        assert vendor.count("openai.embeddings") == asked
        st = m.status()
        assert st.search_mode == "keyword" and st.provider_breaker and st.provider_breaker["open"]
        assert any("failed 2 times in a row" in n for n in st.notes)
        (ws / "memory" / "2026-01-12.md").write_text("# Ops\n\nThe pelican runbook moved.\n")
        start = time.monotonic()  # an explicit sync tries the provider once more, within the timeouts
        with pytest.raises(IndexingError, match="timed out"):
            m.sync()
        assert time.monotonic() - start < 3
        assert m.status().provider_breaker["open"]  # type: ignore[index]
        asked = vendor.count("openai.embeddings")
        assert m.search("zephyr billing").mode == "keyword" and vendor.count("openai.embeddings") == asked


def test_hung_provider_one_file_sync_is_bounded_by_the_configured_timeout(ws: Path, vendor: VendorServer) -> None:
    with _index(ws, vendor) as m:
        m.sync()
    (ws / "memory" / "2026-01-12.md").write_text("# Ops\n\nThe pelican runbook moved.\n")
    vendor.fail("openai.embeddings", *[Fault(delay=4)] * 10)
    start = time.monotonic()
    with _index(ws, vendor, request_timeout_seconds=0.5, retries=1) as m:
        with pytest.raises(IndexingError, match="timed out"):
            m.sync()
    assert time.monotonic() - start < 5  # two 0.5 s attempts and a short backoff, not 4 x 60 s


def test_limits_load_from_an_openclaw_json(tmp_path: Path) -> None:
    from openclaw_memory.config import MemoryConfig

    cfg = tmp_path / "openclaw.json"
    cfg.write_text('{"agents": {"defaults": {"memorySearch": {"providerLimits": {"requestTimeoutSeconds": 5, '
                   '"queryTimeoutSeconds": 2, "breakerFailures": 4, "breakerCooldownSeconds": 90, '
                   '"maxRetryAfterSeconds": 12, "queryMaxChars": 500}}}}}')
    lim = MemoryConfig.from_openclaw_file(cfg).provider_limits
    assert (lim.request_timeout_seconds, lim.query_timeout_seconds, lim.breaker_failures,
            lim.breaker_cooldown_seconds, lim.max_retry_after_seconds, lim.query_max_chars) == (5, 2, 4, 90, 12, 500)


# ---- the first index while the provider is down ---------------------------------------------------


def test_first_index_with_a_failing_provider_still_builds_the_keyword_index(ws: Path, vendor: VendorServer) -> None:
    vendor.fail("openai.embeddings", *[Fault(status=400)] * 20)
    with _index(ws, vendor) as m:
        with pytest.raises(IndexingError, match="keyword search works"):
            m.sync()
        res = m.search("zephyr billing")
        assert res.hits and res.hits[0].path == "memory/2026-01-10.md"
        assert m.status().files == len(NOTES)
        assert _stored_dims(ws)[0] == set()  # no vector stored
        vendor.reset()  # the provider answers again: the next sync adds the vectors
        report = m.sync()
        assert report.files_indexed == len(NOTES) and report.embedded == len(NOTES)
        assert m.search("zephyr billing").mode == "hybrid"
    con = sqlite3.connect(ws.parent / "index.sqlite")
    assert con.execute("SELECT count(*) FROM chunks WHERE embedding IS NULL").fetchone()[0] == 0
    con.close()
