"""sync()'s own arguments are checked up front: a wrong one is a MemoryArgumentError saying what to pass, and the
index is left alone. Found in the sync worker it failed the sync, and every search then reported that failure as
its ``sync_error`` (and waited 30 s before syncing again)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.providers.fake import FakeEmbeddingProvider


@pytest.fixture
def memory(tmp_path: Path) -> Any:
    (tmp_path / "MEMORY.md").write_text("# Memory\n\nThe heron count was 4.\n")
    index = MemoryIndex(workspace=tmp_path, provider=FakeEmbeddingProvider(), watch=False,
                        store={"path": str(tmp_path / "i.sqlite")})
    index.sync()
    (tmp_path / "MEMORY.md").write_text("# Memory\n\nThe heron count was 4. The otter count was 7.\n")
    yield index
    index.close()


@pytest.mark.parametrize(("arguments", "message"), [
    ({"progress": 5}, "progress must be a function"),
    ({"progress": "tqdm"}, "progress must be a function"),
    ({"lock_timeout": "10"}, "lock_timeout must be a number of seconds"),
    ({"lock_timeout": -1}, "lock_timeout must be a number of seconds"),
    ({"lock_timeout": float("nan")}, "lock_timeout must be a number of seconds"),
    ({"lock_timeout": True}, "lock_timeout must be a number of seconds"),
])
def test_a_wrong_sync_argument_is_refused_and_the_index_stays_healthy(memory: MemoryIndex, arguments: dict[str, Any],
                                                                      message: str) -> None:
    with pytest.raises(MemoryArgumentError, match=message):
        memory.sync(**arguments)
    assert memory.scheduler.last_error is None
    result = memory.search("heron count")
    assert result.sync_error is None and result.hits
    memory.sync()  # the change is indexed (by this sync, or the one the search started)
    assert "otter" in memory.search("otter count").hits[0].snippet


def test_async_sync_refuses_a_progress_that_is_not_callable(memory: MemoryIndex) -> None:
    with pytest.raises(MemoryArgumentError, match="progress must be a function"):
        asyncio.run(memory.async_sync(progress=5))  # type: ignore[arg-type]
    assert memory.scheduler.last_error is None


def test_a_whole_number_lock_timeout_and_a_progress_function_are_taken(memory: MemoryIndex) -> None:
    seen: list[tuple[int, int, str]] = []
    report = memory.sync(lock_timeout=0, progress=lambda done, total, label: seen.append((done, total, label)))
    assert report.files_indexed == 1 and seen
