"""Session transcripts (JSONL) and per-session state (spec §6.3, §8.2).

* :func:`list_session_files` / :func:`extract_session`: the text an index stores for a transcript,
  user and assistant turns only, each content line mapped back to its JSONL line.
* :func:`redact_secrets`: API keys and bearer tokens replaced by ``[REDACTED]`` before indexing.
* :func:`transcript_delta`: re-index a transcript only after it grew by ``delta_bytes`` or
  ``delta_messages`` since it was indexed (or shrank).
* :func:`transcript_file_name`: the file a session id's transcript lives in.
* :class:`TranscriptWriter`: appends framework messages in the format the extractor reads.
* :class:`SessionStateStore` (defined in :mod:`openclaw_memory.files.session_state`, re-exported here):
  each session's compaction and flush counters, updated atomically.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.files.append import locked_append, replace_lone_surrogates
from openclaw_memory.redaction import redact
from openclaw_memory.files.session_state import SessionFlushState, SessionStateStore

__all__ = [
    "DeltaResult",
    "SessionDoc",
    "SessionFlushState",
    "SessionStateStore",
    "TranscriptWriter",
    "extract_session",
    "is_transcript_name",
    "list_session_files",
    "message_text",
    "parse_timestamp",
    "redact_secrets",
    "session_rel_path",
    "transcript_delta",
    "transcript_file_name",
]

log = logging.getLogger(__name__)

_ARCHIVE_RE = re.compile(r"\.jsonl\.(?:reset|deleted)\.\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d{1,6})?Z$")
#: a run of whitespace and NULs (PostgreSQL text cannot hold one), made one space
_WS_RE = re.compile(r"[\s\x00]+")


def list_session_files(sessions_dir: str | os.PathLike[str]) -> list[Path]:
    """Transcripts in ``sessions_dir``: ``*.jsonl`` plus ``*.jsonl.reset.<ISO>`` /
    ``*.jsonl.deleted.<ISO>`` archives, sorted by name. A missing directory gives ``[]``."""
    root = Path(sessions_dir)
    if not root.is_dir():
        return []
    out = []
    for entry in root.iterdir():
        if not is_transcript_name(entry.name):
            continue
        if entry.is_symlink() or not entry.is_file():
            continue
        out.append(entry)
    return sorted(out, key=lambda p: p.name)


def is_transcript_name(name: str) -> bool:
    """True for a transcript file name: ``*.jsonl`` or a ``*.jsonl.reset|deleted.<ISO>`` archive."""
    return name.endswith(".jsonl") or _ARCHIVE_RE.search(name) is not None


_UNSAFE_ID_RE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_ID_LEN = 120


def transcript_file_name(session_id: str) -> str:
    """The transcript file name for a session id: ``<id>.jsonl``, the id made filesystem-safe.

    Ids made of letters, digits, ``.``, ``_`` and ``-`` (UUIDs, OpenClaw session ids) are kept
    as they are; any other id is sanitised and suffixed with a short hash of the original, so
    two distinct ids never share a file and no id can name a path outside the directory.
    """
    if not isinstance(session_id, str) or not session_id.strip():
        raise MemoryArgumentError(f"session_id must be a non-empty string, got {session_id!r}")
    safe = _UNSAFE_ID_RE.sub("_", session_id).strip("._")
    if safe != session_id or len(safe) > _MAX_ID_LEN:
        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        safe = f"{safe[:_MAX_ID_LEN]}-{digest}" if safe else f"session-{digest}"
    return f"{safe}.jsonl"


def session_rel_path(path: str | os.PathLike[str]) -> str:
    """The path an index stores for a transcript: ``sessions/<basename>``."""
    return f"sessions/{Path(path).name}"


# ---- redaction ---------------------------------------------------------------------------------

def redact_secrets(text: str) -> str:
    """Replace API keys, bearer tokens, private keys, URL passwords and the configured secrets by ``[REDACTED]``
    (:func:`openclaw_memory.redaction.redact`)."""
    return redact(text)


# ---- extraction --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionDoc:
    """A transcript flattened for indexing; ``line_map[k]`` is the JSONL line of content line k+1."""

    content: str
    line_map: list[int]
    timestamps: list[float | None]
    hash: str
    malformed_lines: int = 0
    path: str = ""


def message_text(content: Any) -> str:
    """A message's text: the string itself, or its ``text`` blocks joined by a space."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b["text"]
            for b in content
            if isinstance(b, Mapping) and b.get("type", "text") == "text" and isinstance(b.get("text"), str)
        ]
        return " ".join(parts)
    return ""


# what datetime.fromtimestamp accepts everywhere: years 1..9999
_MIN_EPOCH, _MAX_EPOCH = -62_135_596_800.0, 253_402_300_799.0


def parse_timestamp(value: Any) -> float | None:
    """Epoch seconds from a number (< 1e11 = seconds, else milliseconds) or an ISO string;
    None for anything else, including non-finite or out-of-range values."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            secs = float(value) if value < 1e11 else value / 1000.0
        except OverflowError:  # an int too large for a float
            return None
        return secs if _MIN_EPOCH <= secs <= _MAX_EPOCH else None  # NaN fails both comparisons
    if isinstance(value, str) and value.strip():
        try:
            dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()
        except (ValueError, OverflowError):
            return None
    return None


def extract_session(path: str | os.PathLike[str], *, redact: bool = True) -> SessionDoc:
    """Flatten a JSONL transcript: one ``User: …`` / ``Assistant: …`` line per text message.

    Whitespace (and NUL) is collapsed, half an emoji is U+FFFD and secrets are redacted; tool calls, system and
    custom records are ignored; a line that is not a JSON object is skipped and counted in ``malformed_lines``.
    """
    p = Path(path)
    raw = p.read_bytes().decode("utf-8", errors="replace")
    lines: list[str] = []
    line_map: list[int] = []
    stamps: list[float | None] = []
    malformed = 0
    for lineno, line in enumerate(raw.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            malformed += 1
            continue
        if not isinstance(record, dict):
            malformed += 1
            continue
        message = record.get("message")
        if record.get("type") != "message" or not isinstance(message, dict):
            continue
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        # half an emoji (a lone surrogate, which UTF-8 cannot encode: the whole transcript was skipped) is U+FFFD
        text = _WS_RE.sub(" ", replace_lone_surrogates(message_text(message.get("content")))).strip()
        if not text:
            continue
        if redact:
            text = redact_secrets(text)
        lines.append(("User: " if role == "user" else "Assistant: ") + text)
        line_map.append(lineno)
        ts = message.get("timestamp")
        stamps.append(parse_timestamp(ts if ts is not None else record.get("timestamp")))
    if malformed:
        log.warning("%s: skipped %d malformed JSONL line(s)", p, malformed)
    content = "\n".join(lines)
    ts_part = ",".join("" if t is None else str(round(t * 1000)) for t in stamps)
    digest = hashlib.sha256(f"{content}\n{','.join(map(str, line_map))}\n{ts_part}".encode()).hexdigest()
    return SessionDoc(content, line_map, stamps, digest, malformed, session_rel_path(p))


# ---- delta tracking ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeltaResult:
    """What :func:`transcript_delta` saw for one transcript.

    ``delta_bytes`` is the growth counted (the whole file when it shrank); ``pending_bytes`` and
    ``pending_messages`` what is left of it after subtracting the thresholds that were crossed.
    """

    path: str
    hit: bool
    size: int
    delta_bytes: int
    pending_bytes: int
    pending_messages: int
    truncated: bool = False


def transcript_delta(
    path: str | os.PathLike[str], indexed_size: int, *, delta_bytes: int = 100_000, delta_messages: int = 50
) -> DeltaResult:
    """Whether a transcript indexed at ``indexed_size`` bytes is due for re-indexing.

    ``hit`` when it grew by ``delta_bytes`` or by ``delta_messages`` JSONL lines since then
    (a threshold ≤ 0 means any growth), or when it shrank (truncated or replaced: the indexed
    text no longer matches the file, and its whole new size counts as growth). A vanished file
    gives ``hit=False`` and ``size=0``.
    """
    key = os.fspath(path)
    try:
        size = os.stat(key).st_size
    except FileNotFoundError:
        return DeltaResult(key, False, 0, 0, 0, 0)
    truncated = size < max(0, indexed_size)
    start = 0 if truncated else max(0, indexed_size)
    delta = size - start
    if delta <= 0:
        return DeltaResult(key, truncated, size, 0, 0, 0, truncated)
    pending_bytes, pending_messages = delta, 0
    bytes_hit = delta_bytes <= 0 or pending_bytes >= delta_bytes
    if not bytes_hit:
        pending_messages = _count_newlines(key, start, size, delta_messages)
    msgs_hit = delta_messages <= 0 or pending_messages >= delta_messages
    hit = bytes_hit or msgs_hit
    if hit:
        pending_bytes = max(0, pending_bytes - delta_bytes) if delta_bytes > 0 else 0
        pending_messages = max(0, pending_messages - delta_messages) if delta_messages > 0 else 0
    return DeltaResult(key, hit or truncated, size, delta, pending_bytes, pending_messages, truncated)


def _count_newlines(path: str, start: int, end: int, needed: int) -> int:
    """Newlines in ``[start, end)``, read in 64 KiB blocks, stopping once ``needed`` are found."""
    count = 0
    with open(path, "rb") as fh:
        fh.seek(start)
        remaining = end - start
        while remaining > 0 and (needed <= 0 or count < needed):
            block = fh.read(min(65536, remaining))
            if not block:
                break
            remaining -= len(block)
            count += block.count(b"\n")
    return count


# ---- writer ------------------------------------------------------------------------------------


def _message_seconds(timestamp: Any) -> float:
    """Epoch seconds of a message's ``timestamp``: a datetime (naive: local time), epoch seconds or milliseconds, or
    an ISO string (``"2026-11-28T10:00:00Z"``); MemoryArgumentError for anything else."""
    if isinstance(timestamp, datetime):
        return timestamp.timestamp()
    seconds = parse_timestamp(timestamp)
    if seconds is None:
        raise MemoryArgumentError(f"message timestamp must be a datetime, epoch seconds or milliseconds, or an ISO "
                                  f"date-time string, got {timestamp!r:.80}")
    return seconds


class TranscriptWriter:
    """Appends messages to a JSONL transcript as ``{"type":"message","message":{role,content,timestamp}}``.

    Safe for concurrent appends from several threads or processes (file lock + ``O_APPEND``).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()

    def append_message(self, role: str, content: Any, timestamp: float | datetime | None = None) -> None:
        """Append one message. ``timestamp`` is a datetime, epoch seconds (or milliseconds) or an ISO date-time string
        (default: now)."""
        self.append_messages([{"role": role, "content": content, "timestamp": timestamp}])

    def append_messages(self, messages: Iterable[Mapping[str, Any] | tuple[str, Any]]) -> int:
        """Append ``{"role", "content"[, "timestamp"]}`` dicts or ``(role, content)`` pairs; returns the count. A lone
        surrogate in a text (half an emoji) is written as U+FFFD."""
        records = []
        for m in messages:
            if isinstance(m, Mapping):
                role, content, ts = m.get("role"), m.get("content"), m.get("timestamp")
            else:
                role, content, ts = (*m, None)[:3]
            if not isinstance(role, str) or not role.strip():
                raise MemoryArgumentError(f"message role must be a non-empty string such as 'user' or 'assistant', "
                                          f"got {role!r}")
            if not isinstance(content, (str, list)):
                raise TypeError(
                    f"message content must be a string or a list of content blocks, not {type(content).__name__}"
                )
            seconds = time.time() if ts is None else _message_seconds(ts)
            ms = round(seconds * 1000)
            record = {"type": "message", "message": {"role": role, "content": content, "timestamp": ms}}
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
            records.append(replace_lone_surrogates(line) + "\n")
        if records:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            locked_append(self.path, "".join(records), fsync=False)
        return len(records)
