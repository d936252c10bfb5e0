"""status() when the embedding provider chosen explicitly cannot start (no API key): it reports the provider asked
for and why it cannot start (what OpenClaw's status shows: the requested provider and the embedding error) instead
of raising, in Python and in the CLI: status is what a user runs to find that out."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from openclaw_memory import MemoryIndex
from openclaw_memory.cli import main
from openclaw_memory.errors import ProviderUnavailableError

NOTES = {"MEMORY.md": "# Memory\n\nThe heron count was three.\n"}


@pytest.fixture(autouse=True)
def no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_status_reports_the_requested_provider_and_why_it_cannot_start(
        make_index: Callable[..., MemoryIndex], write: Any) -> None:
    write(NOTES)
    memory = make_index(provider="openai")
    st = memory.status()
    assert st.requested_provider == "openai"
    assert st.provider == "openai"  # OpenClaw reports the requested id while no provider runs
    assert st.provider_error is not None and "OPENAI_API_KEY" in st.provider_error
    assert st.search_mode == "unavailable"
    assert st.embedding_probe == {"ok": False, "error": st.provider_error}
    assert any("OPENAI_API_KEY" in note for note in st.notes)
    assert st.files == 0 and st.workspace and st.fts["available"]  # the rest of the status is there
    with pytest.raises(ProviderUnavailableError, match="OPENAI_API_KEY"):  # what searches do is unchanged
        memory.search("heron")


def test_deep_status_reports_it_too(make_index: Callable[..., MemoryIndex], write: Any) -> None:
    write(NOTES)
    st = make_index(provider="openai").status(deep=True)
    assert st.embedding_probe is not None and st.embedding_probe["ok"] is False
    assert "OPENAI_API_KEY" in st.embedding_probe["error"]


def test_cli_status_reports_it(write: Any, tmp_path: Path) -> None:
    workspace = write(NOTES)
    base = ["--workspace", str(workspace), "--store", str(tmp_path / "cli.sqlite"), "--provider", "openai"]
    res = CliRunner().invoke(main, [*base, "status"])
    assert res.exit_code == 0, res.output
    assert "Provider: openai" in res.output
    assert "Embeddings: unavailable" in res.output and "OPENAI_API_KEY" in res.output
    res = CliRunner().invoke(main, [*base, "status", "--json"])
    assert res.exit_code == 0, res.output
    st = json.loads(res.output)
    assert st["requested_provider"] == "openai" and "OPENAI_API_KEY" in st["provider_error"]


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is not None, reason="llama-cpp-python is installed")
def test_status_reports_a_provider_whose_package_is_missing(make_index: Callable[..., MemoryIndex], write: Any,
                                                           tmp_path: Path) -> None:
    write(NOTES)
    st = make_index(provider="local", local={"model_path": str(tmp_path / "model.gguf")}).status()
    assert st.provider == "local" and st.search_mode == "unavailable"
    assert st.provider_error is not None and "openclaw-memory[llama-cpp]" in st.provider_error
