"""The consolidation model of ``openclaw-memory dream``: an OpenAI-compatible chat-completions
endpoint (``dreaming.base_url``, ``dreaming.model``, ``dreaming.api_key`` or ``OPENAI_API_KEY``),
called through the official ``openai`` SDK (the ``openai`` extra)."""

from __future__ import annotations

import os

from openclaw_memory.config import DreamingConfig
from openclaw_memory.consolidation.sweep import Completion
from openclaw_memory.errors import ConfigError, MissingDependencyError, OpenClawMemoryError
from openclaw_memory.redaction import redact, register_secret, split_url_credentials

__all__ = ["openai_completion"]

_SYSTEM = "You maintain an agent's long-term memory. You answer with JSON only."


def openai_completion(settings: DreamingConfig) -> Completion:
    """A completion function over the configured endpoint; ConfigError when no model is set or
    no key is found (a local server that needs none takes any placeholder, e.g. ``"none"``)."""
    if not settings.model:
        raise ConfigError("dreaming.model is not set: name the chat model of your OpenAI-compatible endpoint "
                          "(and dreaming.base_url unless it is OpenAI's)")
    key = settings.api_key.get_secret_value() if settings.api_key else os.environ.get("OPENAI_API_KEY", "")
    if not key:
        raise ConfigError("no API key for the consolidation model: set dreaming.api_key or OPENAI_API_KEY")
    try:
        import openai
    except ImportError:
        raise MissingDependencyError("openai", "openai", "the consolidation model") from None
    register_secret(key)
    base_url, url_auth = split_url_credentials(settings.base_url) if settings.base_url else (None, {})
    client = openai.OpenAI(api_key=key, base_url=base_url, default_headers=url_auth or None,  # no password in logs
                           timeout=settings.timeout_seconds, max_retries=1)
    model = settings.model

    def complete(prompt: str) -> str:
        try:
            response = client.chat.completions.create(
                model=model, temperature=0,
                messages=[{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}])
        except openai.OpenAIError as exc:
            raise OpenClawMemoryError(redact(f"the consolidation model {model!r} failed: {exc}", key)) from None
        return response.choices[0].message.content or ""

    return complete
