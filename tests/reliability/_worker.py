"""A subprocess for the kill -9 and soak tests: ``python _worker.py <workspace> <store> <mode> [seconds]``.

Modes: ``sync`` (incremental, or the first index), ``force`` (a full rebuild), ``soak`` (for
``seconds``: random searches, appends to memory files, syncs and forced rebuilds, printing one
JSON line of counts at the end). Prints ``ready`` once the index object exists."""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider


def main() -> None:
    ws, store, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    with MemoryIndex(workspace=ws, store={"path": store}, provider=FakeEmbeddingProvider(), watch=False,
                     sync={"on_search": False, "on_session_start": False, "watch": False}) as m:
        print("ready", flush=True)
        if mode == "sync":
            m.sync()
        elif mode == "force":
            m.sync(force=True)
        elif mode == "soak":
            soak(m, Path(ws), seconds)
        print("done", flush=True)


def soak(m: MemoryIndex, ws: Path, seconds: float) -> None:
    rng = random.Random()
    counts = {"search": 0, "append": 0, "sync": 0, "force": 0, "errors": 0}
    errors: list[str] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        op = rng.choices(["search", "append", "sync", "force"], weights=[60, 20, 15, 2])[0]
        try:
            if op == "search":
                m.search(rng.choice(["walrus ledger", "zephyr billing", "entry 7", "tea coffee"]))
            elif op == "append":
                with open(ws / "memory" / f"soak-{rng.randrange(4)}.md", "a", encoding="utf-8") as fh:
                    fh.write(f"\nsoak note {rng.randrange(10**6)} heron\n")
            elif op == "sync":
                m.sync()
            else:
                m.sync(force=True)
            counts[op] += 1
        except Exception as exc:  # noqa: BLE001 - counted and reported
            counts["errors"] += 1
            errors.append(f"{op}: {type(exc).__name__}: {exc}")
    print(json.dumps({"counts": counts, "errors": errors[:5]}), flush=True)


if __name__ == "__main__":
    main()
