"""TranscriptWriter takes the ISO timestamps OpenClaw transcripts and framework messages carry; a timestamp, role
or session id it cannot use is a MemoryArgumentError naming it (a bare ValueError "could not convert string to
float" before; ``True`` was written as 1970)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from openclaw_memory import MemoryArgumentError
from openclaw_memory.files.sessions import TranscriptWriter, transcript_file_name


def _timestamps(path: Path) -> list[int]:
    return [json.loads(line)["message"]["timestamp"] for line in path.read_text().splitlines()]


def test_an_iso_timestamp_is_written_as_its_epoch_milliseconds(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    writer.append_message("user", "hello", timestamp="2026-11-28T10:00:00Z")
    writer.append_messages([{"role": "assistant", "content": "hi", "timestamp": "2026-11-28T12:00:00+02:00"}])
    expected = round(datetime(2026, 11, 28, 10, tzinfo=timezone.utc).timestamp() * 1000)
    assert _timestamps(tmp_path / "s.jsonl") == [expected, expected]


@pytest.mark.parametrize("timestamp", ["yesterday-ish", True, [1, 2], float("nan")])
def test_a_timestamp_it_cannot_read_is_an_argument_error(tmp_path: Path, timestamp: object) -> None:
    with pytest.raises(MemoryArgumentError, match="timestamp"):
        writer = TranscriptWriter(tmp_path / "s.jsonl")
        writer.append_message("user", "hello", timestamp=timestamp)  # type: ignore[arg-type]
    assert not (tmp_path / "s.jsonl").exists() or (tmp_path / "s.jsonl").read_text() == ""


def test_a_bad_role_or_session_id_is_an_argument_error(tmp_path: Path) -> None:
    with pytest.raises(MemoryArgumentError, match="role"):
        TranscriptWriter(tmp_path / "s.jsonl").append_message("", "hello")
    with pytest.raises(MemoryArgumentError, match="session_id"):
        transcript_file_name("  ")


def test_half_an_emoji_in_a_message_is_written_as_a_replacement_character(tmp_path: Path) -> None:
    """A lone surrogate in a message (half an emoji) is kept as U+FFFD with the rest of the batch; it raised
    UnicodeEncodeError and the messages were not written."""
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    writer.append_messages([("user", "the gift: \ud83c for Sam"),
                            ("assistant", [{"type": "text", "text": "ok \udc00"}])])
    lines = [json.loads(line)["message"]["content"] for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert lines == ["the gift: \ufffd for Sam", [{"type": "text", "text": "ok \ufffd"}]]
