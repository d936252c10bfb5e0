"""The node sections of a workspace's memory files (see :mod:`._sections`), read and written by
the core's :class:`openclaw_memory.files.records.RecordFiles` (appends append-only; removals under the
file's lock, atomic, durable, never through a symlink)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from openclaw_memory import MemoryIndex
from openclaw_memory.files.records import RecordFiles, RecordText

from llama_index_openclaw_memory._sections import KIND, Section, node_attrs_ok, section_of

__all__ = ["SectionFiles", "SectionText"]


@dataclass(frozen=True)
class SectionText:
    """A memory file's node sections, and its hand-written lines."""

    records: RecordText
    sections: list[Section]

    def own_text(self, start: int, end: int) -> tuple[int, int, str] | None:
        """The hand-written part of lines ``start..end`` (see :meth:`RecordText.own_text`)."""
        return self.records.own_text(start, end)


class SectionFiles:
    """The node sections of one memory workspace (parsed files are cached by size and mtime)."""

    def __init__(self, memory: MemoryIndex) -> None:
        self.memory = memory
        self._files = RecordFiles(memory.workspace, KIND, check=node_attrs_ok)
        self._sections: dict[str, SectionText] = {}

    def read(self, rel: str) -> SectionText | None:
        """The parsed file, or None when it is missing or unreadable (logged)."""
        parsed = self._files.read(rel)
        if parsed is None:
            self._sections.pop(rel, None)
            return None
        cached = self._sections.get(rel)
        if cached is None or cached.records is not parsed:
            cached = self._sections[rel] = SectionText(parsed, [section_of(r) for r in parsed.records])
        return cached

    def all_sections(self, extra: Sequence[str] = ()) -> dict[str, list[Section]]:
        """Sections of every indexed memory file (plus ``extra`` paths), by file."""
        out: dict[str, list[Section]] = {}
        for rel in sorted(set(self.memory.indexed_files("memory")) | set(extra)):
            parsed = self.read(rel)
            if parsed is not None and parsed.sections:
                out[rel] = parsed.sections
        return out

    def append(self, rel: str, blocks: Sequence[str]) -> None:
        """Append rendered sections to ``rel``, separated by blank lines."""
        self._files.append(rel, blocks)

    def remove(self, should_remove: Callable[[str, Section], bool], extra: Sequence[str] = ()) -> int:
        """Remove every section for which ``should_remove(path, section)`` is true; how many were removed."""
        paths = sorted(set(self.memory.indexed_files("memory")) | set(extra))
        return self._files.remove(paths, lambda rel, record: should_remove(rel, section_of(record)))
