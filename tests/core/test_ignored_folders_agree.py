"""Discovery and the file watcher agree on the tool folders inside memory trees (``.git``, ``node_modules``,
``.venv``, ...; any case): discovery used to walk them and index their Markdown (package READMEs, git internals)
while the watcher ignored changes there, so an index with a watcher went stale on those files. Neither looks
there now; both use :func:`openclaw_memory.files.discovery.is_ignored_dir`."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.files.discovery import list_memory_files
from openclaw_memory.index.watch import is_relevant

FILES = [
    "MEMORY.md",
    "memory/2026-11-01.md",
    "memory/projects/plan.md",
    "memory/node_modules/pkg/README.md",
    "memory/Node_Modules/pkg/CHANGELOG.md",
    "memory/projects/.git/description.md",
    "memory/projects/.venv/lib/notes.md",
    "memory/projects/venv/notes.md",
    "memory/__pycache__/x.md",
    "memory/.tox/log.md",
    "memory/.pnpm-store/v3/readme.md",
    "memory/gitnotes/.gitkeep.md",
    "docs/guide.md",
    "docs/node_modules/lib/README.md",
    "docs/.git/info.md",
    "memory/node_modules/kit/docs/guide.md",  # below an extra path configured inside a tool folder: walked
]
EXTRA = ["docs", "memory/node_modules/kit/docs", "docs/node_modules/lib"]  # the last two: inside tool folders


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    for rel in FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"note in {rel} about the ferry\n")
    return root


@pytest.mark.parametrize("rel", FILES)
def test_the_watcher_watches_exactly_the_files_discovery_indexes(ws: Path, rel: str) -> None:
    extra = [ws / path for path in EXTRA]
    found = {p.relative_to(ws).as_posix() for p in list_memory_files(ws, extra)}
    assert (rel in found) == is_relevant(str(ws / rel), ws, extra), (rel, sorted(found))


def test_tool_folders_are_not_indexed(ws: Path) -> None:
    with MemoryIndex(workspace=ws, state_dir=str(ws.parent / "state"), provider=None, watch=False,
                     extra_paths=["docs"]) as memory:
        memory.sync()
        assert set(memory.indexed_files()) == {
            "MEMORY.md", "memory/2026-11-01.md", "memory/projects/plan.md", "memory/gitnotes/.gitkeep.md",
            "docs/guide.md"}
