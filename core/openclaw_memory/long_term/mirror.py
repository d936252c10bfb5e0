"""The optional Markdown mirror of long-term memories: one line per memory in the daily note.

Each stored memory is appended to ``memory/YYYY-MM-DD.md`` (through the append-only writer, so it
is readable, diffable and found by ``memory_search``) as::

    - [preference] I prefer dark mode <!-- ltm:6f1c...-uuid -->

Forgetting the memory removes exactly the line carrying its id, under the same file lock the
append writer uses; every other byte of the note is kept.
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import datetime, timezone, tzinfo
from pathlib import Path

from filelock import FileLock, Timeout

from openclaw_memory.append import LOCK_TIMEOUT_S, append_memory, daily_note_path, local_now, lock_path
from openclaw_memory.errors import OpenClawMemoryError

__all__ = ["MarkdownMirror", "mirror_line", "mirror_marker"]


def mirror_marker(memory_id: str) -> str:
    """The HTML comment that ties a daily-note line to a memory id."""
    return f"<!-- ltm:{memory_id} -->"


def mirror_line(memory_id: str, text: str, category: str) -> str:
    """The daily-note line for one memory (whitespace folded onto one line)."""
    one_line = re.sub(r"\s+", " ", text).strip().replace("<!--", "<!‐‐")
    return f"- [{category}] {one_line} {mirror_marker(memory_id)}"


class MarkdownMirror:
    """Appends memories to the workspace's daily notes and removes them again."""

    def __init__(self, workspace: str | os.PathLike[str], *, tz: str | tzinfo | None = None) -> None:
        self.workspace = Path(workspace).expanduser().resolve()
        self.tz = tz

    def note_for(self, created_at_ms: int) -> str:
        """The workspace-relative daily note of a memory created at ``created_at_ms``."""
        when = datetime.fromtimestamp(created_at_ms / 1000, tz=timezone.utc)
        return daily_note_path(local_now(self.tz, when).date())

    def append(self, memory_id: str, text: str, category: str, created_at_ms: int) -> str:
        """Append the memory's line to its daily note; returns the note's relative path."""
        rel = self.note_for(created_at_ms)
        append_memory(self.workspace, rel, mirror_line(memory_id, text, category))
        return rel

    def remove(self, memory_id: str, created_at_ms: int | None = None) -> list[str]:
        """Remove the lines marked with ``memory_id`` from the daily notes; returns the notes changed.

        Looks in the memory's own daily note first, then in every other daily note.
        """
        marker = mirror_marker(memory_id)
        notes_dir = self.workspace / "memory"
        candidates: list[Path] = []
        if created_at_ms is not None:
            candidates.append(self.workspace / self.note_for(created_at_ms))
        if notes_dir.is_dir():
            candidates += sorted(p for p in notes_dir.glob("*.md") if p not in candidates)
        changed = []
        for path in candidates:
            if path.is_file() and not path.is_symlink() and self._remove_from(path, marker):
                changed.append(path.relative_to(self.workspace).as_posix())
                break  # a memory is mirrored once
        return changed

    @staticmethod
    def _remove_from(path: Path, marker: str) -> bool:
        lock = FileLock(str(lock_path(path)), timeout=LOCK_TIMEOUT_S)
        try:
            lock.acquire()
        except Timeout:
            raise OpenClawMemoryError(f"could not lock {path} within {LOCK_TIMEOUT_S:.0f}s to remove a memory; retry") from None
        try:
            data = path.read_bytes()
            if marker.encode() not in data:
                return False
            lines = data.decode("utf-8").splitlines(keepends=True)
            kept = "".join(line for line in lines if marker not in line)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                    fh.write(kept)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.chmod(tmp, path.stat().st_mode & 0o777)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            return True
        finally:
            lock.release()
