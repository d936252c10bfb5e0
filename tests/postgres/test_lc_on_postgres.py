"""The LangChain adapter's retriever, tools and LangGraph store tests, unchanged, on a PostgreSQL index."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from tests.langchain.conftest import *  # noqa: F403 - the adapter's fixtures (corpus, memory, scripted, ...)
from tests.langchain.test_lc_retriever import *  # noqa: F403
from tests.langchain.test_lc_store import *  # noqa: F403
from tests.langchain.test_lc_tools import *  # noqa: F403

pytestmark = pytest.mark.slow


@pytest.fixture
def make_index(make_pg_index: Callable[..., MemoryIndex]) -> Callable[..., MemoryIndex]:
    """As the suite's make_index, with the index in the test PostgreSQL server (one namespace per test)."""

    def _make(provider: object = None, **overrides: Any) -> MemoryIndex:
        idx = make_pg_index(provider, **overrides)
        assert idx.status().backend == "postgresql"
        return idx

    return _make
