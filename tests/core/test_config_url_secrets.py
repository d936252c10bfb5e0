"""An endpoint URL's password (``http://user:password@host/v1``) is a secret like ``remote.api_key``: a printed
config and ``without_secrets()`` leave it out; the provider still gets the URL as given."""

from __future__ import annotations

import json
from pathlib import Path

from openclaw_memory import MemoryConfig, MemoryIndex

PASSWORD = "hunter2-Correct-Horse"


def _config(tmp_path: Path) -> MemoryConfig:
    return MemoryConfig(workspace=str(tmp_path), state_dir=str(tmp_path / "state"),
                        remote={"base_url": f"http://admin:{PASSWORD}@127.0.0.1:9/v1"},
                        query={"rerank": {"base_url": f"https://rerank:{PASSWORD}@127.0.0.1:9/v1"}})


def test_a_printed_config_shows_no_url_password(tmp_path: Path) -> None:
    config = _config(tmp_path)
    for shown in (repr(config), str(config), repr(config.remote), str(config.query)):
        assert PASSWORD not in shown
    assert "admin:[REDACTED]@127.0.0.1:9" in repr(config.remote)
    assert config.remote.base_url == f"http://admin:{PASSWORD}@127.0.0.1:9/v1"  # what the provider is given


def test_without_secrets_leaves_out_url_passwords(tmp_path: Path) -> None:
    data = _config(tmp_path).without_secrets()
    assert PASSWORD not in json.dumps(data)
    assert data["remote"]["base_url"] == "http://admin@127.0.0.1:9/v1"
    assert MemoryConfig.from_dict(data).remote.base_url == "http://admin@127.0.0.1:9/v1"


def test_a_memory_index_repr_and_config_hold_no_url_password(tmp_path: Path) -> None:
    with MemoryIndex(_config(tmp_path), provider=None, watch=False) as memory:
        assert PASSWORD not in repr(memory) + repr(memory.config) + json.dumps(memory.status().to_dict(), default=str)
