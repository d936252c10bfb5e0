"""The Markdown exports of session transcripts that QMD indexes (``memory.qmd.sessions``).

The export folder may be one of the user's (``sessions.exportDir``): an export only ever replaces or removes a file
it wrote itself and nobody changed since. A manifest in QMD's state folder records each export's name and content
hash; a file of the same name that is not in it (a user's note, a link) or whose content changed (an export the user
edited) is left as it is, with a warning. Exports written before the manifest are known by their shape (the header,
then only ``User:`` / ``Assistant:`` lines).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from pathlib import Path

from filelock import FileLock, Timeout

__all__ = ["SessionExports", "export_header", "looks_like_export"]

log = logging.getLogger(__name__)

#: how long an export waits for another process's (the manifest's lock)
LOCK_WAIT_SECONDS = 30.0


def export_header(name: str) -> str:
    """The first line of the export of transcript ``name``."""
    return f"# Session {name}\n"


def looks_like_export(text: str, name: str) -> bool:
    """Whether ``text`` is what an export of transcript ``name`` holds: its header, a blank line, then only
    ``User: …`` / ``Assistant: …`` lines (how exports written before the manifest are told from a user's note)."""
    head = export_header(name) + "\n"
    body = text[len(head):] if text.startswith(head) else None
    return body is not None and all(line.startswith(("User: ", "Assistant: ")) for line in body.splitlines() if line)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _read(path: Path) -> str | None:
    """The text of regular file ``path`` (None for a link, a folder, a missing or unreadable file)."""
    if path.is_symlink() or not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return None


def _replace(path: Path, text: str) -> None:
    """``text`` as file ``path``, in one step (a temporary file renamed over it): a process killed midway leaves
    the old export, not part of the new one, which would match no record and so never be replaced again."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class SessionExports:
    """The exports in folder ``root``, recorded in ``manifest`` (a JSON file). ``private``: ``root`` is QMD's own
    folder, where any file that starts like an export is one (an export from before the manifest)."""

    def __init__(self, root: Path, manifest: Path, *, private: bool) -> None:
        self.root = root
        self.manifest = manifest
        self.private = private
        self._warned: set[str] = set()

    def _load(self) -> tuple[dict[str, object], dict[str, str], bool]:
        """The manifest (every folder's record), the recorded ``{file name: sha256}`` of ``root``, and whether
        ``root`` had a record."""
        try:
            data = json.loads(self.manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        data = data if isinstance(data, dict) else {}
        files = data.get(str(self.root))
        if not isinstance(files, dict):
            return data, {}, False
        return data, {k: v for k, v in files.items() if isinstance(v, str)}, True

    def _save(self, data: dict[str, object], files: dict[str, str]) -> None:
        data[str(self.root)] = files
        _replace(self.manifest, json.dumps(data, indent=1, sort_keys=True))

    def write(self, exports: dict[str, str]) -> None:
        """Make the folder hold ``exports`` (``{file name: text}``): new ones written, changed ones replaced and
        stale ones removed, each only when the file there is an export this folder's manifest records unchanged.
        One process at a time (the manifest's lock); one that waits past :data:`LOCK_WAIT_SECONDS` exports next
        time."""
        self.manifest.parent.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(str(self.manifest) + ".lock", timeout=LOCK_WAIT_SECONDS):
                self._write_locked(exports)
        except Timeout:
            log.warning("qmd: transcripts not exported this time: another process held %s.lock for %.0f s",
                        self.manifest, LOCK_WAIT_SECONDS)

    def _write_locked(self, exports: dict[str, str]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        data, files, recorded = self._load()  # read once: the lock keeps other processes out until saved
        try:
            for name, text in exports.items():
                if self._write_one(name, text, files, adopt=not recorded):
                    files[name] = _digest(text)
            for name in [n for n in files if n not in exports]:
                current = _read(self.root / name)
                if current is not None and _digest(current) == files[name]:
                    (self.root / name).unlink(missing_ok=True)
                del files[name]  # gone, or the user's now (edited): forgotten either way
            if self.private or not recorded:  # stale exports written before the manifest
                for path in self.root.glob("*.md"):
                    found = _read(path)
                    if path.name not in exports and found is not None and looks_like_export(found, path.stem):
                        path.unlink(missing_ok=True)
        finally:  # also when stopped midway: the record of what was written (else those exports stay frozen)
            self._save(data, files)

    def _write_one(self, name: str, text: str, files: dict[str, str], *, adopt: bool) -> bool:
        """Write export ``name`` unless the file there is not ours; whether the folder now holds ``text``."""
        path = self.root / name
        if not path.exists() and not path.is_symlink():
            _replace(path, text)
            return True
        current = _read(path)
        if current == text:
            return True
        ours = current is not None and (
            files.get(name) == _digest(current)
            or ((adopt or self.private) and name not in files and looks_like_export(current, path.stem)))
        if ours:
            _replace(path, text)
            return True
        if name not in self._warned:
            self._warned.add(name)
            log.warning("qmd: transcript %s not exported: %s is not an export this library wrote unchanged (a file of "
                        "yours, an export you edited, or a link) and is never overwritten; rename or remove it, or set "
                        "memory.qmd.sessions.exportDir to another folder", path.stem, path)
        return False
