"""Files written into a folder, and an index without a provider or watcher opened on a workspace."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory import MemoryIndex


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write ``{"memory/2026-11-01.md": "...", ...}`` under ``root`` (folders made as needed); returns ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def plain_index(workspace: Path, state_dir: Path, **settings: object) -> MemoryIndex:
    """A keyword-only index (no embedding provider) on ``workspace`` that does not watch its files."""
    return MemoryIndex(workspace=workspace, state_dir=str(state_dir), provider=None, watch=False,
                       **settings)  # type: ignore[arg-type]


def heron_days_index(root: Path) -> MemoryIndex:
    """Nine daily notes under ``root`` (``memory/2026-01-0N.md``: "The heron count was N."), synced into a
    keyword-only index at ``root/i.sqlite``: more hits for "heron count" than a client asking for two wants."""
    write_files(root, {f"memory/2026-01-0{day}.md": f"# Day {day}\n\nThe heron count was {day}.\n"
                       for day in range(1, 10)})
    memory = MemoryIndex(workspace=root, provider=None, watch=False, store={"path": str(root / "i.sqlite")})
    memory.sync()
    return memory
