"""Voyage batch API for embeddings (OpenAI-style ``/files`` + ``/batches``, 12 h window).

The voyageai SDK has no batch client, so this speaks HTTP with ``requests`` (a voyageai
dependency) using the provider's key, base URL and custom headers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openclaw_memory.errors import MissingDependencyError
from openclaw_memory.providers._util import RemoteRequestError, parse_retry_after, redact, status_is_retryable
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
from openclaw_memory.providers.voyage import VoyageEmbeddingProvider

__all__ = ["run_voyage_batch"]

DONE = ("completed",)
FAILED = ("failed", "expired", "cancelled", "canceled")


class _Http:
    def __init__(self, provider: VoyageEmbeddingProvider) -> None:
        try:
            import requests
        except ImportError:
            raise MissingDependencyError("requests", "voyage", "the Voyage batch API") from None
        self._requests = requests
        self.provider = provider
        self.session = requests.Session()
        self.session.headers.update({**provider.headers, "Authorization": f"Bearer {provider.api_key}"})

    def call(self, method: str, path: str, *, what: str, **kw: Any) -> Any:
        url = f"{self.provider.base_url}{path}"
        try:
            resp = self.session.request(method, url, timeout=self.provider.request_timeout, **kw)
        except self._requests.Timeout:
            raise RemoteRequestError(f"voyage {what} timed out", retryable=True) from None
        except self._requests.RequestException as exc:
            raise RemoteRequestError(f"voyage {what} failed: {exc}", retryable=True) from None
        if resp.status_code >= 400:
            raise RemoteRequestError(
                f"voyage {what} failed with HTTP {resp.status_code}: {redact(resp.text[:300], self.provider.api_key)}",
                status_code=resp.status_code,
                retryable=status_is_retryable(resp.status_code),
                retry_after=parse_retry_after(resp.headers),
            )
        return resp

    def json(self, method: str, path: str, *, what: str, **kw: Any) -> dict[str, Any]:
        resp = self.call(method, path, what=what, **kw)
        try:
            data = resp.json()
        except ValueError:
            raise BatchJobError(f"voyage {what} returned a non-JSON body") from None
        if not isinstance(data, dict):
            raise BatchJobError(f"voyage {what} returned an unexpected body")
        return data


def run_voyage_batch(provider: VoyageEmbeddingProvider, texts: Sequence[str], opts: BatchOptions) -> list[list[float]]:
    """Embed ``texts`` as documents through the Voyage batch API; raw vectors in input order."""
    http = _Http(provider)

    def read_errors(file_id: str | None) -> str:
        if not file_id:
            return ""
        try:
            lines = parse_jsonl(http.call("GET", f"/files/{file_id}/content", what="batch error file").content, label="voyage")
        except Exception as exc:  # noqa: BLE001 - detail is best effort
            return f"(error file unavailable: {exc})"
        return "; ".join(str((line.get("error") or {}).get("message") or "") for line in lines if line.get("error"))[:500]

    def run_group(indices: Sequence[int]) -> dict[int, list[float]]:
        data = jsonl({"custom_id": str(i), "body": {"input": [texts[i]]}} for i in indices)
        uploaded = with_retries(
            lambda: http.json(
                "POST",
                "/files",
                what="batch file upload",
                files={"file": (upload_filename(), data, "application/jsonl")},
                data={"purpose": "batch"},
            ),
            policy=BATCH_CREATE_RETRY,
            what="voyage batch file upload",
        )
        if not uploaded.get("id"):
            raise BatchJobError("voyage batch file upload failed: missing file id")
        params: dict[str, Any] = {"model": provider.model, "input_type": "document"}
        if provider.output_dimension is not None:
            params["output_dimension"] = provider.output_dimension
        batch = with_retries(
            lambda: http.json(
                "POST",
                "/batches",
                what="batch create",
                json={
                    "input_file_id": uploaded["id"],
                    "endpoint": "/v1/embeddings",
                    "completion_window": "12h",
                    "request_params": params,
                    "metadata": {"source": "openclaw-memory", "agent": opts.agent_id},
                },
            ),
            policy=BATCH_CREATE_RETRY,
            what="voyage batch create",
        )
        batch_id = batch.get("id")
        if not batch_id:
            raise BatchJobError("voyage batch create failed: missing batch id")
        label = f"voyage batch {batch_id}"
        def status() -> tuple[str, dict[str, Any]]:
            job = http.json("GET", f"/batches/{batch_id}", what="batch status")
            return str(job.get("status") or "unknown"), job

        done = poll_batch(
            status,
            opts,
            label=label,
            done_states=DONE,
            failed_states=FAILED,
            describe_failure=lambda _s, b: read_errors(b.get("error_file_id")),
            initial=(str(batch.get("status") or "unknown"), batch),
        )
        output_id = done.get("output_file_id")
        if not output_id:
            raise BatchJobError(f"{label} completed without an output file")
        content = http.call("GET", f"/files/{output_id}/content", what="batch output download").content
        return openai_style_vectors(parse_jsonl(content, label=label), indices, label=label)

    try:
        return run_groups(len(texts), opts, run_group, label="voyage batch")
    finally:
        http.session.close()
