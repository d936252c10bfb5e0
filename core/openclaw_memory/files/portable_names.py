"""File names that every file system the library runs on keeps apart, so a workspace behaves the same wherever it
is opened (Linux, macOS, Windows, or synced between them).

Two rules, checked before a write makes a new file or folder:

* **Windows' reserved names.** ``CON``, ``PRN``, ``AUX``, ``NUL``, ``CONIN$``, ``CONOUT$``, ``COM1``..``COM9`` and
  ``LPT1``..``LPT9`` (any letter case, with any extension: ``nul.md``, ``com1.notes.md``) are devices on Windows, so
  a write to them is lost; a name ending in a period or a space is saved without it (``notes.`` is ``notes``), and
  ``< > : " | ? *`` or a control character cannot be in a name (``a:b.md`` writes a hidden stream of ``a``).
* **Twins.** Names differing only in letter case (``Topic.md`` / ``topic.md``) or in Unicode normalization
  (``café.md`` composed / decomposed, as macOS stores it) are one file on macOS and Windows and two on Linux.

The workspace's own names (``MEMORY.md`` beside ``memory.md``: OpenClaw names both as the long-term memory file; a
``Memory/`` folder for ``memory/``) are taken as they are.
Reads are never refused by these rules: a file made by hand under such a name is read as it is.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Sequence

from openclaw_memory.errors import MemoryPathError

__all__ = ["LAYOUT_NAMES", "check_new_names", "folded", "reserved_name_reason", "twin_in", "twin_message",
           "twin_path", "windows_reserved"]

_DIGITS = "123456789\u00b9\u00b2\u00b3"  # Windows counts COM¹ COM² COM³ (and LPT¹²³) too
_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
                      | {f"COM{d}" for d in _DIGITS} | {f"LPT{d}" for d in _DIGITS})
#: The workspace's own names (OpenClaw's layout, not names a user or an agent gives): a write to one of them is never
#: refused as a twin, so ``MEMORY.md`` is written beside ``memory.md`` (OpenClaw's two spellings of the long-term file)
#: and a workspace whose folder is ``Memory/`` keeps working on macOS, as it did.
LAYOUT_NAMES = frozenset({"MEMORY.md", "memory.md", "USER.md", "DREAMS.md", "memory"})
_FORBIDDEN = re.compile(r'[<>:"|?*\x00-\x1f]')
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def windows_reserved(name: str) -> bool:
    """True when Windows opens a device for ``name``: a reserved name, alone or before an extension, any case."""
    return name.split(".", 1)[0].rstrip(" ").upper() in _RESERVED


def reserved_name_reason(name: str) -> str | None:
    """Why ``name`` (one path component) would not be the same file on Windows, or None when it would."""
    if windows_reserved(name):
        stem, dot, rest = name.partition(".")
        return ("is a device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any extension), where a write "
                f"to it is lost; add a word to it (e.g. {stem + '-notes' + dot + rest!r})")
    if name.endswith((".", " ")) and name not in (".", ".."):
        return "ends with a period or a space, which Windows drops (it would be another name's file there); drop it"
    if _LONE_SURROGATE.search(name):
        return ("holds half of a character (a lone UTF-16 surrogate, as half of an emoji), so it is no valid UTF-8 "
                "name and would never be indexed; spell the name out")
    found = _FORBIDDEN.search(name)
    if found is not None:
        return f"holds {found.group()!r}, which Windows does not allow in a file name; use '-' instead"
    return None


def folded(name: str) -> str:
    """``name`` as a case-insensitive, normalization-insensitive file system compares it."""
    return unicodedata.normalize("NFC", name).lower()


def twin_in(names: Iterable[str], name: str) -> str | None:
    """The one of ``names`` that is ``name``'s twin (differs only in letter case or Unicode normalization), or None
    when ``name`` itself is among them or none is."""
    twins = []
    for other in names:
        if other == name:
            return None
        if folded(other) == folded(name):
            twins.append(other)
    return twins[0] if twins else None


def _exists_as_named(path: str) -> bool:
    """Whether ``path`` exists under this very name, told without listing its folder where that is cheap: on a
    case-sensitive file system, where its name with letter case swapped is not the same file."""
    name = os.path.basename(path)
    swapped = os.path.join(os.path.dirname(path), name.swapcase())
    if swapped == path or not os.path.lexists(path):
        return False
    try:
        return not os.path.samefile(path, swapped)
    except OSError:  # no such file: the file system tells case apart
        return True


def twin_path(root: str | os.PathLike[str], parts: Sequence[str], *, layout: bool = False) -> list[str] | None:
    """The existing path below ``root`` that ``parts`` would open on a case-insensitive (or normalization-insensitive)
    file system though one of its components differs in spelling: that path's components up to the twin. None when
    each component exists as spelled, or a component and its twins are missing. ``layout``: ``root`` is a workspace,
    whose own names (:data:`LAYOUT_NAMES`) as the first component are taken as they are."""
    folder = os.fspath(root)
    if _exists_as_named(os.path.join(folder, *parts)):
        return None  # the whole path, told apart from its case twin: each of its components is spelled as on disk
    for position, name in enumerate(parts):
        path = os.path.join(folder, name)
        if not (layout and position == 0 and name in LAYOUT_NAMES) and not _exists_as_named(path):
            try:
                names = os.listdir(folder)
            except OSError:
                return None
            if name not in names:
                twin = twin_in(names, name)
                return None if twin is None else [*parts[:position], twin]
        folder = path
    return None


def check_new_names(parts: Sequence[str], action: str) -> None:
    """MemoryPathError when one of ``parts`` (the components of a path a write may make) is a name Windows reserves
    or changes (see :func:`reserved_name_reason`); ``action`` says what was refused (``"append to memory/x.md"``)."""
    for name in parts:
        reason = reserved_name_reason(name)
        if reason is not None:
            raise MemoryPathError(
                f"refusing to {action}: {name!r} {reason} (memory files get names that are the same file on "
                "every system)"
            )


def twin_message(action: str, parts: Sequence[str], twin: Sequence[str]) -> str:
    """What to say when ``action`` on the path ``parts`` is refused because the existing path ``twin`` is its twin."""
    existing, asked = "/".join(twin), "/".join(parts[: len(twin)])
    if unicodedata.normalize("NFC", existing) == unicodedata.normalize("NFC", asked):
        return (f"refusing to {action}: {existing!r} exists with the same name in another Unicode normalization "
                f"({ascii(existing)}, as macOS writes names; asked: {ascii(asked)}), which macOS keeps in one file "
                "with it; write to the existing file by its own spelling")
    return (f"refusing to {action}: {existing!r} exists and differs from it only in letter case, and macOS and "
            "Windows keep both names in one file (so one would write into the other); use the existing spelling "
            f"{existing!r}, or a name that differs by more than case")
