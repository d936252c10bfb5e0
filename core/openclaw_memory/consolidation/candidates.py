"""The light phase: candidate lines from recent daily notes, deduplicated, each grounded in its
source lines (``memory/YYYY-MM-DD.md#Lx-Ly``), of a promotable origin and not forgotten, gated by
the recall signals, and rehydrated from
the live file just before it is used (a candidate whose lines changed or vanished is dropped).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from openclaw_memory.files.append import DAILY_NOTE_RE
from openclaw_memory.config import DreamingConfig
from openclaw_memory.text.entries import normalized, parse_blocks, source_refs
from openclaw_memory.consolidation.forgetting import ForgottenSet
from openclaw_memory.consolidation.records import record_lines
from openclaw_memory.retrieval.recall_signals import RecallSignals, RecallStats
from openclaw_memory.files.discovery import read_memory_text
from openclaw_memory.errors import UnreadableFileError
from openclaw_memory.text.provenance import PROMOTABLE, origin_of

__all__ = ["Candidate", "GateCounts", "collect_candidates", "gate_candidates", "rehydrate"]

log = logging.getLogger(__name__)

_MIN_WORDS = 3  # a shorter line ("- ok", "Notes") says too little to be a memory on its own


@dataclass(frozen=True)
class Candidate:
    """A candidate memory: ``text`` at lines ``start_line``..``end_line`` (1-based) of ``path``."""

    id: str
    path: str
    start_line: int
    end_line: int
    text: str
    day: date
    stats: RecallStats = field(default_factory=RecallStats)

    @property
    def source(self) -> str:
        """``path#Lx-Ly``."""
        return f"{self.path}#L{self.start_line}-L{self.end_line}"


@dataclass
class GateCounts:
    """How many candidates each stage dropped."""

    found: int = 0
    untrusted: int = 0
    forgotten: int = 0
    already_in_memory: int = 0
    below_gates: int = 0
    stale: int = 0


def _read(workspace: Path, rel: str) -> str | None:
    try:
        return read_memory_text(workspace / rel, workspace)
    except (UnreadableFileError, OSError) as exc:
        log.warning("consolidation: cannot read %s: %s", rel, exc)
        return None


def _recent_notes(workspace: Path, today: date, lookback_days: int) -> list[tuple[date, str]]:
    notes = []
    folder = workspace / "memory"
    if not folder.is_dir() or folder.is_symlink():
        return []
    for path in folder.iterdir():
        match = DAILY_NOTE_RE.match(f"memory/{path.name}")
        if not match:
            continue
        try:
            day = date.fromisoformat(match.group(1))
        except ValueError:
            continue
        if today - timedelta(days=lookback_days) < day <= today:
            notes.append((day, f"memory/{path.name}"))
    return sorted(notes, reverse=True)  # newest first: a line repeated on several days is grounded in its latest


def _promoted_texts(memory_text: str) -> tuple[set[str], tuple[str, ...]]:
    """What MEMORY.md already holds, as :func:`normalized` keys: each entry, and each promoted line in it (one merged
    under an entry too); and the keys of the promoted lines cut to ``max_entry_chars`` (without their last, cut
    word), which a longer candidate starts with. So a promoted note is known by its text once its lines moved."""
    known: set[str] = set()
    clipped: list[str] = []
    for block in parse_blocks(memory_text):
        if not block.entry:
            continue
        known.add(normalized(block.text))
        for line in block.lines:
            if not source_refs(line):
                continue
            key = normalized(line)
            known.add(key)
            if "… — Source: " in line and len(key.split()) > _MIN_WORDS:
                clipped.append(key.rsplit(" ", 1)[0] + " ")
    return known, tuple(clipped)


def collect_candidates(workspace: Path, memory_text: str, *, today: date, lookback_days: int,
                       counts: GateCounts, forgotten: ForgottenSet) -> list[Candidate]:
    """The entries of the last ``lookback_days`` daily notes that ``memory_text`` (MEMORY.md) does
    not already hold, one per distinct text, newest note first. Entries of origin ``untrusted`` or
    ``system``, forgotten ones and the bodies of program-written records are never candidates."""
    known, clipped = _promoted_texts(memory_text)
    known_sources = source_refs(memory_text)
    seen: set[str] = set()
    found: list[Candidate] = []
    for day, rel in _recent_notes(workspace, today, lookback_days):
        text = _read(workspace, rel)
        if text is None:
            continue
        in_records = record_lines(text)
        for block in parse_blocks(text):
            key = normalized(block.text)
            if not block.entry or len(key.split()) < _MIN_WORDS or key in seen or block.start in in_records:
                continue
            seen.add(key)
            counts.found += 1
            candidate = Candidate(f"C{len(found) + 1}", rel, block.start + 1, block.end, block.text.strip(), day)
            if origin_of(block.text) not in PROMOTABLE:
                counts.untrusted += 1
                continue
            if (candidate.source, candidate.text) in forgotten:
                counts.forgotten += 1
                continue
            if key in known or key.startswith(clipped) or candidate.source in known_sources:
                counts.already_in_memory += 1
                continue
            found.append(candidate)
    return found


def gate_candidates(candidates: list[Candidate], signals: RecallSignals, settings: DreamingConfig,
                    counts: GateCounts) -> list[Candidate]:
    """The candidates whose recall signals pass every gate (``min_score``, ``min_recall_count``,
    ``min_unique_queries``), best recalled first, at most ``max_candidates``, renumbered C1..Cn."""
    passed = []
    for candidate in candidates:
        stats = signals.stats(candidate.path, candidate.start_line, candidate.end_line)
        if (stats.recall_count < settings.min_recall_count or stats.unique_queries < settings.min_unique_queries
                or stats.max_score < settings.min_score):
            counts.below_gates += 1
            continue
        passed.append((stats, candidate))
    passed.sort(key=lambda pair: (-pair[0].unique_queries, -pair[0].recall_count, -pair[0].max_score))
    chosen = passed[: settings.max_candidates]
    return [Candidate(f"C{i}", c.path, c.start_line, c.end_line, c.text, c.day, stats)
            for i, (stats, c) in enumerate(chosen, start=1)]


def rehydrate(workspace: Path, candidates: list[Candidate], counts: GateCounts) -> list[Candidate]:
    """The candidates whose lines still read the same in the live file (others are stale)."""
    texts: dict[str, list[str] | None] = {}
    live = []
    for candidate in candidates:
        if candidate.path not in texts:
            text = _read(workspace, candidate.path)
            texts[candidate.path] = None if text is None else text.split("\n")
        lines = texts[candidate.path]
        current = None if lines is None else "\n".join(lines[candidate.start_line - 1: candidate.end_line]).strip()
        if current != candidate.text:
            counts.stale += 1
            continue
        live.append(candidate)
    return live
