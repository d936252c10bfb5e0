"""Result ranges: which lines each returned hit holds (``query.merge_overlapping``).

Neighbouring chunks of a note share ``chunking.overlap`` tokens, so the best hits often include the same
passage twice: two slots of ``max_results`` spent on one place, and its shared lines handed over twice. With
``query.merge_overlapping`` (on by default), :func:`fit_ranges` picks the hits in rank order and

* folds a candidate whose lines overlap a better hit of the same note into that hit (the hit's range becomes
  the union of both; its scores stay those of the better chunk), so the slot goes to the next candidate; a
  candidate that bridges two hits of the note joins them into the better-ranked one, so no two returned hits
  of a note overlap;
* keeps the lines handed over within what the best ``max_results`` chunks would have held (the *budget*): a
  fold adds only its new lines and is skipped when they do not fit, and the last hit is trimmed to its
  best-matching lines (the run of lines centred on the line that covers most of the query's words) when the
  whole chunk does not fit. It is never cut below :data:`MIN_LINES` lines.

A folded or trimmed range is a run of whole lines of its file, and its ``text`` is exactly those lines (taken
from the chunks' own texts), so ``memory_get(path, start_line, end_line - start_line + 1)`` and the citation
``path#L<start>-L<end>`` stay correct. Only chunks of Markdown notes whose text has one line per line of their
range are folded or trimmed; other hits are returned as found: transcript chunks (``source="sessions"``, whose
text is extracted from JSON lines; one that does not fit the budget is skipped, never cut) and the pieces of
a line longer than a chunk (such a chunk's text is its piece of the line, not the whole line).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from openclaw_memory.types import Candidate

__all__ = ["MIN_LINES", "LineScorer", "best_run", "fit_ranges", "range_id"]

#: A trimmed hit keeps at least this many lines (a turn of a dialogue and the reply to it).
MIN_LINES = 2

#: ``scorer(lines)`` → one relevance per line (higher is better; 0 for a line that holds none of the query).
LineScorer = Callable[[Sequence[str]], Sequence[float]]


def range_id(chunk_id: str, start_line: int, end_line: int) -> str:
    """The stable id of a hit holding lines ``start_line..end_line`` around chunk ``chunk_id`` when they are not
    the chunk's own (a folded or cut hit): sha256 of ``chunk_id:start:end``."""
    return hashlib.sha256(f"{chunk_id}:{start_line}:{end_line}".encode()).hexdigest()


def _line_count(c: Candidate) -> int:
    return max(0, c.end_line - c.start_line + 1)


def _line_exact(c: Candidate) -> bool:
    """Whether ``c.text`` holds exactly one line per line of its range (a Markdown note's chunk)."""
    return c.source == "memory" and c.end_line >= c.start_line and c.text.count("\n") + 1 == _line_count(c)


def best_run(lines: Sequence[str], size: int, scorer: LineScorer) -> int:
    """The index of the first of ``size`` consecutive ``lines`` centred on the best-scoring line (the first
    of equals; the head when no line scores above 0), kept within ``lines``."""
    if size >= len(lines):
        return 0
    scores = list(scorer([ln if ln.strip() else "" for ln in lines]))
    top = max(scores, default=0.0)
    best = scores.index(top) if top > 0 else 0
    return min(max(0, best - (size - 1) // 2), len(lines) - size)


@dataclass
class _Range:
    """A hit being built: its best candidate and the lines it holds so far (line number → text)."""

    best: Candidate
    start: int
    end: int
    lines: dict[int, str] = field(default_factory=dict)

    @classmethod
    def of(cls, c: Candidate, start: int | None = None, end: int | None = None) -> _Range:
        own = dict(enumerate(c.text.split("\n"), start=c.start_line))
        lo, hi = start if start is not None else c.start_line, end if end is not None else c.end_line
        return cls(c, lo, hi, {n: t for n, t in own.items() if lo <= n <= hi})

    def overlaps(self, c: Candidate) -> bool:
        return c.path == self.best.path and c.source == self.best.source and c.start_line <= self.end \
            and self.start <= c.end_line

    def size(self) -> int:
        return self.end - self.start + 1

    def agrees(self, c: Candidate) -> bool:
        """Whether ``c``'s text of the lines both hold is the same (a line longer than a chunk is split)."""
        own = dict(enumerate(c.text.split("\n"), start=c.start_line))
        return all(own[n] == t for n, t in self.lines.items() if n in own)

    def fold(self, c: Candidate, others: Sequence[_Range]) -> None:
        """Add ``c``'s lines and those of ``others`` (worse-ranked ranges of the note that ``c`` bridges to)."""
        for n, t in enumerate(c.text.split("\n"), start=c.start_line):
            self.lines.setdefault(n, t)
        for r in others:
            for n, t in r.lines.items():
                self.lines.setdefault(n, t)
        self.start = min([self.start, c.start_line, *(r.start for r in others)])
        self.end = max([self.end, c.end_line, *(r.end for r in others)])

    def candidate(self) -> Candidate:
        c = self.best
        if (self.start, self.end) == (c.start_line, c.end_line):
            return c
        text = "\n".join(self.lines[n] for n in range(self.start, self.end + 1))
        return replace(c, start_line=self.start, end_line=self.end, text=text)


def fit_ranges(candidates: Sequence[Candidate], k: int, scorer: LineScorer) -> list[Candidate]:
    """The top ``k`` hits of ``candidates`` (best first, each already past ``min_score``) with overlapping
    hits of one note folded together and the lines kept within the budget (see the module docstring).

    Returns candidates in rank order; one whose range changed is a copy with the new ``start_line``,
    ``end_line`` and ``text`` (its scores and ``id`` are those of the best chunk it holds; its hit gets
    :func:`range_id`).
    """
    budget = sum(_line_count(c) for c in candidates[:k])
    out: list[tuple[_Range | None, Candidate]] = []
    used = 0
    for c in candidates:
        exact = _line_exact(c)
        into = next((r for r, _ in out if r is not None and r.overlaps(c)), None) if exact else None
        if into is not None:
            # the grown range may reach worse-ranked ranges of the note (``c`` bridges them): they join it too
            lo, hi = min(into.start, c.start_line), max(into.end, c.end_line)
            others = [r for r, _ in out if r is not None and r is not into and r.best.path == c.path
                      and r.best.source == c.source and r.start <= hi and lo <= r.end]
            if into.agrees(c) and all(r.agrees(c) for r in others):
                lo, hi = min([lo, *(r.start for r in others)]), max([hi, *(r.end for r in others)])
                add = (hi - lo + 1) - into.size() - sum(r.size() for r in others)
                if used + add <= budget:
                    into.fold(c, others)
                    out = [(r, o) for r, o in out if r is None or all(r is not x for x in others)]
                    used += add
                continue
        if len(out) >= k:
            break
        n, left = _line_count(c), budget - used
        if n <= left:
            out.append((_Range.of(c) if exact else None, c))
            used += n
            continue
        if not exact or left < MIN_LINES:
            continue  # never cut a transcript hit, nor below MIN_LINES: a worse-ranked, shorter one may still fit
        first = best_run(c.text.split("\n"), left, scorer)
        out.append((_Range.of(c, c.start_line + first, c.start_line + first + left - 1), c))
        used += left
    return [r.candidate() if r is not None else c for r, c in out]
