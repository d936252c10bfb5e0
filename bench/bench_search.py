"""Search latency at 10k and 100k chunks: hybrid (vec0 scan, in-memory matrix, numpy) and keyword-only.

Run ``python -m bench search`` (``--quick`` for 10k only). It builds an index of
384-dimensional clustered unit vectors with synthetic Zipf-distributed text in a temporary
directory, then reports p50/p95 latencies next to the memory-bandwidth floor of a vector scan
(``N·dims·4`` bytes / bandwidth measured with a numpy copy in the same run).
"""

from __future__ import annotations

import argparse
from concurrent.futures import ThreadPoolExecutor
import gc
import statistics
import string
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from openclaw_memory.config import MemoryConfig
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.text.query_analysis import STOP_WORDS
from openclaw_memory.retrieval.pipeline import run_search  # the pipeline on a bare store
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage import StoredChunk
from openclaw_memory.types import MemoryFile

DIMS = 384
CHUNKS_PER_FILE = 100
COMMON = ("the of and to a in is that for it on with as was we be this at by from have or are not "
          "but what all were when there can an your which their said if do will each about how up").split()


def measure_bandwidth(mb: int = 256, repeats: int = 5) -> float:
    """Bytes per second moved by a numpy copy (read + write), best of ``repeats``."""
    src = np.ones(mb * 1024 * 1024 // 8, dtype=np.float64)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t)
    return 2 * src.nbytes / best


def make_vocab(rng: np.random.Generator, n: int = 30_000) -> list[str]:
    letters = np.array(list(string.ascii_lowercase))
    words = {"".join(rng.choice(letters, size=int(rng.integers(3, 10)))) for _ in range(n * 2)}
    return COMMON + sorted(words)[: n - len(COMMON)]


def make_corpus(n: int, rng: np.random.Generator, vocab: Sequence[str]) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Clustered unit vectors (n/100 centres) and ~1,200-character texts sharing a topic per cluster."""
    n_clusters = max(1, n // 100)
    centres = rng.standard_normal((n_clusters, DIMS)).astype(np.float32)
    labels = rng.integers(0, n_clusters, size=n)
    vecs = centres[labels] + 0.6 * rng.standard_normal((n, DIMS)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks
    p /= p.sum()
    words = np.asarray(vocab)
    topic_words = words[len(COMMON) + 1000 + (np.arange(n_clusters * 5) % (len(vocab) - 2000))].reshape(n_clusters, 5)
    texts = []
    lengths = rng.integers(150, 230, size=n)
    for i in range(n):
        body = list(rng.choice(words, size=int(lengths[i]), p=p))
        for w in topic_words[labels[i]]:
            body[int(rng.integers(0, len(body)))] = w
        if i % 997 == 0:
            body.append(f"{i:07x}")  # a commit-like ID
        texts.append(" ".join(body) + ".")
    return vecs, texts, labels


def build(path: Path, vecs: np.ndarray, texts: list[str]) -> float:
    store = SQLiteStore(path, vector_enabled=True)
    t = time.perf_counter()
    for start in range(0, len(texts), CHUNKS_PER_FILE):
        rel = f"memory/f{start // CHUNKS_PER_FILE:05d}.md"
        chunks = [
            StoredChunk(id=f"{rel}:{i}", path=rel, source="memory", start_line=i + 1, end_line=i + 1,
                        hash=str(i), model="bench", text=texts[i], embedding=vecs[i])
            for i in range(start, min(len(texts), start + CHUNKS_PER_FILE))
        ]
        store.replace_file(MemoryFile(path=rel, abs_path=str(path.parent / rel), mtime_ms=0.0, size=1, hash=rel), chunks)
    took = time.perf_counter() - t
    store.close()
    return took


def percentiles(samples: Sequence[float]) -> tuple[float, float]:
    xs = sorted(samples)
    return statistics.median(xs), xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def bench_size(n: int, args: argparse.Namespace, bandwidth: float, rows: list[list[str]]) -> None:
    rng = np.random.default_rng(n)
    vocab = make_vocab(rng)
    t = time.perf_counter()
    vecs, texts, _ = make_corpus(n, rng, vocab)
    gen_s = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite"
        build_s = build(db, vecs, texts)
        print(f"[{n:,}] generated in {gen_s:.1f}s, indexed in {build_s:.1f}s", file=sys.stderr)
        cfg = MemoryConfig(workspace=tmp, citations="off")
        provider = FakeEmbeddingProvider(dims=DIMS, model="bench")
        picks = rng.choice(n, size=args.queries, replace=False)
        queries = []
        for i in picks:
            qv = vecs[i] + 0.3 * rng.standard_normal(DIMS).astype(np.float32)
            content = [w for w in texts[i].rstrip(".").split() if w not in COMMON]
            qtext = " ".join(rng.choice(content, size=min(4, len(content)), replace=False))
            queries.append((qtext, (qv / np.linalg.norm(qv)).astype(np.float32)))
        floor_ms = n * DIMS * 4 / bandwidth * 1000
        variants = (
            ("sqlite-vec scan", dict(vector_enabled=True, memory_cache=False)),
            ("in-memory matrix (default)", dict(vector_enabled=True, memory_cache=True)),
            ("numpy, no sqlite-vec", dict(vector_enabled=False)),
        )
        for label, opts in variants:
            store = SQLiteStore(db, **opts)  # type: ignore[arg-type]
            path = store.info().vector_path
            if opts["vector_enabled"] and path != "sqlite-vec":
                rows.append([f"{n:,}", f"hybrid, {label}", "n/a", "n/a", "", "",
                             f"not loadable: {store.info().vector_error}"])
                store.close()
                continue
            pool = ThreadPoolExecutor(max_workers=2)  # as MemoryIndex.search: keyword side in parallel
            cold = timed(lambda: run_search(store, cfg, queries[0][0], provider=provider, query_vector=queries[0][1],
                                            executor=pool))
            note = f"first query {cold:.0f} ms"
            if opts.get("memory_cache"):  # the first search started the background load: wait for it
                warm = timed(lambda: store.wait_vector_cache(timeout=120))
                note = f"first query {cold:.0f} ms on vec0 while the matrix loads in the background ({cold + warm:.0f} ms)"
            lat = [timed(lambda q=q: run_search(store, cfg, q[0], provider=provider, query_vector=q[1], executor=pool))
                   for q in queries]
            pool.shutdown()
            vlat = [timed(lambda q=q: store.vector_search(q[1], limit=24)) for q in queries]
            p50, p95 = percentiles(lat)
            v50, _ = percentiles(vlat)
            rows.append([f"{n:,}", f"hybrid, {label}", f"{p50:.1f}", f"{p95:.1f}", f"{floor_ms:.1f}",
                         f"{p50 / floor_ms:.1f}x", f"vector part p50 {v50:.1f} ms; {note}"])
            store.close()
            gc.collect()
        store = SQLiteStore(db, vector_enabled=False)
        stops = [w for w in COMMON if w in STOP_WORDS]
        frequent = [w for w in COMMON if w not in STOP_WORDS] + list(vocab[len(COMMON):len(COMMON) + 20])
        kw_sets = {
            "keyword-only, content words": [q for q, _ in queries],
            "keyword-only, frequent words": [" ".join(rng.choice(frequent, size=int(rng.integers(1, 4)), replace=False))
                                             for _ in range(args.queries)],
            "keyword-only, stop words only": [" ".join(rng.choice(stops, size=3, replace=False))
                                              for _ in range(args.queries)],
            "keyword-only, ID": [f"{i:07x}" for i in range(0, n, 997)][: args.queries],
        }
        for label, qs in kw_sets.items():
            run_search(store, cfg, qs[0], provider=None)
            lat = [timed(lambda q=q: run_search(store, cfg, q, provider=None)) for q in qs]
            p50, p95 = percentiles(lat)
            hits = sum(1 for q in qs[:5] if run_search(store, cfg, q, provider=None).hits)
            rows.append([f"{n:,}", label, f"{p50:.1f}", f"{p95:.1f}", "", "", f"{hits}/5 sample queries with hits"])
        store.close()


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10k chunks only")
    ap.add_argument("--queries", type=int, default=40, help="queries per measurement (default 40)")
    args = ap.parse_args(argv)
    sizes = [10_000] if args.quick else [10_000, 100_000]
    bandwidth = measure_bandwidth()
    rows: list[list[str]] = []
    for n in sizes:
        bench_size(n, args, bandwidth, rows)
    head = ["chunks", "search", "p50 ms", "p95 ms", "floor ms", "p50/floor", "notes"]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    print(f"memory bandwidth (numpy copy, read+write): {bandwidth / 1e9:.1f} GB/s; "
          f"floor = chunks x {DIMS} x 4 bytes / bandwidth; {args.queries} queries per row")
    for r in [head, ["-" * w for w in widths], *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    main()
