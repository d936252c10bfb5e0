"""The LlamaIndex adapter's vector store tests, unchanged, on a PostgreSQL index."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from tests.llama_index.conftest import *  # noqa: F403 - the adapter's fixtures (corpus, memory, scripted, ...)
from tests.llama_index.test_li_vector_store import *  # noqa: F403

pytestmark = pytest.mark.slow


@pytest.fixture
def make_index(pg: Any, workspace: Path) -> Iterator[Callable[..., MemoryIndex]]:
    """As the suite's make_index, with the index in the test PostgreSQL server (one namespace per test)."""
    made: list[MemoryIndex] = []
    namespace = pg.namespace()

    def _make(provider: object = None, **overrides: object) -> MemoryIndex:
        overrides.setdefault("workspace", workspace)
        overrides.setdefault("store", {"url": pg.url, "namespace": namespace, "pg_schema": pg.schema})
        overrides.setdefault("watch", False)
        idx = MemoryIndex(provider=provider, **overrides)  # type: ignore[arg-type]
        assert idx.status().backend == "postgresql"
        made.append(idx)
        return idx

    yield _make
    for idx in made:
        idx.close()
