"""`status` after the embedding model changed (a key appeared in the environment and ``provider="auto"`` took it,
or ``model`` was edited): the index still holds the old model's vectors until the next sync rebuilds it."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider


def _index(workspace: Path, tmp_path: Path, model: str) -> MemoryIndex:
    return MemoryIndex(workspace=workspace, provider=FakeEmbeddingProvider(model=model), watch=False,
                       store={"path": str(tmp_path / "index.sqlite")})


def test_status_says_the_index_holds_another_models_vectors(write, tmp_path: Path) -> None:
    """It said nothing ("Dirty: no", search mode hybrid) while no vector of the index could match a query."""
    workspace = write({"MEMORY.md": "# Memory\n\n- Priya runs the deployment pipeline.\n"})
    with _index(workspace, tmp_path, "model-a") as memory:
        memory.sync()
        assert not [n for n in memory.status().notes if "model-a" in n]
    with _index(workspace, tmp_path, "model-b") as memory:
        notes = [n for n in memory.status().notes if "model-a" in n]
        assert notes == ["the index holds vectors of fake:model-a, not of fake:model-b that embeds queries now: "
                         "vector search finds nothing until the next sync rebuilds it (run `openclaw-memory index` "
                         "or memory.sync())"]
        memory.sync()
        assert not [n for n in memory.status().notes if "model-a" in n]
