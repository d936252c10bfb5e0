"""A closed MemoryIndex refuses every call with IndexClosedError, one of the library's errors (and still a
RuntimeError); ``get`` takes a ``Path`` as the path."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import IndexClosedError, MemoryIndex, OpenClawMemoryError


def _open(workspace: Path) -> MemoryIndex:
    (workspace / "MEMORY.md").write_text("The billing database is PostgreSQL.\n")
    return MemoryIndex(workspace=workspace, state_dir=str(workspace / ".state"), provider=None, watch=False)


@pytest.mark.parametrize("call", [
    lambda memory: memory.search("billing"),
    lambda memory: memory.get("MEMORY.md"),
    lambda memory: memory.sync(),
    lambda memory: memory.sync_in_background(),
    lambda memory: memory.status(),
])
def test_a_closed_index_raises_the_librarys_closed_error(tmp_path: Path, call: object) -> None:
    memory = _open(tmp_path)
    memory.close()
    with pytest.raises(IndexClosedError, match="closed") as caught:
        call(memory)  # type: ignore[operator]
    assert isinstance(caught.value, OpenClawMemoryError) and isinstance(caught.value, RuntimeError)


def test_get_takes_a_path(tmp_path: Path) -> None:
    with _open(tmp_path) as memory:
        assert memory.get(Path("MEMORY.md")).text.startswith("The billing database")
