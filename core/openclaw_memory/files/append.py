"""Append-only writes to memory files: ``MEMORY.md`` and the daily notes ``memory/YYYY-MM-DD.md``.

``append_memory`` never truncates or rewrites a file. It refuses paths outside the allowed set
(``..`` segments, absolute paths outside the workspace, symlinks, anything the ``allowed`` policy
rejects, a file with another hard link) with :class:`~openclaw_memory.errors.MemoryPathError`.
Two processes may append to the same file at once: each append holds the file's lock
(:mod:`openclaw_memory.files.memory_writes`) and writes through ``O_APPEND``.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Callable, Collection
from datetime import date, datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from openclaw_memory.text.chunker import escape_record_markers
from openclaw_memory.errors import ConfigError, MemoryArgumentError, MemoryPathError
from openclaw_memory.files.memory_writes import LOCK_TIMEOUT_S, append_file, file_lock
from openclaw_memory.text.provenance import mark_origin

__all__ = [
    "DAILY_NOTE_RE",
    "LOCK_TIMEOUT_S",
    "AllowedPaths",
    "append_memory",
    "daily_note_path",
    "is_default_append_path",
    "local_now",
    "lock_path",
    "locked_append",
    "normalize_rel_path",
    "now_datetime",
    "replace_lone_surrogates",
    "resolve_tz",
    "today",
]

log = logging.getLogger(__name__)

#: A daily note path relative to the workspace: ``memory/YYYY-MM-DD.md``.
DAILY_NOTE_RE = re.compile(r"^memory/(\d{4}-\d{2}-\d{2})\.md$")
AllowedPaths = Callable[[str], bool] | Collection[str] | None

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)


def resolve_tz(tz: str | tzinfo | None) -> tzinfo | None:
    """An IANA zone name (or tzinfo) as a tzinfo; ``None`` means the system's local zone."""
    if tz is None or isinstance(tz, tzinfo):
        return tz
    name = str(tz).strip()
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"timezone: unknown time zone {name!r}; use an IANA name such as 'Europe/Berlin' or 'UTC'"
        ) from None


def now_datetime(now: object) -> datetime | None:
    """A ``now`` argument as the datetime relative dates are read against: a datetime as given, a date as its
    midnight (the time a daily note of that day is dated), None for the current time; MemoryArgumentError for
    anything else."""
    if now is None or isinstance(now, datetime):
        return now
    if isinstance(now, date):
        return datetime(now.year, now.month, now.day)
    raise MemoryArgumentError(f"now must be a datetime or a date (None for the current time), got "
                              f"{type(now).__name__} ({now!r:.60})")


def local_now(tz: str | tzinfo | None = None, now: datetime | date | None = None) -> datetime:
    """``now`` (default: the current time) as an aware datetime in ``tz`` (system zone if None).

    A naive ``now`` is taken to be wall-clock time in ``tz`` already; a date stands for its midnight there.
    MemoryArgumentError for anything else.
    """
    zone = resolve_tz(tz)
    now = now_datetime(now)
    if now is None:
        return datetime.now(zone) if zone else datetime.now().astimezone()
    if now.tzinfo is None:
        return now.replace(tzinfo=zone) if zone else now.astimezone()
    return now.astimezone(zone) if zone else now.astimezone()


def today(tz: str | tzinfo | None = None, *, now: datetime | None = None) -> date:
    """Today's date in ``tz`` (an IANA name such as ``"Asia/Tokyo"``; None = system local zone)."""
    return local_now(tz, now).date()


def daily_note_path(day: date) -> str:
    """The workspace-relative daily note path for ``day``: ``memory/YYYY-MM-DD.md``."""
    return f"memory/{day.isoformat()}.md"


def is_default_append_path(rel_path: str) -> bool:
    """True for ``MEMORY.md`` and a daily note ``memory/YYYY-MM-DD.md`` with a real date."""
    if rel_path == "MEMORY.md":
        return True
    m = DAILY_NOTE_RE.match(rel_path)
    if not m:
        return False
    try:
        date.fromisoformat(m.group(1))
    except ValueError:
        return False
    return True


def normalize_rel_path(workspace: Path, rel_path: str | os.PathLike[str]) -> str:
    """``rel_path`` as a clean workspace-relative POSIX path, or MemoryPathError.

    Backslashes become ``/``, leading ``./`` is dropped; an absolute path is accepted only when it
    lies inside ``workspace``. Any ``..`` segment is refused.
    """
    if not isinstance(rel_path, (str, os.PathLike)):
        raise MemoryPathError(f"path must be a string such as 'memory/2026-01-16.md', not {type(rel_path).__name__}")
    raw = os.fspath(rel_path)
    if not isinstance(raw, str):
        raise MemoryPathError(f"path must be a string such as 'memory/2026-01-16.md', not {type(raw).__name__}")
    raw = raw.strip()
    if not raw:
        raise MemoryPathError("path required: give a workspace-relative path such as 'memory/2026-01-16.md'")
    if "\x00" in raw:
        raise MemoryPathError(f"path {raw!r} contains a NUL byte")
    ws = Path(workspace).resolve()
    candidate = Path(raw)
    if candidate.is_absolute() or raw.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", raw):
        absolute = Path(os.path.normpath(raw))
        # Also accept the workspace reached through a symlinked prefix (e.g. /tmp -> /private/tmp).
        real = Path(os.path.realpath(absolute.parent)) / absolute.name
        for option in (absolute, real):
            if option.is_relative_to(ws):
                raw = option.relative_to(ws).as_posix()
                break
        else:
            raise MemoryPathError(
                f"path {rel_path!s} is outside the workspace {ws}; use a path relative to the workspace"
            ) from None
    parts = [p for p in raw.replace("\\", "/").split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise MemoryPathError(f"path {rel_path!s} contains '..'; use a path inside the workspace without '..'")
    if not parts:
        raise MemoryPathError(f"path {rel_path!s} names the workspace itself, not a file")
    return "/".join(parts)


def _check_allowed(ws: Path, rel: str, allowed: AllowedPaths) -> None:
    if allowed is None:
        ok = is_default_append_path(rel)
        hint = "only MEMORY.md and daily notes memory/YYYY-MM-DD.md may be appended to"
    elif callable(allowed):
        ok = bool(allowed(rel))
        hint = "the allowed-paths policy refused it"
    else:
        allowed_set = {normalize_rel_path(ws, p) for p in allowed}
        ok = rel in allowed_set
        hint = "allowed: " + ", ".join(sorted(allowed_set))
    if not ok:
        raise MemoryPathError(f"refusing to append to {rel!r}: {hint}")


def lock_path(target: Path) -> Path:
    """The sidecar lock file that guards :func:`locked_append` to ``target`` (a file in the state
    directory, such as a transcript; memory files are locked by :mod:`~openclaw_memory.files.memory_writes`)."""
    return target.parent / f".{target.name}.lock"


def _write_append(fd: int, encoded: bytes, *, ensure_leading_newline: bool, fsync: bool, what: object) -> None:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise MemoryPathError(f"refusing to append to {what}: not a regular file")
    if ensure_leading_newline and st.st_size > 0:
        os.lseek(fd, -1, os.SEEK_END)  # reading only; O_APPEND writes always go to the end
        if os.read(fd, 1) != b"\n":
            encoded = b"\n" + encoded
    view = memoryview(encoded)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    if fsync:
        os.fsync(fd)


def locked_append(target: Path, data: str, *, ensure_leading_newline: bool = True, fsync: bool = True) -> None:
    """Append ``data`` to ``target`` under a sidecar file lock, through ``O_APPEND``.

    When ``ensure_leading_newline`` is set and the file is non-empty without a trailing newline,
    a ``"\\n"`` is written first so ``data`` starts on its own line. Never truncates; refuses a
    symlink or non-regular file.
    """
    encoded = data.encode("utf-8")
    with file_lock(lock_path(target), target, "another process keeps appending to it"):
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | _O_NOFOLLOW | _O_BINARY
        try:
            fd = os.open(target, flags, 0o644)
        except OSError as exc:
            if target.is_symlink():
                raise MemoryPathError(f"refusing to write through symlink {target}") from None
            raise OSError(exc.errno, f"cannot open {target} for appending: {exc.strerror}") from exc
        try:
            _write_append(fd, encoded, ensure_leading_newline=ensure_leading_newline, fsync=fsync, what=target)
        finally:
            os.close(fd)


#: half of a UTF-16 surrogate pair, which UTF-8 cannot encode
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (half an emoji, as a model's JSON tool arguments may decode; UTF-8
    cannot encode it) replaced by U+FFFD: what the memory files and the long-term store keep of it."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def append_memory(
    workspace: str | os.PathLike[str],
    rel_path: str | os.PathLike[str],
    text: str,
    *,
    allowed: AllowedPaths = None,
    keep_record_markers: bool = False,
    origin: str | None = None,
) -> Path:
    """Append ``text`` to a memory file inside ``workspace`` and return its absolute path.

    Creates ``memory/`` if needed, starts on a new line when the file lacks a trailing newline,
    ends the appended text with a newline, and never truncates. ``allowed`` is a predicate on the
    normalized relative path, a collection of allowed relative paths, or None for the default
    (``MEMORY.md`` and ``memory/YYYY-MM-DD.md``). Raises MemoryPathError for refused paths: a
    symlink below the workspace, a directory, a file with another hard link, a name too long.

    Lines of ``text`` that would read as a record's marker are escaped
    (:func:`~openclaw_memory.text.chunker.escape_record_markers`), so appended notes never become a
    record a store may later remove; ``keep_record_markers`` is for the record writers
    (:class:`~openclaw_memory.files.records.RecordFiles`) alone. ``origin`` (``owner``, ``agent``,
    ``untrusted``, ``system``) marks each entry of ``text`` with it (:mod:`openclaw_memory.text.provenance`).
    A lone surrogate in ``text`` (half an emoji, as a model's tool arguments may decode) is written as U+FFFD, and
    so is a NUL (the indexer takes a file holding one for binary and skips it whole).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    text = replace_lone_surrogates(text).replace("\x00", "\ufffd")
    if not keep_record_markers:
        text = escape_record_markers(text)
    if origin is not None:
        text = mark_origin(text, origin)
    ws = Path(workspace).expanduser().resolve()
    rel = normalize_rel_path(ws, rel_path)
    _check_allowed(ws, rel, allowed)
    target = ws / rel
    if not text:
        return target
    payload = text if text.endswith("\n") else text + "\n"
    ws.mkdir(parents=True, exist_ok=True)  # the workspace itself is trusted configuration
    # Opened by descriptor from the workspace down: a directory swapped for a symlink makes the
    # append fail, never write outside the workspace.
    append_file(ws, rel, payload)
    log.debug("appended %d chars to %s", len(payload), rel)
    return target
