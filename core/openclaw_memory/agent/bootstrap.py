"""What an agent sees about its memory at session start.

Today's and yesterday's daily notes (``memory/YYYY-MM-DD.md`` in the configured timezone) and, in a
direct (one-to-one) session only, ``MEMORY.md`` (or ``memory.md``), followed by the "Memory Recall" instructions.
The whole text stays within a character budget; a file that does not fit is cut at a line boundary
with a marker telling the agent where to continue with ``memory_get``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from openclaw_memory.files.append import daily_note_path, local_now
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import MemoryArgumentError, UnreadableFileError
from openclaw_memory.files.discovery import read_memory_text
from openclaw_memory.text.citations import ChatType, normalize_session_kind
from openclaw_memory.agent.tools import memory_recall_prompt as _recall_prompt

__all__ = ["DEFAULT_BOOTSTRAP_MAX_CHARS", "build_session_context"]

log = logging.getLogger(__name__)

DEFAULT_BOOTSTRAP_MAX_CHARS = 20_000
_MIN_MAX_CHARS = 500

@dataclass
class _File:
    rel: str
    label: str
    lines: list[str]

    @property
    def size(self) -> int:
        return sum(len(line) + 1 for line in self.lines)


def _read_note(ws: Path, rel: str) -> list[str] | None:
    """The lines of ``rel``, read as ``memory_get`` reads it: opened beneath the workspace following no symlink
    (a symlinked ``memory/`` too) and refused with another hard link, so nothing outside the workspace is shown."""
    try:
        text = read_memory_text(ws / rel, ws)
    except (UnreadableFileError, OSError) as exc:
        log.warning("bootstrap: not loading %s: %s", rel, exc)
        return None
    if text is None or not text.strip():
        return None
    return text.rstrip("\n").split("\n")


def _long_term_rel(ws: Path) -> str | None:
    """``MEMORY.md``, else ``memory.md``, by their real names (right on case-insensitive systems)."""
    names = {c.name for c in ws.iterdir() if c.name.lower() == "memory.md"}
    for name in ("MEMORY.md", "memory.md"):
        if name in names and (ws / name).is_file() and not (ws / name).is_symlink():
            return name
    return None


def _marker(f: _File, shown: int) -> str:
    total = len(f.lines)
    if shown == 0:
        return (
            f"[{f.rel} not shown ({total} lines) to stay within the context budget; "
            f'use memory_get(path="{f.rel}", from=1) to read it]'
        )
    return (
        f"[... truncated: {f.rel} continues at line {shown + 1} of {total}; "
        f'use memory_get(path="{f.rel}", from={shown + 1}) to read the rest]'
    )


def _allocate(sizes: list[int], budget: int) -> list[int]:
    """Water-filling: small files get all they need, the rest share what is left equally."""
    alloc = [0] * len(sizes)
    remaining = max(0, budget)
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    for n, i in enumerate(order):
        share = remaining // (len(order) - n)
        alloc[i] = min(sizes[i], share)
        remaining -= alloc[i]
    return alloc


def _take_lines(lines: list[str], budget: int) -> int:
    used = 0
    for n, line in enumerate(lines):
        used += len(line) + 1
        if used > budget:
            return n
    return len(lines)


def build_session_context(
    config: MemoryConfig,
    *,
    session_kind: ChatType = "direct",
    now: datetime | None = None,
    max_chars: int = DEFAULT_BOOTSTRAP_MAX_CHARS,
    include_recall_instructions: bool = True,
    recall_prompt: str | None = None,
) -> str:
    """The memory context for a new session, at most ``max_chars`` characters.

    Includes ``MEMORY.md`` (or ``memory.md``) only when ``session_kind`` is ``"direct"``, then
    today's and yesterday's daily notes, then the recall instructions (``recall_prompt`` replaces
    the default, which is absent when memory search is disabled). Returns ``""`` when there is
    nothing to show.
    """
    session_kind = normalize_session_kind(session_kind)
    if max_chars < _MIN_MAX_CHARS:
        raise MemoryArgumentError(f"max_chars must be at least {_MIN_MAX_CHARS}, got {max_chars}")
    ws = config.resolved_workspace()
    day = local_now(config.timezone, now).date()
    candidates: list[tuple[str, str]] = []
    if session_kind == "direct":
        long_term = _long_term_rel(ws) if ws.is_dir() else None
        if long_term:
            candidates.append((long_term, "long-term memory"))
    candidates.append((daily_note_path(day), "today"))
    candidates.append((daily_note_path(day - timedelta(days=1)), "yesterday"))
    files = [_File(rel, label, lines) for rel, label in candidates if (lines := _read_note(ws, rel)) is not None]

    recall = ""
    if include_recall_instructions:
        recall = recall_prompt.strip() if recall_prompt is not None else _recall_prompt(config, session_kind=session_kind)
    if not files and not recall:
        return ""

    intro = "## Memory\nNotes loaded from the workspace memory files (the source of truth).\n"
    headers = [f"\n### {f.rel} ({f.label})\n" for f in files]
    # Reserve room for every header and a worst-case marker, so the total never exceeds max_chars.
    fixed = (
        len(intro)
        + sum(map(len, headers))
        + sum(max(len(_marker(f, 0)), len(_marker(f, len(f.lines)))) + 2 for f in files)
    )
    fixed += len(recall) + 2 if recall else 0
    if not files:
        fixed -= len(intro)
    if fixed > max_chars:
        return _compact(intro, files, recall, max_chars)
    alloc = _allocate([f.size for f in files], max_chars - fixed)

    parts: list[str] = [intro] if files else []
    for f, header, budget in zip(files, headers, alloc, strict=True):
        shown = len(f.lines) if budget >= f.size else _take_lines(f.lines, budget)
        body = "\n".join(f.lines[:shown])
        if shown < len(f.lines):
            body = (body + "\n" if body else "") + _marker(f, shown)
            log.info(
                "bootstrap: %s truncated at line %d of %d (budget %d chars)", f.rel, shown, len(f.lines), max_chars
            )
        parts.append(header + body + "\n")
    if recall:
        parts.append(("\n" if files else "") + recall + "\n")
    return "".join(parts)


def _compact(intro: str, files: list[_File], recall: str, max_chars: int) -> str:
    """When even headers and markers do not fit: list the files to read, recall text if room."""
    lines = [f'- {f.rel} ({f.label}, {len(f.lines)} lines): use memory_get(path="{f.rel}", from=1)' for f in files]
    out = (intro + "Not loaded to stay within the context budget:\n" + "\n".join(lines) + "\n") if files else ""
    if recall and len(out) + len(recall) + 2 <= max_chars:
        out += ("\n" if out else "") + recall + "\n"
    if len(out) > max_chars:
        out = out[: max_chars - 1].rsplit("\n", 1)[0] + "\n"
    log.info("bootstrap: budget of %d chars too small for file contents; listed %d file(s) only", max_chars, len(files))
    return out


# ---- deprecated names ---------------------------------------------------------------------------


def _config_recall_prompt(config: MemoryConfig, session_kind: str = "direct") -> str:
    """The old ``bootstrap.memory_recall_prompt(config, session_kind)``."""
    return _recall_prompt(config, session_kind=normalize_session_kind(session_kind))


def __getattr__(name: str) -> Any:
    """``SessionKind`` is now :data:`openclaw_memory.text.citations.ChatType` and the recall prompt is
    :func:`openclaw_memory.agent.tools.memory_recall_prompt`; the old names still work and warn."""
    import warnings

    from openclaw_memory.text import citations

    moved: dict[str, tuple[Any, str]] = {
        "SessionKind": (citations.ChatType, "openclaw_memory.text.citations.ChatType"),
        "memory_recall_prompt": (_config_recall_prompt, "openclaw_memory.agent.tools.memory_recall_prompt"),
    }
    if name in moved:
        value, new = moved[name]
        warnings.warn(f"openclaw_memory.agent.bootstrap.{name} is deprecated: use {new}", DeprecationWarning,
                      stacklevel=2)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
