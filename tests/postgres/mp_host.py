"""One "host" of the multi-process test: its own state dir, the shared workspace and namespace; it
searches, syncs (now and then a forced rebuild) and appends lines for a bounded time."""

from __future__ import annotations

import random
import time
import traceback
from pathlib import Path
from typing import Any

from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import append_memory
from openclaw_memory.providers.fake import FakeEmbeddingProvider

SHARED_NOTE = "memory/2026-03-01.md"
ANCHOR = "zebracorn"  # a word of MEMORY.md, present in every version of the index


def run_host(host: int, url: str, schema: str, namespace: str, workspace: str, state_dir: str, seconds: float,
             out: Any) -> None:
    """Report ``(host, appended lines, counts of each action, errors)`` on the queue ``out``."""
    lines: list[str] = []
    errors: list[str] = []
    done = {"search": 0, "sync": 0, "rebuild": 0, "append": 0}
    rng = random.Random(host)
    try:
        with MemoryIndex(workspace=workspace, state_dir=state_dir, watch=False, provider=FakeEmbeddingProvider(),
                         store={"url": url, "namespace": namespace, "pg_schema": schema}) as idx:
            end = time.monotonic() + seconds
            n = 0
            while time.monotonic() < end:
                roll = rng.random()
                try:
                    if roll < 0.45:
                        res = idx.search(ANCHOR)
                        if not res.hits or res.hits[0].path != "MEMORY.md":
                            errors.append(f"search for {ANCHOR} found {[h.path for h in res.hits]}")
                        done["search"] += 1
                    elif roll < 0.6:
                        idx.sync(lock_timeout=60)
                        done["sync"] += 1
                    elif host == 0 and done["sync"] >= 1 and done["rebuild"] == 0:  # one atomic rebuild
                        idx.sync(force=True, lock_timeout=60)
                        done["rebuild"] += 1
                    else:
                        n += 1
                        line = f"- host{host} line{n} " + "x" * rng.randint(1, 300)
                        rel = SHARED_NOTE if rng.random() < 0.8 else "MEMORY.md"
                        append_memory(Path(workspace), rel, line)
                        lines.append(line)
                        done["append"] += 1
                except Exception:  # noqa: BLE001 - every failure is reported to the test
                    errors.append(traceback.format_exc())
    except Exception:  # noqa: BLE001
        errors.append(traceback.format_exc())
    out.put((host, lines, done, errors))
