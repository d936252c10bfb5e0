"""Forgetting: a memory removed from MEMORY.md and recorded so consolidation never promotes it again.

The record (``forgotten.json`` in the consolidation state directory) holds the source references
and the hashes of the normalised texts, not the texts. The daily notes are left as they are (they
are the record of what happened); only their lines stop being candidates.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from openclaw_memory.files.append import normalize_rel_path
from openclaw_memory.files.memory_writes import file_lock, replace_atomically
from openclaw_memory.config import MemoryConfig
from openclaw_memory.text.citations import parse_citation
from openclaw_memory.text.entries import normalized, parse_blocks, source_refs
from openclaw_memory.files.discovery import read_memory_text
from openclaw_memory.consolidation.records import memory_entries
from openclaw_memory.errors import MemoryArgumentError, MemoryPathError

__all__ = ["ForgottenSet", "forgotten_set", "resolve", "without"]


def _digest(text: str) -> str:
    return hashlib.sha256(normalized(text).encode()).hexdigest()


class ForgottenSet:
    """The forgotten sources and texts of one agent."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sources, self.digests = self._load()

    def _load(self) -> tuple[set[str], set[str]]:
        data = json.loads(self.path.read_text(encoding="utf-8")) if self.path.is_file() else {}
        return set(data.get("sources", [])), set(data.get("digests", []))

    def __contains__(self, item: tuple[str, str]) -> bool:
        source, text = item
        return source in self.sources or _digest(text) in self.digests

    def add(self, source: str | None, text: str | None) -> None:
        """Record a source reference and/or a text, and save (beside other processes and threads
        adding at the same time: none of their records is lost)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(self.path.with_name(f".{self.path.name}.lock"), self.path, "another process keeps writing it"):
            self.sources, self.digests = self._load()
            if source:
                self.sources.add(source)
            if text and normalized(text):
                self.digests.add(_digest(text))
            self._save()

    def _save(self) -> None:
        data = {"sources": sorted(self.sources), "digests": sorted(self.digests)}
        replace_atomically(self.path, json.dumps(data).encode("utf-8"))


def forgotten_set(state: Path) -> ForgottenSet:
    """The forgotten set kept in the state directory ``state``."""
    return ForgottenSet(state / "forgotten.json")


def resolve(config: MemoryConfig, what: str) -> tuple[str | None, str]:
    """``what`` (a source ``path#Lx-Ly``, or ``path#Lx`` as a search cites one line, or a memory's text) as
    (source or None, text)."""
    what = what.strip()
    if not what:
        raise MemoryArgumentError("forget needs the memory's text or its source (memory/2026-11-26.md#L3-L3)")
    cited = parse_citation(what)
    if cited is None:
        return None, what
    path, start, end = cited
    workspace = config.resolved_workspace()
    try:
        rel = normalize_rel_path(workspace, path)
    except MemoryPathError as exc:
        raise MemoryArgumentError(f"source {what!r}: {exc}") from None
    text = read_memory_text(workspace / rel, workspace) or ""
    lines = text.split("\n")[start - 1: end]
    return f"{rel}#L{start}-L{end}", "\n".join(lines)  # as a candidate's source is written


def without(memory_text: str, source: str | None, text: str) -> tuple[str, int]:
    """``memory_text`` without the entries that are ``text`` or cite ``source``; how many went. A line merged under
    an entry (indented, with its own source) that is ``text`` or cites ``source`` goes alone: the entry stays."""
    key = normalized(text)

    def named(lines: tuple[str, ...] | list[str]) -> bool:
        joined = "\n".join(lines)
        return bool((key and normalized(joined) == key) or (source and source in source_refs(joined)))

    kept: list[str] = []
    removed = 0
    blocks = parse_blocks(memory_text)
    entries = {block.start for block in memory_entries(memory_text, blocks)}  # not a program-written record's lines
    for block in blocks:
        if block.start not in entries:
            kept.extend(block.lines)
            continue
        head, merged = _split_merged(block.lines)
        if named(head) or (key and normalized(block.text) == key):
            removed += 1
            continue
        left = [line for line in merged if not named([line])]
        removed += len(merged) - len(left)
        kept.extend([*head, *left])
    return "\n".join(kept), removed


def _split_merged(lines: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """An entry's own lines, and the promoted lines merged under it (indented lines with a source, to its end)."""
    for index, line in enumerate(lines[1:], start=1):
        if line[:1] in (" ", "\t") and source_refs(line) and all(source_refs(rest) for rest in lines[index:]):
            return list(lines[:index]), list(lines[index:])
    return list(lines), []
