"""The optional Markdown mirror of long-term memories: one line per memory in the daily note.

Each stored memory is appended to ``memory/YYYY-MM-DD.md`` (through the append-only writer, so it
is readable, diffable and found by ``memory_search``) as::

    - [preference] I prefer dark mode <!-- ltm:6f1c...-uuid --> <!-- origin: owner -->

Forgetting the memory removes exactly the line carrying its id, under the same file lock the
append writer uses; every other byte of the note is kept, and a note left empty is deleted.
:meth:`MarkdownMirror.source_of` names the line as consolidation cites it, so a copy promoted into
``MEMORY.md`` can be forgotten too.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone, tzinfo
from pathlib import Path

from openclaw_memory.files import safe_fs
from openclaw_memory.files.append import append_memory, daily_note_path, local_now
from openclaw_memory.files.discovery import MAX_DIR_DEPTH, is_ignored_dir
from openclaw_memory.files.memory_writes import refusing_unsafe_paths, rewrite_file

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

    def append(self, memory_id: str, text: str, category: str, created_at_ms: int, *, origin: str = "agent") -> str:
        """Append the memory's line to its daily note, marked with its ``origin``
        (:mod:`openclaw_memory.text.provenance`); returns the note's relative path."""
        rel = self.note_for(created_at_ms)
        append_memory(self.workspace, rel, mirror_line(memory_id, text, category), origin=origin)
        return rel

    def remove(self, memory_id: str, created_at_ms: int | None = None) -> list[str]:
        """Remove the lines marked with ``memory_id`` from the daily notes; returns the notes changed.

        Looks in the memory's own daily note first, then in every other note below ``memory/``. A
        note left with nothing but whitespace is deleted; one holding anything else is kept.
        Every note is opened by descriptor from the workspace down and rewritten under its lock
        (:func:`~openclaw_memory.files.memory_writes.rewrite_file`): a symlink below the workspace is
        never followed (MemoryPathError), and no lock or temporary file is left in the folder.
        """
        marker = mirror_marker(memory_id)
        for rel in self._candidate_notes(created_at_ms):
            if self._holds(rel, marker) and self._remove_from(rel, marker):
                return [rel]  # a memory is mirrored once
        return []

    def source_of(self, memory_id: str, created_at_ms: int | None = None) -> str | None:
        """The source ``path#Lx-Ly`` of the entry holding the line of ``memory_id`` (as consolidation
        grounds a promoted entry), or None when no daily note holds it."""
        from openclaw_memory.text.entries import parse_blocks

        marker = mirror_marker(memory_id)
        for rel in self._candidate_notes(created_at_ms):
            try:
                read = safe_fs.read_file(self.workspace, rel)
            except OSError:
                continue
            text = read[1].decode("utf-8", errors="replace") if read is not None else ""
            for block in parse_blocks(text) if marker in text else []:
                if block.entry and marker in block.text:
                    return f"{rel}#L{block.start + 1}-L{block.end}"
        return None

    def _candidate_notes(self, created_at_ms: int | None) -> list[str]:
        """The memory's own daily note first (when its creation time is known), then every other note."""
        candidates = [self.note_for(created_at_ms)] if created_at_ms is not None else []
        return candidates + [rel for rel in self._notes() if rel not in candidates]

    def _notes(self) -> list[str]:
        """The workspace-relative ``memory/**/*.md`` files, the notes memory_search reads (listed by descriptor,
        symlinks and tool folders left out, as discovery leaves them): a user may file old notes in subfolders."""
        try:
            with refusing_unsafe_paths("list memory/"), safe_fs.open_dir(self.workspace, "memory") as directory:
                entries = safe_fs.list_dir(directory)
        except FileNotFoundError:
            return []
        notes: list[str] = []
        pending = [(["memory"], entries)]
        while pending:
            parts, listed = pending.pop(0)
            for name, kind in listed:
                if kind == "file" and name.endswith(".md"):
                    notes.append("/".join([*parts, name]))
                elif kind == "dir" and not is_ignored_dir(name) and len(parts) <= MAX_DIR_DEPTH:
                    pending.append(([*parts, name], self._listing([*parts, name])))
        return notes

    def _listing(self, parts: list[str]) -> list[tuple[str, str]]:
        """The entries of the folder ``parts`` below the workspace ([] when it cannot be listed now)."""
        try:
            with safe_fs.open_dir(self.workspace, parts) as directory:
                return safe_fs.list_dir(directory)
        except OSError:
            return []

    def _holds(self, rel: str, marker: str) -> bool:
        """Whether ``rel`` mentions ``marker`` (read without a lock: only to skip the others)."""
        try:
            read = safe_fs.read_file(self.workspace, rel)
        except OSError:
            return True  # let the locked rewrite decide (and say why it refuses)
        return read is not None and marker.encode() in read[1]

    def _remove_from(self, rel: str, marker: str) -> bool:
        def drop(text: str | None) -> str | None:
            if text is None or marker not in text:
                return None
            return "".join(line for line in text.splitlines(keepends=True) if marker not in line)

        return rewrite_file(self.workspace, rel, drop)
