"""OpenAI embeddings (and OpenAI-compatible endpoints: vLLM, OpenRouter, proxies) through the
official ``openai`` SDK."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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
)
from openclaw_memory.providers._loops import LoopClients
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbedKind

__all__ = ["DEFAULT_OPENAI_BASE_URL", "DEFAULT_OPENAI_MODEL", "OpenAIEmbeddingProvider"]

DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


def _import_openai() -> Any:
    try:
        import openai
    except ImportError:
        raise MissingDependencyError("openai", "openai", "the OpenAI embedding provider") from None
    return openai


def _status_message(exc: Any) -> str:
    """The ``error.message`` an OpenAI-style server sent, else the SDK's text (``Error code: 401 - {...}``)."""
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) and message.strip() else str(getattr(exc, "message", "") or exc)


def _error_code(exc: Any) -> str | None:
    """The ``error.code`` an OpenAI-style server sent (``insufficient_quota``, ``invalid_api_key``), if any."""
    body = getattr(exc, "body", None)
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, str) else None


class OpenAIEmbeddingProvider(BaseEmbeddingProvider):
    """Embeddings from ``POST <base_url>/embeddings``. Queries and documents are embedded alike.

    ``dimensions`` is sent only when set (text-embedding-3 and later). ``headers`` are added to
    every request (they are part of the fingerprint; ``Authorization`` is not).
    """

    id = "openai"
    default_max_input_tokens = 8192
    max_batch_size = 2048
    default_concurrency = 4

    def __init__(
        self,
        *,
        api_key: str,
        model: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        dimensions: int | None = None,
        timeout: float = 60.0,
    ) -> None:
        if not api_key:
            raise ProviderUnavailableError(
                "No API key found for provider openai: set remote.api_key or OPENAI_API_KEY"
            )
        model_name = strip_model_prefix(model, ("openai/",)) or DEFAULT_OPENAI_MODEL
        super().__init__(model=model_name, dims=dimensions)
        self._openai = _import_openai()
        self._api_key = api_key
        url = endpoint_url(base_url, DEFAULT_OPENAI_BASE_URL)
        self.base_url = fingerprint_url(url)  # as messages show it: no password or token
        self.headers = dict(headers or {})
        self._sdk_base_url, self._sdk_headers = check_remote_settings(url, self.headers, api_key, "openai",
                                                                      "remote.api_key / OPENAI_API_KEY")
        self.dimensions = dimensions
        self.request_timeout = float(timeout)
        self.client = self._openai.OpenAI(
            api_key=api_key,
            base_url=self._sdk_base_url,
            default_headers=self._sdk_headers or None,
            max_retries=0,
            timeout=self.request_timeout,
        )
        self._async_clients = LoopClients(self._new_async_client, lambda client: client.close(),
                                          "an AsyncOpenAI client")

    def fingerprint(self) -> dict[str, Any]:
        fp: dict[str, Any] = {
            "provider": self.id,
            "baseUrl": self.base_url,  # as messages show it: without its password or token
            "model": self.model,
            "headers": fingerprint_headers(self.headers),
        }
        if self.dimensions is not None:
            fp["dimensions"] = self.dimensions
        return fp

    @property
    def async_client(self) -> Any:
        """The running event loop's AsyncOpenAI client (created on first use in that loop)."""
        return self._async_clients.get()

    def _new_async_client(self) -> Any:
        return self._openai.AsyncOpenAI(
            api_key=self._api_key,
            base_url=self._sdk_base_url,
            default_headers=self._sdk_headers or None,
            max_retries=0,
            timeout=self.request_timeout,
        )

    def request_body(self, texts: list[str]) -> dict[str, Any]:
        """The JSON body of one embeddings request (also used for batch-API lines)."""
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        return body

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        try:
            resp = self.client.embeddings.create(**self.request_body(texts))
        except Exception as exc:
            raise self.translate_error(exc) from None
        return self._vectors(resp, len(texts))

    async def _aembed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        try:
            resp = await self.async_client.embeddings.create(**self.request_body(texts))
        except Exception as exc:
            raise self.translate_error(exc) from None
        return self._vectors(resp, len(texts))

    def _vectors(self, resp: Any, n: int) -> list[Sequence[float]]:
        data = getattr(resp, "data", None)
        if not isinstance(data, list):
            raise ProviderError(f"openai:{self.model} returned a malformed embeddings response (no data list)")
        try:
            items = sorted(data, key=lambda d: d.index if getattr(d, "index", None) is not None else 0)
            vectors = [list(item.embedding) for item in items]
        except (AttributeError, TypeError) as exc:
            raise ProviderError(f"openai:{self.model} returned a malformed embeddings response: {exc}") from None
        if len(vectors) != n:
            raise ProviderError(f"openai:{self.model} returned {len(vectors)} embeddings for {n} inputs")
        check_configured_dims(vectors, self.dimensions, f"openai:{self.model}")
        return vectors  # type: ignore[return-value]

    def translate_error(self, exc: BaseException) -> Exception:
        """Map an ``openai`` SDK exception to a ProviderError with retry information."""
        oa = self._openai
        where = f"OpenAI embeddings request to {self.base_url}"
        if isinstance(exc, ProviderError):
            return exc
        if isinstance(exc, oa.APIResponseValidationError):
            return ProviderError(f"openai:{self.model} returned a malformed embeddings response: {exc}")
        if isinstance(exc, oa.APITimeoutError):
            return RemoteRequestError(f"{where} timed out after {self.request_timeout:g}s", retryable=True)
        if isinstance(exc, oa.APIConnectionError):
            return RemoteRequestError(f"{where} failed: could not connect ({connection_failure(exc)})", retryable=True)
        if isinstance(exc, oa.APIStatusError):
            status = exc.status_code
            msg = redact(server_message(_status_message(exc)), self._api_key)
            headers = getattr(getattr(exc, "response", None), "headers", None)
            hint = ""
            out_of_credit = status == 429 and _error_code(exc) == "insufficient_quota"
            if out_of_credit:
                hint = " Retrying does not help: the account needs credit (its plan and billing)."
            elif status in (401, 403):
                hint = " Check remote.api_key / OPENAI_API_KEY."
            elif status == 404:
                hint = f" Check the model name ({self.model!r}) and remote.base_url."
            return RemoteRequestError(
                f"{where} failed with HTTP {status}: {msg}.{hint}",
                status_code=status,
                retryable=status_is_retryable(status) and not out_of_credit,
                retry_after=parse_retry_after(headers),
            )
        if isinstance(exc, (ValueError, TypeError, KeyError)):
            return ProviderError(f"openai:{self.model} returned a malformed response: {redact(str(exc), self._api_key)}")
        return RemoteRequestError(f"{where} failed: {redact(str(exc), self._api_key)}")

    def close(self) -> None:
        self.client.close()
        self._async_clients.close()

    async def aclose(self) -> None:
        self.client.close()
        await self._async_clients.aclose()
