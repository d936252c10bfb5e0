"""Writing a memory file beneath the workspace: appends and atomic rewrites, under one lock.

Every write opens the file by descriptor from the workspace down (:mod:`openclaw_memory.files.safe_fs`:
no symbolic link below the workspace is followed, missing directories are made the same way) and
refuses a file with more than one hard link (its other name may be outside the workspace).

The lock is the file itself: an exclusive ``flock`` on its open descriptor, taken again when the
name was meanwhile given to another file (a rewrite renames a new file over it). So no lock file
is left anywhere, and every process writing the same file shares the same lock whatever its
configuration. A rewrite writes a temporary file in the same directory, ``fsync``s it, renames it
over the file within that directory's descriptor and ``fsync``s the directory; a rewrite that
leaves nothing but whitespace deletes the file.

Where directories cannot be walked by descriptor (Windows), files are opened by checked path and
the lock is a file in the state directory named by a hash of the workspace and the path.

A write that may make a file or folder first refuses a name that would not be the same file everywhere
(:mod:`~openclaw_memory.files.portable_names`: a name Windows reserves, such as ``memory/nul.md``, or
one differing only in letter case or Unicode normalization from an existing one, such as ``memory/topic.md`` beside
``memory/Topic.md``). Refused paths raise MemoryPathError; a lock not free within :data:`LOCK_TIMEOUT_S` raises
OpenClawMemoryError. Other ``OSError`` (disk full, permissions) pass through unchanged.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from openclaw_memory.files import portable_names, safe_fs
from openclaw_memory.config import default_state_dir
from openclaw_memory.errors import MemoryPathError, OpenClawMemoryError

if sys.platform != "win32":
    import fcntl

__all__ = [
    "LOCK_TIMEOUT_S", "append_file", "create_file", "fallback_lock_path", "file_lock", "refusing_unsafe_paths",
    "replace_atomically", "rewrite_file",
]

#: Seconds a write waits for another writer of the same file before giving up.
LOCK_TIMEOUT_S = 30.0

_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
#: read-write (an exclusive flock needs it on NFS); appends go to the end even beside writers that do not lock
_OPEN_FLAGS = os.O_RDWR | os.O_APPEND | _O_NONBLOCK
_REFUSED = {
    errno.ELOOP: "is a symbolic link",
    errno.ENOTDIR: "is not a directory",
    errno.EISDIR: "is a directory",
    errno.ENAMETOOLONG: "has a name too long for the file system",
    errno.EINVAL: "is not a regular file",
}


@contextlib.contextmanager
def refusing_unsafe_paths(action: str) -> Iterator[None]:
    """Turn the refusals of :mod:`~openclaw_memory.files.safe_fs` and of the open itself (a symlink, a
    component that is not a directory, a directory where a file was named, a name too long, not a
    regular file) into MemoryPathError; ``action`` says what was refused, e.g.
    ``"append to memory/x.md"``."""
    try:
        yield
    except OSError as exc:
        reason = _REFUSED.get(exc.errno or 0)
        if reason is None:
            raise
        where = f" through {exc.filename}" if exc.filename else ""
        raise MemoryPathError(
            f"refusing to {action}{where}: it {reason}; memory files must be regular files inside the workspace "
            "(no symlink is followed)"
        ) from None


def fallback_lock_path(root: str | os.PathLike[str], rel: str) -> Path:
    """The lock file guarding ``root/rel`` where files cannot be locked by descriptor: in the state
    directory, named by a hash of the resolved workspace and the relative path (so every process
    writing the file uses the same one)."""
    key = f"{os.path.realpath(os.fspath(root))}\0{rel}".encode("utf-8", errors="surrogateescape")
    return default_state_dir() / "locks" / f"{hashlib.sha256(key).hexdigest()[:40]}.lock"


@dataclass
class _Held:
    """A locked memory file: its directory handle, name, descriptor and whether this write created it."""

    directory: int | str
    name: str
    fd: int
    created: bool


def append_file(root: str | os.PathLike[str], rel: str, data: str, *, ensure_leading_newline: bool = True,
                fsync: bool = True) -> None:
    """Append ``data`` to ``root/rel`` (made if missing, parent directories too) through ``O_APPEND``.

    When ``ensure_leading_newline`` is set and the file is non-empty without a trailing newline,
    a ``"\\n"`` is written first so ``data`` starts on its own line. Never truncates.
    """
    encoded = data.encode("utf-8")

    def write(held: _Held) -> None:
        payload = encoded
        if ensure_leading_newline and os.fstat(held.fd).st_size > 0:
            os.lseek(held.fd, -1, os.SEEK_END)
            if os.read(held.fd, 1) != b"\n":
                payload = b"\n" + payload
        _write_all(held.fd, payload)
        if fsync:
            os.fsync(held.fd)

    with refusing_unsafe_paths(f"append to {rel}"):
        _check_new(root, rel, f"append to {rel}")
        _with_lock(root, rel, write, create=True)


def rewrite_file(root: str | os.PathLike[str], rel: str, change: Callable[[str | None], str | None], *,
                 create: bool = False) -> bool:
    """Replace ``root/rel`` with what ``change`` makes of its text; returns whether the file changed.

    ``change`` gets the current text (``None`` when the file does not exist) and returns the new
    text, or None to leave the file as it is; a new text that is blank deletes the file. The lock
    is held from the read to the replace, so no append or other rewrite is lost. A missing file
    is left alone unless ``create`` (parent directories are then made too). Undecodable bytes
    are kept as they are.
    """
    def edit(held: _Held) -> bool:
        # read even a file this call created: another writer may have appended to it between its creation and
        # this lock (the text read is what the replace must keep)
        text = _read_all(held.fd)
        old = None if held.created and not text else text
        new = change(old)
        if new is None or new == old or (old is None and not new.strip()):
            if held.created:
                _unlink_in(held.directory, held.name, missing_ok=True)
            return False
        if not new.strip():
            _unlink_in(held.directory, held.name)
            _fsync_dir(held.directory)
            return True
        mode = stat.S_IMODE(os.fstat(held.fd).st_mode)
        _replace_in(held.directory, held.name, new.encode("utf-8", errors="surrogateescape"), mode=mode)
        return True

    with refusing_unsafe_paths(f"rewrite {rel}"):
        if create:
            _check_new(root, rel, f"write {rel}")
        return _with_lock(root, rel, edit, create=create, create_dirs=create)


def create_file(root: str | os.PathLike[str], rel: str, data: str) -> bool:
    """Create ``root/rel`` holding ``data`` (parent directories made too), durably; False, and
    nothing written, when a file (or anything else) of that name exists already, or one whose name differs only in
    letter case or Unicode normalization (one file on macOS and Windows)."""
    parts = safe_fs.split_rel(rel)
    portable_names.check_new_names(parts, f"create {rel}")
    if portable_names.twin_path(root, parts, layout=True) is not None:
        return False
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            with refusing_unsafe_paths(f"create {rel}"), \
                    safe_fs.open_dir(root, parts[:-1], create=True) as directory:
                try:
                    fd = safe_fs.open_in(directory, parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL)
                except FileExistsError:
                    return False
                try:
                    _write_all(fd, data.encode("utf-8"))
                    os.fsync(fd)
                finally:
                    os.close(fd)
                _fsync_dir(directory)
                return True
        except FileNotFoundError:
            _retry_or_give_up(rel, deadline)


def _check_new(root: str | os.PathLike[str], rel: str, action: str) -> None:
    """MemoryPathError when writing ``root/rel`` may make a name that is not the same file everywhere (see
    :mod:`~openclaw_memory.files.portable_names`)."""
    parts = safe_fs.split_rel(rel)
    portable_names.check_new_names(parts, action)
    twin = portable_names.twin_path(root, parts, layout=True)
    if twin is not None:
        raise MemoryPathError(portable_names.twin_message(action, parts, twin))


def _retry_or_give_up(rel: str, deadline: float) -> None:
    """After a directory on the way was removed (or replaced) once opened, nothing written: retry
    until ``deadline``, then MemoryPathError."""
    if time.monotonic() >= deadline:
        raise MemoryPathError(
            f"cannot write {rel}: its directory kept being removed or replaced while writing (is something moving "
            "it?); nothing was written, retry later"
        ) from None


def _with_lock(root: str | os.PathLike[str], rel: str, action: Callable[[_Held], object], *, create: bool,
               create_dirs: bool = True) -> object:
    """Run ``action`` on ``root/rel`` locked; a missing file (without ``create``) returns False."""
    parts = safe_fs.split_rel(rel)
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            with safe_fs.open_dir(root, parts[:-1], create=create_dirs) as directory:
                if not isinstance(directory, int):
                    return _with_path_lock(root, rel, directory, parts[-1], action, create=create)
                held = _lock_in(directory, parts[-1], rel, create=create, deadline=deadline)
                if held is None:
                    return False
                try:
                    _drop_legacy_lock(directory, parts[-1])
                    return action(held)
                finally:
                    os.close(held.fd)  # releases the flock
        except FileNotFoundError:
            if not create:
                return False  # a directory on the way does not exist: nothing to rewrite
            _retry_or_give_up(rel, deadline)


def _lock_in(directory: int, name: str, rel: str, *, create: bool, deadline: float) -> _Held | None:
    """Open ``name`` in ``directory`` and flock it, again until the locked file still has that name;
    None when it does not exist and ``create`` is false. Raises FileNotFoundError when the
    directory itself was removed meanwhile."""
    while True:
        created = False
        try:
            fd = safe_fs.open_in(directory, name, _OPEN_FLAGS)
        except FileNotFoundError:
            if not create:
                return None
            try:
                fd = safe_fs.open_in(directory, name, _OPEN_FLAGS | os.O_CREAT | os.O_EXCL)
                created = True
            except FileExistsError:
                continue  # made meanwhile: open that one
        try:
            st = _checked(fd, rel)
            _flock(fd, rel, deadline)
            try:
                now = os.stat(name, dir_fd=directory, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                _checked(fd, rel)  # a hard link may have been made while waiting
                return _Held(directory, name, fd, created)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # renamed over or deleted while waiting: lock the file that has the name now
        if time.monotonic() >= deadline:
            raise _busy(rel)


def _checked(fd: int, rel: str) -> os.stat_result:
    """The file's stat; refuses a non-regular file and a file with another hard link."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, "is not a regular file", rel)
    if st.st_nlink > 1:
        raise MemoryPathError(
            f"refusing to write {rel}: it has {st.st_nlink} hard links, so another name (possibly outside the "
            "workspace) shares its content; copy it to a file of its own (cp --remove-destination) to write to it"
        )
    return st


def _flock(fd: int, rel: str, deadline: float) -> None:
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise _busy(rel) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def _busy(rel: str, holder: str = "another process keeps writing to it",
          timeout: float = LOCK_TIMEOUT_S) -> OpenClawMemoryError:
    return OpenClawMemoryError(f"could not lock {rel} within {timeout:.0f}s: {holder}; retry later")


@contextlib.contextmanager
def file_lock(lock_file: str | os.PathLike[str], shown: object, holder: str, *,
              timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the sidecar lock file ``lock_file`` (waiting up to ``timeout`` seconds, :data:`LOCK_TIMEOUT_S` unless
    given; 0: one try); OpenClawMemoryError naming ``shown`` and who may hold it (``holder``: "another process keeps
    writing it") when it is not free in time."""
    lock = FileLock(os.fspath(lock_file), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise _busy(str(shown), holder, timeout) from None
    try:
        yield
    finally:
        lock.release()


def _drop_legacy_lock(directory: int, name: str) -> None:
    """Remove the empty ``.<name>.lock`` that earlier versions left beside the file."""
    legacy = f".{name}.lock"
    try:
        st = os.stat(legacy, dir_fd=directory, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode) and st.st_size == 0:
            os.unlink(legacy, dir_fd=directory)
    except OSError:
        pass


def _with_path_lock(root: str | os.PathLike[str], rel: str, directory: str, name: str,
                    action: Callable[[_Held], object], *, create: bool) -> object:
    """The fallback without ``dir_fd``: a lock file in the state directory, path-based opens."""
    lock_file = fallback_lock_path(root, rel)
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(lock_file, rel, "another process keeps writing to it"):
        created = False
        try:
            fd = safe_fs.open_in(directory, name, _OPEN_FLAGS)
        except FileNotFoundError:
            if not create:
                return False
            fd = safe_fs.open_in(directory, name, _OPEN_FLAGS | os.O_CREAT | os.O_EXCL)
            created = True
        try:
            _checked(fd, rel)
            return action(_Held(directory, name, fd, created))
        finally:
            os.close(fd)


# ---- file operations beneath a directory handle (an fd, or a checked path where there is no dir_fd) ----


def _read_all(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="surrogateescape")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replace_atomically(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    """Replace the file ``path`` (in a trusted directory, e.g. the state directory) with ``data``, atomically and
    durably: readers see the old file or the new one, never half; after a crash, one of the two. ``mode`` sets the
    new file's permissions exactly (``0o600`` for a private file); None creates it as ``open(path, "w")`` would
    (``0o666`` narrowed by the umask). The temporary file is removed when the write fails. Memory files in the
    workspace go through :func:`rewrite_file`, which also locks and refuses symlinks below the workspace."""
    path = os.fspath(path)
    _replace_in(os.path.dirname(path) or ".", os.path.basename(path), data, mode=mode)


def _replace_in(directory: int | str, name: str, data: bytes, *, mode: int | None) -> None:
    tmp = f".{name[:64]}.tmp-{uuid.uuid4().hex[:12]}"  # short enough beside a name of the longest length
    fd = safe_fs.open_in(directory, tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
    try:
        try:
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)  # the umask may have narrowed it
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if isinstance(directory, int):
            os.replace(tmp, name, src_dir_fd=directory, dst_dir_fd=directory)
        else:
            os.replace(os.path.join(directory, tmp), os.path.join(directory, name))
    except BaseException:
        _unlink_in(directory, tmp, missing_ok=True)
        raise
    _fsync_dir(directory)


def _unlink_in(directory: int | str, name: str, *, missing_ok: bool = False) -> None:
    try:
        if isinstance(directory, int):
            os.unlink(name, dir_fd=directory)
        else:
            os.unlink(os.path.join(directory, name))
    except FileNotFoundError:
        if not missing_ok:
            raise


def _fsync_dir(directory: int | str) -> None:
    """Make a rename or unlink in ``directory`` durable (best effort where directories cannot be synced)."""
    try:
        if isinstance(directory, int):
            os.fsync(directory)
        else:
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    except OSError:
        pass
