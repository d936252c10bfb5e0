"""Gemini embeddings through the official ``google-genai`` SDK (Gemini Developer API)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from openclaw_memory.errors import MissingDependencyError, ProviderError, ProviderUnavailableError
from openclaw_memory.providers._util import (
    RemoteRequestError,
    check_configured_dims,
    check_remote_settings,
    connection_failure,
    endpoint_url,
    fingerprint_headers,
    fingerprint_url,
    parse_retry_after,
    redact,
    server_message,
    status_is_retryable,
    strip_model_prefix,
    transport_error_kind,
)
from openclaw_memory.providers._loops import close_here
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbedKind

__all__ = ["DEFAULT_GEMINI_BASE_URL", "DEFAULT_GEMINI_MODEL", "GeminiEmbeddingProvider", "split_gemini_base_url"]

DEFAULT_GEMINI_MODEL = "gemini-embedding-001"
DEFAULT_GEMINI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
TASK_TYPES: dict[str, str] = {"query": "RETRIEVAL_QUERY", "document": "RETRIEVAL_DOCUMENT"}

_VERSION = re.compile(r"^v\d+(?:(?:alpha|beta)\d*)?$")


def split_gemini_base_url(base_url: str | None) -> tuple[str, str]:
    """Split an OpenClaw-style base URL (``https://host/v1beta``) into the SDK's
    ``(base_url, api_version)``. Anything from ``/openai`` on is dropped; no version → v1beta."""
    raw = (base_url or DEFAULT_GEMINI_BASE_URL).strip()
    parts = urlsplit(raw)
    segments = [s for s in parts.path.split("/") if s]
    if "openai" in segments:
        segments = segments[: segments.index("openai")]
    version = "v1beta"
    if segments and _VERSION.match(segments[-1]):
        version = segments.pop()
    path = "/" + "/".join(segments) + ("/" if segments else "")
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")), version


def _bad_key(exc: Any) -> bool:
    """Whether Google refused the API key (it answers a wrong key with HTTP 400, reason API_KEY_INVALID)."""
    return "API_KEY_INVALID" in str(getattr(exc, "details", "") or "")


def _retry_delay(exc: Any) -> float | None:
    """Seconds Google asks a client to wait, from the error body's RetryInfo (``"retryDelay": "37s"``); it sends
    no Retry-After header with a quota error."""
    details = getattr(exc, "details", None)
    error = details.get("error") if isinstance(details, dict) else None
    items = error.get("details") if isinstance(error, dict) else None
    for item in items if isinstance(items, list) else []:
        delay = item.get("retryDelay") if isinstance(item, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return max(0.0, float(delay[:-1]))
            except ValueError:
                return None
    return None


def _first_known(*values: float | None) -> float | None:
    return next((value for value in values if value is not None), None)


def _check_not_a_token(api_key: str) -> None:
    """ProviderUnavailableError for an OAuth token JSON (``{"token": ...}``, as OpenClaw's auth profiles hold one)
    given as the key: this provider sends Google an API key, which such a value never is."""
    if api_key.lstrip().startswith("{"):
        raise ProviderUnavailableError("gemini: the API key is a JSON object (an OAuth token?); this provider sends "
                                       "Google an API key (x-goog-api-key): give one in remote.api_key or "
                                       "GEMINI_API_KEY")


def _import_genai() -> tuple[Any, Any]:
    try:
        from google import genai
        from google.genai import types
    except ImportError:
        raise MissingDependencyError("google-genai", "gemini", "the Gemini embedding provider") from None
    return genai, types


class GeminiEmbeddingProvider(BaseEmbeddingProvider):
    """Embeddings from ``models/<model>:batchEmbedContents`` with task type RETRIEVAL_QUERY for
    queries and RETRIEVAL_DOCUMENT for documents; ``output_dimensionality`` is sent when set."""

    id = "gemini"
    default_max_input_tokens = 2048
    max_batch_size = 100
    default_concurrency = 4

    def __init__(
        self,
        *,
        api_key: str,
        model: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        output_dimensionality: int | None = None,
        timeout: float = 60.0,
    ) -> None:
        if not api_key:
            raise ProviderUnavailableError(
                "No API key found for provider gemini: set remote.api_key, GEMINI_API_KEY or GOOGLE_API_KEY"
            )
        model_name = strip_model_prefix(model, ("models/", "gemini/", "google/")) or DEFAULT_GEMINI_MODEL
        super().__init__(model=model_name, dims=output_dimensionality)
        self._genai, self._types = _import_genai()
        self._api_key = api_key
        self.headers = dict(headers or {})
        _check_not_a_token(api_key)
        url = endpoint_url(base_url, DEFAULT_GEMINI_BASE_URL)
        bare_url, sdk_headers = check_remote_settings(url, self.headers, api_key, "gemini",
                                                      "remote.api_key / GEMINI_API_KEY")
        self.sdk_base_url, self.api_version = split_gemini_base_url(bare_url)
        shown = fingerprint_url(split_gemini_base_url(url)[0])  # as messages show it: no password or token
        self.base_url = shown.rstrip("/") + "/" + self.api_version
        self.output_dimensionality = output_dimensionality
        self.request_timeout = float(timeout)
        self.client = self._genai.Client(
            api_key=api_key,
            vertexai=False,
            http_options=self._types.HttpOptions(
                base_url=self.sdk_base_url,
                api_version=self.api_version,
                headers=sdk_headers or None,
                timeout=int(self.request_timeout * 1000),
            ),
        )

    def fingerprint(self) -> dict[str, Any]:
        return {
            "provider": self.id,
            "baseUrl": self.base_url,  # as messages show it: without its password or token
            "model": self.model,
            "outputDimensionality": self.output_dimensionality,
            "headers": fingerprint_headers(self.headers),
        }

    def embed_config(self, kind: EmbedKind) -> Any:
        """The SDK's EmbedContentConfig for queries or documents."""
        return self._types.EmbedContentConfig(
            task_type=TASK_TYPES[kind], output_dimensionality=self.output_dimensionality
        )

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        try:
            resp = self.client.models.embed_content(model=self.model, contents=texts, config=self.embed_config(kind))
        except Exception as exc:
            raise self.translate_error(exc) from None
        return self._vectors(resp, len(texts))

    async def _aembed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        try:
            resp = await self.client.aio.models.embed_content(
                model=self.model, contents=texts, config=self.embed_config(kind)
            )
        except Exception as exc:
            raise self.translate_error(exc) from None
        return self._vectors(resp, len(texts))

    def _vectors(self, resp: Any, n: int) -> list[Sequence[float]]:
        embeddings = getattr(resp, "embeddings", None)
        if not isinstance(embeddings, list):
            raise ProviderError(f"gemini:{self.model} returned a malformed response (no embeddings list)")
        vectors = [list(e.values or []) for e in embeddings]
        if len(vectors) != n:
            raise ProviderError(f"gemini:{self.model} returned {len(vectors)} embeddings for {n} inputs")
        check_configured_dims(vectors, self.output_dimensionality, f"gemini:{self.model}")
        return vectors  # type: ignore[return-value]

    def translate_error(self, exc: BaseException) -> Exception:
        """Map a google-genai / HTTP-library exception to a ProviderError with retry information."""
        where = f"Gemini embeddings request to {self.base_url}"
        if isinstance(exc, ProviderError):
            return exc
        api_error = getattr(getattr(self._genai, "errors", None), "APIError", None)
        if api_error is not None and isinstance(exc, api_error):
            status = int(getattr(exc, "code", 0) or 0) or None
            msg = redact(server_message(str(getattr(exc, "message", None) or exc)), self._api_key)
            headers = getattr(getattr(exc, "response", None), "headers", None)
            hint = ""
            if status in (401, 403) or _bad_key(exc):
                hint = " Check remote.api_key / GEMINI_API_KEY."
            elif status == 404:
                hint = f" Check the model name ({self.model!r}) and remote.base_url."
            return RemoteRequestError(
                f"{where} failed with HTTP {status}: {msg}.{hint}",
                status_code=status,
                retryable=status_is_retryable(status) or "resource has been exhausted" in msg.lower(),
                retry_after=_first_known(parse_retry_after(headers), _retry_delay(exc)),
            )
        kind = transport_error_kind(exc)
        if kind == "timeout":
            return RemoteRequestError(f"{where} timed out after {self.request_timeout:g}s", retryable=True)
        if kind == "connection":
            return RemoteRequestError(f"{where} failed: could not connect ({connection_failure(exc)})", retryable=True)
        if isinstance(exc, (ValueError, TypeError, KeyError)):
            return ProviderError(f"gemini:{self.model} returned a malformed response: {redact(str(exc), self._api_key)}")
        return RemoteRequestError(f"{where} failed: {redact(str(exc), self._api_key)}")

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
        close_here(self.client.aio.aclose, "the google-genai async client")  # it closes each loop's on that loop

    async def aclose(self) -> None:
        try:
            self.client.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
        await self.client.aio.aclose()
