"""Keyword overrides and merged config blocks replace a setting whichever spelling (camelCase / snake_case)
each side uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openclaw_memory import MemoryConfig, MemoryIndex


def test_snake_case_override_of_a_camel_case_block() -> None:
    config = MemoryConfig.load({"query": {"maxResults": 3, "minScore": 0.2}, "extraPaths": ["a"]},
                               query={"max_results": 5}, extra_paths=["b"])
    assert config.query.max_results == 5
    assert config.query.min_score == 0.2  # the rest of the section stays
    assert config.extra_paths == ["b"]


def test_camel_case_override_of_a_config_object() -> None:
    config = MemoryConfig.load(MemoryConfig(query={"max_results": 3}), query={"maxResults": 7})
    assert config.query.max_results == 7


def test_memory_index_takes_snake_case_overrides_of_an_openclaw_block(tmp_path: Path) -> None:
    block = {"workspace": str(tmp_path), "stateDir": str(tmp_path / "state"), "query": {"maxResults": 3}}
    with MemoryIndex(block, provider=None, watch=False, state_dir=str(tmp_path / "other"),
                     query={"max_results": 4}) as memory:
        assert memory.config.query.max_results == 4
        assert memory.config.state_dir == tmp_path / "other"


def test_agent_block_in_snake_case_overrides_camel_case_defaults(tmp_path: Path) -> None:
    file = tmp_path / "openclaw.json"
    file.write_text(json.dumps({"agents": {
        "defaults": {"memorySearch": {"query": {"maxResults": 3}}},
        "list": [{"id": "main", "memorySearch": {"query": {"max_results": 9}}}]}}))
    assert MemoryConfig.from_openclaw_file(file).query.max_results == 9


def test_an_openclaw_block_with_multimodal_loads(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    block = {"workspace": str(tmp_path), "stateDir": str(tmp_path / "state"),
             "multimodal": {"enabled": True, "modalities": ["image"], "maxFileBytes": 10485760}}
    with caplog.at_level("WARNING"), MemoryIndex(block, provider=None, watch=False) as memory:
        assert memory.config.multimodal.max_file_bytes == 10485760
    assert any("multimodal.enabled" in record.getMessage() for record in caplog.records)
    assert MemoryConfig.from_dict({"multimodal": {"enabled": False}}).multimodal.enabled is False


def test_openclaws_user_timezone_is_the_timezone(tmp_path: Path) -> None:
    file = tmp_path / "openclaw.json"
    file.write_text(json.dumps({"agents": {"defaults": {"userTimezone": "America/Chicago"},
                                           "list": [{"id": "ops", "userTimezone": "Asia/Tokyo"}]}}))
    assert MemoryConfig.from_openclaw_file(file, agent_id="main").timezone == "America/Chicago"
    assert MemoryConfig.from_openclaw_file(file, agent_id="ops").timezone == "Asia/Tokyo"


def test_an_unknown_user_timezone_falls_back_to_the_system_zone(tmp_path: Path) -> None:
    file = tmp_path / "openclaw.json"
    file.write_text(json.dumps({"agents": {"defaults": {"userTimezone": "Mars/Olympus"}}}))
    assert MemoryConfig.from_openclaw_file(file).timezone is None
