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
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from openclaw_memory.files import safe_fs
from openclaw_memory.errors import MemoryArgumentError, MemoryPathError, UnreadableFileError
from openclaw_memory.types import MemoryFile, Source

__all__ = [
    "IGNORED_DIRS",
    "MAX_DIR_DEPTH",
    "FoundFile",
    "MemoryScan",
    "SkippedName",
    "UnavailablePath",
    "UnreadableFileError",
    "build_file_entry",
    "get_lines",
    "is_ignored_dir",
    "is_memory_path",
    "is_utf8_name",
    "line_number",
    "list_memory_files",
    "printable_path",
    "read_lines",
    "read_memory_text",
    "realpath",
    "relative_path",
    "resolve_memory_path",
    "scan_memory_files",
    "sniff_text",
    "warn_once",
]

log = logging.getLogger(__name__)

_ROOT_FILES = ("MEMORY.md", "memory.md", "USER.md", "DREAMS.md")
#: The curated files at the workspace root that are indexed as memory (DREAMS.md, the review diary, is not).
_INDEXED_ROOT_FILES = ("MEMORY.md", "memory.md", "USER.md")
_BINARY_SNIFF_BYTES = 8192
_ALLOWED = (
    "allowed: MEMORY.md, memory.md, USER.md, DREAMS.md and memory/**/*.md inside the workspace, "
    "or .md files in the configured extra paths"
)


def _abs(path: str | os.PathLike[str], base: str | None = None) -> str:
    """Absolute, lexically normalised path (no symlink resolution), relative to ``base``."""
    path = os.fspath(path)
    return os.path.abspath(path if base is None else os.path.join(base, path))


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _is_real_dir(path: str) -> bool:
    """A directory, not a symlink to one."""
    st = _lstat(path)
    return st is not None and stat.S_ISDIR(st.st_mode)


def _is_empty_dir(path: str) -> bool:
    """A directory with no entry at all (one that cannot be listed is not: the walk reports it)."""
    try:
        with os.scandir(path) as entries:
            return next(entries, None) is None
    except OSError:
        return False


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


#: Directories nested deeper than this below a root (``memory/`` or an extra path) are not walked.
MAX_DIR_DEPTH = 64

#: Tool and package folders (compared case-insensitively) never walked below a root (``memory/`` or an extra path):
#: their Markdown files (package READMEs, git internals) are not memory, and the file watcher ignores them too.
IGNORED_DIRS = frozenset({".git", "node_modules", ".pnpm-store", ".venv", "venv", ".tox", "__pycache__"})


def is_ignored_dir(name: str) -> bool:
    """True for a directory name discovery does not walk into and the watcher ignores (:data:`IGNORED_DIRS`)."""
    return name.lower() in IGNORED_DIRS


@dataclass(frozen=True)
class SkippedName:
    """A file or directory left out of the index because of its name or place, and why."""

    path: str  # workspace-relative (or absolute), printable: bytes that are not UTF-8 shown as \\xNN
    reason: str


@dataclass(frozen=True)
class FoundFile:
    """One memory file: its absolute path and the allowed root it was found under."""

    path: Path
    root: str  # reads open ``path`` beneath this directory, following no symlink below it


@dataclass(frozen=True)
class UnavailablePath:
    """A place whose files could not be looked at now: a configured extra path that is missing (a drive not
    mounted, a folder moved, a typo) or an empty folder (the mount point of a drive not mounted), or a directory
    that could not be listed. What was indexed from below it is not known to be gone."""

    path: Path  # absolute
    reason: str
    remedy: str  #: what to do to drop its files from the index
    #: an extra path that is an empty folder: only unavailable when something was indexed from it
    empty: bool = False


def _empty_extra_path(root: str) -> UnavailablePath:
    """An extra path that is an empty folder, taken for the mount point of a drive not mounted: what was indexed
    from it is kept (as for a missing one, a full rebuild included) until any file is in it again, or it leaves
    the configuration."""
    return UnavailablePath(Path(root), "extra path is an empty folder",
                           "put any file in it (an empty .keep will do) and sync, or remove it from extra_paths "
                           "(extraPaths)", empty=True)


@dataclass
class MemoryScan:
    """What :func:`scan_memory_files` found: the files to index, the names it skipped and the places it could
    not look at."""

    files: list[FoundFile] = field(default_factory=list)
    skipped: list[SkippedName] = field(default_factory=list)
    unavailable: list[UnavailablePath] = field(default_factory=list)


def is_utf8_name(name: str) -> bool:
    """False for a file name whose bytes are not valid UTF-8 (Python shows them as surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_path(path: str) -> str:
    """``path`` with bytes that are not valid UTF-8 written as ``\\xNN`` (for messages and reports)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace") if not is_utf8_name(path) else path


_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_once(key: str, message: str) -> None:
    """Log ``message`` about ``key`` (an absolute path) as a warning the first time this process meets that path,
    then at debug level: scans repeat often."""
    with _warned_lock:
        first = key not in _warned
        if first and len(_warned) < 10_000:
            _warned.add(key)
    (log.warning if first else log.debug)("%s", message)


def _warn_once(key: str, shown: str, reason: str) -> None:
    """Log a skipped name (``key``: its absolute path) with :func:`warn_once`."""
    warn_once(key, f"not indexing {shown}: {reason}")


def _skip(scan: MemoryScan, path: str, shown: str, reason: str) -> None:
    """List ``path`` (shown as ``shown``) in ``scan.skipped`` with ``reason``, and warn about it once."""
    scan.skipped.append(SkippedName(shown, reason))
    _warn_once(path, shown, reason)


def _shown(path: str, ws: str) -> str:
    """``path`` as a skipped name is shown: workspace-relative when under ``ws``, printable."""
    return printable_path(relative_path(Path(ws), Path(path)) if _is_under(path, ws) else path)


def _walk(root: str, start: list[str], scan: MemoryScan, ws: str) -> None:
    """Append the ``.md`` files below root/start to ``scan``, depth-first in name order.

    Iterative; each directory is listed through a descriptor opened beneath ``root`` without
    following symlinks (see :mod:`safe_fs`). Symlinks and :data:`IGNORED_DIRS` are skipped; names that are not UTF-8 and
    directories deeper than :data:`MAX_DIR_DEPTH` are reported in ``scan.skipped``.
    """

    def entries(parts: list[str]) -> list[tuple[str, str]]:
        shown = os.path.join(root, *parts)
        try:
            with safe_fs.open_dir(root, parts) as handle:
                return safe_fs.list_dir(handle)
        except (FileNotFoundError, NotADirectoryError):
            return []  # vanished, or swapped for a file or symlink since it was listed
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return []
            log.warning("skipping unreadable directory %s: %s", printable_path(shown), exc)
            scan.unavailable.append(UnavailablePath(Path(shown), f"cannot be listed ({exc.strerror or exc})",
                                                    "let this process read it, or delete it"))
            return []

    def shown(parts: list[str]) -> str:
        return _shown(os.path.join(root, *parts), ws)

    stack = [(start, iter(entries(start)))]
    while stack:
        parts, remaining = stack[-1]
        for name, kind in remaining:
            child = [*parts, name]
            if kind == "symlink":
                _skip_symlink(scan, os.path.join(root, *child), shown(child))
                continue
            if kind not in ("dir", "file") or (kind == "file" and not name.endswith(".md")) or (
                    kind == "dir" and is_ignored_dir(name)):
                continue
            if not is_utf8_name(name):
                reason = ("directory name is not valid UTF-8; rename it to index the files below it" if kind == "dir"
                          else "file name is not valid UTF-8; rename it to index it")
                _skip(scan, os.path.join(root, *child), shown(child), reason)
                continue
            if kind == "file":
                scan.files.append(FoundFile(Path(os.path.join(root, *child)), root))
                continue
            if len(child) - len(start) > MAX_DIR_DEPTH:
                reason = f"nested more than {MAX_DIR_DEPTH} directories deep; its files are not indexed"
                _skip(scan, os.path.join(root, *child), shown(child), reason)
                continue
            stack.append((child, iter(entries(child))))
            break
        else:
            stack.pop()


_LINKED_FILE = ("a symbolic link, which is not followed (it may lead outside the workspace); replace it with the "
                "file, or add its target to extraPaths")
_LINKED_DIR = ("directory is a symbolic link, which is not followed (it may lead outside the workspace); its files "
               "are not indexed: replace it with the folder, or add its target to extraPaths")


def _skip_symlink(scan: MemoryScan, path: str, shown: str) -> None:
    """Report a symlink where a memory file or folder would be (a ``.md`` name, or one leading to a directory)
    in ``scan.skipped``: it is left out, but not silently. Only its target's type is looked at, nothing read."""
    if path.endswith(".md"):
        reason = _LINKED_FILE
    elif os.path.isdir(path):
        reason = _LINKED_DIR
    else:
        return
    if is_utf8_name(path):
        _skip(scan, path, shown, reason)


def realpath(path: str | os.PathLike[str]) -> str:
    """``os.path.realpath``, or ``path`` itself when a link vanishes while it is resolved."""
    try:
        return os.path.realpath(path)
    except OSError:
        return os.fspath(path)


def scan_memory_files(workspace: Path, extra_paths: Sequence[Path]) -> MemoryScan:
    """The Markdown files to index (in discovery order, without duplicates) and the names skipped.

    MEMORY.md, memory.md and USER.md (the user model) at the workspace root, memory/** and the extra paths (files or
    directories, relative ones resolved against the workspace). Names not ending in ".md" and tool folders below a
    root (:data:`IGNORED_DIRS`: ``.git``, ``node_modules``, ...) are left out silently; missing extra paths, extra
    paths that are an empty folder (an unmounted drive's mount point; ``empty``) and directories that cannot be
    listed are listed in ``unavailable``. Symlinks are never followed, and those named
    ``*.md`` or leading to a directory, names that are not valid UTF-8 and directories nested deeper than
    :data:`MAX_DIR_DEPTH` are listed in ``skipped``.
    """
    ws = _abs(workspace)
    scan = MemoryScan()
    for name in (*_INDEXED_ROOT_FILES, "memory"):
        st = _lstat(os.path.join(ws, name))
        if st is not None and stat.S_ISLNK(st.st_mode):
            _skip_symlink(scan, os.path.join(ws, name), name)
        elif st is not None and name == "memory" and stat.S_ISDIR(st.st_mode):
            _walk(ws, ["memory"], scan, ws)
        elif st is not None and name != "memory" and stat.S_ISREG(st.st_mode):
            scan.files.append(FoundFile(Path(os.path.join(ws, name)), ws))
    roots = _extra_roots(ws, extra_paths)
    walked = [root for root in (os.path.join(ws, "memory"), *roots) if _is_real_dir(root)]
    for root in roots:
        st = _lstat(root)
        if st is not None and stat.S_ISLNK(st.st_mode):
            _skip_symlink(scan, root, _shown(root, ws))
        if st is None and not any(_is_under(root, other) for other in walked):  # else that walk sees it gone
            scan.unavailable.append(UnavailablePath(Path(root), "extra path is missing",
                                                    "remove it from extra_paths (extraPaths)"))
        if st is None or stat.S_ISLNK(st.st_mode):
            continue
        if stat.S_ISDIR(st.st_mode):
            if _is_empty_dir(root) and not any(_is_under(root, other) for other in walked):
                scan.unavailable.append(_empty_extra_path(root))
            _walk(root, [], scan, ws)
        elif stat.S_ISREG(st.st_mode) and root.endswith(".md"):
            scan.files.append(FoundFile(Path(root), os.path.dirname(root)))
        elif stat.S_ISREG(st.st_mode) and is_utf8_name(root):  # configured by name: say why it is left out
            _skip(scan, root, _shown(root, ws),
                  "extra path is not a Markdown (.md) file; only .md files (or folders of them) are indexed")

    # Nothing below a root is a symlink (none is followed), so a file's real path is its root's real
    # path plus its path below the root: one realpath per root, none per file.
    real_roots: dict[str, str] = {}
    seen: set[str] = set()
    unique: list[FoundFile] = []
    for found in scan.files:
        if found.root not in real_roots:
            real_roots[found.root] = realpath(found.root).rstrip(os.sep)
        below = str(found.path)[len(found.root):].lstrip(os.sep)
        key = real_roots[found.root] + os.sep + below
        if key not in seen:
            seen.add(key)
            unique.append(found)
    scan.files = unique
    return scan


def list_memory_files(workspace: Path, extra_paths: Sequence[Path]) -> list[Path]:
    """Absolute paths of the Markdown files to index, in discovery order, without duplicates.

    The files of :func:`scan_memory_files` (names that are not valid UTF-8 are left out).
    """
    return [found.path for found in scan_memory_files(workspace, extra_paths).files]


def relative_path(workspace: Path, abs_path: Path) -> str:
    """``abs_path`` relative to the workspace with "/" separators (may start with "../")."""
    ws, path = os.fspath(workspace), os.fspath(abs_path)
    # the common case, a normalised path below the normalised workspace, without relpath's two abspath calls
    # (a sync with nothing to do spends a third of its time there on 10k files)
    if path.startswith(ws) and path[len(ws) : len(ws) + 1] == os.sep and os.path.isabs(ws) \
            and os.path.normpath(ws) == ws:
        rest = path[len(ws) + 1 :]
        if rest and os.path.normpath(rest) == rest:
            return rest.replace(os.sep, "/")
    return os.path.relpath(abs_path, workspace).replace(os.sep, "/")


def _read_nofollow(abs_path: Path, root: str | None = None, limit: int | None = None
                   ) -> tuple[os.stat_result, bytes] | None:
    """Stat and bytes of one open of ``abs_path``, opened beneath ``root`` without following a
    symlink at any component below it (only the last component when ``root`` is None or does not
    contain the file); None if it does not exist. A file with more than one hard link is refused
    (UnreadableFileError) like a symlink: its other name may be outside the workspace."""
    path = _abs(abs_path)
    base = _abs(root) if root is not None else None
    if base is not None and _is_under(path, base):
        parts = os.path.relpath(path, base).split(os.sep)
    else:
        base, parts = os.path.dirname(path), [os.path.basename(path)]
    try:
        read = safe_fs.read_file(base, parts, limit)
    except (FileNotFoundError, NotADirectoryError):
        return None  # vanished (or a parent was replaced by a file) since it was listed
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnreadableFileError(
                f"{printable_path(path)}: {printable_path(str(exc.filename))} is a symbolic link; memory files "
                "are read without following symlinks"
            ) from None
        if exc.errno == errno.EINVAL:
            raise UnreadableFileError(f"{printable_path(path)} is not a regular file") from None
        raise
    if read is not None and read[0].st_nlink > 1:
        raise UnreadableFileError(
            f"{printable_path(path)} has {read[0].st_nlink} hard links: another name, possibly outside the workspace, "
            "shares its content, so it is not read (as a symlink is not followed); give it a copy of its own"
        )
    return read


def _decode(data: bytes, abs_path: Path, *, keep_undecodable: bool = False) -> str:
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        raise UnreadableFileError(f"{abs_path} looks binary (NUL byte in the first 8 KiB); only text files are read")
    data = data.removeprefix(codecs.BOM_UTF8)
    if keep_undecodable:
        return data.decode("utf-8", errors="surrogateescape")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        log.warning("%s is not valid UTF-8 (%s); undecodable bytes replaced with U+FFFD", abs_path, exc.reason)
        return data.decode("utf-8", errors="replace")


def sniff_text(abs_path: Path, root: str | os.PathLike[str] | None = None) -> None:
    """Check, from its first 8 KiB, that the file would be read as text: raises UnreadableFileError
    (binary, a symlink in the way, not a regular file), FileNotFoundError or another OSError."""
    read = _read_nofollow(abs_path, None if root is None else os.fspath(root), _BINARY_SNIFF_BYTES)
    if read is None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(abs_path))
    if b"\x00" in read[1]:
        raise UnreadableFileError(f"{printable_path(str(abs_path))} looks binary (NUL byte in the first 8 KiB)")


def read_memory_text(abs_path: Path, root: str | os.PathLike[str] | None = None, *,
                     keep_undecodable: bool = False) -> str | None:
    """The file's text (UTF-8, BOM removed, invalid bytes replaced), or None if it does not exist.

    ``root``: the allowed directory the file lies in (workspace or extra path); no component
    below it may be a symlink (without it, only the file itself). ``keep_undecodable`` keeps
    bytes that are not UTF-8 as surrogate escapes instead (for a text that is written back:
    encoded with ``errors="surrogateescape"`` they are the same bytes again). Raises
    UnreadableFileError if the file looks binary, is not a regular file or a symlink is in the way.
    """
    read = _read_nofollow(abs_path, None if root is None else os.fspath(root))
    return None if read is None else _decode(read[1], abs_path, keep_undecodable=keep_undecodable)


def build_file_entry(
    abs_path: Path, workspace: Path, source: Source = "memory", root: str | os.PathLike[str] | None = None
) -> tuple[MemoryFile, str] | None:
    """The file's index entry and its text, or None if the file vanished since it was listed.

    The file is opened beneath ``root`` (default: the workspace) following no symlink below it;
    raises UnreadableFileError when one is in the way or the file looks binary.
    """
    read = _read_nofollow(abs_path, os.fspath(root if root is not None else workspace))
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
    """True for MEMORY.md, memory.md, USER.md, DREAMS.md and anything under memory/ (workspace-relative)."""
    norm = _normalise_rel(rel)
    return norm in _ROOT_FILES or norm.startswith("memory/")


def _find_root(ws: str, extras: list[str], cand: str, requested: str) -> str:
    """The allowed root directory containing ``cand``; raises MemoryPathError if there is none."""
    if _is_under(cand, ws) and is_memory_path(relative_path(Path(ws), Path(cand))):
        return ws
    for root in extras:
        st = _lstat(root)
        if st is None and (cand == root or _is_under(cand, root)):  # configured but missing (a drive not mounted):
            return os.path.dirname(root) if cand == root else root  # its files read as missing, not as forbidden
        if st is None or stat.S_ISLNK(st.st_mode):
            continue
        if stat.S_ISDIR(st.st_mode) and _is_under(cand, root):
            return root
        if stat.S_ISREG(st.st_mode) and cand == root:
            return os.path.dirname(root)
    if requested.replace("\\", "/").lstrip("./").startswith("sessions/") and ".jsonl" in requested:
        raise MemoryPathError(f"{requested!r} is a session transcript hit; memory_get reads memory files only (the "
                              f"hit's text holds the transcript's lines); {_ALLOWED}")
    if cand == ws or _is_under(cand, ws):
        raise MemoryPathError(f"{requested!r} is not a memory file; {_ALLOWED}")
    raise MemoryPathError(f"{requested!r} resolves outside the workspace and the extra paths; {_ALLOWED}")


def resolve_memory_path(workspace: Path, extra_paths: Sequence[Path], requested: str) -> tuple[Path, str]:
    """Check a path given to memory_get; return (absolute path, workspace-relative path).

    Relative paths are taken from the workspace; ".." is resolved lexically, symlinks are
    refused rather than followed. A missing but allowed file is accepted.
    Raises MemoryPathError saying what is wrong and what is allowed.
    """
    _root, cand, rel = _resolve(workspace, extra_paths, requested)
    return cand, rel


def get_lines(
    workspace: Path, extra_paths: Sequence[Path], requested: str, from_line: int | None, lines: int | None
) -> tuple[str, str, int, int, bool]:
    """What ``memory_get`` returns: ``(workspace-relative path, text, start_line, end_line, exists)``.

    The path is checked as :func:`resolve_memory_path` does, then the file is opened beneath its
    allowed root without following a symlink at any component (a directory swapped for a
    symlink after the check makes the read fail, never read outside). Raises MemoryPathError,
    MemoryArgumentError or UnreadableFileError.
    """
    root, cand, rel = _resolve(workspace, extra_paths, requested)
    text, start, end = read_lines(cand, from_line, lines, root=root)
    exists = bool(text) or os.path.isfile(cand)  # an empty read is a missing file or an empty range
    return rel, text, start, end, exists


def _resolve(workspace: Path, extra_paths: Sequence[Path], requested: str) -> tuple[str, Path, str]:
    """(allowed root, absolute path, workspace-relative path) of a memory_get path."""
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
    extras = _extra_roots(ws, extra_paths)
    cand = _abs(raw, ws)
    if not (_is_under(cand, ws) or any(cand == root or _is_under(cand, root) for root in extras)):
        cand = _through_workspace_link(ws, cand)
    root = _find_root(ws, extras, cand, requested)
    if not cand.endswith(".md"):
        raise MemoryPathError(f"{requested!r} is not a Markdown (.md) file; {_ALLOWED}")

    cand = _checked_components(ws, root, os.path.relpath(cand, root).split(os.sep), requested)
    return root, Path(cand), relative_path(Path(ws), Path(cand))


def _through_workspace_link(ws: str, cand: str) -> str:
    """``cand``, an absolute path outside ``ws``, as the same path below ``ws`` when one of its folders is the
    workspace by another path (the workspace as configured through a symlink, ``/tmp`` for ``/private/tmp`` on
    macOS); else ``cand``. What lies below that folder is checked as any path below the workspace is."""
    real_ws = realpath(ws)
    folder = os.path.dirname(cand)
    while folder != os.path.dirname(folder):
        if realpath(folder) == real_ws:
            return os.path.join(ws, os.path.relpath(cand, folder))
        folder = os.path.dirname(folder)
    return cand


def _checked_components(ws: str, root: str, parts: list[str], requested: str) -> str:
    """``root/parts`` with each component that exists checked (no symlink; folders, then a regular file) and spelled
    as it is on disk where it was asked in another Unicode normalization; MemoryPathError saying what is wrong."""
    current = root
    for position, part in enumerate(parts):
        st = _lstat_named(os.path.join(current, part), requested)
        if st is None:
            part = _spelled_on_disk(current, part)  # café.md asked, cafe\u0301.md stored (as macOS names files)
            st = _lstat_named(os.path.join(current, part), requested)
        current = os.path.join(current, part)
        if st is None:  # a missing file (or directory) is allowed: memory_get returns empty text
            return os.path.join(current, *parts[position + 1 :])
        shown, last = relative_path(Path(ws), Path(current)), position == len(parts) - 1
        if stat.S_ISLNK(st.st_mode):
            raise MemoryPathError(f"{requested!r}: {shown} is a symbolic link; memory_get does not follow symlinks")
        if not last and not stat.S_ISDIR(st.st_mode):
            raise MemoryPathError(f"{requested!r}: {shown} is a file, not a directory; give the path of one .md file")
        if last and stat.S_ISDIR(st.st_mode):
            raise MemoryPathError(f"{requested!r} is a directory; give the path of one .md file")
        if last and not stat.S_ISREG(st.st_mode):
            raise MemoryPathError(f"{requested!r} is not a regular file")
    return current


def _lstat_named(path: str, requested: str) -> os.stat_result | None:
    """:func:`_lstat` of a component of ``requested``; MemoryPathError when its name or the whole path is longer than
    the file system takes."""
    try:
        return _lstat(path)
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
        longest = max(len(os.fsencode(name)) for name in path.split(os.sep))
        reason = f"a name of {longest} bytes, at most 255" if longest > 255 else f"{len(os.fsencode(path))} bytes"
        shown = f"{requested[:80]!r}{'...' if len(requested) > 80 else ''}"
        raise MemoryPathError(f"{shown} is too long for the file system ({reason}); give a shorter path") from None


def _spelled_on_disk(folder: str, name: str) -> str:
    """The name of the one entry of ``folder`` that is ``name`` in another Unicode normalization (a model writes a
    name composed, ``café.md``, where macOS stored it decomposed), else ``name``."""
    if name.isascii():
        return name
    wanted = unicodedata.normalize("NFC", name)
    try:
        found = [n for n in os.listdir(folder) if n != name and unicodedata.normalize("NFC", n) == wanted]
    except OSError:
        return name
    return found[0] if len(found) == 1 else name


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


def read_lines(
    abs_path: Path, from_line: int | None, lines: int | None, *, root: str | os.PathLike[str] | None = None
) -> tuple[str, int, int]:
    """Lines of a memory file as (text, start_line, end_line), 1-based inclusive.

    ``start = max(1, from_line or 1)``; ``count = max(1, lines)``, or all lines when
    ``lines`` is None. Both are first made ints by :func:`line_number` (floats and numeric
    strings are truncated; other values raise MemoryArgumentError). Lines are joined with "\\n", so
    reading the whole file returns it unchanged. A missing file, or a start past the end, gives
    ``("", start, start - 1)``. ``root`` as for :func:`read_memory_text`.
    """
    from_line, lines = line_number(from_line, "from_line"), line_number(lines, "lines")
    start = max(1, from_line or 1)
    content = read_memory_text(abs_path, root)
    if content is None:
        return "", start, start - 1
    all_lines = content.split("\n")
    count = max(1, lines if lines is not None else len(all_lines))
    selected = all_lines[start - 1 : start - 1 + count]
    return "\n".join(selected), start, start - 1 + len(selected)
