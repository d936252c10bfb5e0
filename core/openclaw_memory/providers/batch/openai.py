"""OpenAI batch API for embeddings: JSONL upload to ``/files``, ``/batches``, poll, download."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from openclaw_memory.providers.batch.common import (
    BATCH_CREATE_RETRY,
    BatchJobError,
    BatchOptions,
    jsonl,
    openai_style_vectors,
    parse_jsonl,
    poll_batch,
    run_groups,
    upload_filename,
)
from openclaw_memory.providers.batching import with_retries
from openclaw_memory.providers.openai import OpenAIEmbeddingProvider

__all__ = ["run_openai_batch"]

T = TypeVar("T")

DONE = ("completed",)
FAILED = ("failed", "expired", "cancelled", "canceled", "cancelling")


def _sdk(provider: OpenAIEmbeddingProvider, fn: Callable[[], T]) -> T:
    try:
        return fn()
    except Exception as exc:
        raise provider.translate_error(exc) from None


def run_openai_batch(provider: OpenAIEmbeddingProvider, texts: Sequence[str], opts: BatchOptions) -> list[list[float]]:
    """Embed ``texts`` as documents through the OpenAI batch API; raw vectors in input order."""
    client = provider.client

    def read_errors(file_id: str | None) -> str:
        if not file_id:
            return ""
        try:
            lines = parse_jsonl(_sdk(provider, lambda: client.files.content(file_id).text), label="openai batch")
        except Exception as exc:  # noqa: BLE001 - the error detail is best effort
            return f"(error file unavailable: {exc})"
        msgs = [str((line.get("error") or {}).get("message") or line.get("response", {}).get("body", {}).get("error", {}).get("message") or "") for line in lines]
        return "; ".join(m for m in msgs if m)[:500]

    def state_of(batch: Any) -> tuple[str, Any]:
        return str(getattr(batch, "status", None) or "unknown"), batch

    def run_group(indices: Sequence[int]) -> dict[int, list[float]]:
        body = provider.request_body([])
        lines = [
            {
                "custom_id": str(i),
                "method": "POST",
                "url": "/v1/embeddings",
                "body": {**body, "input": texts[i]},
            }
            for i in indices
        ]
        data = jsonl(lines)
        uploaded = with_retries(
            lambda: _sdk(provider, lambda: client.files.create(file=(upload_filename(), data, "application/jsonl"), purpose="batch")),
            policy=BATCH_CREATE_RETRY,
            what="openai batch file upload",
        )
        batch = with_retries(
            lambda: _sdk(
                provider,
                lambda: client.batches.create(
                    input_file_id=uploaded.id,
                    endpoint="/v1/embeddings",
                    completion_window="24h",
                    metadata={"source": "openclaw-memory", "agent": opts.agent_id},
                ),
            ),
            policy=BATCH_CREATE_RETRY,
            what="openai batch create",
        )
        if not getattr(batch, "id", None):
            raise BatchJobError("openai batch create failed: missing batch id")
        label = f"openai batch {batch.id}"
        done = poll_batch(
            lambda: state_of(_sdk(provider, lambda: client.batches.retrieve(batch.id))),
            opts,
            label=label,
            done_states=DONE,
            failed_states=FAILED,
            describe_failure=lambda _s, job: read_errors(getattr(job, "error_file_id", None)),
            initial=state_of(batch),
        )
        output_id = getattr(done, "output_file_id", None)
        if not output_id:
            detail = read_errors(getattr(done, "error_file_id", None))
            raise BatchJobError(f"{label} completed without an output file{': ' + detail if detail else ''}")
        content = _sdk(provider, lambda: client.files.content(output_id).text)
        return openai_style_vectors(parse_jsonl(content, label=label), indices, label=label)

    return run_groups(len(texts), opts, run_group, label="openai batch")
