"""Voyage AI embeddings through the official ``voyageai`` SDK."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from openclaw_memory.errors import MissingDependencyError, ProviderError, ProviderUnavailableError
from openclaw_memory.providers._util import (
    RemoteRequestError,
    check_configured_dims,
    check_remote_settings,
    connection_failure,
    endpoint_url,
    fingerprint_url,
    parse_retry_after,
    redact,
    server_message,
    status_is_retryable,
    strip_model_prefix,
    transport_error_kind,
)
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbedKind

__all__ = ["DEFAULT_VOYAGE_BASE_URL", "DEFAULT_VOYAGE_MODEL", "VoyageEmbeddingProvider"]

log = logging.getLogger(__name__)

DEFAULT_VOYAGE_MODEL = "voyage-4-large"
DEFAULT_VOYAGE_BASE_URL = "https://api.voyageai.com/v1"


def _import_voyageai() -> Any:
    try:
        import voyageai
    except ImportError:
        raise MissingDependencyError("voyageai", "voyage", "the Voyage embedding provider") from None
    return voyageai


def _error_message(exc: BaseException) -> str:
    """What the server said about a failed request: its JSON ``detail`` when it sent one (for statuses other
    than 400/401/422/429 the SDK's message also repeats the body and the response headers)."""
    body = getattr(exc, "json_body", None)
    detail = body.get("detail") if isinstance(body, dict) else None
    text = detail if isinstance(detail, str) and detail.strip() else str(getattr(exc, "user_message", None) or exc)
    return server_message(text)


class VoyageEmbeddingProvider(BaseEmbeddingProvider):
    """Embeddings from ``POST <base_url>/embeddings`` with ``input_type`` ``query`` or ``document``.

    The voyageai SDK sends only ``Authorization`` and ``Content-Type``: custom ``headers`` reach
    the batch API (plain HTTP) but not normal embedding requests.
    """

    id = "voyage"
    default_max_input_tokens = 32000
    max_batch_size = 1000
    default_concurrency = 4

    def __init__(
        self,
        *,
        api_key: str,
        model: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        output_dimension: int | None = None,
        timeout: float = 60.0,
    ) -> None:
        if not api_key:
            raise ProviderUnavailableError(
                "No API key found for provider voyage: set remote.api_key or VOYAGE_API_KEY"
            )
        model_name = strip_model_prefix(model, ("voyage/",)) or DEFAULT_VOYAGE_MODEL
        super().__init__(model=model_name, dims=output_dimension)
        self._voyage = _import_voyageai()
        self._api_key = api_key
        self.base_url = endpoint_url(base_url, DEFAULT_VOYAGE_BASE_URL)
        self.headers = dict(headers or {})
        bare_url, _ = check_remote_settings(self.base_url, self.headers, api_key, "voyage",
                                            "remote.api_key / VOYAGE_API_KEY")
        if bare_url != self.base_url:
            raise ProviderUnavailableError(
                f"remote.base_url {fingerprint_url(self.base_url)!r} carries a user name, token or password: the "
                "voyageai SDK logs a request's URL with it, never sends it (the API key goes as the bearer token) and "
                "fails on async requests; give the gateway's address without it")
        if self.headers:
            log.warning("voyage: remote.headers (%s) are not sent with embedding requests (the voyageai SDK cannot "
                        "send them), only with batch-API requests", ", ".join(sorted(self.headers)))
        self.output_dimension = output_dimension
        self.request_timeout = float(timeout)
        self.client = self._voyage.Client(
            api_key=api_key, max_retries=0, timeout=self.request_timeout, base_url=self.base_url
        )
        self._async_client: Any = None

    def fingerprint(self) -> dict[str, Any]:
        fp: dict[str, Any] = {"provider": self.id, "model": self.model}
        if self.output_dimension is not None:
            fp["outputDimension"] = self.output_dimension
        if self.base_url != DEFAULT_VOYAGE_BASE_URL:
            fp["baseUrl"] = fingerprint_url(self.base_url)
        return fp

    @property
    def api_key(self) -> str:
        """The bearer key (for the batch API's plain HTTP requests; never logged)."""
        return self._api_key

    @property
    def async_client(self) -> Any:
        """The voyageai AsyncClient (created on first use)."""
        if self._async_client is None:
            self._async_client = self._voyage.AsyncClient(
                api_key=self._api_key, max_retries=0, timeout=self.request_timeout, base_url=self.base_url
            )
        return self._async_client

    def _kwargs(self, texts: list[str], kind: EmbedKind) -> dict[str, Any]:
        kw: dict[str, Any] = {"texts": texts, "model": self.model, "input_type": kind, "truncation": True}
        if self.output_dimension is not None:
            kw["output_dimension"] = self.output_dimension
        return kw

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        try:
            resp = self.client.embed(**self._kwargs(texts, kind))
        except Exception as exc:
            raise self.translate_error(exc) from None
        return self._vectors(resp, len(texts))

    async def _aembed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        try:
            resp = await self.async_client.embed(**self._kwargs(texts, kind))
        except Exception as exc:
            raise self.translate_error(exc) from None
        return self._vectors(resp, len(texts))

    def _vectors(self, resp: Any, n: int) -> list[Sequence[float]]:
        embeddings = getattr(resp, "embeddings", None)
        if not isinstance(embeddings, list) or len(embeddings) != n:
            got = len(embeddings) if isinstance(embeddings, list) else "no"
            raise ProviderError(f"voyage:{self.model} returned {got} embeddings for {n} inputs")
        check_configured_dims(embeddings, self.output_dimension, f"voyage:{self.model}")
        return embeddings  # type: ignore[return-value]

    def translate_error(self, exc: BaseException) -> Exception:
        """Map a voyageai SDK exception to a ProviderError with retry information."""
        err = self._voyage.error
        where = f"Voyage embeddings request to {self.base_url}"
        if isinstance(exc, ProviderError):
            return exc
        if isinstance(exc, err.Timeout):
            return RemoteRequestError(f"{where} timed out after {self.request_timeout:g}s", retryable=True)
        if isinstance(exc, err.APIConnectionError):
            return RemoteRequestError(f"{where} failed: could not connect ({connection_failure(exc)})", retryable=True)
        if isinstance(exc, err.VoyageError):
            status = getattr(exc, "http_status", None)
            msg = redact(_error_message(exc), self._api_key)
            if isinstance(exc, err.APIError) and status is not None and status < 400:
                return ProviderError(f"voyage:{self.model} returned a malformed response: {msg}")
            hint = ""
            if status in (401, 403):
                hint = " Check remote.api_key / VOYAGE_API_KEY."
            elif status == 404:
                hint = f" Check the model name ({self.model!r}) and remote.base_url."
            return RemoteRequestError(
                f"{where} failed with HTTP {status}: {msg}.{hint}",
                status_code=status,
                retryable=status_is_retryable(status) or isinstance(exc, (err.RateLimitError, err.TryAgain)),
                retry_after=parse_retry_after(getattr(exc, "headers", None)),
            )
        kind = transport_error_kind(exc)
        if kind is not None:
            return RemoteRequestError(f"{where} failed: {kind} error ({connection_failure(exc)})", retryable=True)
        if isinstance(exc, (ValueError, TypeError, KeyError, AttributeError)):
            return ProviderError(f"voyage:{self.model} returned a malformed response: {redact(str(exc), self._api_key)}")
        return RemoteRequestError(f"{where} failed: {redact(str(exc), self._api_key)}")
