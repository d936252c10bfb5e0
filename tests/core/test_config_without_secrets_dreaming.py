"""`MemoryConfig.without_secrets()` is what may be written to a file, and a config built from it takes its keys
from the environment: the consolidation model's key included (it was kept as the mask `**********`, which the
rebuilt config then sent to the model as its key)."""

from __future__ import annotations

import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.consolidation import openai_model


def test_without_secrets_leaves_out_the_dreaming_api_key() -> None:
    config = MemoryConfig(dreaming={"api_key": "sk-dream-secret", "model": "gpt-4.1-mini"})

    saved = config.without_secrets()

    assert "api_key" not in saved["dreaming"]
    assert "sk-dream-secret" not in repr(saved)


def test_a_config_rebuilt_from_without_secrets_reads_the_dreaming_key_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    config = MemoryConfig(dreaming={"api_key": "sk-dream-secret", "model": "gpt-4.1-mini"})

    openai = pytest.importorskip("openai")
    keys: list[str] = []
    monkeypatch.setattr(openai, "OpenAI", lambda **kwargs: keys.append(kwargs["api_key"]))

    rebuilt = MemoryConfig.from_dict(config.without_secrets())
    openai_model.openai_completion(rebuilt.dreaming)

    assert keys == ["sk-from-the-environment"]


def test_the_mask_of_a_printed_config_is_refused_as_the_dreaming_key() -> None:
    from openclaw_memory.errors import ConfigError

    dumped = MemoryConfig(dreaming={"api_key": "sk-dream-secret"}).model_dump(mode="json")

    with pytest.raises(ConfigError, match="dreaming.api_key"):
        MemoryConfig.from_dict(dumped)
