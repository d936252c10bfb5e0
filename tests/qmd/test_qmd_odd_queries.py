"""Queries as people type them reach real QMD 2.8.3 through the warm ``qmd mcp`` session as they reach
``qmd search``: a question with an unclosed double quote is a query, not a QMD failure that switches the
index to the builtin one (and keeps every process of the state dir off QMD for minutes)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from openclaw_memory import MemoryIndex

pytestmark = pytest.mark.slow  # real QMD (node)


@pytest.mark.parametrize("query", ['"green tea', 'Alice prefers "green tea', 'we chose "pgbouncer', '"'])
def test_an_unclosed_quote_is_searched_by_the_daemon_as_qmd_search_does(
    qmd_index: Callable[..., MemoryIndex], query: str
) -> None:
    daemon, cli = qmd_index(), qmd_index(state="cli", daemon=False)
    assert daemon.search("green tea").fallback is None  # the warm session is up
    result, expected = daemon.search(query), cli.search(query)
    assert result.fallback is None and expected.fallback is None, (result.fallback, expected.fallback)
    assert [h.path for h in result.hits] == [h.path for h in expected.hits]
    assert daemon.status().backend_info["daemon"]["running"]  # still QMD's warm session, not the builtin index
