"""``query.keyword.feedback_terms`` (pseudo-relevance feedback, RM3): the words that weigh most in the first
keyword pass's best chunks are searched as a second query, so a chunk that answers in other words than the
question's is found. Off by default; each test also runs it off, which is the old search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openclaw_memory import MemoryIndex
from openclaw_memory.retrieval.keyword_side import feedback_terms, keyword_candidates
from openclaw_memory.text.query_analysis import analyze_query

#: unrelated notes, so that a word of every note (a name) is common and a word of two is rare
FILLER = {f"memory/2026-02-{d:02d}.md": f"Dana: the weather on day {d} was fine, Dana walked the dog.\n"
          for d in range(1, 13)}
DOCS = {
    **FILLER,
    # the question's words, and the codename the answer goes by
    "memory/2026-03-01.md": "Dana: the launch codename for the billing rewrite is Zephyr.\n",
    # the answer: none of the question's words, only the codename
    "memory/2026-03-09.md": "Dana: Zephyr shipped to production on Tuesday after two rollbacks.\n",
}


def _paths(write, tmp_path: Path, query: str, **keyword: Any) -> list[str]:
    ws = write(DOCS)
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / "i.sqlite")},
                     query={"keyword": keyword}) as m:
        m.sync()
        return [h.path for h in m.search(query, min_score=0).hits]


def test_feedback_finds_the_chunk_that_answers_in_other_words(write, tmp_path: Path) -> None:
    question = "When did the billing rewrite launch?"
    assert "memory/2026-03-09.md" not in _paths(write, tmp_path / "off", question)
    found = _paths(write, tmp_path / "on", question, feedback_terms=5, feedback_docs=1)
    assert found[0] == "memory/2026-03-01.md"  # the first pass's best stays first
    assert "memory/2026-03-09.md" in found


def test_feedback_words_are_rare_new_words_of_the_best_chunks(write, tmp_path: Path) -> None:
    ws = write(DOCS)
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / "i.sqlite")}) as m:
        m.sync()
        analysis = analyze_query("billing rewrite launch")
        first = keyword_candidates(m.store, analysis, limit=6)
        words = dict(feedback_terms(m.store, analysis, first, docs=1, terms=3))
    assert set(sorted(words, key=words.get)[-2:]) == {"zephyr", "codename"}
    assert not {"billing", "rewrite", "launch", "the", "for"} & set(words)  # the query's own words, stop words
    assert words.get("dana", 0.0) < 0.05  # a name in every note tells nothing
    assert abs(sum(words.values()) - 1.0) < 1e-9
