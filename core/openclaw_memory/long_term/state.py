"""The local state of one agent's long-term memory: its write lock, intent log and capture cursors.

The write lock is held across processes around every write (duplicate check + insert, forget), so two
processes storing the same fact store it once. For a local LanceDB folder it lives next to the data,
``<db>/.openclaw-locks/<table>/<agent_id>.lock``, so processes on hosts with their own state dirs that share
the folder (a network mount) take the same lock. An object store (``s3://``, ``gs://``, ``az://``) holds
no lock file: there the lock is ``write.lock`` in the state folder below, and only processes sharing the
state dir are kept apart (two hosts with their own state dirs can both store the same fact).

The rest lives in ``<state_dir>/memory/lancedb-state/<db and table key>/<agent_id>/``:

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
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from openclaw_memory.errors import OpenClawMemoryError, StoreError
from openclaw_memory.files.memory_writes import file_lock, replace_atomically

__all__ = ["MemoryState", "is_object_store_uri", "update_json", "write_lock_path"]

log = logging.getLogger(__name__)

#: How long a write waits for another process's write of the same agent.
WRITE_LOCK_TIMEOUT_S = 30.0


def _write_json(path: Path, data: Any) -> None:
    """Replace ``path`` with ``data`` as JSON, atomically and durably, as a private (0o600) file."""
    replace_atomically(path, json.dumps(data, ensure_ascii=False, sort_keys=True).encode("utf-8"), mode=0o600)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError) as exc:
        log.warning("long-term memory state file %s is unreadable (%s); ignoring it", path, exc)
        return None


def update_json(path: Path, change: Callable[[Any], tuple[Any, Any]], *, timeout: float = WRITE_LOCK_TIMEOUT_S) -> Any:
    """Under a file lock next to ``path``: ``new, result = change(current)``; save ``new``; return ``result``
    (OpenClawMemoryError when another process holds the lock for ``timeout`` seconds)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(path.with_name(path.name + ".lock"), path, "another process holds it", timeout=timeout):
        new, result = change(_read_json(path))
        _write_json(path, new)
        return result


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_object_store_uri(db_uri: str) -> bool:
    """Whether ``db_uri`` is a URI (``s3://...``, ``gs://``, ``az://``), not a local folder: no lock file can live
    next to its data."""
    return _SCHEME.match(db_uri) is not None


def write_lock_path(state_root: Path, db_uri: str, table: str, agent_id: str) -> Path:
    """The write lock of ``agent_id``'s memories in ``table``: next to the data for a local LanceDB folder,
    in the agent's state folder ``state_root`` for an object store."""
    if is_object_store_uri(db_uri):
        return state_root / "write.lock"
    return Path(db_uri) / ".openclaw-locks" / table / f"{agent_id}.lock"


class MemoryState:
    """The state folder of one agent's memories in one LanceDB table."""

    def __init__(self, state_dir: str | os.PathLike[str], db_uri: str, table: str, agent_id: str) -> None:
        key = hashlib.sha256(f"{db_uri}\x00{table}".encode()).hexdigest()[:20]
        self.root = Path(state_dir).expanduser() / "memory" / "lancedb-state" / key / agent_id
        self.lock_file = write_lock_path(self.root, db_uri, table, agent_id)

    @property
    def capture_dir(self) -> Path:
        """Where the auto-capture cursors of this agent's threads are kept."""
        return self.root / "capture"

    def _intents_dir(self) -> Path:
        return self.root / "intents"

    def _unwritable(self, exc: OSError) -> StoreError:
        return StoreError(
            f"the long-term memory state folder {self.root} cannot be written ({exc.strerror or exc}): it holds the "
            "record of unfinished writes. Pass state_dir= (or set OPENCLAW_STATE_DIR) to a writable folder; "
            "nothing was stored or deleted"
        )

    def _unlockable(self, exc: OSError) -> StoreError:
        if self.lock_file.is_relative_to(self.root):
            return self._unwritable(exc)
        return StoreError(
            f"the long-term memory write lock {self.lock_file} cannot be made ({exc.strerror or exc}): writing "
            "memories needs write access to the LanceDB folder; nothing was stored or deleted"
        )

    @contextmanager
    def write_lock(self, *, blocking: bool = True) -> Iterator[bool]:
        """Hold the agent's cross-process write lock; yields False (without it) when ``blocking`` is
        False and another process holds it. StoreError when the lock or the state folder cannot be made."""
        with ExitStack() as held:
            try:
                self._intents_dir().mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise self._unwritable(exc) from exc
            try:
                self.lock_file.parent.mkdir(parents=True, exist_ok=True)
                held.enter_context(file_lock(self.lock_file, self.lock_file, "another process holds it",
                                             timeout=WRITE_LOCK_TIMEOUT_S if blocking else 0))
            except OSError as exc:
                raise self._unlockable(exc) from exc
            except OpenClawMemoryError:
                if not blocking:
                    yield False
                    return
                raise StoreError(
                    f"another process has held the long-term memory write lock {self.lock_file} for "
                    f"{WRITE_LOCK_TIMEOUT_S:.0f}s; retry (a stuck process may need stopping)"
                ) from None
            yield True

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
