"""Search latency of two checkouts, A/B in one run: this one against another (e.g. ``main``).

    git worktree add --detach /tmp/base main
    .venv/bin/python -m bench search-ab --base /tmp/base [--sizes 10k,100k] [--rounds 3]
    git worktree remove /tmp/base

Builds ``bench_search.py``'s corpora once (clustered 384-d vectors, Zipf text; the same index file serves both
checkouts; ``--keep DIR`` keeps them for the next run), then runs each checkout in a fresh process per round,
alternating which goes first, with one BLAS thread: the in-memory matrix warm, 40 queries of vector search (top 6,
as ``bench_compare.py`` times it), hybrid and keyword-only search (``max_results`` 6, ``min_score`` 0, keyword side
in a thread pool as ``MemoryIndex.search``). Prints p50/p95 wall time, the median process CPU time per search (less
sensitive to the machine's load than wall time), the load average, and on how many queries the two checkouts return
the same ranked hybrid and keyword-only hits (ids and scores). A checkout whose ``pyproject.toml`` does not ask for
PyStemmer runs without it, as it would be installed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _size(text: str) -> int:
    text = text.strip().lower()
    return int(float(text[:-1]) * 1000) if text.endswith("k") else int(text)


def build(folder: Path, n: int) -> None:
    """The index and queries of ``bench_search.py`` for ``n`` chunks, written by this checkout."""
    import numpy as np

    from bench import bench_search as bs

    rng = np.random.default_rng(n)
    vocab = bs.make_vocab(rng)
    vecs, texts, _ = bs.make_corpus(n, rng, vocab)
    bs.build(folder / f"db-{n}.sqlite", vecs, texts)
    queries = []
    for i in rng.choice(n, size=40, replace=False):
        qv = vecs[i] + 0.3 * rng.standard_normal(bs.DIMS).astype(np.float32)
        content = [w for w in texts[i].rstrip(".").split() if w not in bs.COMMON]
        queries.append((" ".join(rng.choice(content, size=min(4, len(content)), replace=False)),
                        (qv / np.linalg.norm(qv)).astype(np.float32).tolist()))
    (folder / f"q-{n}.json").write_text(json.dumps(queries), encoding="utf-8")


def measure(root: Path, folder: Path, n: int) -> dict[str, object]:
    """Runs in the worker: ``root``'s code on the prepared index."""
    if "pystemmer" not in (root / "pyproject.toml").read_text(encoding="utf-8").lower():
        sys.modules["Stemmer"] = None  # type: ignore[assignment]  # snowballstemmer's pure-Python stemmers
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    import openclaw_memory.retrieval.pipeline as search
    from openclaw_memory.config import MemoryConfig
    from openclaw_memory.providers.fake import FakeEmbeddingProvider
    from openclaw_memory.storage.sqlite.store import SQLiteStore

    assert search.__file__.startswith(str(root)), search.__file__
    queries = [(a, np.asarray(b, np.float32)) for a, b in json.loads((folder / f"q-{n}.json").read_text())]
    store = SQLiteStore(folder / f"db-{n}.sqlite")
    cfg = MemoryConfig(workspace=str(folder), citations="off")
    prov = FakeEmbeddingProvider(dims=queries[0][1].size, model="bench")
    pool = ThreadPoolExecutor(max_workers=2)
    run = search.run_search
    run(store, cfg, "warm", provider=prov, query_vector=np.ones(queries[0][1].size, np.float32), executor=pool)
    store.wait_vector_cache(600)
    out: dict[str, object] = {"load": os.getloadavg()[0]}
    calls = {
        "vector": lambda q: store.vector_search(q[1], limit=6),
        "hybrid": lambda q: run(store, cfg, q[0], provider=prov, query_vector=q[1], max_results=6, min_score=0,
                                executor=pool),
        "keyword": lambda q: run(store, cfg, q[0], provider=None, max_results=6, min_score=0, executor=pool),
    }
    for mode, call in calls.items():
        wall, cpu = [], []
        for q in queries:
            c, t = time.process_time(), time.perf_counter()
            call(q)
            wall.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        out[mode], out[f"cpu_{mode}"] = wall, cpu
    out["hits"] = [[(h.chunk_id, round(h.score, 12)) for h in calls[m](q).hits] for m in ("hybrid", "keyword")
                   for q in queries]
    out["load_end"] = os.getloadavg()[0]
    store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", "--against", type=Path, help="the other checkout (e.g. a worktree of main)")
    ap.add_argument("--sizes", default="10k,100k")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", "--stores", type=Path, help="keep (and reuse) the built indexes in this folder")
    ap.add_argument("--worker", nargs=3, metavar=("ROOT", "FOLDER", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(measure(Path(args.worker[0]), Path(args.worker[1]), int(args.worker[2]))))
        return
    if args.base is None:
        ap.error("--base is required")
    sizes = [_size(s) for s in args.sizes.split(",")]
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-ab-"))
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    checkouts = {"base": args.base.resolve(), "this": HERE.parent}
    results: dict[tuple[int, str], dict[str, list]] = {}
    for n in sizes:
        if not (folder / f"q-{n}.json").exists():
            print(f"[{n:,}] building …", file=sys.stderr, flush=True)
            build(folder, n)
        for r in range(args.rounds):
            order = list(checkouts.items()) if r % 2 == 0 else list(reversed(checkouts.items()))
            for name, root in order:
                # the worker imports ``root``'s library: its core/ first on the path, this checkout's bench
                path = [str(root / "core"), *filter(None, [env.get("PYTHONPATH")])]
                worker_env = dict(env, PYTHONPATH=os.pathsep.join(path))
                worker = [sys.executable, "-m", "bench.bench_search_ab", "--worker", str(root), str(folder), str(n)]
                proc = subprocess.run(worker, capture_output=True, text=True, env=worker_env, check=True,
                                      cwd=HERE.parent)
                got = json.loads(proc.stdout)
                acc = results.setdefault((n, name), {"hits": got["hits"], "load": []})
                for key in ("vector", "hybrid", "keyword", "cpu_vector", "cpu_hybrid", "cpu_keyword"):
                    acc.setdefault(key, []).extend(got[key])
                acc["load"] += [got["load"], got["load_end"]]
                print(f"[{n:,}] {name} round {r + 1}: load {got['load']:.1f}", file=sys.stderr, flush=True)

    def pp(xs: list[float]) -> str:
        xs = sorted(xs)
        return f"{statistics.median(xs):.1f} / {xs[int(round(0.95 * (len(xs) - 1)))]:.1f}"

    print(f"base = {checkouts['base']}, this = {checkouts['this']}; {args.rounds} rounds of 40 queries, one BLAS thread")
    print("| chunks | code | vector p50 / p95 ms | hybrid p50 / p95 ms | keyword-only p50 / p95 ms "
          "| CPU ms p50: vector / hybrid / keyword | load average |")
    print("|---|---|---|---|---|---|---|")
    for (n, name), d in results.items():
        cpu = " / ".join(f"{statistics.median(d['cpu_' + m]):.1f}" for m in ("vector", "hybrid", "keyword"))
        print(f"| {n:,} | {name} | {pp(d['vector'])} | {pp(d['hybrid'])} | {pp(d['keyword'])} | {cpu} "
              f"| {min(d['load']):.1f}–{max(d['load']):.1f} |")
    for n in sizes:
        a, b = results[(n, "base")]["hits"], results[(n, "this")]["hits"]
        print(f"{n:,} chunks: the same ranked hybrid and keyword-only hits (ids, scores) on "
              f"{sum(x == y for x, y in zip(a, b))}/{len(a)} searches")


if __name__ == "__main__":
    main()
