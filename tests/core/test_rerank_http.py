"""``query.rerank.provider = "http"``: a real loopback server speaking the Cohere/Jina ``/v1/rerank`` wire format."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ConfigError, RerankError
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.retrieval.rerank import HttpReranker
from tests.helpers.rerank_server import RerankServer, server  # noqa: F401 (the loopback /v1/rerank fixture)

DOCS = {
    # the search prefers the note holding every word of the query; the server prefers the other one
    "memory/2026-04-01.md": "# Apr 1\n\nMelanie: the quokka by the lantern, and a zebra somewhere\n",
    "memory/2026-04-02.md": "# Apr 2\n\nCaroline: zebra picnic\n",
}
QUERY = "zebra quokka lantern"


def _search(write, tmp_path: Path, rerank: dict[str, Any] | None, provider: Any = None) -> Any:
    ws = write(DOCS)
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / "h.sqlite")},
                     query={"rerank": rerank or {}}) as m:
        m.sync()
        return m.search(QUERY, min_score=0)


@pytest.mark.parametrize("provider", [None, "fake"])
def test_endpoint_reorders_the_hits(write, tmp_path: Path, server: RerankServer, provider: str | None,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    prov = FakeEmbeddingProvider(dims=256, model="fake-http-rerank") if provider else None
    plain = _search(write, tmp_path, None, prov)
    assert [h.path for h in plain.hits][0] == "memory/2026-04-01.md"
    monkeypatch.setenv("MY_RERANK_KEY", "sk-local-test")
    res = _search(write, tmp_path, {"enabled": True, "provider": "http", "base_url": server.url,
                                    "model": "rerank-test-1", "api_key_env": "MY_RERANK_KEY"}, prov)
    assert [h.path for h in res.hits] == ["memory/2026-04-02.md", "memory/2026-04-01.md"]
    assert res.rerank_error is None and res.to_dict()["rerank_error"] is None
    assert res.hits[0].score >= res.hits[1].score
    (req,) = server.requests
    assert req["path"] == "/v1/rerank" and req["auth"] == "Bearer sk-local-test"
    body = req["body"]
    assert body["model"] == "rerank-test-1" and body["query"] == QUERY and body["top_n"] == 2
    assert sorted(body["documents"]) == sorted(h.text for h in plain.hits)


@pytest.mark.parametrize("fault", ["timeout", "http500", "not-json", "bad-index", "down"])
def test_a_failing_endpoint_leaves_the_order_and_says_why(write, tmp_path: Path, server: RerankServer, fault: str,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    url = server.url
    if fault == "timeout":
        server.delay = 2.0
    elif fault == "http500":
        server.status, server.body = 500, {"error": "model not loaded"}
    elif fault == "not-json":
        server.body = b"<html>gateway</html>"
    elif fault == "bad-index":
        server.body = {"results": [{"index": 7, "relevance_score": 0.9}]}
    else:
        url = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    started = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="openclaw_memory.retrieval.pipeline"):
        res = _search(write, tmp_path, {"enabled": True, "provider": "http", "base_url": url, "timeout_seconds": 0.5})
    assert [h.path for h in res.hits][0] == "memory/2026-04-01.md"  # the unreranked order
    assert len(res.hits) == 2
    assert res.rerank_error and "reranking skipped" in caplog.text
    expected = {"timeout": "did not answer within 0.5 s", "http500": "HTTP 500: {\"error\": \"model not loaded\"}",
                "not-json": "did not answer JSON", "bad-index": "outside the 2 documents",
                "down": "could not be reached"}
    assert expected[fault] in res.rerank_error
    assert time.perf_counter() - started < 10


def test_client_reads_voyage_data_and_sends_no_key_without_one(server: RerankServer,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RERANK_API_KEY", raising=False)
    server.body = {"object": "list",
                   "data": [{"index": 1, "relevance_score": 0.8}, {"index": 0, "relevance_score": 0.2}]}
    client = HttpReranker(server.url + "/rerank/")
    assert client.url == server.url + "/rerank"
    assert client.scores("q", ["a", "b"]) == {1: 0.8, 0: 0.2}
    assert server.requests[0]["auth"] is None and "model" not in server.requests[0]["body"]
    assert client.scores("q", []) == {} and len(server.requests) == 1  # nothing to rank: no request
    server.body = {"results": [{"index": 0, "relevance_score": "high"}]}
    with pytest.raises(RerankError, match="not a number"):
        client.scores("q", ["a"])


def test_http_rerank_needs_a_base_url(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="base_url"):
        MemoryIndex(workspace=tmp_path, watch=False, store={"path": str(tmp_path / "c.sqlite")},
                    query={"rerank": {"enabled": True, "provider": "http"}})
