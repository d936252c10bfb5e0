"""Keyword and hybrid search latency of this checkout against another one, on the same stored indexes.

    .venv/bin/python bench/bench_keyword_ab.py --against /tmp/base --sizes 10k,100k [--stores DIR] [--rounds 2]

Builds (once, kept in ``--stores``) the indexes ``bench_search.py`` builds (clustered 384-d vectors, Zipf
text; 60 queries of 4 content words of a chunk), then searches each size with each checkout in a fresh
process, alternating (this, other, this, other, ... ``--rounds`` times), as ``bench_compare.py`` searches
this library: ``max_results=6, min_score=0``, the in-memory matrix loaded, the keyword side in a thread, one
BLAS thread (``bench_compare.py``'s default: spinning BLAS threads would compete with the keyword side).
Prints p50/p95 wall and p50 CPU per search, the load average, and whether both checkouts returned the same
ranked hits (ids and scores). ``--against`` is a checkout of another commit (``git worktree add``); it runs
without PyStemmer when its ``pyproject.toml`` does not ask for it, as it would be installed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

_WORKER = r'''
import json, os, statistics, sys, time
if sys.argv[3] == "no-pystemmer":
    sys.modules["Stemmer"] = None  # snowballstemmer then uses its pure-Python stemmers
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
import numpy as np
from openclaw_memory.config import MemoryConfig
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.search import _run_search as run_search
from openclaw_memory.sqlite.store import SQLiteStore
d = Path(sys.argv[2])
qs = json.loads((d / "queries.json").read_text())
qv = np.load(d / "qvecs.npy")
store = SQLiteStore(d / "index.sqlite", vector_enabled=True)
cfg = MemoryConfig(workspace=str(d), citations="off")
prov = FakeEmbeddingProvider(dims=int(qv.shape[1]), model="bench")
pool = ThreadPoolExecutor(max_workers=2)
run_search(store, cfg, "warm", provider=prov, query_vector=np.ones(qv.shape[1], np.float32), executor=pool)
store.wait_vector_cache(timeout=600)
out = {}
for mode in ("keyword", "hybrid"):
    p = prov if mode == "hybrid" else None
    wall, cpu, hits = [], [], []
    for q, v in zip(qs, qv):
        c, t = time.process_time(), time.perf_counter()
        r = run_search(store, cfg, q, provider=p, query_vector=v if p else None, max_results=6, min_score=0,
                       executor=pool)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        hits.append([(h.chunk_id, round(h.score, 12)) for h in r.hits])
    out[mode] = {"wall": wall, "cpu": cpu, "hits": hits}
out["load"] = os.getloadavg()[0]
print("RESULT " + json.dumps(out))
'''


def _size(text: str) -> int:
    text = text.strip().lower()
    return int(float(text[:-1]) * 1000) if text.endswith("k") else int(text)


def build(n: int, folder: Path, queries: int = 60) -> None:
    """The index and queries of ``bench_search.py`` for ``n`` chunks, kept in ``folder``."""
    if (folder / "index.sqlite").exists() and (folder / "queries.json").exists():
        return
    import numpy as np

    sys.path.insert(0, str(HERE))
    import bench_search as bs

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(n)
    vocab = bs.make_vocab(rng)
    vecs, texts, _ = bs.make_corpus(n, rng, vocab)
    qs, qv = [], []
    for i in rng.choice(n, size=queries, replace=False):
        v = vecs[i] + 0.3 * rng.standard_normal(bs.DIMS).astype(np.float32)
        content = [w for w in texts[i].rstrip(".").split() if w not in bs.COMMON]
        qs.append(" ".join(rng.choice(content, size=min(4, len(content)), replace=False)))
        qv.append(v / np.linalg.norm(v))
    np.save(folder / "qvecs.npy", np.asarray(qv, dtype=np.float32))
    took = bs.build(folder / "index.sqlite", vecs, texts)
    (folder / "queries.json").write_text(json.dumps(qs))
    print(f"[{n:,}] built in {took:.0f} s", file=sys.stderr)


def run(checkout: Path, folder: Path) -> dict:
    uses_pystemmer = "pystemmer" in (checkout / "pyproject.toml").read_text(encoding="utf-8").lower()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "-c", _WORKER, str(checkout / "core"), str(folder),
                        "pystemmer" if uses_pystemmer else "no-pystemmer"], capture_output=True, text=True, env=env)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise SystemExit(f"{checkout}: {r.stderr.strip()[-2000:]}")


def _p(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return statistics.median(xs) if q == 0.5 else xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=Path, required=True, help="a checkout of the commit to compare with")
    ap.add_argument("--sizes", default="10k,100k")
    ap.add_argument("--stores", type=Path, default=Path(tempfile.gettempdir()) / "ocm-keyword-ab",
                    help="where the indexes are built once and kept")
    ap.add_argument("--rounds", type=int, default=2, help="alternating runs per checkout and size")
    args = ap.parse_args(argv)
    this = HERE.parent
    rows = []
    for n in map(_size, args.sizes.split(",")):
        folder = args.stores / str(n)
        build(n, folder)
        got: dict[str, list[dict]] = {"this": [], "other": []}
        for _ in range(args.rounds):
            got["other"].append(run(args.against.resolve(), folder))
            got["this"].append(run(this, folder))
        same = all(o[m]["hits"] == t[m]["hits"] for o in got["other"] for t in got["this"] for m in ("keyword", "hybrid"))
        loads = [r["load"] for rs in got.values() for r in rs]
        for mode in ("keyword", "hybrid"):
            cells = {}
            for who, rs in got.items():
                wall = [x for r in rs for x in r[mode]["wall"]]
                cpu = [x for r in rs for x in r[mode]["cpu"]]
                cells[who] = (_p(wall, 0.5), _p(wall, 0.95), _p(cpu, 0.5))
            o, t = cells["other"], cells["this"]
            rows.append(f"| {n:,} | {mode} | {o[0]:.1f} / {o[1]:.1f} (CPU {o[2]:.1f}) | {t[0]:.1f} / {t[1]:.1f} "
                        f"(CPU {t[2]:.1f}) | {o[0] / t[0]:.1f}x | {'yes' if same else 'NO'} | "
                        f"{min(loads):.1f}-{max(loads):.1f} |")
    print(f"{os.cpu_count()} CPUs; p50 / p95 wall ms (p50 CPU ms) over {args.rounds} alternating runs per checkout")
    print("| chunks | search | other (--against) | this checkout | p50 speed-up | same hits | load |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
