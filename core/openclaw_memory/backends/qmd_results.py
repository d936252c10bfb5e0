"""Parse QMD's JSON output and map its hits to :class:`~openclaw_memory.types.SearchHit` (spec §9.3)."""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_memory.text.chunker import chunk_markdown
from openclaw_memory.files.discovery import read_memory_text
from openclaw_memory.errors import OpenClawMemoryError, QmdError
from openclaw_memory.types import SearchHit, Source

__all__ = ["ChunkSpans", "FileMap", "QmdCollection", "QmdItem", "map_item", "parse_items", "slug_path"]

_NO_RESULTS = ("no results found", "no results")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? @@[^\n]*(?:\n|$)")
_NUMBERED = re.compile(r"^\d+: ?")


@dataclass(frozen=True)
class QmdCollection:
    """A QMD collection this library manages: its name, root folder, glob and source."""

    name: str
    root: Path
    pattern: str
    source: Source = "memory"


@dataclass(frozen=True)
class QmdItem:
    """One QMD hit as printed by ``qmd search --json`` or returned by the MCP ``query`` tool."""

    collection: str
    file: str  # collection-relative path
    score: float
    snippet: str
    start_line: int | None
    end_line: int | None
    line: int | None
    docid: str = ""


def _first_array(text: str) -> str | None:
    """The first balanced ``[...]`` in ``text`` (strings and escapes respected), or None."""
    start = text.find("[")
    while start != -1:
        depth, in_str, esc = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                esc = (ch == "\\") and not esc
                if ch == '"' and not esc:
                    in_str = False
                elif ch != "\\":
                    esc = False
                continue
            if ch == '"':
                in_str = True
            elif ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    return text[start:i + 1]
        start = text.find("[", start + 1)
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and not math.isnan(value):
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _split_file(raw: str, collection: str | None) -> tuple[str, str]:
    """``qmd://coll/path`` or ``coll/path`` (MCP display path) → (collection, path)."""
    if raw.startswith("qmd://"):
        raw = raw[len("qmd://"):]
        coll, _, rel = raw.partition("/")
        return coll, rel
    if collection:
        return collection, raw[len(collection) + 1:] if raw.startswith(collection + "/") else raw
    coll, _, rel = raw.partition("/")
    return coll, rel


def to_items(rows: Sequence[Any]) -> list[QmdItem]:
    """Decoded JSON rows → items; rows without a file are skipped."""
    out: list[QmdItem] = []
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("file"), str):
            continue
        coll, rel = _split_file(row["file"], row.get("collection") if isinstance(row.get("collection"), str) else None)
        score = row.get("score")
        snippet = row.get("snippet") if isinstance(row.get("snippet"), str) else row.get("body")
        out.append(QmdItem(
            collection=coll, file=rel,
            score=float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else 0.0,
            snippet=snippet if isinstance(snippet, str) else "",
            start_line=_int(row.get("start_line", row.get("startLine"))),
            end_line=_int(row.get("end_line", row.get("endLine"))),
            line=_int(row.get("line")),
            docid=str(row.get("docid") or ""),
        ))
    return out


def parse_items(stdout: str, stderr: str = "") -> list[QmdItem]:
    """QMD's ``--json`` stdout → items. "No results found" → ``[]``; anything else that is not
    a JSON array (nor contains one) raises :class:`QmdError`."""
    text = stdout.strip()
    if not text:
        if any(m in stderr.lower() for m in _NO_RESULTS):
            return []
        raise QmdError(f"qmd printed nothing on stdout (expected a JSON array); stderr: {stderr.strip()[-300:]!r}")
    if text.lower().startswith(_NO_RESULTS):
        return []
    try:
        rows = json.loads(text)
    except ValueError:
        found = _first_array(text)
        try:
            rows = json.loads(found) if found is not None else None
        except ValueError:
            rows = None
    if not isinstance(rows, list):
        raise QmdError(f"qmd did not print a JSON array: {text[:200]!r}")
    return to_items(rows)


def split_snippet(snippet: str, numbered: bool = False) -> tuple[str, int | None, int | None]:
    """Drop the ``@@ -start,count @@`` header (and MCP's ``N: `` line numbers): (text, start, count)."""
    if numbered:
        snippet = "\n".join(_NUMBERED.sub("", ln, count=1) for ln in snippet.split("\n"))
    m = _HUNK.match(snippet)
    if not m:
        return snippet, None, None
    return snippet[m.end():], int(m.group(1)), int(m.group(2)) if m.group(2) else None


def slug_path(rel: str) -> str:
    """QMD's path normalisation (``handelize``), lower-cased, to match its paths to real files."""
    parts = [p for p in rel.replace("___", "/").split("/") if p]
    out = []
    for i, seg in enumerate(parts):
        ext = ""
        if i == len(parts) - 1:
            m = re.search(r"(\.[A-Za-z0-9]+)$", seg)
            if m:
                ext, seg = m.group(1), seg[: -len(m.group(1))]
        seg = re.sub(r"[^\w$]+|_+", "-", seg).strip("-")
        if seg or ext:
            out.append(seg + ext)
    return "/".join(out).lower()


class FileMap:
    """Maps QMD's collection paths back to real files.

    QMD normalises file names (``Runbook Alpha.md`` → ``runbook-alpha.md``). A path that names a
    real file is used as is; any other is matched by slug against one listing of its collection,
    kept until :meth:`clear` (call it after each ``qmd update``: only then can QMD know of other
    files). A name missing from a listing older than ``relist_after_s`` (another process may have
    updated QMD) lists the collection once more. So searches walk a collection at most once per
    update, or per ``relist_after_s`` at worst, never once per hit. Thread-safe.
    """

    def __init__(self, relist_after_s: float = 2.0) -> None:
        self.relist_after_s = relist_after_s
        self._lock = threading.Lock()
        self._slugs: dict[str, tuple[float, dict[str, Path]]] = {}

    def clear(self) -> None:
        """Forget every listing (the next normalised name lists its collection again)."""
        with self._lock:
            self._slugs.clear()

    @staticmethod
    def _list(coll: QmdCollection) -> dict[str, Path]:
        """slug → file for the files under the collection's root; only its top level when the glob
        cannot reach below it (``MEMORY.md`` of the workspace root, ``*.md``)."""
        found: dict[str, Path] = {}
        if "/" not in coll.pattern and "**" not in coll.pattern:
            with os.scandir(coll.root) as entries:
                for entry in sorted(entries, key=lambda e: e.name):
                    if entry.is_file():
                        found.setdefault(slug_path(entry.name), Path(entry.path))
            return found
        for dirpath, dirs, files in os.walk(coll.root):
            dirs.sort()
            for name in sorted(files):
                cand = Path(dirpath) / name
                found.setdefault(slug_path(cand.relative_to(coll.root).as_posix()), cand)
        return found

    def real_file(self, coll: QmdCollection, rel: str) -> Path:
        """The file QMD means by ``rel`` in ``coll`` (``coll.root / rel`` when nothing matches)."""
        path = coll.root / rel
        if path.is_file():
            return path
        want = slug_path(rel)
        with self._lock:
            listed = self._slugs.get(coll.name)
            now = time.monotonic()
            if listed is None or (want not in listed[1] and now - listed[0] >= self.relist_after_s):
                listed = self._slugs[coll.name] = (now, self._list(coll))
            return listed[1].get(want, path)


class ChunkSpans:
    """The builtin index's chunks of a file (:func:`~openclaw_memory.text.chunker.chunk_markdown` with the
    configured size and overlap), to widen a QMD hit to the chunk around its snippet.

    QMD's hits carry a snippet of about two lines; a caller of ``memory_search`` / ``memory_get`` expects
    what the builtin index returns: a chunk of up to ``tokens`` (estimated) tokens. Each file's chunks are
    kept (up to ``max_files`` files, least recently used dropped) until its size or mtime changes.
    Thread-safe."""

    def __init__(self, tokens: int, overlap: int, max_files: int = 512) -> None:
        self.tokens = tokens
        self.overlap = overlap
        self.max_files = max_files
        self._lock = threading.Lock()
        self._files: OrderedDict[Path, tuple[tuple[int, int], list[tuple[int, int, str]]]] = OrderedDict()

    def _chunks(self, path: Path, root: Path) -> list[tuple[int, int, str]] | None:
        """``(start_line, end_line, text)`` of each chunk of ``path`` (read beneath ``root``); None when it
        cannot be read."""
        try:
            st = path.stat()
            key = (st.st_mtime_ns, st.st_size)
            with self._lock:
                known = self._files.get(path)
                if known is not None and known[0] == key:
                    self._files.move_to_end(path)
                    return known[1]
            text = read_memory_text(path, root if root in path.parents else None)
        except (OSError, OpenClawMemoryError):
            return None
        if text is None:
            return None
        chunks = [(c.start_line, c.end_line, c.text) for c in chunk_markdown(text, self.tokens, self.overlap)]
        with self._lock:
            self._files[path] = (key, chunks)
            self._files.move_to_end(path)
            while len(self._files) > self.max_files:
                self._files.popitem(last=False)
        return chunks

    def around(self, path: Path, root: Path, start: int, end: int) -> tuple[int, int, str] | None:
        """The chunk of ``path`` holding most of lines ``start``..``end`` (of two, the one whose middle
        is nearer theirs, then the earlier): ``(start_line, end_line, text)``; None when the file cannot
        be read or has no chunk there (changed since QMD indexed it)."""
        best: tuple[int, float, int] | None = None
        picked = None
        for i, (a, b, text) in enumerate(self._chunks(path, root) or []):
            shared = min(b, end) - max(a, start) + 1
            if shared <= 0:
                continue
            rank = (-shared, abs((a + b) - (start + end)) / 2, i)
            if best is None or rank < best:
                best, picked = rank, (a, b, text)
        return picked


def _inside(root: Path, path: Path) -> bool:
    """Whether ``path``, with its ``..`` resolved by name, lies beneath ``root`` (QMD's odd output may name
    ``../x`` or an absolute path; the search reads no file outside a collection, as ``memory_get`` does not)."""
    resolved = Path(os.path.normpath(path))
    return resolved != root and resolved.is_relative_to(root)


def map_item(item: QmdItem, collections: dict[str, QmdCollection], workspace: Path, *,
             numbered: bool, max_snippet_chars: int, files: FileMap,
             spans: ChunkSpans | None = None) -> SearchHit | None:
    """One item → a hit with a workspace-relative path (``qmd/<collection>/<rel>`` outside the
    workspace), line range and snippet; None when the collection is not one of ours or the path leaves
    it. ``files`` maps QMD's (possibly normalised) paths to real files; with ``spans``, the hit is the chunk around
    QMD's snippet (its lines and text), as the builtin index would return it, and its snippet the chunk's
    head, or the chunk from QMD's lines on when the head would not reach them."""
    from openclaw_memory.retrieval.ranking import truncate_snippet

    coll = collections.get(item.collection)
    if coll is None or not _inside(coll.root, coll.root / item.file):
        return None
    abs_path = files.real_file(coll, item.file)
    try:
        path = abs_path.resolve().relative_to(workspace).as_posix()
    except ValueError:
        path = f"qmd/{coll.name}/{abs_path.relative_to(coll.root).as_posix()}"
    text, hunk_start, hunk_count = split_snippet(item.snippet, numbered)
    body = text.rstrip("\n")
    n_lines = body.count("\n") + 1 if body else 1
    start = item.start_line or hunk_start or 1
    if item.end_line and item.end_line >= start:
        end = item.end_line
    else:
        count = min(hunk_count, n_lines) if hunk_count else n_lines
        end = start + max(count, 1) - 1
    body = body.strip("\n")
    shown = body
    chunk = spans.around(abs_path, coll.root, start, end) if spans is not None else None
    if chunk is not None:
        lines = chunk[2].split("\n")
        skip = max(0, min(start - chunk[0], len(lines) - 1))  # QMD's lines inside the chunk
        if len("\n".join(lines[: skip + 1])) > max_snippet_chars:
            shown = "\n".join(lines[skip:])  # the chunk's head would cut them off: the snippet starts at them
        else:
            shown = chunk[2]
        start, end, body = chunk
    return SearchHit(path=path, start_line=start, end_line=end, score=item.score,
                     snippet=truncate_snippet(shown, max_snippet_chars), source=coll.source,
                     text_score=item.score, chunk_id=item.docid, text=body)
