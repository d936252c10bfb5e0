"""``openclaw-memory dream``: the model is an OpenAI-compatible endpoint from the config, here the
project's loopback vendor server speaking the chat-completions wire format to the real ``openai`` SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from openclaw_memory.cli import main

from tests.helpers.vendor_server import Fault, VendorServer

MEMORY = "# Memory\n\n- Deploys happen on Tuesdays.\n- The team lead is Dana.\n"
TODAY = date.today().isoformat()


@pytest.fixture(scope="module")
def server() -> Iterator[VendorServer]:
    vendor = VendorServer()
    vendor.start()
    yield vendor
    vendor.stop()


@pytest.fixture
def setup(tmp_path: Path, server: VendorServer) -> tuple[Path, Path]:
    server.reset()
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(MEMORY)
    (ws / "memory" / f"{TODAY}.md").write_text("- Deploys now happen on Fridays only, after the freeze.\n")
    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps({
        "agents": {"defaults": {"workspace": str(ws), "memorySearch": {"provider": "none"}}},
        "plugins": {"entries": {"memory-core": {"config": {"dreaming": {
            "enabled": True, "frequency": "0 3 * * *",  # the original's keys this library does not use
            "model": "local-model", "baseUrl": f"{server.url}/openai/v1", "apiKey": "sk-dream-test",
            "minRecallCount": 0, "minUniqueQueries": 0}}}}},
    }))
    return ws, config


def run(config: Path, *args: str):
    return CliRunner().invoke(main, ["--config", str(config), "dream", *args], catch_exceptions=False)


SUPERSEDE = json.dumps({"decisions": [{"op": "supersede", "candidate": "C1", "entry": "E1", "importance": 7}]})


def test_dream_is_a_dry_run_by_default(setup, server: VendorServer) -> None:
    ws, config = setup
    server.chat_answers.append(SUPERSEDE)
    result = run(config)
    assert result.exit_code == 0, result.output
    assert "supersede C1 E1" in result.output
    assert "-- Deploys happen on Tuesdays." in result.output and "+- Deploys now happen on Fridays only" in result.output
    assert "Dry run: nothing written" in result.output
    assert (ws / "MEMORY.md").read_text() == MEMORY
    body = server.bodies("openai.chat")[0]
    assert body["model"] == "local-model" and "C1 (memory/" in body["messages"][-1]["content"]
    assert server.headers("openai.chat")[0]["authorization"] == "Bearer sk-dream-test"


def test_apply_writes_and_undo_restores(setup, server: VendorServer) -> None:
    ws, config = setup
    server.chat_answers.append(SUPERSEDE)
    result = run(config, "--apply")
    assert result.exit_code == 0, result.output
    text = (ws / "MEMORY.md").read_text()
    assert "Tuesdays" not in text and f"Source: memory/{TODAY}.md#L1-L1" in text
    assert "superseded 1" in (ws / "DREAMS.md").read_text()
    result = run(config, "--undo")
    assert result.exit_code == 0, result.output
    assert (ws / "MEMORY.md").read_text() == MEMORY


def test_a_garbage_answer_is_shown_as_append_only(setup, server: VendorServer) -> None:
    ws, config = setup
    server.chat_answers.append("I have updated your memory as requested.")
    result = run(config)
    assert result.exit_code == 0, result.output
    assert "append-only: the model's answer holds no JSON object" in result.output
    assert (ws / "MEMORY.md").read_text() == MEMORY


def test_undo_without_a_sweep_and_a_missing_model_are_one_line_errors(setup, tmp_path: Path) -> None:
    ws, config = setup
    result = CliRunner().invoke(main, ["--config", str(config), "dream", "--undo"])
    assert result.exit_code == 1 and "nothing to undo" in result.output
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws)}}}))
    result = CliRunner().invoke(main, ["--config", str(bare), "dream"])
    assert result.exit_code == 1 and "dreaming.model is not set" in result.output


def test_forget_removes_a_promoted_memory_and_keeps_it_out(setup, server: VendorServer) -> None:
    ws, config = setup
    server.chat_answers.append(SUPERSEDE)
    run(config, "--apply")
    result = run(config, "--forget", f"memory/{TODAY}.md#L1-L1")
    assert result.exit_code == 0 and "Forgotten: 1 MEMORY.md entry removed" in result.output
    assert "Fridays" not in (ws / "MEMORY.md").read_text()
    result = run(config)
    assert "MEMORY.md unchanged." in result.output and len(server.bodies("openai.chat")) == 1



def test_model_and_endpoint_on_the_command_line_and_gates_fed_by_cli_searches(setup, server: VendorServer, tmp_path,
                                                                               monkeypatch) -> None:
    ws, _ = setup
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    base = ["--workspace", str(ws), "--provider", "none", "--store", str(tmp_path / "cli.sqlite")]
    dream = [*base, "dream", "--model", "tiny", "--base-url", f"{server.url}/openai/v1"]
    result = CliRunner().invoke(main, dream, catch_exceptions=False)
    # the default gates: a line no search recalled is not a candidate, and the model is not asked
    assert result.exit_code == 0 and "1 below the gates" in result.output and server.bodies("openai.chat") == []
    CliRunner().invoke(main, [*base, "search", "when do deploys happen"], catch_exceptions=False)
    server.chat_answers.append(SUPERSEDE)
    result = CliRunner().invoke(main, dream, catch_exceptions=False)
    assert result.exit_code == 0 and "supersede C1 E1" in result.output, result.output
    assert server.bodies("openai.chat")[0]["model"] == "tiny"
    assert server.headers("openai.chat")[0]["authorization"] == "Bearer sk-from-env"


def test_the_originals_dreaming_section_is_read_and_checked(tmp_path: Path) -> None:
    from openclaw_memory.config import MemoryConfig
    from openclaw_memory.errors import ConfigError

    path = tmp_path / "openclaw.json"
    path.write_text(json.dumps({"plugins": {"entries": {"memory-core": {"config": {"dreaming": {
        "frequency": "0 3 * * *", "minRecallCount": 3, "model": "m"}}}}},
        "agents": {"defaults": {"memorySearch": {"dreaming": {"model": "own"}}}}}))
    config = MemoryConfig.from_openclaw_file(path)
    assert (config.dreaming.min_recall_count, config.dreaming.model) == (3, "own")  # memorySearch.dreaming wins
    path.write_text(json.dumps({"plugins": {"entries": {"memory-core": {"config": {"dreaming": "on"}}}}}))
    with pytest.raises(ConfigError, match="plugins.entries.memory-core.config.dreaming must be an object"):
        MemoryConfig.from_openclaw_file(path)


def test_an_endpoint_error_is_shown_without_the_key(setup, server: VendorServer) -> None:
    ws, config = setup
    server.fail("openai.chat", Fault(status=401, body={"error": {
        "message": "Incorrect API key provided: sk-dream-test", "type": "invalid_request_error"}}))
    result = run(config)
    assert result.exit_code == 0 and "append-only: the model failed" in result.output, result.output
    assert "sk-dream-test" not in result.output and (ws / "MEMORY.md").read_text() == MEMORY
