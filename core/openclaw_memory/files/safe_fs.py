"""Opening files beneath a trusted root directory without following a symbolic link at any
component below it.

Each directory below the root is opened relative to its parent's file descriptor with
``O_NOFOLLOW | O_DIRECTORY`` (``openat``-style) and the file itself relative to the last one
with ``O_NOFOLLOW``, so a directory swapped for a symlink between a check and the open cannot
redirect a read or a write outside the root: the open fails instead. The root itself is
trusted (the workspace or a configured extra path) and may be reached through symlinks.

Where ``os.open`` takes no ``dir_fd`` (Windows), each component is checked with ``lstat``
before a path-based open: the same refusals, without the guarantee under a race.

Errors are plain ``OSError``: ``ELOOP`` when a component is a symlink, ``ENOTDIR`` when one is
not a directory, ``ENOENT`` when one is missing; ``filename`` is the offending path.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

__all__ = [
    "DIR_FD_SUPPORTED",
    "list_dir",
    "open_dir",
    "open_file",
    "open_in",
    "read_file",
    "split_rel",
]

#: True where directories can be walked by file descriptor (POSIX); else the lstat fallback is used.
DIR_FD_SUPPORTED = (
    os.open in os.supports_dir_fd
    and os.mkdir in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and os.scandir in os.supports_fd
    and hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
)

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC


def split_rel(rel: str | Sequence[str]) -> list[str]:
    """The components of a root-relative path ("/" or the OS separator); refuses empty paths,
    absolute paths and ``.``/``..`` components with ``ValueError``."""
    if isinstance(rel, str):
        if os.path.isabs(rel) or rel.startswith(("/", "\\")):
            raise ValueError(f"{rel!r} is absolute; a path relative to the root is required")
        parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    else:
        parts = list(rel)
    if not parts or any(p in ("", ".", "..") or "/" in p or "\x00" in p for p in parts):
        raise ValueError(f"{rel!r} is not a path below the root (empty, '..' or a NUL byte)")
    return parts


def _refusal(dir_fd: int | None, name: str, shown: str, exc: OSError) -> OSError:
    """The error for a component that could not be opened as a directory: ELOOP for a symlink."""
    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            return exc
        if stat.S_ISLNK(st.st_mode):
            return OSError(errno.ELOOP, "is a symbolic link (not followed)", shown)
        return OSError(errno.ENOTDIR, "is not a directory", shown)
    return OSError(exc.errno, exc.strerror, shown)


def _open_root(root: str | os.PathLike[str]) -> int:
    return os.open(os.fspath(root), os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)


def _walk_fd(root: str | os.PathLike[str], parts: Sequence[str], *, create: bool) -> int:
    """An fd of root/parts (every part opened with O_NOFOLLOW beneath the previous one)."""
    fd = _open_root(root)
    shown = os.fspath(root)
    try:
        for part in parts:
            shown = os.path.join(shown, part)
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", shown) from None
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile (or a symlink put there): the open below decides
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise _refusal(fd, part, shown, exc) from None
            except OSError as exc:
                raise _refusal(fd, part, shown, exc) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_path(root: str | os.PathLike[str], parts: Sequence[str], *, create: bool, last_is_dir: bool) -> str:
    """The fallback: lstat each component (refusing symlinks and non-directories); the full path."""
    current = os.fspath(root)
    for i, part in enumerate(parts):
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            if create and (i < len(parts) - 1 or last_is_dir):
                os.makedirs(current, exist_ok=True)
                st = os.lstat(current)
            elif i < len(parts) - 1 or last_is_dir:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", current) from None
            else:
                return current
        if stat.S_ISLNK(st.st_mode):
            raise OSError(errno.ELOOP, "is a symbolic link (not followed)", current)
        if (i < len(parts) - 1 or last_is_dir) and not stat.S_ISDIR(st.st_mode):
            raise OSError(errno.ENOTDIR, "is not a directory", current)
    return current


@contextmanager
def open_dir(root: str | os.PathLike[str], rel: str | Sequence[str] = (), *, create: bool = False) -> Iterator[int | str]:
    """Yield a handle on the directory root/rel: an fd (POSIX) or, in the fallback, its checked path.

    No component below ``root`` may be a symlink. ``create`` makes missing directories
    (``mkdir -p``, each one beneath its checked parent).
    """
    parts = split_rel(rel) if rel else []
    if not DIR_FD_SUPPORTED:
        yield _check_path(root, parts, create=create, last_is_dir=True)
        return
    fd = _walk_fd(root, parts, create=create)
    try:
        yield fd
    finally:
        os.close(fd)


def open_in(directory: int | str, name: str, flags: int, mode: int = 0o644) -> int:
    """Open ``name`` inside a handle from :func:`open_dir`, never following a symlink at ``name``."""
    flags |= _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY
    if isinstance(directory, int):
        try:
            return os.open(name, flags, mode, dir_fd=directory)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise OSError(errno.ELOOP, "is a symbolic link (not followed)", name) from None
            raise
    path = os.path.join(directory, name)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise OSError(errno.ELOOP, "is a symbolic link (not followed)", path)
    except FileNotFoundError:
        pass
    return os.open(path, flags, mode)


def open_file(root: str | os.PathLike[str], rel: str | Sequence[str], flags: int, mode: int = 0o644,
              *, create_dirs: bool = False) -> int:
    """An fd of root/rel opened with ``flags``; no component below ``root`` may be a symlink.

    ``create_dirs`` makes missing parent directories first. The caller closes the fd.
    """
    parts = split_rel(rel)
    with open_dir(root, parts[:-1], create=create_dirs) as directory:
        return open_in(directory, parts[-1], flags, mode)


def read_file(root: str | os.PathLike[str], rel: str | Sequence[str], limit: int | None = None
              ) -> tuple[os.stat_result, bytes] | None:
    """``(stat, bytes)`` of the regular file root/rel from one open (its first ``limit`` bytes
    when given), or None if it does not exist.

    Raises OSError ``ELOOP`` when a component is a symlink, ``ENOTDIR`` when a parent is not a
    directory and ``EINVAL`` when the file is not a regular file (a FIFO is never waited on).
    """
    try:
        fd = open_file(root, rel, os.O_RDONLY | _O_NONBLOCK)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "is not a regular file", os.path.join(os.fspath(root), *split_rel(rel)))
        return st, fh.read() if limit is None else fh.read(limit)


def list_dir(directory: int | str) -> list[tuple[str, str]]:
    """``(name, kind)`` of each entry of a handle from :func:`open_dir`, sorted by name; ``kind`` is
    "dir", "file", "symlink" or "other" (symlinks are not followed)."""
    def kind(entry: os.DirEntry[str]) -> str:
        try:
            if entry.is_symlink():
                return "symlink"
            if entry.is_dir(follow_symlinks=False):
                return "dir"
            return "file" if entry.is_file(follow_symlinks=False) else "other"
        except OSError:
            return "other"

    with os.scandir(directory) as it:  # an fd is duplicated by scandir, ours stays open
        return sorted(((e.name, kind(e)) for e in it), key=lambda item: item[0])
