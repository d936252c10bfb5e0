"""A small workspace and a scripted model for the consolidation (dreaming) tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path

from openclaw_memory.config import MemoryConfig


TODAY = date(2026, 11, 27)


MEMORY = """# Memory

- The project uses SQLite for the index.
- Deploys happen on Tuesdays.
- The team lead is Dana.
- Backups run nightly at 02:00.
"""


NOTE = """# 2026-11-26

- Deploys now happen on Fridays only, after the freeze.
- The index also supports PostgreSQL with pgvector since this week.
- lunch
- Carol prefers answers in French when she writes in French.
"""


def scripted(*answers: str | dict) -> Callable[[str], str]:
    """A model answering ``answers`` in turn (dicts as JSON); it records the prompts it saw."""
    queue = [a if isinstance(a, str) else json.dumps(a) for a in answers]

    def complete(prompt: str) -> str:
        complete.prompts.append(prompt)  # type: ignore[attr-defined]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    complete.prompts = []  # type: ignore[attr-defined]
    return complete


def make_workspace(tmp_path: Path) -> Path:
    """A workspace below ``tmp_path`` holding :data:`MEMORY` and yesterday's note (:data:`NOTE`)."""
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (workspace / "memory" / "2026-11-26.md").write_text(NOTE, encoding="utf-8")
    return workspace


def config_for(ws: Path, **dreaming: object) -> MemoryConfig:
    settings = {"min_recall_count": 0, "min_unique_queries": 0, **dreaming}
    return MemoryConfig(workspace=ws, state_dir=ws.parent / "state", provider="none", dreaming=settings)

