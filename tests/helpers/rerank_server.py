"""A loopback /v1/rerank server speaking the rerank API's wire format, and its fixture."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class RerankServer:
    """A stand-in for a cross-encoder that knows better than the search: a document holding ``preferred``
    scores 0.9, any other 0.1 (results sorted best first, cut to ``top_n``)."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    delay: float = 0.0
    status: int = 200
    body: Any = None  # a fixed answer instead of the scores
    preferred: str = "picnic"

    def answer(self, req: dict[str, Any]) -> dict[str, Any]:
        scored = [{"index": i, "relevance_score": 0.9 if self.preferred in d else 0.1}
                  for i, d in enumerate(req["documents"])]
        scored.sort(key=lambda r: -r["relevance_score"])
        return {"id": "r-1", "results": scored[: req.get("top_n") or len(scored)], "meta": {"billed_units": {}}}


@pytest.fixture
def server() -> Iterator[RerankServer]:
    state = RerankServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            req = json.loads(raw)
            state.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": req})
            if state.delay:
                time.sleep(state.delay)
            out = state.body if state.body is not None else state.answer(req)
            data = out if isinstance(out, bytes) else json.dumps(out).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()

