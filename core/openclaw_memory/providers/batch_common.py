"""Pieces shared by the vendor batch-API runners: errors, options, grouping and polling."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from openclaw_memory.errors import BatchJobError, BatchTimeoutError, BatchUnavailableError
from openclaw_memory.providers.batching import RetryPolicy

__all__ = [
    "BATCH_CREATE_RETRY",
    "MAX_REQUESTS_PER_BATCH",
    "BatchJobError",
    "BatchOptions",
    "BatchTimeoutError",
    "BatchUnavailableError",
    "jsonl",
    "openai_style_vectors",
    "parse_jsonl",
    "poll_batch",
    "run_groups",
    "upload_filename",
]

MAX_REQUESTS_PER_BATCH = 50_000
BATCH_CREATE_RETRY = RetryPolicy(retries=3, base_delay=0.3, max_delay=2.0, jitter=0.2)


@dataclass(frozen=True)
class BatchOptions:
    """How to run batch jobs (from ``remote.batch``)."""

    wait: bool = True
    concurrency: int = 2
    poll_interval_s: float = 2.0
    timeout_s: float = 3600.0
    agent_id: str = "main"
    max_requests: int = MAX_REQUESTS_PER_BATCH


def upload_filename() -> str:
    """``memory-embeddings.<hash>.jsonl``: unique per upload."""
    return f"memory-embeddings.{hashlib.sha256(str(time.time_ns()).encode()).hexdigest()[:16]}.jsonl"


def jsonl(lines: Iterable[dict[str, Any]]) -> bytes:
    """Encode dicts as JSON Lines (UTF-8, one object per line)."""
    return ("\n".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) for line in lines) + "\n").encode()


def parse_jsonl(data: bytes | str, *, label: str) -> list[dict[str, Any]]:
    """Decode JSON Lines; a malformed line raises BatchJobError."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    out: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise BatchJobError(f"{label}: output line {n} is not JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise BatchJobError(f"{label}: output line {n} is not a JSON object")
        out.append(obj)
    return out


def run_groups(
    count: int, opts: BatchOptions, run_group: Callable[[Sequence[int]], dict[int, list[float]]], *, label: str
) -> list[list[float]]:
    """Split ``range(count)`` into groups of ≤ ``opts.max_requests``, run them with
    ``opts.concurrency`` and return the vectors in index order (every index must be answered)."""
    groups = [range(i, min(i + opts.max_requests, count)) for i in range(0, count, opts.max_requests)]
    results: dict[int, list[float]] = {}
    workers = max(1, min(opts.concurrency, len(groups)))
    if workers == 1:
        for g in groups:
            results.update(run_group(g))
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openclaw-batch") as pool:
            for part in pool.map(run_group, groups):
                results.update(part)
    missing = [i for i in range(count) if i not in results]
    if missing:
        raise BatchJobError(f"{label}: missing {len(missing)} embedding responses")
    return [results[i] for i in range(count)]


def poll_batch(
    fetch: Callable[[], tuple[str, Any]],
    opts: BatchOptions,
    *,
    label: str,
    done_states: Sequence[str],
    failed_states: Sequence[str],
    describe_failure: Callable[[str, Any], str] | None = None,
    initial: tuple[str, Any] | None = None,
) -> Any:
    """Poll ``fetch() -> (state, job)`` every ``opts.poll_interval_s`` until a done state (returns
    the job) or a failed state (BatchJobError). With ``wait=False`` an unfinished job is an error;
    past ``opts.timeout_s`` a BatchTimeoutError."""
    start = time.monotonic()
    current = initial
    while True:
        state, job = current if current is not None else fetch()
        current = None
        norm = (state or "unknown").lower()
        if norm in {s.lower() for s in done_states}:
            return job
        if norm in {s.lower() for s in failed_states}:
            detail = describe_failure(state, job) if describe_failure else ""
            raise BatchJobError(f"{label} {state}{': ' + detail if detail else ''}")
        if not opts.wait:
            raise BatchJobError(f"{label} submitted and still {state}; enable remote.batch.wait to await completion")
        if time.monotonic() - start > opts.timeout_s:
            raise BatchTimeoutError(f"{label} timed out after {opts.timeout_s:g}s (still {state})")
        time.sleep(opts.poll_interval_s)


def openai_style_vectors(lines: list[dict[str, Any]], expected: Iterable[int], *, label: str) -> dict[int, list[float]]:
    """Vectors from OpenAI/Voyage batch output lines (``custom_id`` + ``response.body.data``).
    Any error line or unanswered id fails the whole group."""
    wanted = set(expected)
    out: dict[int, list[float]] = {}
    errors: list[str] = []
    for line in lines:
        cid = line.get("custom_id")
        try:
            idx = int(str(cid))
        except ValueError:
            errors.append(f"unknown custom_id {cid!r}")
            continue
        response = line.get("response") or {}
        body = response.get("body") or {}
        err = line.get("error") or body.get("error")
        status = response.get("status_code")
        if err or (isinstance(status, int) and status >= 400):
            msg = err.get("message") if isinstance(err, dict) else err
            errors.append(f"{cid}: {msg or f'status {status}'}")
            continue
        data = body.get("data") or []
        emb = data[0].get("embedding") if data and isinstance(data[0], dict) else None
        if not isinstance(emb, list) or not emb:
            errors.append(f"{cid}: empty embedding")
            continue
        out[idx] = emb
    if errors:
        raise BatchJobError(f"{label} failed: {'; '.join(errors[:5])}{' …' if len(errors) > 5 else ''}")
    missing = wanted - out.keys()
    if missing:
        raise BatchJobError(f"{label} missing {len(missing)} embedding responses")
    return {i: out[i] for i in wanted}
