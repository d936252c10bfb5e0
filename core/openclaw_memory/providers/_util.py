"""Helpers shared by the provider modules: request errors, Retry-After parsing, header
sanitising, model-name normalisation and a timeout guard for in-process models."""

from __future__ import annotations

import email.utils
import os
import re
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from openclaw_memory.config import endpoint_url_problem, header_problem
from openclaw_memory.errors import ProviderError, ProviderUnavailableError, RemoteRequestError
from openclaw_memory.redaction import redact, register_secret, split_url_credentials, url_without_credentials

__all__ = [
    "RemoteRequestError",
    "redact",
    "server_message",
    "call_with_timeout",
    "fingerprint_headers",
    "check_api_key",
    "check_headers",
    "check_http_url",
    "check_remote_settings",
    "connection_failure",
    "endpoint_url",
    "fingerprint_url",
    "check_configured_dims",
    "parse_retry_after",
    "strip_model_prefix",
]

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529})


def status_is_retryable(status: int | None) -> bool:
    """429, 408 and 5xx are worth retrying; other 4xx are not."""
    if status is None:
        return False
    return status in RETRYABLE_STATUS or 500 <= status < 600


def parse_retry_after(headers: Mapping[str, Any] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date), else None."""
    if not headers:
        return None
    lowered = {str(k).lower(): v for k, v in dict(headers).items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except (TypeError, ValueError):
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(raw))
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


#: the words of a header name that make it a credential (``api-key``, ``X-Auth-Token``, ``Proxy-Authorization``)
_CREDENTIAL_WORDS = frozenset({"key", "apikey", "token", "secret", "auth", "authorization", "cookie", "password"})


def is_credential_header(name: str) -> bool:
    """Whether header ``name`` carries a credential: one of its words (split at ``-`` and ``_``) is key, token,
    secret, auth, authorization, cookie or password (``x-portkey-provider`` is not one)."""
    return any(word in _CREDENTIAL_WORDS for word in re.split(r"[-_]", name.lower()))


def fingerprint_headers(headers: Mapping[str, str] | None) -> list[list[str]]:
    """Headers as sorted ``[key, value]`` pairs without the credentials :func:`is_credential_header` names
    (``Authorization``, ``x-goog-api-key``, ...): rotating a key keeps the index, and a fingerprint holds no secret."""
    return [[k, str(v)] for k, v in sorted((headers or {}).items()) if not is_credential_header(k)]


def fingerprint_url(url: str) -> str:
    """A base URL as a fingerprint holds it and messages show it: without the password of its ``user:password@``
    part, nor a token given as its user info alone (``https://TOKEN@host/v1``): a proxy's credential is no part of
    the vector space, and a fingerprint is never a secret."""
    return url_without_credentials(url)


def endpoint_url(base_url: str | None, default: str) -> str:
    """``base_url`` (``default`` when unset or blank) without the spaces or line break around it (pasted, or read
    from a file) nor a closing ``/``."""
    return ((base_url or "").strip() or default).rstrip("/")


def check_http_url(url: str, who: str) -> None:
    """ProviderUnavailableError unless ``url`` is an ``http(s)://`` URL (see
    :func:`~openclaw_memory.config.endpoint_url_problem`, the check a config's ``base_url`` passes)."""
    problem = endpoint_url_problem(url)
    if problem:
        raise ProviderUnavailableError(f"{who}: base URL {fingerprint_url(url)!r}: {problem}")


def check_remote_settings(url: str, headers: Mapping[str, str], api_key: str, who: str,
                          key_where: str) -> tuple[str, dict[str, str]]:
    """A remote provider's endpoint as its SDK takes it: ``url`` without its ``user:password@`` part, and
    ``headers`` with the ``Authorization`` header that part stands for (the URL's user info wins, as it did in
    the URL). The key and header values are registered as secrets. ProviderUnavailableError when the base URL,
    headers or key could never be sent (each request would fail, retried as if the server were down): see
    :func:`check_http_url`, :func:`check_headers` and :func:`check_api_key`."""
    check_http_url(url, who)
    check_headers(headers, who)
    check_api_key(api_key, who, key_where)
    register_secret(api_key, *headers.values())
    bare_url, url_auth = split_url_credentials(url)
    return bare_url, {**headers, **url_auth}


def check_api_key(api_key: str, who: str, where: str) -> None:
    """ProviderUnavailableError when ``api_key`` cannot be sent in a header (a key pasted with typographic quotes
    or a line break): every request would fail, as "a malformed response". Never quotes the key."""
    if not api_key.isascii() or any(ch.isspace() for ch in api_key):
        raise ProviderUnavailableError(f"{who}: the API key holds a space, a line break or a non-ASCII character (a "
                                       f"quote pasted with it?); check {where}")


def check_headers(headers: Mapping[str, str], who: str) -> None:
    """ProviderUnavailableError naming the first header the HTTP client cannot send (every request would fail)."""
    for name, value in headers.items():
        problem = header_problem(str(name), str(value))
        if problem:
            raise ProviderUnavailableError(f"{who}: {problem}; fix remote.headers")


def check_configured_dims(vectors: list[Any], configured: int | None, who: str) -> None:
    """Raise ProviderError when a server answered vectors of another size than ``output_dimensionality`` asked
    for (a model with a fixed size, or an OpenAI-compatible server that ignores the setting)."""
    if configured is None or not vectors:
        return
    size = len(vectors[0]) if hasattr(vectors[0], "__len__") else None
    if size is not None and size != configured:
        raise ProviderError(f"{who} returned {size}-dimensional vectors, but output_dimensionality asks for "
                            f"{configured}: the model or server does not honour it; unset output_dimensionality or "
                            "choose a model that supports it")


def server_message(text: str) -> str:
    """A server's error message as a sentence of ours quotes it: stripped, without its closing period (the
    message adds one, then its hint)."""
    return text.strip().rstrip(".").rstrip()


def strip_model_prefix(model: str | None, prefixes: tuple[str, ...]) -> str | None:
    """``openai/text-embedding-3-small`` → ``text-embedding-3-small``; blank → None."""
    if model is None:
        return None
    name = model.strip()
    for prefix in prefixes:
        if name.lower().startswith(prefix):
            name = name[len(prefix) :]
            break
    return name or None


def _take_slot(slots: threading.Semaphore, timeout: float | None, what: str) -> None:
    """Wait up to ``timeout`` seconds (None: as long as it takes) for one of ``slots``; RemoteRequestError when
    none frees in time."""
    if not slots.acquire(timeout=timeout):
        raise RemoteRequestError(f"{what} not started within {timeout:g}s: earlier calls (perhaps ones that timed "
                                 "out) are still running")


def call_with_timeout(fn: Callable[[], T], timeout: float | None, *, what: str,
                      slots: threading.Semaphore | None = None) -> T:
    """Run ``fn`` in a helper thread and raise a retryable RemoteRequestError after ``timeout``
    seconds. The abandoned call keeps running in the background (native code cannot be
    interrupted); its result is discarded. With ``slots``, each call holds one until ``fn``
    really returns, so abandoned calls cannot pile up: a call waits for a free one (calls made at
    once take turns), within the same ``timeout`` in all, and fails when none frees in time."""
    if timeout is not None and timeout <= 0:
        timeout = None
    deadline = None if timeout is None else time.monotonic() + timeout
    if slots is not None:
        _take_slot(slots, timeout, what)
    if deadline is None:
        try:
            return fn()
        finally:
            if slots is not None:
                slots.release()
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc
        finally:
            done.set()
            if slots is not None:
                slots.release()

    worker = threading.Thread(target=run, name="openclaw-embed", daemon=True)
    worker.start()
    if not done.wait(max(0.0, deadline - time.monotonic())):
        raise RemoteRequestError(f"{what} timed out after {timeout:g}s", retryable=True)
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def connection_failure(exc: BaseException) -> str:
    """Why a connection failed, from the innermost cause under an SDK's generic error ("Connection error."):
    ``Connection refused: [Errno 111] Connect call failed ...``, a DNS or certificate failure; redacted."""
    inner, depth = exc, 0
    while depth < 12:  # a library's "raise ... from None" hides the cause from tracebacks, not from here
        grouped = getattr(inner, "exceptions", None)  # anyio: every address of the host refused
        cause = inner.__cause__ or inner.__context__ or (grouped[0] if isinstance(grouped, tuple) and grouped else None)
        if not isinstance(cause, BaseException):
            break
        inner, depth = cause, depth + 1
    text = str(inner) or type(inner).__name__
    errno = getattr(inner, "errno", None)
    if isinstance(inner, OSError) and not isinstance(inner, ssl.SSLError) and isinstance(errno, int) and errno > 0:
        reason = os.strerror(errno)  # asyncio says "Connect call failed" for a refused connection
        text = text if reason.lower() in text.lower() else f"{reason}: {text}"
    return redact(text)


_TIMEOUT_NAMES = ("Timeout",)
_CONNECTION_NAMES = ("ConnectError", "ConnectionError", "ClientConnectorError", "ClientOSError",
                     "ServerDisconnectedError", "RemoteProtocolError", "ReadError", "WriteError",
                     "NetworkError", "TransportError")


def transport_error_kind(exc: BaseException) -> str | None:
    """``"timeout"`` or ``"connection"`` for HTTP-library transport failures (httpx, httpx2,
    aiohttp, requests), else None. Matching by class name keeps optional libraries unimported."""
    if isinstance(exc, TimeoutError):
        return "timeout"
    names = [cls.__name__ for cls in type(exc).__mro__]
    if any(t in n for n in names for t in _TIMEOUT_NAMES):
        return "timeout"
    if isinstance(exc, ConnectionError) or any(n in _CONNECTION_NAMES for n in names):
        return "connection"
    return None
