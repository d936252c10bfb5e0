"""Gemini async batch embedding: JSONL upload through the Files API,
``models/<m>:asyncBatchEmbedContent``, poll ``batches/<id>``, download the responses file."""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from openclaw_memory.errors import ProviderRequestError
from openclaw_memory.providers.batch.common import (
    BATCH_CREATE_RETRY,
    BatchJobError,
    BatchOptions,
    BatchUnavailableError,
    jsonl,
    parse_jsonl,
    poll_batch,
    run_groups,
    upload_filename,
)
from openclaw_memory.providers.batching import with_retries
from openclaw_memory.providers.gemini import TASK_TYPES, GeminiEmbeddingProvider

__all__ = ["run_gemini_batch"]

T = TypeVar("T")

DONE = ("JOB_STATE_SUCCEEDED", "JOB_STATE_PARTIALLY_SUCCEEDED", "SUCCEEDED", "COMPLETED", "DONE")
FAILED = ("JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED", "FAILED", "CANCELLED", "CANCELED", "EXPIRED")


def _sdk(provider: GeminiEmbeddingProvider, fn: Callable[[], T]) -> T:
    try:
        return fn()
    except Exception as exc:
        raise provider.translate_error(exc) from None


def _state(job: Any) -> tuple[str, Any]:
    state = getattr(job, "state", None)
    name = getattr(state, "value", None) or (str(state) if state is not None else "unknown")
    return name, job


def _values(item: dict[str, Any]) -> list[float] | None:
    response = item.get("response") or {}
    emb = response.get("embedding")
    if isinstance(emb, dict) and isinstance(emb.get("values"), list):
        return emb["values"]
    embs = response.get("embeddings")
    if isinstance(embs, list) and embs and isinstance(embs[0], dict):
        return embs[0].get("values")
    return None


def _vectors(lines: list[dict[str, Any]], indices: Sequence[int], *, label: str) -> dict[int, list[float]]:
    out: dict[int, list[float]] = {}
    errors: list[str] = []
    for line in lines:
        key = line.get("key")
        try:
            idx = int(str(key))
        except ValueError:
            errors.append(f"unknown key {key!r}")
            continue
        if line.get("error"):
            err = line["error"]
            errors.append(f"{key}: {err.get('message') if isinstance(err, dict) else err}")
            continue
        vals = _values(line)
        if not vals:
            errors.append(f"{key}: empty embedding")
            continue
        out[idx] = vals
    if errors:
        raise BatchJobError(f"{label} failed: {'; '.join(errors[:5])}")
    missing = set(indices) - out.keys()
    if missing:
        raise BatchJobError(f"{label} missing {len(missing)} embedding responses")
    return {i: out[i] for i in indices}


def run_gemini_batch(provider: GeminiEmbeddingProvider, texts: Sequence[str], opts: BatchOptions) -> list[list[float]]:
    """Embed ``texts`` as documents through the Gemini batch API; raw vectors in input order."""
    client = provider.client

    def request(text: str) -> dict[str, Any]:
        req: dict[str, Any] = {
            "model": f"models/{provider.model}",
            "content": {"parts": [{"text": text}]},
            "taskType": TASK_TYPES["document"],
        }
        if provider.output_dimensionality is not None:
            req["outputDimensionality"] = provider.output_dimensionality
        return req

    def create(file_name: str) -> Any:
        if not hasattr(client.batches, "create_embeddings"):
            raise BatchUnavailableError("the installed google-genai has no batches.create_embeddings; upgrade google-genai")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # create_embeddings is marked experimental
                return _sdk(
                    provider,
                    lambda: client.batches.create_embeddings(
                        model=provider.model,
                        src={"file_name": file_name},
                        config={"display_name": f"memory-embeddings-{opts.agent_id}"},
                    ),
                )
        except ProviderRequestError as exc:
            if exc.status_code == 404:
                raise BatchUnavailableError(
                    f"gemini asyncBatchEmbedContent not available for {provider.model} at {provider.base_url}"
                ) from None
            raise

    def run_group(indices: Sequence[int]) -> dict[int, list[float]]:
        data = jsonl({"key": str(i), "request": request(texts[i])} for i in indices)
        uploaded = with_retries(
            lambda: _sdk(
                provider,
                lambda: client.files.upload(
                    file=io.BytesIO(data), config={"mime_type": "jsonl", "display_name": upload_filename()}
                ),
            ),
            policy=BATCH_CREATE_RETRY,
            what="gemini batch file upload",
        )
        job = with_retries(lambda: create(uploaded.name), policy=BATCH_CREATE_RETRY, what="gemini batch create")
        label = f"gemini batch {job.name}"
        done = poll_batch(
            lambda: _state(_sdk(provider, lambda: client.batches.get(name=job.name))),
            opts,
            label=label,
            done_states=DONE,
            failed_states=FAILED,
            describe_failure=lambda _s, j: str(getattr(j, "error", None) or ""),
            initial=_state(job),
        )
        dest = getattr(done, "dest", None)
        if dest is not None and getattr(dest, "file_name", None):
            content = _sdk(provider, lambda: client.files.download(file=dest.file_name))
            return _vectors(parse_jsonl(content, label=label), indices, label=label)
        inline = getattr(dest, "inlined_embed_content_responses", None) if dest is not None else None
        if inline:
            lines = [
                {"key": str(i), **(r if isinstance(r, dict) else r.model_dump(mode="json", exclude_none=True))}
                for i, r in zip(indices, inline)
            ]
            return _vectors(lines, indices, label=label)
        raise BatchJobError(f"{label} finished without a responses file")

    return run_groups(len(texts), opts, run_group, label="gemini batch")
