"""A loopback HTTP server that speaks the OpenAI, Gemini and Voyage wire formats.

Real SDK clients are pointed at it through their base-URL options:

* OpenAI  ``<url>/openai/v1``   embeddings, chat completions (answers from ``chat_answers``), files,
  batches, file content
* Gemini  ``<url>/gemini/``     (api_version ``v1beta``) batchEmbedContents, resumable file
  upload, asyncBatchEmbedContent, batches, file download
* Voyage  ``<url>/voyage/v1``   embeddings, files, batches, file content

Vectors are deterministic (seeded by the text). Every request is recorded in ``calls``.
``fail(route, Fault(...))`` queues faults (HTTP errors with headers, delays for timeouts,
malformed bodies) for the next requests to a route; ``vectors[text]`` overrides a vector.
"""

from __future__ import annotations

import asyncio
import base64
import email.parser
import email.policy
import hashlib
import itertools
import json
import socket
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse as _StarletteJSON
from starlette.responses import Response
from starlette.routing import Route

DIMS = {"openai": 8, "gemini": 12, "voyage": 10}


class JSONResponse(_StarletteJSON):
    """JSON that may carry NaN/Infinity (Python's json reads them), for bad-vector tests."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content).encode()


def vector_for(text: str, dims: int) -> list[float]:
    """The deterministic (not normalised) vector the server returns for ``text``."""
    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
    return [float(x) for x in np.random.default_rng(seed).standard_normal(dims)]


@dataclass
class Fault:
    """One injected fault: an HTTP ``status`` (with ``headers``/``body``), a ``delay`` before
    answering normally (to trigger client timeouts), or a ``malformed`` 200 body."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay: float = 0.0
    malformed: bool = False
    #: the error message quotes every request header's value (as some gateways do with a rejected credential)
    echo_headers: bool = False


@dataclass
class Call:
    route: str
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class BatchJob:
    vendor: str
    id: str
    input_file: str
    polls_left: int
    outcome: str
    params: dict[str, Any]
    output_file: str | None = None
    error_file: str | None = None


class VendorServer:
    """State and routes of the fake vendor API (see module docstring)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[Call] = []
        self.faults: dict[str, deque[Fault]] = defaultdict(deque)
        self.vectors: dict[str, list[float]] = {}
        self.files: dict[str, bytes] = {}
        self.jobs: dict[str, BatchJob] = {}
        self.batch_polls = 1
        self.batch_outcome = "completed"  # or "failed", "never", "error_lines"
        self.chat_answers: deque[str] = deque()  # the next chat completions' contents (the last one repeats)
        self._ids = itertools.count(1)
        self.url = ""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # ---- control -------------------------------------------------------------------------

    def reset(self) -> None:
        with self.lock:
            self.calls.clear()
            self.faults.clear()
            self.vectors.clear()
            self.files.clear()
            self.jobs.clear()
            self.batch_polls = 1
            self.batch_outcome = "completed"
            self.chat_answers.clear()

    def fail(self, route: str, *faults: Fault) -> None:
        with self.lock:
            self.faults[route].extend(faults)

    def count(self, route: str) -> int:
        with self.lock:
            return sum(1 for c in self.calls if c.route == route)

    def bodies(self, route: str) -> list[Any]:
        with self.lock:
            return [c.body for c in self.calls if c.route == route]

    def headers(self, route: str) -> list[dict[str, str]]:
        with self.lock:
            return [c.headers for c in self.calls if c.route == route]

    def _vec(self, text: str, dims: int) -> list[float]:
        return self.vectors.get(text) or vector_for(text, dims)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    # ---- plumbing ------------------------------------------------------------------------

    async def _enter(self, route: str, request: Request, body: Any) -> Response | None:
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self.lock:
            self.calls.append(Call(route, request.method, request.url.path, headers, body))
            fault = self.faults[route].popleft() if self.faults[route] else None
        if fault is None:
            return None
        if fault.delay:
            await asyncio.sleep(fault.delay)
        if fault.malformed:
            return Response("{not json", media_type="application/json")
        if fault.status:
            payload = fault.body if fault.body is not None else _error_body(route, fault.status)
            if fault.echo_headers:
                payload = _error_body(route, fault.status, "rejected; you sent " + " ".join(headers.values()))
            return JSONResponse(payload, status_code=fault.status, headers=fault.headers)
        return None

    async def _json(self, request: Request) -> Any:
        raw = await request.body()
        return json.loads(raw) if raw else None

    # ---- OpenAI --------------------------------------------------------------------------

    async def openai_embeddings(self, request: Request) -> Response:
        body = await self._json(request)
        if (r := await self._enter("openai.embeddings", request, body)) is not None:
            return r
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dims = body.get("dimensions") or DIMS["openai"]
        data = []
        for i, text in enumerate(inputs):
            vec = self._vec(text, dims)
            emb: Any = vec
            if body.get("encoding_format") == "base64":
                emb = base64.b64encode(np.asarray(vec, dtype=np.float32).tobytes()).decode()
            data.append({"object": "embedding", "index": i, "embedding": emb})
        return JSONResponse({"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    async def openai_chat(self, request: Request) -> Response:
        body = await self._json(request)
        if (r := await self._enter("openai.chat", request, body)) is not None:
            return r
        with self.lock:
            content = self.chat_answers.popleft() if len(self.chat_answers) > 1 else (self.chat_answers or [""])[0]
        return JSONResponse({
            "id": self._new_id("chatcmpl"), "object": "chat.completion", "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": content, "refusal": None}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })

    async def openai_files(self, request: Request) -> Response:
        form = _multipart(request.headers.get("content-type", ""), await request.body())
        if (r := await self._enter("openai.files", request, {"purpose": form.get("purpose")})) is not None:
            return r
        fid = self._new_id("file-")
        self.files[fid] = form["file"]
        return JSONResponse(_file_obj(fid, len(form["file"]), "batch"))

    async def openai_batches(self, request: Request) -> Response:
        body = await self._json(request)
        if (r := await self._enter("openai.batches.create", request, body)) is not None:
            return r
        job = self._make_job("openai", body["input_file_id"], body)
        return JSONResponse(self._openai_batch_obj(job, "validating"))

    async def openai_batch_get(self, request: Request) -> Response:
        if (r := await self._enter("openai.batches.get", request, None)) is not None:
            return r
        job = self.jobs[request.path_params["bid"]]
        return JSONResponse(self._openai_batch_obj(job, self._advance(job)))

    async def file_content(self, request: Request) -> Response:
        vendor = request.url.path.split("/")[1]
        if (r := await self._enter(f"{vendor}.files.content", request, None)) is not None:
            return r
        return Response(self.files[request.path_params["fid"]], media_type="application/octet-stream")

    def _openai_batch_obj(self, job: BatchJob, status: str) -> dict[str, Any]:
        return {
            "id": job.id, "object": "batch", "endpoint": "/v1/embeddings", "input_file_id": job.input_file,
            "completion_window": job.params.get("completion_window", "24h"), "created_at": int(time.time()),
            "status": status, "output_file_id": job.output_file if status == "completed" else None,
            "error_file_id": job.error_file, "metadata": job.params.get("metadata"),
        }

    # ---- batch jobs (OpenAI and Voyage share the line format) ------------------------------

    def _make_job(self, vendor: str, input_file: str, params: dict[str, Any]) -> BatchJob:
        job = BatchJob(vendor, self._new_id("batch-"), input_file, self.batch_polls, self.batch_outcome, params)
        self.jobs[job.id] = job
        return job

    def _advance(self, job: BatchJob) -> str:
        if job.outcome == "never":
            return "in_progress"
        if job.polls_left > 0:
            job.polls_left -= 1
            return "in_progress"
        if job.outcome == "failed":
            job.error_file = job.error_file or self._store("err-", b'{"custom_id":"0","error":{"message":"quota exceeded"}}\n')
            return "failed"
        if job.output_file is None:
            job.output_file = self._store("out-", self._job_output(job))
        return "completed"

    def _store(self, prefix: str, data: bytes) -> str:
        fid = self._new_id(prefix)
        self.files[fid] = data
        return fid

    def _job_output(self, job: BatchJob) -> bytes:
        lines = [json.loads(x) for x in self.files[job.input_file].decode().splitlines() if x.strip()]
        out = []
        for n, line in enumerate(lines):
            if job.vendor == "gemini":
                req = line["request"]
                text = req["content"]["parts"][0]["text"]
                dims = req.get("outputDimensionality") or DIMS["gemini"]
                out.append({"key": line["key"], "response": {"embedding": {"values": self._vec(text, dims)}}})
                continue
            body = line["body"]
            text = body["input"][0] if isinstance(body["input"], list) else body["input"]
            dims = body.get("dimensions") or job.params.get("request_params", {}).get("output_dimension") or DIMS[job.vendor]
            if job.outcome == "error_lines" and n == 0:
                out.append({"custom_id": line["custom_id"], "response": {"status_code": 400, "body": {"error": {"message": "bad input"}}}})
                continue
            out.append({"custom_id": line["custom_id"], "response": {"status_code": 200, "body": {"data": [{"embedding": self._vec(text, dims), "index": 0}]}}})
        return ("\n".join(json.dumps(o) for o in out) + "\n").encode()

    # ---- Voyage --------------------------------------------------------------------------

    async def voyage_embeddings(self, request: Request) -> Response:
        body = await self._json(request)
        if (r := await self._enter("voyage.embeddings", request, body)) is not None:
            return r
        dims = body.get("output_dimension") or DIMS["voyage"]
        data = [{"object": "embedding", "embedding": self._vec(t, dims), "index": i} for i, t in enumerate(body["input"])]
        return JSONResponse({"object": "list", "data": data, "model": body["model"], "usage": {"total_tokens": 1}})

    async def voyage_files(self, request: Request) -> Response:
        form = _multipart(request.headers.get("content-type", ""), await request.body())
        if (r := await self._enter("voyage.files", request, {"purpose": form.get("purpose")})) is not None:
            return r
        fid = self._new_id("vfile-")
        self.files[fid] = form["file"]
        return JSONResponse(_file_obj(fid, len(form["file"]), "batch"))

    async def voyage_batches(self, request: Request) -> Response:
        body = await self._json(request)
        if (r := await self._enter("voyage.batches.create", request, body)) is not None:
            return r
        job = self._make_job("voyage", body["input_file_id"], body)
        return JSONResponse({"id": job.id, "status": "validating", "input_file_id": job.input_file})

    async def voyage_batch_get(self, request: Request) -> Response:
        if (r := await self._enter("voyage.batches.get", request, None)) is not None:
            return r
        job = self.jobs[request.path_params["bid"]]
        status = self._advance(job)
        return JSONResponse({"id": job.id, "status": status, "output_file_id": job.output_file if status == "completed" else None, "error_file_id": job.error_file})

    # ---- Gemini --------------------------------------------------------------------------

    async def gemini_models(self, request: Request) -> Response:
        model, _, method = request.path_params["rest"].partition(":")
        body = await self._json(request)
        if method == "batchEmbedContents":
            if (r := await self._enter("gemini.batchEmbedContents", request, {"model": model, **body})) is not None:
                return r
            embs = []
            for req in body["requests"]:
                text = req["content"]["parts"][0]["text"]
                embs.append({"values": self._vec(text, req.get("outputDimensionality") or DIMS["gemini"])})
            return JSONResponse({"embeddings": embs})
        if method == "asyncBatchEmbedContent":
            if (r := await self._enter("gemini.asyncBatchEmbedContent", request, {"model": model, **body})) is not None:
                return r
            cfg = body["batch"]["inputConfig"]
            file_name = (cfg.get("file_name") or cfg.get("fileName")).split("/")[-1]
            job = self._make_job("gemini", file_name, body)
            return JSONResponse(self._gemini_op(job, "BATCH_STATE_PENDING"))
        return JSONResponse({"error": {"code": 404, "message": f"unknown method {method}", "status": "NOT_FOUND"}}, status_code=404)

    def _gemini_op(self, job: BatchJob, state: str) -> dict[str, Any]:
        meta: dict[str, Any] = {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.EmbedContentBatch", "state": state,
                                "displayName": job.params["batch"].get("displayName")}
        if state == "BATCH_STATE_SUCCEEDED":
            meta["output"] = {"responsesFile": f"files/{job.output_file}"}
        return {"name": f"batches/{job.id}", "metadata": meta}

    async def gemini_batch_get(self, request: Request) -> Response:
        if (r := await self._enter("gemini.batches.get", request, None)) is not None:
            return r
        job = self.jobs[request.path_params["bid"]]
        status = self._advance(job)
        state = {"in_progress": "BATCH_STATE_RUNNING", "completed": "BATCH_STATE_SUCCEEDED", "failed": "BATCH_STATE_FAILED"}[status]
        return JSONResponse(self._gemini_op(job, state))

    async def gemini_upload(self, request: Request) -> Response:
        command = request.headers.get("x-goog-upload-command", "")
        if command == "start":
            meta = await self._json(request)
            if (r := await self._enter("gemini.files.upload", request, meta)) is not None:
                return r
            uid = self._new_id("up-")
            url = f"{self.url}/gemini/upload/v1beta/files?upload_id={uid}"
            return JSONResponse({}, headers={"x-goog-upload-url": url, "x-goog-upload-status": "active"})
        data = await request.body()
        fid = self._new_id("gfile-")
        self.files[fid] = data
        body = {"file": {"name": f"files/{fid}", "mimeType": "jsonl", "sizeBytes": str(len(data)), "state": "ACTIVE"}}
        return JSONResponse(body, headers={"x-goog-upload-status": "final"})

    async def gemini_file(self, request: Request) -> Response:
        name, _, method = request.path_params["rest"].partition(":")
        if method != "download":
            return JSONResponse({"error": {"code": 404, "message": "not found"}}, status_code=404)
        if (r := await self._enter("gemini.files.download", request, None)) is not None:
            return r
        return Response(self.files[name], media_type="application/octet-stream")

    # ---- app -----------------------------------------------------------------------------

    def app(self) -> Starlette:
        return Starlette(routes=[
            Route("/openai/v1/embeddings", self.openai_embeddings, methods=["POST"]),
            Route("/openai/v1/chat/completions", self.openai_chat, methods=["POST"]),
            Route("/openai/v1/files", self.openai_files, methods=["POST"]),
            Route("/openai/v1/files/{fid}/content", self.file_content, methods=["GET"]),
            Route("/openai/v1/batches", self.openai_batches, methods=["POST"]),
            Route("/openai/v1/batches/{bid}", self.openai_batch_get, methods=["GET"]),
            Route("/voyage/v1/embeddings", self.voyage_embeddings, methods=["POST"]),
            Route("/voyage/v1/files", self.voyage_files, methods=["POST"]),
            Route("/voyage/v1/files/{fid}/content", self.file_content, methods=["GET"]),
            Route("/voyage/v1/batches", self.voyage_batches, methods=["POST"]),
            Route("/voyage/v1/batches/{bid}", self.voyage_batch_get, methods=["GET"]),
            Route("/gemini/v1beta/models/{rest:path}", self.gemini_models, methods=["POST"]),
            Route("/gemini/v1beta/batches/{bid}", self.gemini_batch_get, methods=["GET"]),
            Route("/gemini/upload/v1beta/files", self.gemini_upload, methods=["POST"]),
            Route("/gemini/v1beta/files/{rest:path}", self.gemini_file, methods=["GET"]),
        ])

    def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(self.app(), log_level="warning", lifespan="off", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("vendor server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)


def _error_body(route: str, status: int, message: str | None = None) -> dict[str, Any]:
    vendor = route.split(".")[0]
    message = message or f"injected error {status}"
    if vendor == "voyage":
        return {"detail": message}
    if vendor == "gemini":
        return {"error": {"code": status, "message": message, "status": "RESOURCE_EXHAUSTED" if status == 429 else "INTERNAL"}}
    return {"error": {"message": message, "type": "server_error", "code": None}}


def _file_obj(fid: str, size: int, purpose: str) -> dict[str, Any]:
    return {"id": fid, "object": "file", "bytes": size, "created_at": int(time.time()), "filename": "input.jsonl", "purpose": purpose, "status": "processed"}


def _multipart(content_type: str, body: bytes) -> dict[str, Any]:
    """Parse multipart/form-data into {name: str | bytes} (file parts stay bytes)."""
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body
    )
    out: dict[str, Any] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        out[name] = payload if part.get_filename() else payload.decode()
    return out


def embed_logged(provider: Any, caplog: Any) -> str:
    """Embed one query through ``provider``'s sync and one through its async client, close it, and return every
    message ``caplog`` holds by then (an SDK's HTTP log included, at the level the caller set)."""
    try:
        provider.embed_query("sync request")
        asyncio.run(provider.aembed_query("async request"))
    finally:
        provider.close()
    return "\n".join(record.getMessage() for record in caplog.records)
