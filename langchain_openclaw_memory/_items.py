"""The Markdown form of LangGraph store items (namespaces other than a memory's own files).

Each namespace is one file, ``memory/store/<part>/<part>.md`` (parts percent-encoded), so its
items are indexed and searchable like any note. Each item is a *record* of that file::

    <!-- openclaw-memory:item {"key": "k1", "created_at": "...", "updated_at": "..."} -->
    ```json
    {"data": "The user likes pizza."}
    ```
    <!-- /openclaw-memory:item -->

A record gets a chunk of its own in the index (see ``openclaw_memory.chunker``). ``put`` of an
existing key replaces its record, ``delete`` removes it; lines outside records (hand-written
text) are never changed. Rewrites hold the file's append lock and replace it atomically.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from filelock import FileLock
from openclaw_memory.append import LOCK_TIMEOUT_S, lock_path
from openclaw_memory.chunker import RECORD_CLOSE_PREFIX, RECORD_OPEN_PREFIX

__all__ = ["STORE_DIR", "Record", "delete_record", "namespace_file", "namespace_of", "read_records", "upsert_record"]

STORE_DIR = "memory/store"
_OPEN = f"{RECORD_OPEN_PREFIX}item "
_CLOSE = f"{RECORD_CLOSE_PREFIX}item -->"
_OPEN_RE = re.compile(r"^<!-- openclaw-memory:item (\{.*\}) -->\s*$")
_SAFE = "-_.~ "


@dataclass(frozen=True)
class Record:
    """One stored item: key, JSON value, timestamps and where it sits (1-based, inclusive)."""

    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    start_line: int
    end_line: int


def namespace_file(namespace: tuple[str, ...]) -> str:
    """The workspace-relative file holding ``namespace``'s items."""
    if not namespace or any(not part for part in namespace):
        raise ValueError(f"namespace {namespace!r} must be a non-empty tuple of non-empty strings")
    parts = [quote(part, safe=_SAFE).replace(" ", "%20") for part in namespace]
    parts = [p if p not in (".", "..") else quote(p, safe="").replace(".", "%2E") for p in parts]
    return "/".join([STORE_DIR, *parts[:-1], f"{parts[-1]}.md"])


def namespace_of(rel: str) -> tuple[str, ...] | None:
    """The namespace whose items ``rel`` holds, or None for any other file."""
    if not rel.startswith(STORE_DIR + "/") or not rel.endswith(".md"):
        return None
    parts = rel[len(STORE_DIR) + 1 : -3].split("/")
    return tuple(unquote(p) for p in parts)


def _stamp(value: str | None) -> datetime:
    try:
        return datetime.fromisoformat(value) if value else datetime.now(timezone.utc)
    except ValueError:
        return datetime.now(timezone.utc)


def read_records(path: Path) -> tuple[list[str], list[Record]]:
    """The file's lines and its records (a malformed record is left alone as hand-written text)."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        return [], []
    records: list[Record] = []
    i = 0
    while i < len(lines):
        m = _OPEN_RE.match(lines[i])
        if m is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == _CLOSE), None)
        if end is None:
            break
        body = "\n".join(lines[i + 1 : end]).strip()
        body = body.removeprefix("```json").removesuffix("```").strip()
        try:
            head = json.loads(m.group(1))
            value = json.loads(body)
            if isinstance(head, dict) and isinstance(head.get("key"), str) and isinstance(value, dict):
                records.append(Record(head["key"], value, _stamp(head.get("created_at")),
                                      _stamp(head.get("updated_at")), i + 1, end + 1))
        except ValueError:
            pass
        i = end + 1
    return lines, records


def _render(key: str, value: dict[str, Any], created: datetime, updated: datetime) -> list[str]:
    head = json.dumps({"key": key, "created_at": created.isoformat(), "updated_at": updated.isoformat()},
                      ensure_ascii=False)
    body = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
    if "-->" in head:
        raise ValueError(f"store keys must not contain '-->': {key!r}")
    return [f"{_OPEN}{head} -->", "```json", *body.split("\n"), "```", _CLOSE]


def _rewrite(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines).rstrip("\n") + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def upsert_record(path: Path, key: str, value: dict[str, Any]) -> None:
    """Write ``key``'s record: replace it where it is, or append it (keeping its created_at)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"store values must be JSON-serialisable dicts: {exc}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_path(path)), timeout=LOCK_TIMEOUT_S):
        lines, records = read_records(path)
        now = datetime.now(timezone.utc)
        old = next((r for r in records if r.key == key), None)
        new = _render(key, value, old.created_at if old else now, now)
        if old is not None:
            lines[old.start_line - 1 : old.end_line] = new
        else:
            while lines and not lines[-1].strip():
                lines.pop()
            if not lines:
                lines = [f"# Store items {' / '.join(namespace_of_path(path))}", ""]
            lines += ["", *new] if lines[-1].strip() else new
        _rewrite(path, lines)


def namespace_of_path(path: Path) -> tuple[str, ...]:
    parts = path.with_suffix("").parts
    at = max(i for i, p in enumerate(parts) if p == "store")
    return tuple(unquote(p) for p in parts[at + 1 :])


def delete_record(path: Path, key: str) -> bool:
    """Remove ``key``'s record; True when there was one. Text outside records stays."""
    if not path.exists():
        return False
    with FileLock(str(lock_path(path)), timeout=LOCK_TIMEOUT_S):
        lines, records = read_records(path)
        old = next((r for r in records if r.key == key), None)
        if old is None:
            return False
        del lines[old.start_line - 1 : old.end_line]
        _rewrite(path, lines)
        return True
