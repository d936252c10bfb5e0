"""`openclaw-memory mcp`'s HTTP options as a shell user types them."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from click.testing import CliRunner  # noqa: E402

from openclaw_memory.agent.mcp_server import bearer_token_guard  # noqa: E402
from openclaw_memory.cli import main  # noqa: E402
from openclaw_memory.errors import MemoryArgumentError  # noqa: E402

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("options", [["--host", "0.0.0.0"], ["--port", "9000"], ["--token", "s3cret"]])
def test_http_options_without_http_are_refused_not_ignored(write: Any, options: list[str]) -> None:
    """``mcp --host 0.0.0.0 --port 9000`` (no ``--http``) says --http is missing (it served stdio, ignoring them)."""
    notes: Path = write({"MEMORY.md": "# Notes\n"})
    result = CliRunner().invoke(main, ["-w", str(notes), "-p", "none", "mcp", *options], input="")
    assert result.exit_code == 2, result.output
    assert "--http" in result.output


def test_token_from_the_environment_does_not_need_http(write: Any) -> None:
    """OPENCLAW_MCP_TOKEN set in the shell does not stop a stdio server."""
    notes: Path = write({"MEMORY.md": "# Notes\n"})
    result = CliRunner(env={"OPENCLAW_MCP_TOKEN": "s3cret"}).invoke(
        main, ["-w", str(notes), "-p", "none", "mcp"], input="")
    assert result.exit_code == 0, result.output


def test_blank_token_on_a_public_address_is_refused(write: Any) -> None:
    """``--token ' '`` on 0.0.0.0 is no token (it started a server no client could get into)."""
    notes: Path = write({"MEMORY.md": "# Notes\n"})
    result = CliRunner().invoke(main, ["-w", str(notes), "-p", "none", "mcp", "--http", "--host", "0.0.0.0",
                                       "--token", "  "])
    assert result.exit_code == 2, result.output
    assert "--token" in result.output


async def test_token_with_surrounding_whitespace_lets_its_clients_in() -> None:
    """A token read with a trailing newline or space (an env file) matches what clients send (every client got
    401: HTTP strips a header value's surrounding whitespace)."""
    statuses: list[int] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    scope = {"type": "http", "headers": [(b"authorization", b"Bearer s3cret")]}
    await bearer_token_guard(app, "s3cret\n")(scope, None, send)
    await bearer_token_guard(app, " s3cret ")(scope, None, send)
    assert statuses == [200, 200]


def test_a_blank_token_is_refused_by_the_guard_itself() -> None:
    """The guard's own check, not only the CLI's: a blank token would let in every request saying ``Bearer``."""
    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("not reached")

    for blank in ("", "  \n"):
        with pytest.raises(MemoryArgumentError, match="blank"):
            bearer_token_guard(app, blank)


def test_http_on_a_port_in_use_is_a_one_line_error(write: Any) -> None:
    """A busy port is the CLI's one-line error, exit status 1, naming --port; the server's URL is not announced
    first (it printed "MCP server on http://…" then uvicorn's bind error, exit status 3)."""
    notes: Path = write({"MEMORY.md": "# Notes\n"})
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        result = CliRunner().invoke(main, ["-w", str(notes), "-p", "none", "mcp", "--http", "--port", str(port)])
    assert result.exit_code == 1, result.output
    assert "--port" in result.output and "MCP server on" not in result.output
