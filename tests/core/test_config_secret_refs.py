"""An ``openclaw.json`` whose ``memorySearch.remote.apiKey`` is a SecretRef (``{source: "env", provider: "default",
id: "OPENAI_API_KEY"}``, as ``openclaw secrets configure`` writes it) is read: the key comes from where the reference
points (an environment variable, or a JSON file of ``secrets.providers``); the file was refused ("Input should be a
valid string"). A reference that does not resolve is a ConfigError naming it, never showing a secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError


def _write(tmp_path: Path, api_key: object, **top: object) -> Path:
    (tmp_path / "ws").mkdir(exist_ok=True)
    config = {"agents": {"defaults": {"workspace": str(tmp_path / "ws"), "memorySearch": {
        "provider": "openai", "remote": {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": api_key}}}}, **top}
    path = tmp_path / "openclaw.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_an_env_secret_ref_reads_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAM_EMBEDDINGS_KEY", "sk-team-0123456789abcdef")
    path = _write(tmp_path, {"source": "env", "provider": "default", "id": "TEAM_EMBEDDINGS_KEY"})
    config = MemoryConfig.from_openclaw_file(path)
    assert config.remote.api_key is not None
    assert config.remote.api_key.get_secret_value() == "sk-team-0123456789abcdef"


def test_a_file_secret_ref_reads_the_json_pointer(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.json"
    secrets.write_text(json.dumps({"providers": {"openai": {"apiKey": "sk-from-file-0123456789"}}}), encoding="utf-8")
    path = _write(tmp_path, {"source": "file", "provider": "filemain", "id": "/providers/openai/apiKey"},
                  secrets={"providers": {"filemain": {"source": "file", "path": str(secrets), "mode": "json"}}})
    config = MemoryConfig.from_openclaw_file(path)
    assert config.remote.api_key is not None
    assert config.remote.api_key.get_secret_value() == "sk-from-file-0123456789"


def test_an_unset_variable_is_a_config_error_naming_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEAM_EMBEDDINGS_KEY", raising=False)
    path = _write(tmp_path, {"source": "env", "provider": "default", "id": "TEAM_EMBEDDINGS_KEY"})
    with pytest.raises(ConfigError, match="TEAM_EMBEDDINGS_KEY") as info:
        MemoryConfig.from_openclaw_file(path)
    assert "remote.apiKey" in str(info.value)


def test_an_exec_secret_ref_says_where_to_put_the_key_instead(tmp_path: Path) -> None:
    path = _write(tmp_path, {"source": "exec", "provider": "vault", "id": "providers/openai/apiKey"})
    with pytest.raises(ConfigError, match="exec") as info:
        MemoryConfig.from_openclaw_file(path)
    assert "OPENAI_API_KEY" in str(info.value)


@pytest.mark.parametrize("shorthand", ["${TEAM_EMBEDDINGS_KEY}", "$TEAM_EMBEDDINGS_KEY"])
def test_the_env_shorthand_reads_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shorthand: str) -> None:
    # it was sent as the key itself ("Bearer ${TEAM_EMBEDDINGS_KEY}")
    monkeypatch.setenv("TEAM_EMBEDDINGS_KEY", "sk-team-0123456789abcdef")
    config = MemoryConfig.from_openclaw_file(_write(tmp_path, shorthand))
    assert config.remote.api_key is not None
    assert config.remote.api_key.get_secret_value() == "sk-team-0123456789abcdef"


@pytest.mark.parametrize("value", [918273645501928374, ["sk-live-0123456789abcdef"], {"token": "sk-live-0123456789"}])
def test_a_header_value_of_the_wrong_type_is_not_shown(value: object) -> None:
    # the error names the header, never its value (perhaps the key itself, typed as a number or in a list)
    with pytest.raises(ConfigError, match="remote.headers.X-Api-Key") as info:
        MemoryConfig.load({"remote": {"headers": {"X-Api-Key": value}}})
    assert "918273645501928374" not in str(info.value) and "0123456789" not in str(info.value)
