"""A search with only ``where=`` is still answered by QMD (the filter applies to its hits)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from openclaw_memory import MemoryIndex

pytestmark = pytest.mark.slow  # starts the real QMD (node)


def test_where_filters_qmd_hits_without_leaving_qmd(qmd_index: Callable[..., MemoryIndex]) -> None:
    mem = qmd_index()
    query = "database migration Postgres pgbouncer"
    plain = mem.search(query, min_score=0)
    assert plain.provider == "qmd" and [h.path for h in plain.hits][:1] == ["memory/2026-01-02.md"]
    others = mem.search(query, min_score=0, where=lambda h: h.path != "memory/2026-01-02.md")
    assert (others.provider, others.fallback) == ("qmd", None)
    assert all(h.path != "memory/2026-01-02.md" for h in others.hits)
    only = mem.search(query, min_score=0, where=lambda h: h.path == "memory/2026-01-02.md")
    assert only.provider == "qmd" and {h.path for h in only.hits} == {"memory/2026-01-02.md"}
    none = mem.search(query, where=lambda h: False)
    assert none.provider == "qmd" and none.hits == [] and none.empty_reason == "no_match"
