"""The CLI's errors on input a shell user hands it: one line and a non-zero exit status, no traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from openclaw_memory.cli import main


def test_eval_of_a_questions_file_that_is_not_utf8_is_a_one_line_error(write: Any, tmp_path: Path) -> None:
    """A questions file in another encoding says so (it ended in a UnicodeDecodeError traceback)."""
    notes: Path = write({"MEMORY.md": "# Notes\n\nThe launch codename is Falcon.\n"})
    questions = tmp_path / "questions.jsonl"
    questions.write_bytes('{"question": "codename?", "evidence": [{"path": "MEMORY.md", "line": 3}], "id": "é"}\n'
                          .encode("latin-1"))
    result = CliRunner().invoke(main, ["-w", str(notes), "-p", "none", "eval", str(questions)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "UTF-8" in result.output and str(questions) in result.output


def test_eval_reads_a_questions_file_saved_with_a_byte_order_mark(write: Any, tmp_path: Path) -> None:
    """A UTF-8 file with a BOM (as Notepad saves it) is read as --queries reads one (it was "line 1: Unexpected
    UTF-8 BOM")."""
    notes: Path = write({"MEMORY.md": "# Notes\n\nThe launch codename is Falcon.\n"})
    questions = tmp_path / "questions.jsonl"
    questions.write_text('{"question": "launch codename", "evidence": [{"path": "MEMORY.md", "line": 3}]}\n',
                         encoding="utf-8-sig")
    result = CliRunner().invoke(main, ["-w", str(notes), "-p", "none", "eval", "--json", str(questions)])
    assert result.exit_code == 0, result.output


def test_search_shows_a_notes_terminal_escape_sequences_instead_of_sending_them(write: Any) -> None:
    """A note holding escape sequences (a fetched page appended as untrusted text) is shown with them spelt out:
    on a terminal they cleared the screen, retitled the window or hid lines of the results."""
    notes: Path = write({"memory/2026-03-02.md": "- Falcon launch \x1b[2J\x1b]0;pwned\x07 notes \x9b31m here\n"})
    result = CliRunner().invoke(main, ["-w", str(notes), "-p", "none", "search", "Falcon launch"], color=True)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output and "\x9b" not in result.output
    assert "Falcon launch \\x1b[2J\\x1b]0;pwned\\x07 notes \\x9b31m here" in result.output
