"""LangGraph store items (namespaces other than a memory's own files) as Markdown records.

Each namespace is one file, ``memory/store/<part>/<part>.md`` (parts percent-encoded), so its
items are indexed and searchable like any note. Each item is a record of kind ``item``
(:mod:`openclaw_memory.files.records`) holding its key, timestamps and JSON value::

    <!-- openclaw-memory:item {"created_at": "...", "key": "k1", "updated_at": "..."} -->
    ```json
    {"data": "The user likes pizza."}
    ```
    <!-- /openclaw-memory:item -->

An item put with ``index=[paths]`` (or under a store whose ``index={"fields": [...]}`` names them) carries the
texts at those paths as the record's ``index_text`` with ``"index_body": false``, so only they are embedded and
keyword-indexed; ``index=False`` sets ``"index_body": false`` alone (not indexed at all).

This module translates between those records and LangGraph items; the core reads and rewrites
the file (under its append lock, atomically and durably, never through a symlink). ``put`` of an
existing key replaces its record in place, ``delete`` removes it; lines outside records
(hand-written text) are never changed.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from langgraph.store.base import InvalidNamespaceError, get_text_at_path
from openclaw_memory.text.chunker import RECORD_INDEX_BODY, RECORD_INDEX_TEXT
from openclaw_memory.errors import MemoryArgumentError, MemoryPathError
from openclaw_memory.files import portable_names
from openclaw_memory.files.discovery import is_ignored_dir
from openclaw_memory.files.records import (
    Record,
    RecordFiles,
    RecordText,
    append_record,
    remove_records,
    render_record,
    replace_record,
)

__all__ = ["MAX_LABEL_BYTES", "MAX_PATH_BYTES", "STORE_DIR", "StoreItem", "case_twin", "check_case_twin",
           "delete_item", "index_text",
           "move_tool_folder_labels", "namespace_file", "namespace_files", "namespace_of", "read_items", "upsert_item"]

log = logging.getLogger(__name__)

STORE_DIR = "memory/store"
KIND = "item"
_SAFE = "-_.~ "
#: The longest namespace label, in bytes once percent-encoded as a file or folder name: file systems take 255,
#: and the writer's temporary and lock files add a prefix and a suffix to the item file's name.
MAX_LABEL_BYTES = 200
#: The longest item file path below the workspace, in bytes: the absolute path must stay below PATH_MAX (4096).
MAX_PATH_BYTES = 1024
_PATH_MAX = 4096


@dataclass(frozen=True)
class StoreItem:
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
        raise InvalidNamespaceError(f"namespace {namespace!r} must be a non-empty tuple of non-empty strings")
    parts = [quote(part, safe=_SAFE).replace(" ", "%20") for part in namespace]
    parts = [p if p not in (".", "..") else quote(p, safe="").replace(".", "%2E") for p in parts]
    folders = [_walked(p) for p in parts[:-1]]
    rel = "/".join([STORE_DIR, *folders, f"{_portable(parts[-1])}.md"])
    _check_length(namespace, parts, rel)
    return rel


def case_twin(workspace: Path, rel: str) -> tuple[str, ...] | None:
    """The existing namespace (or namespace prefix, for a folder) whose item file or folder a case-insensitive file
    system (macOS's default, Windows) would open for the item file ``rel`` though its name differs in letter case;
    None when ``rel``'s own folders and file exist or nothing like them does (the core's rule for every memory
    file: :func:`openclaw_memory.files.portable_names.twin_path`)."""
    twin = portable_names.twin_path(workspace / STORE_DIR, rel[len(STORE_DIR) + 1 :].split("/"))
    return None if twin is None else tuple(unquote(p) for p in [*twin[:-1], twin[-1].removesuffix(".md")])


def check_case_twin(workspace: Path, namespace: tuple[str, ...], rel: str) -> None:
    """MemoryPathError when ``namespace``'s item file ``rel`` differs only in letter case from an existing namespace's
    file or folder (see :func:`case_twin`): refused on every system, so a workspace behaves alike wherever it opens."""
    twin = case_twin(workspace, rel)
    if twin is None:
        return
    raise MemoryPathError(
        f"store namespace {namespace!r} differs only in letter case from the existing {twin!r}: each label is a "
        "file or folder name, and a case-insensitive file system (macOS, Windows) would keep both in one file, so "
        "one namespace's items would be read, replaced and deleted as the other's. Use the existing spelling, or "
        "labels that differ by more than case (lower-case them; hash case-sensitive ids)"
    )


def _encoded_first(label: str) -> str:
    """``label`` (encoded) with its first character percent-encoded too, which decoding restores."""
    return f"%{ord(label[0]):02X}{label[1:]}"


def _portable(label: str) -> str:
    """``label`` (encoded) as a name that is a file on every system: a name Windows reserves for a device (``con``,
    ``nul``, ``com1``, ...: labels hold no '.', so no extension) with its first character percent-encoded."""
    return _encoded_first(label) if portable_names.windows_reserved(label) else label


def _walked(folder: str) -> str:
    """``folder`` (an encoded label) as a folder name discovery walks into, on every system: a tool folder's name
    (``venv``, ``.git``, ``node_modules``, ...) or a Windows device name with its first character percent-encoded."""
    return _encoded_first(folder) if is_ignored_dir(folder) else _portable(folder)


def move_tool_folder_labels(workspace: Path) -> None:
    """Move item folders and files written under a name :func:`namespace_file` now encodes (a tool folder's name,
    ``memory/store/users/venv/``, or a Windows device name, ``memory/store/users/con.md``, by a release before the
    name was encoded) to the name it gives them now, so their items are read and indexed again (and the workspace
    opens on Windows). Only a folder holding item files, or an item file, named as a label can be (LangGraph refuses a
    period, so a ``.git`` folder is never moved). One whose new name is taken already stays, with a warning naming
    both."""
    for folder, subfolders, files in os.walk(workspace / STORE_DIR):
        for position, name in enumerate(subfolders):
            source = Path(folder) / name
            if _walked(name) == name or "." in name or not _holds_item_files(source):
                continue
            if _moved(source, Path(folder) / _walked(name)):
                subfolders[position] = _walked(name)  # walked under its new name
        for name in files:
            label = name.removesuffix(".md")
            if name.endswith(".md") and "." not in label and _portable(label) != label:
                _moved(Path(folder) / name, Path(folder) / f"{_portable(label)}.md")


def _moved(source: Path, target: Path) -> bool:
    """Rename ``source`` to ``target`` unless ``target`` exists (a warning names both); whether it is there now."""
    if target.exists():
        log.warning("store items in %s were not moved to %s, which exists: move them there by hand to find them",
                    source, target)
        return False
    try:
        os.rename(source, target)
    except FileNotFoundError:  # another process opening the store moved it meanwhile
        return True
    except OSError as exc:  # a read-only folder
        log.warning("store items in %s could not be moved to %s: %s", source, target, exc)
        return False
    return True


def _holds_item_files(folder: Path) -> bool:
    return any(name.endswith(".md") for _, _, names in os.walk(folder) for name in names)


def _check_length(namespace: tuple[str, ...], parts: list[str], rel: str) -> None:
    """MemoryPathError when ``namespace`` cannot be a file: a label or the whole path too long."""
    for label, part in zip(namespace, parts, strict=True):
        if len(part) > MAX_LABEL_BYTES:
            raise MemoryPathError(
                f"store namespace label {label[:40]!r}... is too long: {len(part)} bytes as a file name, at most "
                f"{MAX_LABEL_BYTES}; each namespace label becomes a folder or file name, so use shorter labels (an id "
                "or a hash of a long one)"
            )
    if len(rel) > MAX_PATH_BYTES:
        raise MemoryPathError(
            f"store namespace of {len(namespace)} labels is too long: its item file path would be {len(rel)} bytes, "
            f"at most {MAX_PATH_BYTES}; use fewer or shorter namespace labels"
        )


def namespace_files(workspace: Path) -> list[str]:
    """The workspace-relative item files below ``memory/store``, sorted. Folders that cannot be read (or whose
    path is too long to open) are skipped, so one of them never breaks listing or search."""
    base = workspace / STORE_DIR
    found: list[str] = []
    for folder, _, names in os.walk(base):  # os.walk skips what it cannot open
        for name in names:
            path = os.path.join(folder, name)
            if name.endswith(".md") and len(os.fsencode(path)) < _PATH_MAX:
                found.append(Path(path).relative_to(workspace).as_posix())
    return sorted(found)


def namespace_of(rel: str) -> tuple[str, ...] | None:
    """The namespace whose items ``rel`` holds, or None for any other file."""
    if not rel.startswith(STORE_DIR + "/") or not rel.endswith(".md"):
        return None
    parts = rel[len(STORE_DIR) + 1 : -3].split("/")
    return tuple(unquote(p) for p in parts)


def _stamp(value: Any) -> datetime:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) and value else datetime.now(timezone.utc)
    except ValueError:
        return datetime.now(timezone.utc)


def _key_ok(attrs: dict[str, Any]) -> bool:
    return isinstance(attrs.get("key"), str)


def _item(record: Record, rel: str) -> StoreItem | None:
    """The item a record holds, or None when its body is not a JSON object (left alone as text, with a warning
    naming it: the item is missing from the store until its JSON is fixed)."""
    body = record.body.strip().removeprefix("```json").removesuffix("```").strip()
    try:
        value = json.loads(body)
    except ValueError:
        value = None
    a = record.attrs
    if not isinstance(value, dict):
        log.warning("%s: the store skips item %r (lines %d-%d): its record holds no JSON object; fix the JSON "
                    "between the markers or remove the record", rel, a["key"], record.open_line, record.close_line)
        return None
    return StoreItem(a["key"], value, _stamp(a.get("created_at")), _stamp(a.get("updated_at")),
                     record.open_line, record.close_line)


def _items(parsed: RecordText | None, rel: str) -> list[tuple[Record, StoreItem]]:
    if parsed is None:
        return []
    return [(r, item) for r in parsed.records if (item := _item(r, rel)) is not None]


def _files(workspace: Path) -> RecordFiles:
    return RecordFiles(workspace, KIND, check=_key_ok)


def read_items(workspace: Path, rel: str) -> list[StoreItem]:
    """The items of the file ``rel`` (none when it is missing)."""
    return [item for _, item in _items(_files(workspace).read(rel), rel)]


def index_text(value: dict[str, Any], paths: list[str] | None) -> str | None:
    """What of ``value`` is embedded and keyword-indexed, as LangGraph's stores choose it for ``put(index=...)``:
    None for the whole value (the record's JSON body: no paths, or ``["$"]``), else the texts LangGraph's
    ``get_text_at_path`` finds at ``paths`` (fields, ``a.b``, ``[*]``, ``{x,y}``), one per line ("" for none:
    the item is not indexed, as for ``index=False``)."""
    if paths is None or list(paths) == ["$"]:
        return None
    return "\n".join(text for path in paths for text in get_text_at_path(value, path))


def _heading(namespace: tuple[str, ...]) -> str:
    """The heading line of a new item file: the namespace on one line (a line break in a label would let the
    rest of it be read as the file's own lines, a record marker among them)."""
    return "# Store items " + " / ".join(" ".join(label.split()) for label in namespace)


def upsert_item(workspace: Path, rel: str, key: str, value: dict[str, Any], *, indexed: str | None = None) -> None:
    """Write ``key``'s item: replace its record where it is (keeping created_at), or append it.

    ``indexed`` (see :func:`index_text`): None indexes the whole value (the record's body); a text is indexed in
    its place (the record's ``index_text``, its body kept out: ``index_body`` false); "" indexes nothing.
    """
    try:
        body = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise MemoryArgumentError(f"store values must be JSON-serialisable dicts: {exc}") from None
    namespace = namespace_of(rel) or ()

    def put(current: RecordText) -> str:
        old = next((r for r, item in _items(current, rel) if item.key == key), None)
        now = datetime.now(timezone.utc)
        created = _stamp(old.attrs.get("created_at")) if old is not None else now
        attrs: dict[str, Any] = {"key": key, "created_at": created.isoformat(), "updated_at": now.isoformat()}
        if indexed is not None:
            attrs[RECORD_INDEX_BODY] = False
            if indexed.strip():
                attrs[RECORD_INDEX_TEXT] = indexed
        block = render_record(KIND, attrs, f"```json\n{body}\n```", what=f"store item {key!r}")
        if old is not None:
            return replace_record(current.text, old, block)
        return append_record(current.text, block, header=_heading(namespace))

    _files(workspace).edit(rel, put, create=True)


def delete_item(workspace: Path, rel: str, key: str) -> bool:
    """Remove ``key``'s record; True when there was one. Text outside records stays."""
    found = False

    def drop(current: RecordText) -> str | None:
        nonlocal found
        doomed = [r for r, item in _items(current, rel) if item.key == key]
        found = bool(doomed)
        return remove_records(current.text, doomed) if doomed else None

    _files(workspace).edit(rel, drop)
    return found
