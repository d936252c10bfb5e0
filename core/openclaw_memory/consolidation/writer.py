"""Applying decisions to MEMORY.md: the composed rewrite, its checks, the append-only fallback, and
the one function that replaces the file.

:func:`compose` keeps every block it is not told to change byte for byte: ``supersede`` replaces
an entry with the candidate's sourced entry, ``merge`` adds the candidate's entry under the
existing one, ``add`` appends it under a dated heading. The rewrite is refused (and
:func:`append_only` used instead) when it would remove more than the loss limit of the prior
entries or grow the file past its budget.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from openclaw_memory.config import DreamingConfig
from openclaw_memory.consolidation.candidates import Candidate
from openclaw_memory.consolidation.decisions import Decision
from openclaw_memory.consolidation.records import memory_entries
from openclaw_memory.text.entries import one_line, parse_blocks, render_entry, source_refs
from openclaw_memory.files.discovery import read_memory_text
from openclaw_memory.files.memory_writes import rewrite_file
from openclaw_memory.text.provenance import mark_origin, origin_of

__all__ = ["MemoryChanged", "Plan", "allowed_loss", "append_only", "compose", "digest", "edit_memory", "read_memory",
           "readable", "rewrite_memory", "with_newlines_of"]

_HIGHLIGHT_CHARS = 120
_BOM = "\ufeff"


@dataclass
class Plan:
    """The new MEMORY.md text and what it changes (sources of the candidates; old entry texts)."""

    text: str
    mode: str  # "rewrite", "append-only" or "none"
    added: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)
    highlights: list[str] = field(default_factory=list)
    fallback_reason: str | None = None


def digest(text: str) -> str:
    """The SHA-256 of ``text`` (UTF-8), hex."""
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()


def readable(text: str) -> str:
    """``text`` with the bytes :func:`read_memory` kept from a file that is not UTF-8 shown as U+FFFD
    (for a prompt, a diff, DREAMS.md)."""
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def _short(text: str) -> str:
    return one_line(readable(text), _HIGHLIGHT_CHARS)


def _entry(candidate: Candidate, decision: Decision | None, settings: DreamingConfig) -> str:
    """The promoted entry of ``candidate``; it keeps the origin of a note it did not write by hand."""
    triggers = decision.triggers if decision else []
    importance = decision.importance if decision else 5
    line = render_entry(candidate.text, candidate.source, triggers=triggers, importance=importance,
                        max_chars=settings.max_entry_chars)
    origin = origin_of(candidate.text)
    return line if origin == "owner" else mark_origin(line, origin)


def _section_end(text: str, heading: str) -> int | None:
    """The line index after the last non-blank line of ``heading``'s section when another heading follows it (None
    when ``heading`` is missing or its section runs to the end of ``text``)."""
    found = None
    for block in parse_blocks(text):
        first = block.lines[0].rstrip("\r")
        if found is None and not block.entry and first == heading:
            found = block.start
        elif found is not None and not block.entry and first.startswith("#"):
            lines = text.split("\n")
            end = block.start
            while end > found + 1 and not lines[end - 1].strip():
                end -= 1
            return end
    return None


def _with_section(text: str, lines: Sequence[str], today: date) -> str:
    """``text`` with ``lines`` at the end of today's ``## Promoted`` section (made at the end of the file when
    missing)."""
    heading = f"## Promoted {today.isoformat()}"
    end = _section_end(text, heading)
    if end is not None:  # a section the owner wrote after it: today's promotions stay under their heading
        old = text.split("\n")
        return "\n".join([*old[:end], *lines, *old[end:]])
    body = text if not text or text.endswith("\n") else text + "\n"
    if heading not in (line.rstrip("\r") for line in text.split("\n")):
        body += ("\n" if body else "") + heading + "\n\n"
    return body + "\n".join(lines) + "\n"


def with_newlines_of(before: str, after: str) -> str:
    """``after`` (``before`` with lines changed and added) ending its lines as ``before`` does
    when every line of ``before`` ends with ``"\\r\\n"``; otherwise ``after`` as it is."""
    if "\r\n" not in before or before.count("\n") != before.count("\r\n"):
        return after
    return after.replace("\r\n", "\n").replace("\n", "\r\n")


def allowed_loss(prior_entries: int, fraction: float) -> int:
    """How many prior entries a rewrite may remove: ``fraction`` of them, rounded down, and at least
    one when ``fraction`` is above 0 (so a short MEMORY.md can still have an entry superseded)."""
    return max(1 if fraction > 0 else 0, math.floor(prior_entries * fraction + 1e-9))


def compose(memory_text: str, decisions: Sequence[Decision], candidates: Sequence[Candidate],
            settings: DreamingConfig, today: date) -> Plan:
    """The rewrite the decisions describe, or the append-only plan when it fails a check."""
    by_id = {c.id: c for c in candidates}
    blocks = parse_blocks(memory_text)
    entry_blocks = memory_entries(memory_text, blocks)  # E1.. as the prompt numbered them
    replaced: dict[int, list[str]] = {}  # block start -> its new lines
    plan = Plan(memory_text, "rewrite")
    additions: list[str] = []
    for decision in decisions:
        candidate = by_id.get(decision.candidate)
        if candidate is None or decision.op == "skip":
            continue  # a candidate gone stale since the prompt, or one the model skipped
        line = _entry(candidate, decision, settings)
        if decision.op == "add":
            additions.append(line)
            plan.added.append(candidate.source)
            plan.highlights.append(f"+ {_short(candidate.text)} ({candidate.source})")
            continue
        block = entry_blocks[int(str(decision.entry)[1:]) - 1]
        if decision.op == "supersede":
            replaced[block.start] = [line]
            plan.superseded.append(candidate.source)
            plan.highlights.append(f"- {_short(block.text)}")
            plan.highlights.append(f"+ {_short(candidate.text)} ({candidate.source})")
        else:
            replaced[block.start] = [*replaced.get(block.start, block.lines), "  " + line]
            plan.merged.append(candidate.source)
            plan.highlights.append(f"~ {_short(block.text)} <- {_short(candidate.text)} ({candidate.source})")
    lines: list[str] = []
    for block in blocks:
        lines.extend(replaced.get(block.start, block.lines))
    text = "\n".join(lines)
    plan.text = _with_section(text, additions, today) if additions else text
    if not (plan.added or plan.merged or plan.superseded):
        return Plan(memory_text, "none")
    promoted = [*plan.added, *plan.merged, *plan.superseded]
    if len(plan.superseded) > allowed_loss(len(entry_blocks), settings.max_prior_entry_loss_fraction):
        reason = (f"the rewrite would remove {len(plan.superseded)} of {len(entry_blocks)} entries, more than "
                  f"dreaming.max_prior_entry_loss_fraction = {settings.max_prior_entry_loss_fraction} allows")
    elif len(plan.text) > settings.max_memory_chars:
        reason = f"the rewrite would grow MEMORY.md past dreaming.max_memory_chars = {settings.max_memory_chars}"
    elif not set(promoted) <= source_refs(plan.text):
        reason = "the rewrite lost a promoted entry's source"
    else:
        return plan
    chosen = [by_id[d.candidate] for d in decisions if d.op != "skip" and d.candidate in by_id]
    return append_only(memory_text, chosen, settings, today, decisions=decisions, reason=reason)


def append_only(memory_text: str, candidates: Sequence[Candidate], settings: DreamingConfig, today: date, *,
                decisions: Sequence[Decision] = (), reason: str) -> Plan:
    """Each candidate appended as its sourced entry (nothing in MEMORY.md changes), as many as fit
    within ``max_memory_chars``; the others are deferred to a later sweep."""
    by_candidate = {d.candidate: d for d in decisions}
    plan = Plan(memory_text, "append-only", fallback_reason=reason)
    lines: list[str] = []
    for candidate in candidates:
        line = _entry(candidate, by_candidate.get(candidate.id), settings)
        if len(_with_section(memory_text, [*lines, line], today)) > settings.max_memory_chars:
            plan.deferred.append(candidate.source)
            continue
        lines.append(line)
        plan.added.append(candidate.source)
        plan.highlights.append(f"+ {_short(candidate.text)} ({candidate.source})")
    if not lines:
        plan.mode = "none"
        return plan
    plan.text = _with_section(memory_text, lines, today)
    return plan


class MemoryChanged(Exception):
    """MEMORY.md is not what the sweep planned against (edited meanwhile)."""


def read_memory(workspace: Path, rel: str = "MEMORY.md") -> str:
    """The text of ``rel`` as :func:`rewrite_memory` compares it ("" when missing): without a
    leading byte-order mark, bytes that are not UTF-8 kept as they are (surrogate escapes), so
    every line a rewrite does not change is written back byte for byte."""
    return read_memory_text(workspace / rel, workspace, keep_undecodable=True) or ""


def edit_memory(workspace: Path, change: Callable[[str], str | None], *, rel: str = "MEMORY.md",
                create: bool = False) -> bool:
    """Replace ``rel`` atomically (old or new, never half) with what ``change`` makes of its text
    (as :func:`read_memory` reads it; None leaves the file alone), holding its append lock from
    the read to the replace; returns whether it changed. A byte-order mark the file starts with
    is kept. A missing file is seen as "" when ``create``, else left alone."""

    def edit(current: str | None) -> str | None:
        mark = _BOM if (current or "").startswith(_BOM) else ""
        new_text = change((current or "")[len(mark):])
        if new_text is None:
            return None
        return mark + new_text if new_text.strip() else new_text

    return rewrite_file(workspace, rel, edit, create=create)


def rewrite_memory(workspace: Path, expected: str, new_text: str, *, rel: str = "MEMORY.md") -> None:
    """Replace ``rel`` with ``new_text`` as :func:`edit_memory` does, only if it still reads
    ``expected``; raises :class:`MemoryChanged` otherwise.

    The one place consolidation and undo write MEMORY.md."""
    expected_digest = digest(expected)

    def change(current: str) -> str:
        if digest(current) != expected_digest:
            raise MemoryChanged(rel)
        return new_text

    edit_memory(workspace, change, rel=rel, create=True)
