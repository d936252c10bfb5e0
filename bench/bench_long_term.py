"""Long-term memory (LanceDB) latency: store and recall with and without automatic compaction.

Run ``python -m bench long-term`` (``--memories N``, default 1000). Memories are stored one
at a time, as an agent does, into two tables in a temporary folder: one compacted every 100 writes
(the default ``optimize_every``) and one never compacted. 384-dimensional random unit vectors stand
in for a model, so the figures are LanceDB's cost alone. Prints p50 store and recall latency and the
ratio between the two tables, measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from openclaw_memory.long_term import LongTermMemory
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbedKind


class RandomProvider(BaseEmbeddingProvider):
    """A deterministic random unit vector per text (no model cost)."""

    id = "bench-random"

    def __init__(self) -> None:
        super().__init__(model="random-384", dims=384)

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        return [np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(384) for t in texts]


def run(folder: Path, n: int, optimize_every: int) -> tuple[float, float]:
    memory = LongTermMemory(folder, RandomProvider(), optimize_every=optimize_every)
    store_ms = []
    for i in range(n):
        t = time.perf_counter()
        memory.store(f"memory {i}")
        store_ms.append((time.perf_counter() - t) * 1000)
    recall_ms = []
    for i in range(50):
        t = time.perf_counter()
        memory.recall(f"memory {i * 7 % n}", limit=5)
        recall_ms.append((time.perf_counter() - t) * 1000)
    memory.close()
    return statistics.median(store_ms), statistics.median(recall_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        compacted = run(Path(tmp) / "compacted", args.memories, 100)
        never = run(Path(tmp) / "never", args.memories, 0)
    print(f"{args.memories} memories stored one by one (p50, ms)")
    print(f"{'table':<28}{'store':>10}{'recall':>10}")
    print(f"{'compacted every 100 writes':<28}{compacted[0]:>10.1f}{compacted[1]:>10.1f}")
    print(f"{'never compacted':<28}{never[0]:>10.1f}{never[1]:>10.1f}")
    print(f"recall: never compacted / compacted = {never[1] / compacted[1]:.1f}x")


if __name__ == "__main__":
    main()
