"""The LlamaIndex adapter's vector store tests, unchanged, on a PostgreSQL index."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from tests.llama_index.conftest import *  # noqa: F403 - the adapter's fixtures (corpus, memory, scripted, ...)
from tests.llama_index.test_li_vector_store import *  # noqa: F403

pytestmark = pytest.mark.slow


@pytest.fixture
def make_index(make_pg_index: Callable[..., MemoryIndex]) -> Callable[..., MemoryIndex]:
    """As the suite's make_index, with the index in the test PostgreSQL server (one namespace per test)."""

    def _make(provider: object = None, **overrides: Any) -> MemoryIndex:
        idx = make_pg_index(provider, **overrides)
        assert idx.status().backend == "postgresql"
        return idx

    return _make
