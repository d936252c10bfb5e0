"""Finding, reading and path-checking memory files (spec §1 and §7.3). Never writes.

Symbolic links are never followed: they are skipped when listing, refused by
``resolve_memory_path`` and not opened by the readers.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import logging
import math
import numbers
import os
import posixpath
import stat
from collections.abc import Sequence
from pathlib import Path

from openclaw_memory.errors import MemoryArgumentError, MemoryPathError, OpenClawMemoryError
from openclaw_memory.types import MemoryFile, Source

__all__ = [
    "UnreadableFileError",
    "build_file_entry",
    "is_memory_path",
    "line_number",
    "list_memory_files",
    "read_lines",
    "read_memory_text",
    "relative_path",
    "resolve_memory_path",
]

log = logging.getLogger(__name__)

_ROOT_FILES = ("MEMORY.md", "memory.md", "DREAMS.md")
_BINARY_SNIFF_BYTES = 8192
_ALLOWED = (
    "allowed: MEMORY.md, memory.md, DREAMS.md and memory/**/*.md inside the workspace, "
    "or .md files in the configured extra paths"
)


class UnreadableFileError(OpenClawMemoryError):
    """A memory file cannot be read as text (it looks binary, or is a symlink swapped in)."""


def _abs(path: str | os.PathLike[str], base: str | None = None) -> str:
    """Absolute, lexically normalised path (no symlink resolution), relative to ``base``."""
    path = os.fspath(path)
    return os.path.abspath(path if base is None else os.path.join(base, path))


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _is_under(path: str, root: str) -> bool:
    """True when ``path`` is strictly below ``root`` (both absolute and normalised)."""
    return path.startswith(root.rstrip(os.sep) + os.sep)


def _extra_roots(workspace: str, extra_paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    roots: list[str] = []
    for p in extra_paths:
        if str(p).strip():
            root = _abs(str(p).strip(), workspace)
            if root not in roots:
                roots.append(root)
    return roots


def _walk(directory: str, out: list[str]) -> None:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except PermissionError as exc:
        log.warning("skipping unreadable directory %s: %s", directory, exc)
        return
    for entry in entries:
        if entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            _walk(entry.path, out)
        elif entry.is_file(follow_symlinks=False) and entry.name.endswith(".md"):
            out.append(entry.path)


def list_memory_files(workspace: Path, extra_paths: Sequence[Path]) -> list[Path]:
    """Absolute paths of the Markdown files to index, in discovery order, without duplicates.

    MEMORY.md and memory.md at the workspace root, memory/** and the extra paths (files or
    directories, relative ones resolved against the workspace). Symlinks, missing paths and
    names not ending in ".md" are skipped.
    """
    ws = _abs(workspace)
    found: list[str] = []
    for name in ("MEMORY.md", "memory.md"):
        st = _lstat(os.path.join(ws, name))
        if st is not None and stat.S_ISREG(st.st_mode):
            found.append(os.path.join(ws, name))
    st = _lstat(os.path.join(ws, "memory"))
    if st is not None and stat.S_ISDIR(st.st_mode):
        _walk(os.path.join(ws, "memory"), found)
    for root in _extra_roots(ws, extra_paths):
        st = _lstat(root)
        if st is None or stat.S_ISLNK(st.st_mode):
            continue
        if stat.S_ISDIR(st.st_mode):
            _walk(root, found)
        elif stat.S_ISREG(st.st_mode) and root.endswith(".md"):
            found.append(root)

    seen: set[str] = set()
    result: list[Path] = []
    for path in found:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            result.append(Path(path))
    return result


def relative_path(workspace: Path, abs_path: Path) -> str:
    """``abs_path`` relative to the workspace with "/" separators (may start with "../")."""
    return os.path.relpath(abs_path, workspace).replace(os.sep, "/")


def _read_nofollow(abs_path: Path) -> tuple[os.stat_result, bytes] | None:
    """Stat and bytes of one open of ``abs_path``; None if it does not exist."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(abs_path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnreadableFileError(f"{abs_path} is a symbolic link; memory files must be regular files") from exc
        raise
    with os.fdopen(fd, "rb") as fh:
        return os.fstat(fh.fileno()), fh.read()


def _decode(data: bytes, abs_path: Path) -> str:
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        raise UnreadableFileError(f"{abs_path} looks binary (NUL byte in the first 8 KiB); only text files are read")
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        log.warning("%s is not valid UTF-8 (%s); undecodable bytes replaced with U+FFFD", abs_path, exc.reason)
        return data.decode("utf-8", errors="replace")


def read_memory_text(abs_path: Path) -> str | None:
    """The file's text (UTF-8, BOM removed, invalid bytes replaced), or None if it does not exist.

    Raises UnreadableFileError if the file looks binary or is a symlink.
    """
    read = _read_nofollow(abs_path)
    return None if read is None else _decode(read[1], abs_path)


def build_file_entry(abs_path: Path, workspace: Path, source: Source = "memory") -> tuple[MemoryFile, str] | None:
    """The file's index entry and its text, or None if the file vanished since it was listed."""
    read = _read_nofollow(abs_path)
    if read is None:
        return None
    st, data = read
    text = _decode(data, abs_path)
    entry = MemoryFile(
        path=relative_path(workspace, abs_path),
        abs_path=str(abs_path),
        mtime_ms=st.st_mtime_ns / 1e6,
        size=st.st_size,
        hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        source=source,
    )
    return entry, text


def _normalise_rel(rel: str) -> str:
    rel = rel.strip().replace("\\", "/")
    while rel.startswith(("./", "/")):
        rel = rel[1:] if rel.startswith("/") else rel[2:]
    return posixpath.normpath(rel) if rel else ""


def is_memory_path(rel: str) -> bool:
    """True for MEMORY.md, memory.md, DREAMS.md and anything under memory/ (workspace-relative)."""
    norm = _normalise_rel(rel)
    return norm in _ROOT_FILES or norm.startswith("memory/")


def _find_root(ws: str, extras: list[str], cand: str, requested: str) -> str:
    """The allowed root directory containing ``cand``; raises MemoryPathError if there is none."""
    if _is_under(cand, ws) and is_memory_path(relative_path(Path(ws), Path(cand))):
        return ws
    for root in extras:
        st = _lstat(root)
        if st is None or stat.S_ISLNK(st.st_mode):
            continue
        if stat.S_ISDIR(st.st_mode) and _is_under(cand, root):
            return root
        if stat.S_ISREG(st.st_mode) and cand == root:
            return os.path.dirname(root)
    if cand == ws or _is_under(cand, ws):
        raise MemoryPathError(f"{requested!r} is not a memory file; {_ALLOWED}")
    raise MemoryPathError(f"{requested!r} resolves outside the workspace and the extra paths; {_ALLOWED}")


def resolve_memory_path(workspace: Path, extra_paths: Sequence[Path], requested: str) -> tuple[Path, str]:
    """Check a path given to memory_get; return (absolute path, workspace-relative path).

    Relative paths are taken from the workspace; ".." is resolved lexically, symlinks are
    refused rather than followed. A missing but allowed file is accepted.
    Raises MemoryPathError saying what is wrong and what is allowed.
    """
    if not isinstance(requested, str):
        raise MemoryPathError(f"path required: a string such as 'memory/2026-01-16.md', not {type(requested).__name__}")
    if "\x00" in requested:
        raise MemoryPathError(f"{requested!r} contains a null byte; give the path of one .md file")
    try:
        os.fsencode(requested)
    except UnicodeEncodeError:
        raise MemoryPathError(f"{requested!r} is not a valid file name (unencodable characters)") from None
    raw = requested.strip().replace("\\", "/")
    if not raw:
        raise MemoryPathError(f"a path is required; {_ALLOWED}")
    if raw.endswith("/") or raw.rsplit("/", 1)[-1] in (".", ".."):
        raise MemoryPathError(f"{requested!r} is not a file path (it ends with '/' or a '.' part); "
                              "give the path of one .md file")
    ws = _abs(workspace)
    cand = _abs(raw, ws)
    root = _find_root(ws, _extra_roots(ws, extra_paths), cand, requested)
    if not cand.endswith(".md"):
        raise MemoryPathError(f"{requested!r} is not a Markdown (.md) file; {_ALLOWED}")

    current = root
    for part in os.path.relpath(cand, root).split(os.sep):
        current = os.path.join(current, part)
        st = _lstat(current)
        if st is None:
            break  # a missing file (or directory) is allowed: memory_get returns empty text
        if stat.S_ISLNK(st.st_mode):
            raise MemoryPathError(
                f"{requested!r}: {relative_path(Path(ws), Path(current))} is a symbolic link; "
                "memory_get does not follow symlinks"
            )
        if current != cand and not stat.S_ISDIR(st.st_mode):
            raise MemoryPathError(
                f"{requested!r}: {relative_path(Path(ws), Path(current))} is a file, not a directory; "
                "give the path of one .md file"
            )
        if current == cand and stat.S_ISDIR(st.st_mode):
            raise MemoryPathError(f"{requested!r} is a directory; give the path of one .md file")
        if current == cand and not stat.S_ISREG(st.st_mode):
            raise MemoryPathError(f"{requested!r} is not a regular file")
    return Path(cand), relative_path(Path(ws), Path(cand))


def line_number(value: object, name: str) -> int | None:
    """``memory_get``'s ``from_line`` / ``lines`` as an int, truncated as the spec says (§7.3).

    Accepts None, ints, finite floats (``2.9`` → 2) and strings holding such a number (``"2"``,
    as agents sometimes send them). Raises MemoryArgumentError naming ``name`` for anything else
    (booleans, NaN, infinities, other strings, lists, ...). The range is not checked here:
    :func:`read_lines` treats values below 1 as 1.
    """
    if value is None:
        return None
    number: object = value
    if isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            try:
                number = float(value.strip())
            except ValueError:
                pass
    if isinstance(number, numbers.Integral) and not isinstance(number, bool):
        return int(number)
    if isinstance(number, numbers.Real) and not isinstance(number, bool) and math.isfinite(number):
        return math.trunc(number)
    raise MemoryArgumentError(f"{name} must be a line number or count (an int; floats are truncated), not {value!r}")


def read_lines(abs_path: Path, from_line: int | None, lines: int | None) -> tuple[str, int, int]:
    """Lines of a memory file as (text, start_line, end_line), 1-based inclusive.

    ``start = max(1, from_line or 1)``; ``count = max(1, lines)``, or all lines when
    ``lines`` is None. Both are first made ints by :func:`line_number` (floats and numeric
    strings are truncated; other values raise MemoryArgumentError). Lines are joined with "\\n", so
    reading the whole file returns it unchanged. A missing file, or a start past the end, gives
    ``("", start, start - 1)``.
    """
    from_line, lines = line_number(from_line, "from_line"), line_number(lines, "lines")
    start = max(1, from_line or 1)
    content = read_memory_text(abs_path)
    if content is None:
        return "", start, start - 1
    all_lines = content.split("\n")
    count = max(1, lines if lines is not None else len(all_lines))
    selected = all_lines[start - 1 : start - 1 + count]
    return "\n".join(selected), start, start - 1 + len(selected)
