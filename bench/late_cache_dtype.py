"""Late interaction keeps the lines' token vectors as float16: do searches order their hits as with float32?

    .venv/bin/python bench/late_cache_dtype.py --data ../shared/data/conversation-memory-dev [--conversation conv-26]
        [--questions 12] [--state /tmp/late-dtype]

Indexes one conversation of the development set with MiniLM (``bench_quality.make_provider("minilm")``), then runs
each question twice with ``query.hybrid.late_interaction`` on, the line vectors cast to float32 and to float16 (the
cache off, so each run computes its own), and prints how many searches return the same hits in the same order.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_quality import make_provider  # noqa: E402

from openclaw_memory import MemoryIndex, late_interaction  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--conversation", default="conv-26")
    ap.add_argument("--questions", type=int, default=12)
    ap.add_argument("--state", type=Path, default=Path("/tmp/late-dtype"))
    args = ap.parse_args()
    questions = [q for line in (args.data / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if (q := json.loads(line))["workspace"] == args.conversation][: args.questions]
    ws = args.state / "ws"
    if not ws.exists():
        shutil.copytree(args.data / args.conversation, ws)
    late_interaction.CACHE_MAX_BYTES = 0  # nothing kept: each run embeds its lines in its own dtype
    as_float32 = types.SimpleNamespace(**{**vars(np), "float16": np.float32})
    cfg = {"workspace": str(ws), "store": {"path": str(args.state / "i.sqlite")},
           "provider_limits": {"query_timeout_seconds": 120},
           "query": {"hybrid": {"late_interaction": {"enabled": True}}}}
    same = 0
    started = time.perf_counter()
    with MemoryIndex(cfg, provider=make_provider("minilm"), watch=False) as mem:
        mem.sync()
        for q in questions:
            orders = []
            for numpy_ns in (as_float32, np):
                late_interaction.np = numpy_ns  # type: ignore[assignment]
                r = mem.search(q["question"], max_results=6)
                assert r.rerank_error is None, r.rerank_error
                orders.append([(h.path, h.start_line, h.end_line) for h in r.hits])
            late_interaction.np = np  # type: ignore[assignment]
            same += orders[0] == orders[1]
            print(f"{q['id']}: {'same' if orders[0] == orders[1] else 'DIFFERENT'}", flush=True)
    print(f"{args.conversation}: {same}/{len(questions)} searches return the same hits in the same order with "
          f"float16 line vectors as with float32 ({time.perf_counter() - started:.0f} s, load "
          f"{os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
