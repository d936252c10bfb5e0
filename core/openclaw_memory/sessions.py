"""Session transcripts (JSONL) and per-session state (spec §6.3, §8.2).

* :func:`list_session_files` / :func:`extract_session`: the text an index stores for a transcript,
  user and assistant turns only, each content line mapped back to its JSONL line.
* :func:`redact_secrets`: API keys and bearer tokens replaced by ``[REDACTED]`` before indexing.
* :class:`SessionDeltaTracker`: re-index a transcript only after it grew by ``delta_bytes`` or
  ``delta_messages``.
* :class:`TranscriptWriter`: appends framework messages in the format the extractor reads.
* :class:`SessionStateStore`: a small ``sessions.json``-like file with each session's compaction
  and flush counters, updated atomically.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from openclaw_memory.append import LOCK_TIMEOUT_S, locked_append
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import OpenClawMemoryError

__all__ = [
    "DeltaResult",
    "SessionDeltaTracker",
    "SessionDoc",
    "SessionFlushState",
    "SessionStateStore",
    "TranscriptWriter",
    "extract_session",
    "list_session_files",
    "message_text",
    "redact_secrets",
    "session_rel_path",
]

log = logging.getLogger(__name__)

_ARCHIVE_RE = re.compile(r"\.jsonl\.(?:reset|deleted)\.\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d{1,6})?Z$")
_WS_RE = re.compile(r"\s+")


def list_session_files(sessions_dir: str | os.PathLike[str]) -> list[Path]:
    """Transcripts in ``sessions_dir``: ``*.jsonl`` plus ``*.jsonl.reset.<ISO>`` /
    ``*.jsonl.deleted.<ISO>`` archives, sorted by name. A missing directory gives ``[]``."""
    root = Path(sessions_dir)
    if not root.is_dir():
        return []
    out = []
    for entry in root.iterdir():
        name = entry.name
        if not (name.endswith(".jsonl") or _ARCHIVE_RE.search(name)):
            continue
        if entry.is_symlink() or not entry.is_file():
            continue
        out.append(entry)
    return sorted(out, key=lambda p: p.name)


def session_rel_path(path: str | os.PathLike[str]) -> str:
    """The path an index stores for a transcript: ``sessions/<basename>``."""
    return f"sessions/{Path(path).name}"


# ---- redaction ---------------------------------------------------------------------------------

_R = "[REDACTED]"
_SECRET_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL), _R),
    (re.compile(r"\bBearer\s+[A-Za-z0-9\-._~+/]{8,}=*", re.IGNORECASE), f"Bearer {_R}"),
    (re.compile(r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}"), _R),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), _R),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), _R),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"), _R),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), _R),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"), _R),
    # key=/token=/secret=/password: followed by a long value with at least one digit.
    (
        re.compile(
            r"(?i)(\b[\w\-]*(?:key|token|secret|password|passwd|credential)s?[\"']?\s*[=:]\s*[\"']?)"
            r"(?=[A-Za-z0-9+/_\-.]*\d)[A-Za-z0-9+/_\-.]{16,}=*"
        ),
        r"\1" + _R,
    ),
]


def redact_secrets(text: str) -> str:
    """Replace tokens that look like API keys, bearer tokens or private keys by ``[REDACTED]``."""
    for pattern, repl in _SECRET_PATTERNS:
        text = pattern.sub(repl, text)
    return text


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


def _timestamp(value: Any) -> float | None:
    """Epoch seconds from a number (< 1e11 = seconds, else milliseconds) or an ISO string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if value < 1e11 else value / 1000.0
    if isinstance(value, str) and value.strip():
        try:
            dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()
    return None


def extract_session(path: str | os.PathLike[str], *, redact: bool = True) -> SessionDoc:
    """Flatten a JSONL transcript: one ``User: …`` / ``Assistant: …`` line per text message.

    Whitespace is collapsed and secrets redacted; tool calls, system and custom records are
    ignored; a line that is not a JSON object is skipped and counted in ``malformed_lines``.
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
        text = _WS_RE.sub(" ", message_text(message.get("content"))).strip()
        if not text:
            continue
        if redact:
            text = redact_secrets(text)
        lines.append(("User: " if role == "user" else "Assistant: ") + text)
        line_map.append(lineno)
        ts = message.get("timestamp")
        stamps.append(_timestamp(ts if ts is not None else record.get("timestamp")))
    if malformed:
        log.warning("%s: skipped %d malformed JSONL line(s)", p, malformed)
    content = "\n".join(lines)
    ts_part = ",".join("" if t is None else str(round(t * 1000)) for t in stamps)
    digest = hashlib.sha256(f"{content}\n{','.join(map(str, line_map))}\n{ts_part}".encode()).hexdigest()
    return SessionDoc(content, line_map, stamps, digest, malformed, session_rel_path(p))


# ---- delta tracking ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeltaResult:
    """What :meth:`SessionDeltaTracker.observe` saw for one transcript."""

    path: str
    hit: bool
    size: int
    delta_bytes: int
    pending_bytes: int
    pending_messages: int
    truncated: bool = False


@dataclass
class _DeltaState:
    last_size: int = 0
    pending_bytes: int = 0
    pending_messages: int = 0


class SessionDeltaTracker:
    """Marks a transcript dirty once it grew by ``delta_bytes`` or ``delta_messages`` (JSONL lines).

    A threshold ≤ 0 means "any growth". A file seen for the first time counts whole; a file that
    shrank (truncated or rotated) counts its whole new size. Thread-safe.
    """

    def __init__(self, delta_bytes: int = 100_000, delta_messages: int = 50) -> None:
        self.delta_bytes = delta_bytes
        self.delta_messages = delta_messages
        self._states: dict[str, _DeltaState] = {}
        self._dirty: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: MemoryConfig) -> SessionDeltaTracker:
        """Thresholds from ``sync.sessions``."""
        s = config.sync.sessions
        return cls(delta_bytes=s.delta_bytes, delta_messages=s.delta_messages)

    def observe(self, path: str | os.PathLike[str]) -> DeltaResult:
        """Account for the transcript's growth since the last observation; mark dirty on a hit."""
        key = os.fspath(path)
        try:
            size = os.stat(key).st_size
        except FileNotFoundError:
            with self._lock:
                self._states.pop(key, None)
            return DeltaResult(key, False, 0, 0, 0, 0)
        with self._lock:
            st = self._states.setdefault(key, _DeltaState())
            truncated = size < st.last_size
            start = 0 if truncated else st.last_size
            delta = size - start
            st.last_size = size
            if delta <= 0:
                return DeltaResult(key, False, size, 0, st.pending_bytes, st.pending_messages)
            st.pending_bytes += delta
            bytes_hit = self.delta_bytes <= 0 or st.pending_bytes >= self.delta_bytes
            if not bytes_hit:
                st.pending_messages += self._count_newlines(key, start, size, self.delta_messages - st.pending_messages)
            msgs_hit = self.delta_messages <= 0 or st.pending_messages >= self.delta_messages
            hit = bytes_hit or msgs_hit
            if hit:
                self._dirty.add(key)
                st.pending_bytes = max(0, st.pending_bytes - self.delta_bytes) if self.delta_bytes > 0 else 0
                st.pending_messages = (
                    max(0, st.pending_messages - self.delta_messages) if self.delta_messages > 0 else 0
                )
            return DeltaResult(key, hit, size, delta, st.pending_bytes, st.pending_messages, truncated)

    def mark_indexed(self, path: str | os.PathLike[str]) -> None:
        """Reset the counters to the file's current size after it was (re)indexed or found unchanged."""
        key = os.fspath(path)
        try:
            size = os.stat(key).st_size
        except FileNotFoundError:
            size = 0
        with self._lock:
            self._states[key] = _DeltaState(last_size=size)
            self._dirty.discard(key)

    def forget(self, path: str | os.PathLike[str]) -> None:
        """Drop all state of a transcript (it was deleted)."""
        with self._lock:
            self._states.pop(os.fspath(path), None)
            self._dirty.discard(os.fspath(path))

    @property
    def dirty(self) -> set[str]:
        """Paths that crossed a threshold and await re-indexing."""
        with self._lock:
            return set(self._dirty)

    def pop_dirty(self) -> set[str]:
        """Return and clear the dirty set."""
        with self._lock:
            out, self._dirty = self._dirty, set()
            return out

    @staticmethod
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


class TranscriptWriter:
    """Appends messages to a JSONL transcript as ``{"type":"message","message":{role,content,timestamp}}``.

    Safe for concurrent appends from several threads or processes (file lock + ``O_APPEND``).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()

    def append_message(self, role: str, content: Any, timestamp: float | datetime | None = None) -> None:
        """Append one message. ``timestamp`` is epoch seconds or a datetime (default: now)."""
        self.append_messages([{"role": role, "content": content, "timestamp": timestamp}])

    def append_messages(self, messages: Iterable[Mapping[str, Any] | tuple[str, Any]]) -> int:
        """Append ``{"role", "content"[, "timestamp"]}`` dicts or ``(role, content)`` pairs; returns the count."""
        records = []
        for m in messages:
            if isinstance(m, Mapping):
                role, content, ts = m.get("role"), m.get("content"), m.get("timestamp")
            else:
                role, content, ts = (*m, None)[:3]
            if not isinstance(role, str) or not role.strip():
                raise ValueError(f"message role must be a non-empty string such as 'user' or 'assistant', got {role!r}")
            if not isinstance(content, (str, list)):
                raise TypeError(
                    f"message content must be a string or a list of content blocks, not {type(content).__name__}"
                )
            if isinstance(ts, datetime):
                ts = ts.timestamp()
            seconds = time.time() if ts is None else float(ts)
            ms = round(seconds if seconds >= 1e11 else seconds * 1000)  # already milliseconds when >= 1e11
            record = {"type": "message", "message": {"role": role, "content": content, "timestamp": ms}}
            records.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        if records:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            locked_append(self.path, "".join(records), fsync=False)
        return len(records)


# ---- per-session state ------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionFlushState:
    """A session's compaction count and the count at which the memory flush last ran."""

    compaction_count: int = 0
    flushed_at_count: int | None = None
    flushed_at: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def _state_from_json(entry: Any) -> SessionFlushState:
    if not isinstance(entry, dict):
        return SessionFlushState()
    known = ("compactionCount", "memoryFlushCompactionCount", "memoryFlushAt")
    flushed = entry.get("memoryFlushCompactionCount")
    at = entry.get("memoryFlushAt")
    return SessionFlushState(
        compaction_count=int(entry.get("compactionCount") or 0),
        flushed_at_count=int(flushed) if isinstance(flushed, (int, float)) else None,
        flushed_at=at / 1000.0 if isinstance(at, (int, float)) else None,
        extra={k: v for k, v in entry.items() if k not in known},
    )


def _state_to_json(state: SessionFlushState) -> dict[str, Any]:
    out = dict(state.extra)
    out["compactionCount"] = state.compaction_count
    out["memoryFlushCompactionCount"] = state.flushed_at_count
    out["memoryFlushAt"] = round(state.flushed_at * 1000) if state.flushed_at is not None else None
    out["updatedAt"] = round(time.time() * 1000)
    return out


class SessionStateStore:
    """Per-session ``(compaction_count, flushed_at_count)`` in a JSON file keyed by session key.

    Entries use OpenClaw's ``sessions.json`` field names (``compactionCount``,
    ``memoryFlushCompactionCount``, ``memoryFlushAt``). Every update holds a file lock and
    replaces the file atomically (temp file + ``os.replace``); unknown fields are preserved.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock = FileLock(str(self.path.parent / f".{self.path.name}.lock"), timeout=LOCK_TIMEOUT_S)

    @classmethod
    def for_config(cls, config: MemoryConfig, *, path: str | os.PathLike[str] | None = None) -> SessionStateStore:
        """``path`` or ``<state_dir>/memory/<agent_id>.sessions.json``."""
        return cls(
            path if path is not None else config.resolved_state_dir() / "memory" / f"{config.agent_id}.sessions.json"
        )

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (ValueError, UnicodeDecodeError) as exc:
            log.warning("session state %s is unreadable (%s); starting from empty state", self.path, exc)
            return {}
        if not isinstance(data, dict):
            log.warning("session state %s is not a JSON object; starting from empty state", self.path)
            return {}
        return data

    def get(self, session_key: str) -> SessionFlushState:
        """The stored state of ``session_key`` (zeros when unknown)."""
        return _state_from_json(self._read().get(session_key))

    def all(self) -> dict[str, SessionFlushState]:
        """Every stored session's state."""
        return {k: _state_from_json(v) for k, v in self._read().items()}

    def update(self, session_key: str, fn: Callable[[SessionFlushState], SessionFlushState]) -> SessionFlushState:
        """Apply ``fn`` to the session's state under the file lock and save atomically."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except Timeout:
            raise OpenClawMemoryError(
                f"could not lock session state {self.path} within {LOCK_TIMEOUT_S:.0f}s; another process holds it"
            ) from None
        try:
            data = self._read()
            new = fn(_state_from_json(data.get(session_key)))
            data[session_key] = _state_to_json(new)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(data, fh, ensure_ascii=False, indent=2, sort_keys=True)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            return new
        finally:
            self._lock.release()

    def set_compaction_count(self, session_key: str, count: int) -> SessionFlushState:
        """Store the caller's authoritative compaction count."""
        if count < 0:
            raise ValueError(f"compaction_count must be >= 0, got {count}")
        return self.update(session_key, lambda s: replace(s, compaction_count=count))

    def record_compaction(self, session_key: str) -> int:
        """Increment the compaction count; returns the new count."""
        return self.update(session_key, lambda s: replace(s, compaction_count=s.compaction_count + 1)).compaction_count

    def mark_flushed(self, session_key: str, *, compaction_count: int | None = None) -> SessionFlushState:
        """Record a flush in the current cycle (or at ``compaction_count``, which is also stored)."""

        def apply(s: SessionFlushState) -> SessionFlushState:
            count = s.compaction_count if compaction_count is None else compaction_count
            return replace(s, compaction_count=count, flushed_at_count=count, flushed_at=time.time())

        return self.update(session_key, apply)
