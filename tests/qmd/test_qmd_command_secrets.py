"""A ``memory.qmd.command`` may carry a credential for QMD's model downloads (``env HF_TOKEN=hf_… qmd``, a
``--token`` argument): status showed the command as written (``backend_info.command``, and ``command_error`` when
``qmd --version`` printed nothing), and so did a printed or dumped config. They show it redacted; QMD still runs
the command as written."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from openclaw_memory import MemoryConfig, MemoryIndex
from openclaw_memory.errors import ConfigError

TOKEN = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


@pytest.mark.parametrize("command", [
    f"env HF_TOKEN={TOKEN} {shlex.quote(sys.executable)} -c pass",  # runs, prints nothing for --version
    f"/nonexistent/qmd --token {TOKEN}",  # cannot start
])
def test_status_shows_no_token_of_the_qmd_command(tmp_path: Path, command: str) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("# Memory\n\nThe heron count was three.\n", encoding="utf-8")
    with MemoryIndex(workspace=tmp_path / "ws", state_dir=tmp_path / "state", provider=None, watch=False,
                     backend="qmd", qmd={"command": command}) as memory:
        info = memory.status().backend_info
        shown = json.dumps(memory.status(deep=True).to_dict(), default=str) + repr(memory)
    assert info is not None and command.split()[0] in info["command"]  # the rest of the command is there
    assert info["command_error"]  # QMD did not answer --version: said why
    assert TOKEN not in shown


def test_a_printed_or_dumped_config_shows_no_token_of_the_qmd_command() -> None:
    config = MemoryConfig(backend="qmd", qmd={"command": f"env HF_TOKEN={TOKEN} qmd"})
    for shown in (repr(config), str(config.qmd), config.model_dump_json(), json.dumps(config.without_secrets())):
        assert TOKEN not in shown and "qmd" in shown
    assert config.qmd.command == f"env HF_TOKEN={TOKEN} qmd"  # what runs


def test_a_redacted_command_given_back_is_refused() -> None:
    with pytest.raises(ConfigError, match="qmd.command"):
        MemoryConfig.from_dict(MemoryConfig(qmd={"command": f"env HF_TOKEN={TOKEN} qmd"}).model_dump())


@pytest.mark.parametrize("assignment", ["QMD_API_KEY=plainsecretvalue", "MIRROR_PASSWORD=hunter2hunter2",
                                        "HF_AUTH_TOKEN='two words here'"])
def test_a_secret_named_variable_of_the_qmd_command_is_not_shown(tmp_path: Path, assignment: str) -> None:
    """A credential without a known shape (no digit, short, spaces) set in the command under a name saying what it is
    (…KEY, …PASSWORD, …TOKEN) was shown as written in status and in a dumped config."""
    secret = shlex.split(assignment)[0].split("=", 1)[1]
    command = f"env {assignment} /nonexistent/qmd"
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("# Memory\n\nThe heron count was three.\n", encoding="utf-8")
    config = MemoryConfig(backend="qmd", qmd={"command": command})
    with MemoryIndex(workspace=tmp_path / "ws", state_dir=tmp_path / "state", provider=None, watch=False,
                     backend="qmd", qmd={"command": command}) as memory:
        result = memory.search("heron")
        shown = json.dumps(memory.status(deep=True).to_dict(), default=str) + repr(memory) + repr(config)
        shown += config.model_dump_json() + str(result.fallback)
    assert result.fallback is not None and result.hits  # the builtin index answered
    assert "/nonexistent/qmd" in shown
    assert secret not in shown
