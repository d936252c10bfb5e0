"""Per-session flush bookkeeping (spec §8.2): a small ``sessions.json``-like file holding each
session's compaction count and the count at which the pre-compaction memory flush last ran.

Every update holds a file lock and replaces the file atomically, so several processes serving
the same agent can share one store. :meth:`SessionStateStore.claim_flush` is the atomic
"decide and record" step that lets exactly one of them run the flush of a compaction cycle.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from openclaw_memory.files.append import LOCK_TIMEOUT_S
from openclaw_memory.files.memory_writes import replace_atomically
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import MemoryArgumentError, OpenClawMemoryError

__all__ = ["SessionFlushState", "SessionStateStore"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SessionFlushState:
    """A session's compaction count and the count at which the memory flush last ran."""

    compaction_count: int = 0
    flushed_at_count: int | None = None
    flushed_at: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


_KNOWN = ("compactionCount", "memoryFlushCompactionCount", "memoryFlushAt")


def _state_from_json(entry: Any) -> SessionFlushState:
    if not isinstance(entry, dict):
        return SessionFlushState()
    flushed = entry.get("memoryFlushCompactionCount")
    at = entry.get("memoryFlushAt")
    return SessionFlushState(
        compaction_count=_count(entry.get("compactionCount")),
        flushed_at_count=int(flushed) if isinstance(flushed, (int, float)) else None,
        flushed_at=at / 1000.0 if isinstance(at, (int, float)) else None,
        extra={k: v for k, v in entry.items() if k not in _KNOWN},
    )


def _count(value: Any) -> int:
    """A stored compaction count: a whole number >= 0 (or a string holding one), else 0 (a hand-edited or foreign
    value is no reason to fail every flush)."""
    if isinstance(value, bool):
        return 0
    try:
        number = int(value) if isinstance(value, (int, float, str)) else 0
    except (ValueError, OverflowError):
        return 0
    return max(0, number)


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
    Safe to share between threads and processes.
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

    def _read(self, *, set_aside: bool = False) -> dict[str, Any]:
        """The stored data; ``{}`` when the file is missing or unreadable. ``set_aside`` (before a write): an
        unreadable file is first renamed ``<name>.unreadable-<time>``, so the write does not replace what it held."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (ValueError, UnicodeDecodeError) as exc:
            return self._unreadable(f"unreadable ({exc})", set_aside)
        if not isinstance(data, dict):
            return self._unreadable("not a JSON object", set_aside)
        return data

    def _unreadable(self, why: str, set_aside: bool) -> dict[str, Any]:
        if not set_aside:
            log.warning("session state %s is %s; reading it as empty", self.path, why)
            return {}
        kept = self.path.with_name(f"{self.path.name}.unreadable-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        os.replace(self.path, kept)
        log.warning("session state %s is %s; kept as %s, starting from empty state", self.path, why, kept)
        return {}

    def _write(self, data: dict[str, Any]) -> None:
        text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True)
        replace_atomically(self.path, text.encode("utf-8"), mode=0o600)  # private, as it always was

    @contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        """Hold the file lock; yield the current data (the caller writes it back if it changes it)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except Timeout:
            raise OpenClawMemoryError(
                f"could not lock session state {self.path} within {LOCK_TIMEOUT_S:.0f}s; another process holds it"
            ) from None
        try:
            yield self._read(set_aside=True)
        finally:
            self._lock.release()

    def get(self, session_key: str) -> SessionFlushState:
        """The stored state of ``session_key`` (zeros when unknown)."""
        return _state_from_json(self._read().get(session_key))

    def all(self) -> dict[str, SessionFlushState]:
        """Every stored session's state."""
        return {k: _state_from_json(v) for k, v in self._read().items()}

    def update(self, session_key: str, fn: Callable[[SessionFlushState], SessionFlushState]) -> SessionFlushState:
        """Apply ``fn`` to the session's state under the file lock and save atomically."""
        with self._locked() as data:
            new = fn(_state_from_json(data.get(session_key)))
            data[session_key] = _state_to_json(new)
            self._write(data)
            return new

    def set_compaction_count(self, session_key: str, count: int) -> SessionFlushState:
        """Store the caller's authoritative compaction count."""
        if count < 0:
            raise MemoryArgumentError(f"compaction_count must be >= 0, got {count}")
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

    def claim_flush(self, session_key: str, compaction_count: int | None = None) -> bool:
        """Atomically claim the flush of a compaction cycle; True for exactly one caller per cycle.

        ``compaction_count`` is the cycle the caller decided to flush (default: the stored
        current one). The claim fails when that cycle was already flushed or claimed, or when
        the stored count has moved past it (the caller's view is stale). A successful claim
        records the flush, as :meth:`mark_flushed` would, in the same locked read-modify-write,
        so two threads or processes calling at the same moment cannot both win.
        """
        if compaction_count is not None and compaction_count < 0:
            raise MemoryArgumentError(f"compaction_count must be >= 0, got {compaction_count}")
        with self._locked() as data:
            state = _state_from_json(data.get(session_key))
            cycle = state.compaction_count if compaction_count is None else compaction_count
            if cycle < state.compaction_count or state.flushed_at_count == cycle:
                return False
            new = replace(state, compaction_count=cycle, flushed_at_count=cycle, flushed_at=time.time())
            data[session_key] = _state_to_json(new)
            self._write(data)
            return True
