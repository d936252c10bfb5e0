"""``store.fts.tokenizer: "porter"``: English words are matched by their stem (FTS5 porter over
unicode61); IDs, error strings and CJK/Thai/Korean text still match exactly; switching an index to it
rebuilds the keyword index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.query import analyze_query

DOCS = {
    "memory/2026-01-02.md": "# Jan 2\n\nMelanie: I painted a sunrise over the lake last year.\n",
    "memory/2026-01-03.md": "# Jan 3\n\nCaroline: We adopted two rescue dogs from the shelter.\n",
    "memory/2026-01-04.md": "# Jan 4\n\nBuild failed: ECONNREFUSED on port 5432 after commit a828e60.\n",
    "memory/2026-01-05.md": "# Jan 5\n\n这个项目下周上线。 서버에서 메모리 누수가 발생했다.\n",
}


@pytest.fixture
def memory(write, tmp_path: Path):
    ws = write(DOCS)
    with MemoryIndex(provider=None, workspace=ws, watch=False,
                     store={"path": str(tmp_path / "i.sqlite"), "fts": {"tokenizer": "porter"}}) as m:
        m.sync()
        yield m


@pytest.mark.parametrize(("query", "want"), [
    ("when did Melanie paint a sunrise", "memory/2026-01-02.md"),  # paint ~ painted
    ("adopting a dog", "memory/2026-01-03.md"),  # adopting ~ adopted, dog ~ dogs
    ("a828e60", "memory/2026-01-04.md"),
    ("ECONNREFUSED 5432", "memory/2026-01-04.md"),
    ("项目", "memory/2026-01-05.md"),
    ("서버", "memory/2026-01-05.md"),
])
def test_word_forms_match_and_exact_tokens_still_do(memory: MemoryIndex, query: str, want: str) -> None:
    hits = memory.search(query, min_score=0).hits
    assert hits and hits[0].path == want


def test_coverage_compares_stems() -> None:
    a = analyze_query("painting sunrises", tokenizer="porter")
    (cov, _exact), = a.coverage(["Melanie: I painted a sunrise over the lake."])
    assert cov == pytest.approx(1.0)


def test_an_unstemmed_index_is_rebuilt(write, tmp_path: Path) -> None:
    ws = write(DOCS)
    store = tmp_path / "old.sqlite"
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(store)}) as m:
        m.sync()
        assert not m.search("adopting a dog", min_score=0).hits  # unicode61: no stemming
    with MemoryIndex(provider=None, workspace=ws, watch=False,
                     store={"path": str(store), "fts": {"tokenizer": "porter"}}) as m:
        m.sync()
        hits = m.search("adopting a dog", min_score=0).hits
    assert hits and hits[0].path == "memory/2026-01-03.md"
    sql = sqlite3.connect(store).execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    assert "porter" in sql
