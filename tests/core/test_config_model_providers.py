"""``memorySearch.provider: "openai"`` with the endpoint and key under ``models.providers.openai`` (where OpenClaw keeps
a provider's ``baseUrl`` and ``apiKey``) is read as OpenClaw reads it: base URL ``remote.baseUrl`` >
``models.providers.<p>.baseUrl`` > the default, key ``remote.apiKey`` > the environment >
``models.providers.<p>.apiKey`` (Gemini's provider there is ``google``); the file gave "No API key found" and the
vendor's default URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.providers.registry import resolve_provider


def _file(tmp_path: Path, search: dict[str, object], providers: dict[str, object]) -> Path:
    (tmp_path / "ws").mkdir(exist_ok=True)
    path = tmp_path / "openclaw.json"
    path.write_text(json.dumps({"models": {"providers": providers},
                                "agents": {"defaults": {"workspace": str(tmp_path / "ws"), "memorySearch": search}}}),
                    encoding="utf-8")
    return path


def test_the_providers_endpoint_and_key_are_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = _file(tmp_path, {"provider": "openai"}, {"openai": {"baseUrl": "http://127.0.0.1:8000/v1",
                                                               "apiKey": "sk-models-0123456789abcdef",
                                                               "headers": {"X-Team": "memory"}}})
    config = MemoryConfig.from_openclaw_file(path)
    provider = resolve_provider(config).provider
    assert provider is not None and provider.base_url == "http://127.0.0.1:8000/v1"  # type: ignore[attr-defined]
    assert provider._api_key == "sk-models-0123456789abcdef"  # type: ignore[attr-defined]
    assert provider.headers == {"X-Team": "memory"}  # type: ignore[attr-defined]


def test_remote_and_the_environment_come_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-from-the-environment-0123")
    path = _file(tmp_path, {"provider": "gemini", "remote": {"baseUrl": "http://127.0.0.1:9/v1beta"}},
                 {"google": {"baseUrl": "http://127.0.0.1:7/v1beta", "apiKey": "AIza-from-models-0123456"}})
    provider = resolve_provider(MemoryConfig.from_openclaw_file(path)).provider
    assert provider is not None and provider.base_url == "http://127.0.0.1:9/v1beta"  # type: ignore[attr-defined]
    assert provider._api_key == "AIza-from-the-environment-0123"  # type: ignore[attr-defined]
