"""Records: blocks a program writes into a memory file, between two HTML comment markers.

A record of kind ``node`` (the LlamaIndex vector store's nodes) or ``item`` (the LangGraph
store's items) looks like::

    <!-- openclaw-memory:node {"id": "n1", "ref_doc_id": "doc-1"} -->
    We chose SQLite for the memory index.
    <!-- /openclaw-memory:node -->

The markers are invisible when the Markdown is rendered. The opening one carries the record's
attributes (a JSON object), so the Markdown alone is enough to rebuild what was written, and the
two mark exactly which lines a program wrote: removing or replacing a record changes those lines
and nothing else. Text outside records is hand-written memory and is never modified. The chunker
gives each record a chunk of its own (:data:`~openclaw_memory.text.chunker.RECORD_OPEN_PREFIX`).

The pure functions (:func:`render_record`, :func:`parse_records`, :func:`remove_records`,
:func:`replace_record`, :func:`append_record`) do no I/O. :class:`RecordFiles` reads and writes
them in a workspace: appends through :func:`openclaw_memory.files.append.append_memory`; rewrites through
:func:`openclaw_memory.files.memory_writes.rewrite_file` (the file's lock held, no symbolic link below the
workspace followed, the file replaced atomically and durably).
"""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.files.append import AllowedPaths, append_memory, normalize_rel_path
from openclaw_memory.text.chunker import (
    RECORD_CLOSE_PREFIX,
    RECORD_KIND,
    RECORD_OPEN_PREFIX,
    RecordMarker,
    parse_record_marker,
)
from openclaw_memory.files.discovery import UnreadableFileError, read_memory_text
from openclaw_memory.files.memory_writes import rewrite_file

__all__ = ["Record", "RecordFiles", "RecordText", "append_record", "parse_records", "record_lines", "remove_records",
           "render_record", "replace_record"]

log = logging.getLogger(__name__)

#: Checks a record's attributes; a record whose attributes fail it counts as hand-written text.
AttrsCheck = Callable[[dict[str, Any]], bool]


def _kind(kind: str) -> str:
    if not RECORD_KIND.fullmatch(kind):
        raise ValueError(f"record kind {kind!r} must be lower-case letters, digits, '-' or '_'")
    return kind


def _open_prefix(kind: str) -> str:
    return f"{RECORD_OPEN_PREFIX}{_kind(kind)} "


def _close_line(kind: str) -> str:
    return f"{RECORD_CLOSE_PREFIX}{_kind(kind)} -->"


@dataclass(frozen=True)
class Record:
    """One record: its kind, attributes, body and where it sits (1-based line numbers, inclusive).

    ``open_line``/``close_line`` are the marker lines; the body is on the lines between them.
    """

    kind: str
    attrs: dict[str, Any]
    body: str
    open_line: int
    close_line: int

    @property
    def start_line(self) -> int:
        """First line of the body (the line after the opening marker)."""
        return self.open_line + 1

    @property
    def end_line(self) -> int:
        """Last line of the body (the line before the closing marker)."""
        return max(self.open_line + 1, self.close_line - 1)


def _json_attrs(attrs: Mapping[str, Any], what: str) -> str:
    try:
        # attribute names in a stable (sorted) order; nested objects (a node's metadata) keep the writer's order
        text = json.dumps({k: attrs[k] for k in sorted(attrs)}, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise MemoryArgumentError(
            f"the attributes of {what} (its metadata) must be JSON-serializable to be written to Markdown ({exc}); "
            "keep str/int/float/bool/None values, lists and dicts of them"
        ) from None
    # "-->" inside a value would end the HTML comment early; "\u003e" is the same JSON string.
    return text.replace(">", "\\u003e")


def render_record(kind: str, attrs: Mapping[str, Any], body: str, *, what: str = "record") -> str:
    """The Markdown of one record: opening marker, body (trailing newlines dropped), closing marker,
    ending with a newline.

    Raises MemoryArgumentError (a ValueError) for an empty body, a body containing a record marker line (of any kind: it
    would open or close a record inside this one), or attributes that are not JSON-serializable.
    ``what`` names the record in those messages.
    """
    text = body.rstrip("\n")
    if not text.strip():
        raise MemoryArgumentError(f"{what} has no text; only records with text can be written to memory")
    _kind(kind)
    for line in text.split("\n"):
        if parse_record_marker(line) is not None:
            raise MemoryArgumentError(f"{what} contains an openclaw-memory marker line; remove it from the text")
    return f"{_open_prefix(kind)}{_json_attrs(attrs, what)} -->\n{text}\n{_close_line(kind)}\n"


def parse_records(text: str, kind: str, *, check: AttrsCheck | None = None, where: str = "") -> list[Record]:
    """Every well-formed record of ``kind`` in a file's text, in file order.

    A marker that is malformed (not a JSON object, or refused by ``check``), unclosed, or opened
    inside another record does not make a record: its lines count as hand-written (logged once
    per call, naming ``where``).
    """
    prefix = _open_prefix(kind)
    lines = text.split("\n")
    out: list[Record] = []
    open_at: int | None = None
    attrs: dict[str, Any] | None = None
    problems = 0
    for no, line in enumerate(lines, start=1):
        if not line.startswith("<!-- "):
            continue
        marker = parse_record_marker(line)
        if marker is not None and marker.kind == kind and not marker.opening:
            if open_at is None or attrs is None:
                problems += 1
                continue
            out.append(Record(kind, attrs, "\n".join(lines[open_at:no - 1]), open_at, no))
            open_at, attrs = None, None
            continue
        parsed = _attrs(kind, marker, check)
        if parsed is None:
            if line.startswith(prefix):
                problems += 1
            continue
        if open_at is not None:
            problems += 1  # an unclosed record: the earlier opening is hand-written text
        open_at, attrs = no, parsed
    if open_at is not None:
        problems += 1
    if problems:
        log.warning("%s: ignored %d malformed openclaw-memory %s marker(s); those lines count as hand-written",
                    where or "memory file", problems, kind)
    return out


def _attrs(kind: str, marker: RecordMarker | None, check: AttrsCheck | None) -> dict[str, Any] | None:
    """The attributes of ``marker`` when it opens a well-formed record of ``kind`` that ``check`` accepts."""
    if marker is None or not marker.opening or marker.kind != kind or marker.attrs is None:
        return None
    if check is not None and not check(marker.attrs):
        return None
    return marker.attrs


def record_lines(records: Iterable[Record]) -> set[int]:
    """Line numbers (markers included) that belong to ``records``."""
    return {n for r in records for n in range(r.open_line, r.close_line + 1)}


def remove_records(text: str, records: Sequence[Record]) -> str:
    """``text`` without ``records`` (parsed from it).

    Every other line is kept byte for byte, except the blank separator line written between
    records: the one before a removed record goes with it (the one after, for a record at the
    top of the file).
    """
    if not records:
        return text
    lines = text.split("\n")
    drop: set[int] = set()
    for r in sorted(records, key=lambda r: r.open_line):
        drop.update(range(r.open_line, r.close_line + 1))
        before, after = r.open_line - 1, r.close_line + 1
        if before >= 1 and before not in drop and not lines[before - 1].strip():
            drop.add(before)
        elif all(n in drop for n in range(1, r.open_line)) and after < len(lines) and not lines[after - 1].strip():
            drop.add(after)
    return "\n".join(line for no, line in enumerate(lines, start=1) if no not in drop)


def replace_record(text: str, record: Record, block: str) -> str:
    """``text`` with ``record`` (parsed from it) replaced in place by ``block`` (a rendered record)."""
    lines = text.split("\n")
    lines[record.open_line - 1:record.close_line] = block.rstrip("\n").split("\n")
    return "\n".join(lines)


def append_record(text: str, block: str, *, header: str | None = None) -> str:
    """``text`` with ``block`` (a rendered record) added at the end after a blank line, ending with
    a newline; an empty or blank ``text`` starts with ``header`` (a line) when given."""
    kept = text.rstrip("\n").split("\n") if text.strip() else []
    if not kept and header is not None:
        kept = [header]
    body = block.rstrip("\n").split("\n")
    return "\n".join([*kept, "", *body] if kept else body) + "\n"


@dataclass(frozen=True)
class RecordText:
    """A memory file's lines and its records of one kind."""

    lines: list[str]
    records: list[Record]
    covered: frozenset[int] = field(default=frozenset())

    @property
    def text(self) -> str:
        """The file's text."""
        return "\n".join(self.lines)

    def own_text(self, start: int, end: int) -> tuple[int, int, str] | None:
        """The hand-written part of lines ``start..end`` (record lines left out) as
        ``(first line, last line, text)``, or None when those lines hold only records and blanks."""
        own = [n for n in range(start, min(end, len(self.lines)) + 1) if n not in self.covered]
        while own and not self.lines[own[0] - 1].strip():
            own.pop(0)
        while own and not self.lines[own[-1] - 1].strip():
            own.pop()
        if not own:
            return None
        return own[0], own[-1], "\n".join(self.lines[n - 1] for n in own)


class RecordFiles:
    """The records of one kind in a workspace's memory files: cached reads, appends and rewrites.

    ``check`` validates a record's attributes (see :func:`parse_records`). Paths are
    workspace-relative; a path with ``..`` or outside the workspace raises MemoryPathError.
    """

    def __init__(self, workspace: str | os.PathLike[str], kind: str, *, check: AttrsCheck | None = None) -> None:
        self.workspace = Path(workspace)
        self.kind = _kind(kind)
        self._check = check
        self._prefix = _open_prefix(kind)
        self._cache: dict[str, tuple[tuple[int, int], RecordText]] = {}

    def _rel(self, rel: str) -> str:
        return normalize_rel_path(self.workspace, rel)

    def parse(self, text: str, *, where: str = "") -> RecordText:
        """Records of this kind in ``text`` (no I/O)."""
        records = parse_records(text, self.kind, check=self._check, where=where) if self._prefix in text else []
        return RecordText(text.split("\n"), records, frozenset(record_lines(records)))

    def read(self, rel: str) -> RecordText | None:
        """The parsed file (``rel`` as the index names it), or None when it is missing or unreadable
        (logged). A symbolic link below the workspace is not followed (as for every memory read)."""
        if ".." in rel.split("/"):
            return None
        path = self.workspace / rel
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
            text = read_memory_text(path, self.workspace)
        except (UnreadableFileError, OSError) as exc:
            log.warning("cannot read %s: %s", rel, exc)
            return None
        if text is None:
            return None
        parsed = self.parse(text, where=rel)
        self._cache[rel] = (key, parsed)
        return parsed

    def append(self, rel: str, blocks: Sequence[str], *, allowed: AllowedPaths = None) -> None:
        """Append rendered records to ``rel`` (after a blank line when it has text), through
        :func:`~openclaw_memory.files.append.append_memory` (append-only, locked, fsynced, no symlinks)."""
        rel = self._rel(rel)
        try:
            st = os.lstat(self.workspace / rel)
        except OSError:
            st = None  # missing (or refused: append_memory says why)
        prefix = "\n" if st is not None and stat.S_ISREG(st.st_mode) and st.st_size > 0 else ""
        append_memory(self.workspace, rel, prefix + "\n".join(blocks), allowed={rel} if allowed is None else allowed,
                      keep_record_markers=True)
        self._cache.pop(rel, None)

    def edit(self, rel: str, change: Callable[[RecordText], str | None], *, create: bool = False) -> bool:
        """Rewrite ``rel`` with what ``change`` makes of its current content (None: leave it).

        Holds the file's lock from the read to the replace, so no append or other edit is lost
        (:func:`~openclaw_memory.files.memory_writes.rewrite_file`). The new text replaces the file
        atomically and durably; a text left blank deletes the file. A missing file is seen as
        empty when ``create`` (and is then made, parent directories too), else nothing is done.
        Returns whether the file changed. Raises MemoryPathError when a component of the path
        below the workspace is a symbolic link or not a directory, or the file has another hard
        link, and OpenClawMemoryError when the lock is not free within 30 s.
        """
        rel = self._rel(rel)

        def rewrite(old: str | None) -> str | None:
            return change(self.parse(old or "", where=rel))

        try:
            return rewrite_file(self.workspace, rel, rewrite, create=create)
        finally:
            self._cache.pop(rel, None)

    def remove(self, paths: Iterable[str], should_remove: Callable[[str, Record], bool]) -> int:
        """Remove every record of ``paths`` for which ``should_remove(path, record)`` is true (each
        file rewritten as by :meth:`edit`); how many were removed."""
        removed = 0
        for rel in paths:
            parsed = self.read(rel)
            if parsed is None or not any(should_remove(rel, r) for r in parsed.records):
                continue
            count = 0

            def drop(current: RecordText, rel: str = rel) -> str | None:
                nonlocal count
                doomed = [r for r in current.records if should_remove(rel, r)]
                count = len(doomed)
                return remove_records(current.text, doomed) if doomed else None

            self.edit(rel, drop)
            if count:
                log.info("removed %d %s record(s) from %s", count, self.kind, rel)
            removed += count
        return removed
