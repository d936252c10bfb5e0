"""Reading and writing the node sections of a workspace's memory files (see :mod:`._sections`).

Appends go through :func:`openclaw_memory.append.append_memory` (append-only, path-checked,
locked). Removals rewrite a file atomically (temporary file + ``os.replace``) under the same
sidecar lock the appends take, and only ever drop section lines.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout
from openclaw_memory import MemoryIndex
from openclaw_memory.append import LOCK_TIMEOUT_S, lock_path, append_memory
from openclaw_memory.discovery import UnreadableFileError, read_memory_text
from openclaw_memory.errors import MemoryPathError, OpenClawMemoryError

from llama_index_openclaw_memory._sections import OPEN_PREFIX, Section, parse_sections, remove_sections, section_lines

__all__ = ["SectionFiles", "SectionedFile"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SectionedFile:
    """A memory file's lines and the node sections in it (not :class:`openclaw_memory.types.MemoryFile`, the
    index's record of a file)."""

    lines: list[str]
    sections: list[Section]
    covered: frozenset[int]

    def own_text(self, start: int, end: int) -> tuple[int, int, str] | None:
        """The hand-written part of lines ``start..end`` (section lines left out) as
        ``(first line, last line, text)``, or None when those lines hold only sections and blanks."""
        own = [n for n in range(start, min(end, len(self.lines)) + 1) if n not in self.covered]
        while own and not self.lines[own[0] - 1].strip():
            own.pop(0)
        while own and not self.lines[own[-1] - 1].strip():
            own.pop()
        if not own:
            return None
        return own[0], own[-1], "\n".join(self.lines[n - 1] for n in own)


class SectionFiles:
    """The node sections of one memory workspace, with a parse cache keyed on size and mtime."""

    def __init__(self, memory: MemoryIndex) -> None:
        self.memory = memory
        self._cache: dict[str, tuple[tuple[int, int], SectionedFile]] = {}

    def path(self, rel: str) -> Path:
        """Absolute path of a workspace-relative memory path."""
        return Path(os.path.normpath(self.memory.workspace / rel))

    def read(self, rel: str) -> SectionedFile | None:
        """The parsed file, or None when it is missing or unreadable (logged)."""
        path = self.path(rel)
        try:
            st = path.lstat()
        except OSError:
            self._cache.pop(rel, None)
            return None
        key = (st.st_mtime_ns, st.st_size)
        cached = self._cache.get(rel)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            text = read_memory_text(path)
        except (UnreadableFileError, OSError) as exc:
            log.warning("cannot read %s: %s", rel, exc)
            return None
        if text is None:
            return None
        sections = parse_sections(text, where=rel) if OPEN_PREFIX in text else []
        parsed = SectionedFile(text.split("\n"), sections, frozenset(section_lines(sections)))
        self._cache[rel] = (key, parsed)
        return parsed

    def all_sections(self, extra: Sequence[str] = ()) -> dict[str, list[Section]]:
        """Sections of every indexed memory file (plus ``extra`` paths), by file."""
        paths = set(self.memory.store.file_records("memory")) | set(extra)
        out: dict[str, list[Section]] = {}
        for rel in sorted(paths):
            parsed = self.read(rel)
            if parsed is not None and parsed.sections:
                out[rel] = parsed.sections
        return out

    def append(self, rel: str, blocks: Sequence[str]) -> None:
        """Append rendered sections to ``rel``, separated by blank lines."""
        target = self.path(rel)
        prefix = "\n" if target.exists() and target.stat().st_size > 0 else ""
        append_memory(self.memory.workspace, rel, prefix + "\n".join(blocks), allowed={rel})
        self._cache.pop(rel, None)

    def remove(self, should_remove: Callable[[str, Section], bool], extra: Sequence[str] = ()) -> int:
        """Remove every section for which ``should_remove(path, section)`` is true; how many were removed."""
        removed = 0
        for rel, sections in self.all_sections(extra).items():
            if any(should_remove(rel, s) for s in sections):
                removed += self._rewrite(rel, lambda s, rel=rel: should_remove(rel, s))
        return removed

    def _rewrite(self, rel: str, should_remove: Callable[[Section], bool]) -> int:
        target = self.path(rel)
        if target.is_symlink():
            raise MemoryPathError(f"refusing to rewrite {rel}: it is a symbolic link")
        try:
            with FileLock(str(lock_path(target)), timeout=LOCK_TIMEOUT_S):
                text = read_memory_text(target)
                if text is None:
                    return 0
                new, removed = remove_sections(text, should_remove, where=rel)
                if removed:
                    _replace(target, new)
        except Timeout:
            raise OpenClawMemoryError(
                f"could not lock {rel} within {LOCK_TIMEOUT_S:.0f}s: another process keeps writing to it; retry later"
            ) from None
        self._cache.pop(rel, None)
        if removed:
            log.info("removed %d node section(s) from %s", removed, rel)
        return removed


def _replace(target: Path, text: str) -> None:
    """Atomically replace ``target`` with ``text``; delete it when nothing but whitespace is left."""
    if not text.strip():
        target.unlink()  # it held nothing but the store's own sections
        return
    tmp = target.with_name(f".{target.name}.tmp-{uuid.uuid4().hex[:12]}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        shutil.copymode(target, tmp)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
