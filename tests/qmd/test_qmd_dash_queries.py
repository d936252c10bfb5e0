"""A query word starting with '-' (``-v flag``) reaches real QMD 2.8.3 in the vector mode as a query: QMD's
``qmd mcp`` session refuses a vec sub-query with a word starting with '-' ("Negation (-term) is not supported in
vec/hyde queries"), which switched the search to the builtin index (and kept QMD off for minutes)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.backends.qmd import QmdBackend

pytestmark = pytest.mark.slow  # real QMD (node)


@pytest.mark.parametrize("query", ["-v flag", "what does -v do", 'the -"dry run" switch', "pass --force then -n"])
def test_a_dash_word_is_searched_by_the_daemon_in_vsearch_mode(
    qmd_index: Callable[..., MemoryIndex], qmd_model: Path, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    # the model and vectors a real vsearch needs are not here (QMD's hub is unreachable): no `qmd embed`, and
    # QMD's index has no vector table, so its vec search answers nothing; what is checked is that QMD takes the
    # query at all
    monkeypatch.setattr(QmdBackend, "_embed_if_due", lambda self, update_output: None)
    monkeypatch.setattr(QmdBackend, "_require_vectors", lambda self: None)
    mem = qmd_index(searchMode="vsearch")
    result = mem.search(query)
    assert result.fallback is None, result.fallback.reason if result.fallback else None
    assert mem.status().backend_info["daemon"]["running"]  # still QMD's warm session, not the builtin index


@pytest.mark.parametrize("daemon", [True, False], ids=["mcp", "cli"])
@pytest.mark.parametrize("query, path", [
    ("the --force option", "memory/cli.md"),
    ("what does -v do", "memory/cli.md"),
    ("-multi-agent setup", "memory/agents.md"),
])
def test_a_dash_word_is_searched_for_not_excluded_in_search_mode(
    qmd_index: Callable[..., MemoryIndex], memory_ws: Path, daemon: bool, query: str, path: str
) -> None:
    # QMD's lex syntax reads "-word" as "without word": the note about --force was left out of the results
    (memory_ws / "memory" / "cli.md").write_text(
        "# CLI notes\n\nUse the --force option to overwrite the index.\nPass -v to see what each step does.\n",
        encoding="utf-8")
    (memory_ws / "memory" / "agents.md").write_text(
        "# Agents\n\nThe multi-agent setup shares one gateway.\n", encoding="utf-8")
    mem = qmd_index(daemon=daemon)
    mem.sync()
    result = mem.search(query, min_score=0.0)
    assert result.fallback is None
    assert path in [hit.path for hit in result.hits], [hit.path for hit in result.hits]


@pytest.mark.parametrize("daemon", [True, False], ids=["mcp", "cli"])
def test_a_query_with_a_nul_character_is_searched(qmd_index: Callable[..., MemoryIndex], daemon: bool) -> None:
    # pasted binary text: `qmd search` got it as an argument, and the search raised "ValueError: embedded null byte"
    mem = qmd_index(daemon=daemon)
    result = mem.search("pgbouncer\x00 pooling", min_score=0.0)
    assert result.fallback is None and "memory/2026-01-02.md" in [hit.path for hit in result.hits]
