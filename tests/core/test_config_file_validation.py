"""An OpenClaw config file is validated as strictly as a dict given to MemoryConfig: a value of the wrong shape
is a ConfigError naming its key (never a raw AttributeError/TypeError/RecursionError, never a string split into
characters), a boolean is not a number, and an oversized file is refused before it is parsed."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from openclaw_memory import ConfigError, MemoryConfig
from openclaw_memory.cli import main
from openclaw_memory.config import MAX_CONFIG_FILE_BYTES


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "openclaw.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_extra_paths_written_as_a_string_is_refused_not_split_into_characters(tmp_path: Path) -> None:
    cfg = _file(tmp_path, '{agents: {defaults: {memorySearch: {extraPaths: "/opt/docs"}}}}')
    with pytest.raises(ConfigError, match=r"agents\.defaults\.memorySearch\.extraPaths must be a list"):
        MemoryConfig.from_openclaw_file(cfg)
    own = _file(tmp_path, '{agents: {list: [{id: "ops", memorySearch: {extraPaths: "/"}}]}}')
    with pytest.raises(ConfigError, match=r"memorySearch\.extraPaths must be a list"):
        MemoryConfig.from_openclaw_file(own, agent_id="ops")
    with pytest.raises(ConfigError, match="extra_paths"):  # the dict and keyword sources refuse it alike
        MemoryConfig.from_dict({"extra_paths": "/opt/docs"})
    listed = _file(tmp_path, '{agents: {defaults: {memorySearch: {extraPaths: ["/opt/docs"]}}}}')
    assert MemoryConfig.from_openclaw_file(listed).extra_paths == ["/opt/docs"]


def test_extra_paths_string_from_a_file_never_reaches_the_cli(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    cfg = _file(tmp_path, '{agents: {defaults: {memorySearch: {extraPaths: "/"}}}}')
    result = CliRunner().invoke(main, ["-c", str(cfg), "-w", str(tmp_path / "ws"), "--store",
                                       str(tmp_path / "i.sqlite"), "-p", "none", "get", "etc/hostname.md"])
    assert result.exit_code != 0
    assert "extraPaths must be a list" in result.output


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{agents: "x"}', "agents must be an object"),
        ('{agents: {defaults: "x"}}', "agents.defaults must be an object"),
        ('{agents: {defaults: {memorySearch: "abc"}}}', "agents.defaults.memorySearch must be an object"),
        ('{agents: {defaults: {memorySearch: [1, 2]}}}', "agents.defaults.memorySearch must be an object"),
        ('{agents: {defaults: {memorySearch: {extraPaths: 5}}}}', "memorySearch.extraPaths must be a list"),
        ('{agents: {defaults: {memorySearch: {extraPaths: [5]}}}}', "extraPaths"),
        ('{agents: {defaults: {compaction: "x"}}}', "agents.defaults.compaction must be an object"),
        ('{agents: {list: "main"}}', "agents.list must be a list"),
        ('{agents: {list: [{id: "main", memorySearch: "x"}]}}', "memorySearch must be an object"),
        ('{agents: {list: [{id: 7}]}}', "agents.list[].id must be a string"),
        ('{memory: "qmd"}', "memory must be an object"),
        ('{memory: {qmd: "on"}}', "memory.qmd must be an object"),
        ('{agents: {defaults: {memorySearch: {qmd: {extraCollections: "/srv"}}}}}', "extraCollections must be a list"),
        ('{agents: {defaults: {memorySearch: {query: {maxResults: true}}}}}', "query.maxResults"),
        ('{agents: {defaults: {memorySearch: {query: {minScore: false}}}}}', "query.minScore"),
        ('{agents: {defaults: {memorySearch: {chunking: {tokens: true}}}}}', "chunking.tokens"),
    ],
)
def test_malformed_file_values_are_a_config_error_naming_the_key(tmp_path: Path, text: str, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        MemoryConfig.from_openclaw_file(_file(tmp_path, text))
    assert key in str(caught.value)
    assert str(tmp_path / "openclaw.json") in str(caught.value)


def test_a_boolean_is_not_a_number_from_any_source() -> None:
    with pytest.raises(ConfigError, match=r"query\.maxResults.*not true/false"):
        MemoryConfig.from_dict({"query": {"maxResults": True}})
    with pytest.raises(ConfigError, match=r"max_results"):
        MemoryConfig(query={"max_results": True})
    with pytest.raises(ConfigError, match=r"max_results"):
        MemoryConfig.load(None, query={"max_results": False})
    assert MemoryConfig(query={"max_results": 3}).query.max_results == 3


def test_deeply_nested_arrays_are_a_config_error(tmp_path: Path) -> None:
    depth = 100_000
    cfg = _file(tmp_path, "{junk: " + "[" * depth + "]" * depth + "}")
    with pytest.raises(ConfigError, match="nested too deeply"):
        MemoryConfig.from_openclaw_file(cfg)


def test_an_oversized_config_file_is_refused_at_once(tmp_path: Path) -> None:
    cfg = _file(tmp_path, "{notes: '" + "x" * (20 * 1024 * 1024) + "'}")  # JSON5-only quotes: the slow parser
    start = time.monotonic()
    with pytest.raises(ConfigError, match="larger than"):
        MemoryConfig.from_openclaw_file(cfg)
    assert time.monotonic() - start < 2
    just_fits = _file(tmp_path, '{"notes": "' + "x" * (MAX_CONFIG_FILE_BYTES - 20) + '"}')
    assert MemoryConfig.from_openclaw_file(just_fits).agent_id == "main"


def test_a_non_dict_config_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not str"):
        MemoryConfig.from_dict("abc")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not list"):
        MemoryConfig.load([1, 2])  # type: ignore[arg-type]


def test_the_clamping_warning_is_logged_once_per_key_per_cli_command(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "ws").mkdir()
    cfg = _file(tmp_path, '{agents: {defaults: {memorySearch: {provider: "none", query: {minScore: 5}}}}}')
    with caplog.at_level(logging.WARNING, logger="openclaw_memory"):
        result = CliRunner().invoke(main, ["-c", str(cfg), "-w", str(tmp_path / "ws"), "--store",
                                           str(tmp_path / "i.sqlite"), "status"])
    assert result.exit_code == 0, result.output
    assert [r.getMessage() for r in caplog.records].count(
        "memorySearch.query.minScore = 5 is out of range; using 1.0 as OpenClaw does") == 1
