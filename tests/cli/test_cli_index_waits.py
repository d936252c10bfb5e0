"""``openclaw-memory index`` while another process (an MCP server, ``watch``) is indexing the same memory."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from filelock import FileLock

from openclaw_memory.cli import main


def test_index_says_it_waits_for_another_process_indexing(write: Any, tmp_path: Path) -> None:
    """While another process holds the index's sync lock, ``index`` says it is waiting (it sat silent for up to ten
    minutes), then indexes once the lock is free."""
    notes: Path = write({"MEMORY.md": "# Notes\n\nThe launch codename is Falcon.\n"})
    store = tmp_path / "index.sqlite"
    held = threading.Event()

    def other_process() -> None:
        with FileLock(str(store) + ".lock"):
            held.set()
            threading.Event().wait(2.0)

    threading.Thread(target=other_process, daemon=True).start()
    held.wait(10)
    result = CliRunner().invoke(main, ["-w", str(notes), "-p", "none", "--store", str(store), "index"])
    assert result.exit_code == 0, result.output
    assert "Waiting for another process" in result.output
    assert "1 indexed" in result.output
