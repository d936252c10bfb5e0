"""Retrieval quality of a memory on the user's own labelled questions.

A question file is JSON Lines, one object per line::

    {"question": "which database did we pick?", "evidence": [{"path": "memory/2026-01-05.md", "line": 12}],
     "category": "decisions", "id": "q1"}

``evidence`` lists where the answer is written: a ``path`` relative to the workspace plus a
``line`` (1-based), or a range ``start_line``/``end_line`` (also ``"lines": [start, end]``).
``category`` and ``id`` are optional. For the top k results of a search (each a path and a line
range), per question:

* **recall@k**: the share of evidence items that some returned range covers (a range item counts
  when any of its lines is returned);
* **hit@k**: 1 when any evidence item is covered;
* **MRR@k**: 1/rank of the first result covering evidence (0 when none does);
* **lines@k**: how many lines the k results cover: the context an agent is handed. Compare
  configurations at similar lines@k, since returning more text always raises recall.

Each k is a separate search with ``max_results=k`` (what a caller asking for k results gets).
:func:`evaluate` averages these over questions, overall and per category. :func:`compare_questions` pairs
two configurations' per-question figures (the same questions) and gives, overall and per category, the mean
difference in recall@k with its standard error; a difference within one standard error is noise.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openclaw_memory.errors import ConfigError
from openclaw_memory.types import SearchHit

__all__ = ["DEFAULT_KS", "EvalQuestion", "Evidence", "Metrics", "ModeReport", "PairedDifference", "SearchFn",
           "compare_questions", "evaluate", "format_comparison", "format_report", "load_questions", "parse_question",
           "score_hits"]

#: The cut-offs reported by default.
DEFAULT_KS: tuple[int, ...] = (1, 3, 6, 10)

#: ``search(question, k)`` → the top ``k`` hits, best first.
SearchFn = Callable[[str, int], Sequence[SearchHit]]


@dataclass(frozen=True)
class Evidence:
    """Where an answer is written: ``path`` (workspace-relative) lines ``start``..``end`` (1-based)."""

    path: str
    start: int
    end: int


@dataclass(frozen=True)
class EvalQuestion:
    """One labelled question."""

    id: str
    question: str
    evidence: tuple[Evidence, ...]
    category: str | None = None


def _norm_path(p: str) -> str:
    p = p.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p


def _line(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a line number >= 1, got {value!r}")
    return value


def parse_question(obj: Mapping[str, Any], default_id: str) -> EvalQuestion:
    """One question from its JSON object (see the module docstring); ValueError when malformed."""
    if not isinstance(obj, Mapping):
        raise ValueError("each line must be a JSON object")
    q = obj.get("question", obj.get("query"))
    if not isinstance(q, str) or not q.strip():
        raise ValueError('"question" must be a non-empty string')
    raw = obj.get("evidence")
    if not isinstance(raw, list) or not raw:
        raise ValueError('"evidence" must be a non-empty list of {"path", "line"} objects')
    ev: list[Evidence] = []
    for item in raw:
        if not isinstance(item, Mapping) or not isinstance(item.get("path"), str) or not item["path"].strip():
            raise ValueError('each evidence item needs a "path" string')
        if "line" in item:
            start = end = _line(item["line"], "evidence line")
        elif "lines" in item:
            pair = item["lines"]
            if not isinstance(pair, list) or len(pair) != 2:
                raise ValueError('evidence "lines" must be [start, end]')
            start, end = _line(pair[0], "evidence start"), _line(pair[1], "evidence end")
        elif "start_line" in item:
            start = _line(item["start_line"], "evidence start_line")
            end = _line(item.get("end_line", start), "evidence end_line")
        else:
            raise ValueError('each evidence item needs "line", "lines" or "start_line"')
        if end < start:
            raise ValueError(f"evidence range {start}-{end} ends before it starts")
        ev.append(Evidence(_norm_path(item["path"]), start, end))
    cat = obj.get("category")
    qid = obj.get("id", default_id)
    return EvalQuestion(id=str(qid), question=q, evidence=tuple(ev), category=None if cat is None else str(cat))


def load_questions(path: str | Path) -> list[EvalQuestion]:
    """The questions of a JSON Lines file (blank lines skipped).

    Raises :class:`~openclaw_memory.errors.ConfigError` naming the line of the first malformed entry.
    """
    p = Path(path).expanduser()
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the questions file {p}: {exc}") from None
    try:
        text = raw.decode("utf-8-sig")  # a byte order mark (as Notepad saves UTF-8) is no part of line 1
    except UnicodeDecodeError as exc:
        at_line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{p}, line {at_line}: not UTF-8 text ({exc.reason} at byte {exc.start}); save the "
                          "questions file as UTF-8") from None
    out: list[EvalQuestion] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(parse_question(json.loads(line), default_id=str(n)))
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            raise ConfigError(f"{p}, line {n}: {exc}") from None
    if not out:
        raise ConfigError(f"{p} holds no questions: write one JSON object per line")
    return out


@dataclass
class Metrics:
    """Means over ``n`` questions at one cut-off ``k``."""

    k: int
    n: int = 0
    recall: float = 0.0
    hit: float = 0.0
    mrr: float = 0.0
    lines: float = 0.0


@dataclass
class ModeReport:
    """The figures of one search configuration: ``overall[k]`` and ``by_category[cat][k]``."""

    mode: str
    overall: dict[int, Metrics] = field(default_factory=dict)
    by_category: dict[str, dict[int, Metrics]] = field(default_factory=dict)
    per_question: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self, *, questions: bool = False) -> dict[str, Any]:
        """JSON-ready figures (``questions=True`` adds each question's recall, hit and lines per k)."""
        out: dict[str, Any] = {
            "mode": self.mode,
            "overall": {str(k): asdict(m) for k, m in self.overall.items()},
            "by_category": {c: {str(k): asdict(m) for k, m in ms.items()} for c, ms in self.by_category.items()},
        }
        if questions:
            out["questions"] = self.per_question
        return out


def _covered(ev: Evidence, hits: Sequence[SearchHit]) -> int | None:
    """1-based rank of the first hit whose range overlaps ``ev``, or None."""
    for rank, h in enumerate(hits, start=1):
        if _norm_path(h.path) == ev.path and h.start_line <= ev.end and ev.start <= h.end_line:
            return rank
    return None


def score_hits(question: EvalQuestion, hits: Sequence[SearchHit]) -> tuple[float, float, float, int]:
    """(recall, hit, reciprocal rank, lines) of one question's results."""
    ranks = [_covered(e, hits) for e in question.evidence]
    found = [r for r in ranks if r is not None]
    recall = len(found) / len(ranks)
    first = min(found, default=None)
    lines = sum(max(0, h.end_line - h.start_line + 1) for h in hits)
    return recall, float(bool(found)), (1.0 / first if first else 0.0), lines


def evaluate(
    questions: Iterable[EvalQuestion], searches: Mapping[str, SearchFn], *, ks: Sequence[int] = DEFAULT_KS,
) -> dict[str, ModeReport]:
    """Run every question through each named search at each k and average the figures."""
    qs = list(questions)
    cutoffs = sorted({int(k) for k in ks})
    if not cutoffs or cutoffs[0] < 1:
        raise ValueError("every k must be >= 1")
    reports: dict[str, ModeReport] = {}
    for mode, search in searches.items():
        rep = ModeReport(mode)
        for k in cutoffs:
            rep.overall[k] = Metrics(k)
        for q in qs:
            row: dict[str, Any] = {"id": q.id, "category": q.category}
            cat = rep.by_category.setdefault(q.category, {}) if q.category is not None else None
            for k in cutoffs:
                hits = list(search(q.question, k))[:k]
                r, h, rr, ln = score_hits(q, hits)
                row[f"recall@{k}"], row[f"hit@{k}"], row[f"lines@{k}"] = r, h, ln
                targets = [rep.overall[k]] + ([cat.setdefault(k, Metrics(k))] if cat is not None else [])
                for m in targets:
                    m.n += 1
                    m.recall += r
                    m.hit += h
                    m.mrr += rr
                    m.lines += ln
            rep.per_question.append(row)
        for m in [*rep.overall.values(), *(m for ms in rep.by_category.values() for m in ms.values())]:
            if m.n:
                m.recall, m.hit, m.mrr, m.lines = m.recall / m.n, m.hit / m.n, m.mrr / m.n, m.lines / m.n
        rep.by_category = dict(sorted(rep.by_category.items()))
        reports[mode] = rep
    return reports


def format_report(reports: Mapping[str, ModeReport]) -> str:
    """A plain-text table: one row per mode and group, recall/hit/MRR/lines at each k."""
    out: list[str] = []
    for mode, rep in reports.items():
        ks = list(rep.overall)
        head = f"{'mode':<8} {'group':<14} {'n':>4}  " + "  ".join(f"R@{k:<3}  H@{k:<3}  MRR@{k:<2} lines@{k:<3}" for k in ks)
        if not out:
            out.append(head)
        groups = [("all", rep.overall), *rep.by_category.items()]
        for name, ms in groups:
            n = next(iter(ms.values())).n if ms else 0
            cells = "  ".join(f"{ms[k].recall:.3f}  {ms[k].hit:.3f}  {ms[k].mrr:.3f}   {ms[k].lines:7.1f}" for k in ks)
            out.append(f"{mode:<8} {name:<14} {n:>4}  {cells}")
    return "\n".join(out)


@dataclass(frozen=True)
class PairedDifference:
    """recall@k of configuration B minus A over the ``n`` questions both scored, in one group."""

    group: str
    n: int
    recall_a: float
    recall_b: float
    diff: float
    se: float
    lines_a: float
    lines_b: float

    @property
    def verdict(self) -> str:
        """``"better"``/``"worse"`` when the difference exceeds one standard error, else ``"same"``."""
        if self.diff > self.se and self.diff > 0:
            return "better"
        if self.diff < -self.se and self.diff < 0:
            return "worse"
        return "same"


def _paired(group: str, pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]], k: int) -> PairedDifference:
    key, lines = f"recall@{k}", f"lines@{k}"
    diffs = [float(b[key]) - float(a[key]) for a, b in pairs]
    n = len(diffs)
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
    return PairedDifference(
        group=group, n=n, recall_a=sum(float(a[key]) for a, _ in pairs) / n,
        recall_b=sum(float(b[key]) for _, b in pairs) / n, diff=mean, se=math.sqrt(var / n),
        lines_a=sum(float(a.get(lines, 0)) for a, _ in pairs) / n,
        lines_b=sum(float(b.get(lines, 0)) for _, b in pairs) / n)


def compare_questions(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]], k: int) -> list[PairedDifference]:
    """The paired difference B − A of recall@k, overall (``"all"``) then per category.

    ``a`` and ``b`` are per-question rows (:attr:`ModeReport.per_question`, or the ``questions`` of its
    JSON form) of the same questions under two configurations, matched by ``id``; a question only one
    side scored is left out. The standard error is that of the mean of the per-question differences.
    Raises ValueError when no question is in both or a row lacks ``recall@k``.
    """
    by_id = {str(row["id"]): row for row in b}
    pairs = [(row, by_id[str(row["id"])]) for row in a if str(row["id"]) in by_id]
    if not pairs:
        raise ValueError("the two reports share no question id")
    missing = [str(x["id"]) for pair in pairs for x in pair if f"recall@{k}" not in x]
    if missing:
        raise ValueError(f"question {missing[0]} has no recall@{k}: evaluate both at k={k}")
    groups: dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
    for pair in pairs:
        cat = pair[0].get("category")
        if cat is not None:
            groups.setdefault(str(cat), []).append(pair)
    return [_paired("all", pairs, k)] + [_paired(g, ps, k) for g, ps in sorted(groups.items())]


def format_comparison(diffs: Sequence[PairedDifference], k: int, *, label: str = "") -> str:
    """A Markdown table of :func:`compare_questions`: recall@k and lines@k of A and B, B − A ± SE, verdict."""
    out = [f"| {label or 'group'} | n | A R@{k} | B R@{k} | B − A | SE | A lines@{k} | B lines@{k} | verdict |",
           "|---|---|---|---|---|---|---|---|---|"]
    for d in diffs:
        out.append(f"| {d.group} | {d.n} | {d.recall_a:.3f} | {d.recall_b:.3f} | {d.diff:+.3f} | {d.se:.3f} "
                   f"| {d.lines_a:.1f} | {d.lines_b:.1f} | {d.verdict} |")
    return "\n".join(out)
