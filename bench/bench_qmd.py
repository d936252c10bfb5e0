"""QMD sidecar vs the builtin keyword search: recall on the development set and per-query latency.

    python -m bench qmd [--data /path/to/conversation-memory-dev] [--k 6] [--limit N]

Reads the conversational-memory development set at run time (``--data`` or
``$OPENCLAW_DEVSET``; never copied). For each workspace it builds a builtin keyword-only index and
a QMD index (the real QMD installed by ``make qmd``, or ``--qmd-command``), then runs every
question through three searchers, all via ``MemoryIndex.search`` (k results, min score 0):

* ``builtin``      this library's keyword search (no embeddings);
* ``qmd-process``  QMD ``search`` (BM25), one ``qmd search --json`` process per query (cold);
* ``qmd-daemon``   QMD lex search through one warm ``qmd mcp`` session per index.

Prints recall@k / hit@k / lines@k (definitions in the data set's README) and p50/p95 latency per
query, plus the latency ratios measured in this run.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from openclaw_memory import MemoryIndex
from openclaw_memory.backends.qmd_install import qmd_argv
from openclaw_memory.retrieval.evaluation import parse_question, score_hits

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = os.environ.get("OPENCLAW_DEVSET", "/work/shared/data/conversation-memory-dev")


def _index(name: str, ws: Path, state: Path, k: int, command: str) -> MemoryIndex:
    common: dict[str, Any] = {"workspace": ws, "state_dir": state / name, "provider": None, "watch": False,
                              "citations": "off"}
    if name == "builtin":
        return MemoryIndex(**common)
    return MemoryIndex(**common, backend="qmd", qmd={
        "command": command, "daemon": name == "qmd-daemon",
        "limits": {"maxResults": k, "maxInjectedChars": 10**9, "timeoutMs": 60_000},
    })


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--limit", type=int, default=0, help="questions per workspace (0 = all)")
    ap.add_argument("--qmd-command", default=None, help="default: the QMD installed by `make qmd`")
    a = ap.parse_args()
    argv = qmd_argv(REPO / ".qmd")
    command = a.qmd_command or (shlex.join(argv) if argv else None)
    if command is None:
        sys.exit("QMD is not installed: run `make qmd` (or pass --qmd-command)")
    data = Path(a.data)
    questions = [json.loads(line) for line in (data / "questions.jsonl").read_text().splitlines() if line.strip()]
    by_ws: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for q in questions:
        by_ws[q["workspace"]].append(q)

    names = ("builtin", "qmd-process", "qmd-daemon")
    quality = {n: [0.0, 0.0, 0.0, 0] for n in names}  # recall, hit, lines, n
    latency: dict[str, list[float]] = {n: [] for n in names}
    first: dict[str, list[float]] = {n: [] for n in names}
    with tempfile.TemporaryDirectory() as tmp:
        for ws_name, qs in sorted(by_ws.items()):
            qs = qs[: a.limit] if a.limit else qs
            for name in names:
                with _index(name, data / ws_name, Path(tmp) / ws_name, a.k, command) as mem:
                    t0 = time.perf_counter()
                    mem.sync()
                    mem.search(qs[0]["question"], max_results=a.k, min_score=0.0)  # warm-up: starts the daemon
                    first[name].append((time.perf_counter() - t0) * 1000)
                    for q in qs:
                        t = time.perf_counter()
                        result = mem.search(q["question"], max_results=a.k, min_score=0.0)
                        latency[name].append((time.perf_counter() - t) * 1000)
                        if result.fallback is not None:
                            sys.exit(f"{name} fell back to builtin: {result.fallback.reason}")
                        r, h, _, lines = score_hits(parse_question(q, default_id=q["question"]), result.hits[: a.k])
                        agg = quality[name]
                        agg[0] += r
                        agg[1] += h
                        agg[2] += lines
                        agg[3] += 1

    k = a.k
    print(f"{sum(int(v[3]) for v in quality.values()) // len(names)} questions, k={k}, data {data}")
    print(f"{'searcher':<12} {'R@' + str(k):>6} {'H@' + str(k):>6} {'lines@' + str(k):>8} "
          f"{'p50 ms':>8} {'p95 ms':>8} {'sync+1st ms':>12}")
    p50 = {}
    for name in names:
        r, h, lines, n = quality[name]
        lat = sorted(latency[name])
        p50[name] = statistics.median(lat)
        p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
        print(f"{name:<12} {r / n:6.3f} {h / n:6.3f} {lines / n:8.1f} {p50[name]:8.1f} {p95:8.1f} "
              f"{statistics.mean(first[name]):12.0f}")
    print(f"cold/warm per-query latency (qmd-process p50 / qmd-daemon p50): "
          f"{p50['qmd-process'] / p50['qmd-daemon']:.1f}x")
    print(f"qmd-daemon p50 / builtin p50: {p50['qmd-daemon'] / p50['builtin']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
