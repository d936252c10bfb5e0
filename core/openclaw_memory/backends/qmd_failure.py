"""A QMD failure remembered across processes: ``<state_dir>/agents/<agent>/qmd/failure.json``.

QMD failing (a hang up to a timeout, a missing command, missing models) costs every process that tries
it again; a failure is therefore kept for a while, and each process (each CLI call) that finds it falls
back to the builtin index at once instead of paying the timeout again. It is kept for the QMD settings that
failed: once they change (a fixed ``memory.qmd.command``, another search mode), QMD is tried again at once.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from openclaw_memory.files.memory_writes import replace_atomically

__all__ = ["FailureMemory", "RememberedFailure"]


@dataclass(frozen=True)
class RememberedFailure:
    """Why QMD failed, and when (``time.time()``)."""

    reason: str
    at: float


class FailureMemory:
    """A failure kept in ``path`` for ``hold_s`` seconds after it happened, for the ``settings`` (a text that
    changes when the QMD settings do) it happened with."""

    def __init__(self, path: Path, hold_s: float, settings: str = "") -> None:
        self.path = path
        self.hold_s = hold_s
        self._settings = hashlib.sha256(settings.encode("utf-8")).hexdigest()

    def recall(self) -> RememberedFailure | None:
        """The failure still held, or None (none, expired, one with other settings, or an unreadable file)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            failure = RememberedFailure(reason=str(data["reason"]), at=float(data["at"]))
            if data.get("settings") != self._settings:
                return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return failure if 0 <= time.time() - failure.at < self.hold_s else None

    def remember(self, reason: str) -> None:
        """Keep ``reason`` as the latest failure (written atomically; a write error is ignored)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            replace_atomically(self.path, json.dumps({"reason": reason, "at": time.time(),
                                                          "settings": self._settings}).encode("utf-8"))
        except OSError:
            pass

    def forget(self) -> None:
        """QMD worked: drop a kept failure."""
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
