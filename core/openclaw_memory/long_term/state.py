"""The local state of one agent's long-term memory: its write lock, intent log and capture cursors.

Everything lives in ``<state_dir>/memory/lancedb-state/<db and table key>/<agent_id>/``, so every
process (and thread) that writes the same agent's memories in the same LanceDB table shares it:

* ``write.lock``: held across processes around every write (duplicate check + insert, forget), so
  two processes storing the same fact store it once;
* ``intents/``: one small JSON file per write in progress (the memory id, never its text), written
  before LanceDB or the Markdown mirror is touched and removed once both are done; whatever a
  crash leaves here is finished by the next writer (:meth:`LongTermMemory.repair`);
* ``capture/``: the auto-capture cursor of each conversation thread (message keys already offered).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from openclaw_memory.errors import OpenClawMemoryError, StoreError

__all__ = ["MemoryState", "update_json"]

log = logging.getLogger(__name__)

#: How long a write waits for another process's write of the same agent.
WRITE_LOCK_TIMEOUT_S = 30.0


def _write_json(path: Path, data: Any) -> None:
    """Replace ``path`` with ``data`` as JSON, atomically and durably."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError) as exc:
        log.warning("long-term memory state file %s is unreadable (%s); ignoring it", path, exc)
        return None


def update_json(path: Path, change: Callable[[Any], tuple[Any, Any]], *, timeout: float = WRITE_LOCK_TIMEOUT_S) -> Any:
    """Under a file lock next to ``path``: ``new, result = change(current)``; save ``new``; return ``result``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path.with_name(path.name + ".lock")), timeout=timeout)
    try:
        with lock:
            new, result = change(_read_json(path))
            _write_json(path, new)
            return result
    except Timeout:
        raise OpenClawMemoryError(f"could not lock {path} within {timeout:.0f}s; another process holds it") from None


class MemoryState:
    """The state folder of one agent's memories in one LanceDB table."""

    def __init__(self, state_dir: str | os.PathLike[str], db_uri: str, table: str, agent_id: str) -> None:
        key = hashlib.sha256(f"{db_uri}\x00{table}".encode()).hexdigest()[:20]
        self.root = Path(state_dir).expanduser() / "memory" / "lancedb-state" / key / agent_id
        self._lock = FileLock(str(self.root / "write.lock"), timeout=WRITE_LOCK_TIMEOUT_S)

    @property
    def capture_dir(self) -> Path:
        """Where the auto-capture cursors of this agent's threads are kept."""
        return self.root / "capture"

    def _intents_dir(self) -> Path:
        return self.root / "intents"

    def _unwritable(self, exc: OSError) -> StoreError:
        return StoreError(
            f"the long-term memory state folder {self.root} cannot be written ({exc.strerror or exc}): it holds the "
            "write lock and the record of unfinished writes. Pass state_dir= (or set OPENCLAW_STATE_DIR) to a "
            "writable folder; nothing was stored or deleted"
        )

    @contextmanager
    def write_lock(self, *, blocking: bool = True) -> Iterator[bool]:
        """Hold the agent's cross-process write lock; yields False (without it) when ``blocking`` is
        False and another process holds it. StoreError when the state folder cannot be written."""
        try:
            self._intents_dir().mkdir(parents=True, exist_ok=True)
            self._lock.acquire(blocking=blocking)
        except OSError as exc:
            raise self._unwritable(exc) from exc
        except Timeout:
            if not blocking:
                yield False
                return
            raise StoreError(
                f"another process has held the long-term memory write lock {self.root / 'write.lock'} for "
                f"{WRITE_LOCK_TIMEOUT_S:.0f}s; retry (a stuck process may need stopping)"
            ) from None
        try:
            yield True
        finally:
            self._lock.release()

    def begin(self, intent: dict[str, Any]) -> Path:
        """Record a write about to start (durably); returns the record to pass to :meth:`done`."""
        path = self._intents_dir() / f"{intent['op']}-{uuid.uuid4().hex}.json"
        try:
            _write_json(path, intent)
        except OSError as exc:  # a full disk: nothing is written without its record
            raise self._unwritable(exc) from exc
        return path

    @staticmethod
    def done(record: Path) -> None:
        """The write recorded by :meth:`begin` finished: forget it."""
        record.unlink(missing_ok=True)

    def pending(self) -> list[tuple[Path, dict[str, Any]]]:
        """Writes that were begun and never finished (oldest first)."""
        folder = self._intents_dir()
        if not folder.is_dir():
            return []
        out = []
        for path in sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime_ns if p.exists() else 0):
            data = _read_json(path)
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                out.append((path, data))
            else:
                path.unlink(missing_ok=True)
        return out
