"""No secret in errors, status, logs, payloads, printed configs or the index: a reranker and an embedding
endpoint (the loopback vendor server, real openai SDK) that echo the credentials they were sent, a config
holding an Azure-style ``api-key`` header, and transcripts that quote keys and database URLs."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from openclaw_memory import MemoryConfig, MemoryIndex  # noqa: E402
from openclaw_memory.errors import ConfigError, IndexingError  # noqa: E402
from openclaw_memory.providers.fake import FakeEmbeddingProvider  # noqa: E402
from openclaw_memory.files.sessions import extract_session, redact_secrets  # noqa: E402
from openclaw_memory.agent.tools import memory_search  # noqa: E402
from tests.helpers.vendor_server import Fault, VendorServer

# shaped like no known vendor key, so only "the secrets this process was given" can catch them
RERANK_KEY = "rk7QmZ2vLx9TbW4nHs8Kd3Fj"
AZURE_KEY = "3f9a1c07be4d4e2a9c6b05d8e7f1a2b3"
API_KEY = "Zk4pQ8sW2mV6nX1cT7yB3hJ5"
NOTES = {"MEMORY.md": "# Preferences\n\nThe user prefers tea over coffee.\n",
         "memory/2026-01-10.md": "# Deploy\n\nWe deployed the zephyr billing service on Tuesday.\n"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def echoing_reranker() -> Iterator[str]:
    """A /rerank endpoint that refuses every request, quoting the credential it was sent."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            sent = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            data = json.dumps({"message": f"invalid api key {sent}"}).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def vendor() -> Iterator[VendorServer]:
    server = VendorServer()
    server.start()
    yield server
    server.stop()


def test_the_reranker_key_echoed_by_the_endpoint_is_not_in_rerank_error_or_the_log(
        ws: Path, tmp_path: Path, echoing_reranker: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("RERANK_API_KEY", RERANK_KEY)
    rerank = {"enabled": True, "provider": "http", "base_url": echoing_reranker}
    with MemoryIndex(workspace=str(ws), store={"path": str(tmp_path / "i.sqlite")}, provider=FakeEmbeddingProvider(),
                     query={"rerank": rerank}, watch=False) as m:
        m.sync()
        with caplog.at_level(logging.WARNING):
            res = m.search("zephyr billing")
    assert res.hits and res.rerank_error and "HTTP 401" in res.rerank_error
    assert RERANK_KEY not in res.rerank_error and "[REDACTED]" in res.rerank_error
    assert "reranking skipped" in caplog.text and RERANK_KEY not in caplog.text


def test_a_printed_or_dumped_config_shows_no_header_value() -> None:
    config = MemoryConfig(remote={"headers": {"api-key": AZURE_KEY}, "api_key": API_KEY})
    for shown in (str(config), repr(config), str(config.model_dump()), config.model_dump_json(),
                  str(config.remote), json.dumps(config.without_secrets())):
        assert AZURE_KEY not in shown and API_KEY not in shown
    assert MemoryConfig.load(config, query={"max_results": 3}).remote.header_values() == {"api-key": AZURE_KEY}


def test_header_values_echoed_by_the_embedding_endpoint_reach_no_error_status_payload_or_log(
        ws: Path, tmp_path: Path, vendor: VendorServer, caplog: pytest.LogCaptureFixture) -> None:
    vendor.reset()
    vendor.fail("openai.embeddings", *[Fault(status=400, echo_headers=True)] * 50)
    remote = {"base_url": f"{vendor.url}/openai/v1", "api_key": API_KEY, "headers": {"api-key": AZURE_KEY}}
    with caplog.at_level(logging.DEBUG, logger="openclaw_memory"), MemoryIndex(
            workspace=str(ws), store={"path": str(tmp_path / "i.sqlite")}, provider="openai", remote=remote,
            provider_limits={"breaker_failures": 2}, watch=False) as m:
        with pytest.raises(IndexingError) as caught:
            m.sync()
        assert any(AZURE_KEY in json.dumps(h) for h in vendor.headers("openai.embeddings"))  # it was sent ...
        assert "rejected; you sent" in str(caught.value)  # ... and echoed back
        result = m.search("zephyr billing")
        payload = memory_search(m, "tea over coffee")
        status = m.status()
        shown = [str(caught.value), repr(caught.value), result.keyword_only_reason or "", json.dumps(payload),
                 repr(status), str(status.provider_breaker), str(status.notes), str(m.config), caplog.text]
    assert result.mode == "keyword" and result.keyword_only_reason
    for text in shown:
        assert AZURE_KEY not in text and API_KEY not in text
    assert "[REDACTED]" in str(caught.value)


@pytest.mark.parametrize("secret, quoted", [
    ("pa-Xy7Kq2LmN9pR4sT6vW8zA1bC3dE5fG0hJ2kL4mN6", "pa-Xy7Kq2LmN9pR4sT6vW8zA1bC3dE5fG0hJ2kL4mN6"),
    ("hunter2-Pw9", "postgresql://app:hunter2-Pw9@db.example.com:5432/prod"),
    ("s3cr3tPass", "mysql://root:s3cr3tPass@localhost/app"),
])
def test_transcripts_lose_voyage_keys_and_url_passwords(tmp_path: Path, secret: str, quoted: str) -> None:
    assert secret not in redact_secrets(f"use {quoted} for now")
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"type": "message", "message": {"role": "user", "content": f"use {quoted} ok"}}) + "\n")
    content = extract_session(path).content
    assert secret not in content and "[REDACTED]" in content


def test_indexed_transcripts_hold_no_voyage_key_or_database_password(make_index, write) -> None:  # type: ignore[no-untyped-def]
    write({"MEMORY.md": "# Memory\n"})
    memory = make_index(FakeEmbeddingProvider(), sources=["memory", "sessions"])
    path = memory.transcript_path("chat-1")
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "connect with postgresql://app:hunter2-Pw9@db:5432/prod and voyage key pa-Xy7Kq2LmN9pR4sT6vW8zA1bC3dE5fG0h"
    path.write_text(json.dumps({"type": "message", "message": {"role": "user", "content": text}}) + "\n")
    memory.sync()
    stored = "\n".join(c.text for c in memory.store.iter_chunks("sessions"))
    assert "postgresql://app:" in stored and "hunter2-Pw9" not in stored and "pa-Xy7Kq2" not in stored


def test_redaction_stays_linear_on_hostile_text(tmp_path: Path) -> None:
    line = "a-" * 20_000  # each "-" starts a word: an unbounded key-name prefix made this quadratic (~80 s)
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"type": "message", "message": {"role": "user", "content": line}}) + "\n")
    start = time.monotonic()
    assert extract_session(path).content == f"User: {line}"
    assert time.monotonic() - start < 3


def test_without_secrets_keeps_the_database_but_not_its_password() -> None:
    config = MemoryConfig(store="postgresql://app:hunter2-Pw9@db:5432/prod?sslmode=require")
    data = config.without_secrets()
    assert "hunter2-Pw9" not in json.dumps(data)
    assert MemoryConfig.from_dict(data).store.url.get_secret_value() == "postgresql://app@db:5432/prod?sslmode=require"  # type: ignore[union-attr]


@pytest.mark.parametrize("vendor_id, route, base", [
    ("openai", "openai.embeddings", "/openai/v1"),
    ("gemini", "gemini.batchEmbedContents", "/gemini/v1beta"),
    ("voyage", "voyage.embeddings", "/voyage/v1"),
])
def test_every_vendor_error_that_echoes_the_key_or_headers_is_redacted(
        ws: Path, tmp_path: Path, vendor: VendorServer, vendor_id: str, route: str, base: str) -> None:
    vendor.reset()
    vendor.fail(route, *[Fault(status=400, echo_headers=True)] * 10)
    remote = {"base_url": f"{vendor.url}{base}", "api_key": API_KEY, "headers": {"api-key": AZURE_KEY}}
    with MemoryIndex(workspace=str(ws), store={"path": str(tmp_path / "i.sqlite")}, provider=vendor_id,
                     remote=remote, watch=False) as m:
        with pytest.raises(IndexingError) as caught:
            m.sync()
        status = repr(m.status())
    assert vendor.count(route) >= 1 and "rejected; you sent" in str(caught.value)
    for text in (str(caught.value), status):
        assert API_KEY not in text and AZURE_KEY not in text


def test_a_masked_key_from_a_dumped_config_is_refused_not_sent() -> None:
    dumped = json.loads(MemoryConfig(remote={"api_key": API_KEY, "headers": {"api-key": AZURE_KEY}}).model_dump_json())
    assert dumped["remote"]["api_key"] == "**********"
    with pytest.raises(ConfigError, match="remote.api_key.*mask"):
        MemoryConfig.from_dict(dumped)
    with pytest.raises(ConfigError, match="remote.headers.*mask"):
        MemoryConfig.from_dict({"remote": {"headers": {"api-key": "**********"}}})
