"""``store.fts.tokenizer: "porter"``: English words are matched by their stem (FTS5 porter over
unicode61); IDs, error strings and CJK/Thai/Korean text still match exactly; switching an index to it
rebuilds the keyword index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.text.query_analysis import STEM_MATCH_WEIGHT, analyze_query

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
    (cov, _exact), (cov_written, _) = a.coverage(["Melanie: I painted a sunrise over the lake.",
                                                  "Melanie: painting sunrises over the lake."])
    assert cov == pytest.approx(2 * STEM_MATCH_WEIGHT / 2)  # both words found in another form: half weight each
    assert cov_written == pytest.approx(1.0)


def test_an_unstemmed_index_is_rebuilt(write, tmp_path: Path) -> None:
    ws = write(DOCS)
    store = tmp_path / "old.sqlite"
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(store)},
                     query={"stemming": False}) as m:
        m.sync()
        assert not m.search("adopting a dog", min_score=0).hits  # unicode61 without query stemming
    with MemoryIndex(provider=None, workspace=ws, watch=False,
                     store={"path": str(store), "fts": {"tokenizer": "porter"}}) as m:
        m.sync()
        hits = m.search("adopting a dog", min_score=0).hits
    assert hits and hits[0].path == "memory/2026-01-03.md"
    sql = sqlite3.connect(store).execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    assert "porter" in sql


# ---- the default: a unicode61 index searched with query-side stemming ---------------------------


@pytest.fixture
def default_memory(write, tmp_path: Path):
    ws = write(DOCS)
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / "d.sqlite")}) as m:
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
def test_default_index_matches_word_forms_and_exact_tokens(default_memory: MemoryIndex, query: str,
                                                           want: str) -> None:
    hits = default_memory.search(query, min_score=0).hits
    assert hits and hits[0].path == want


def test_exact_word_ranks_above_a_same_stem_word_and_both_are_found(write, tmp_path: Path) -> None:
    ws = write({"memory/2026-02-01.md": "# Feb 1\n\nShe painted the fence blue.\n",
                "memory/2026-02-02.md": "# Feb 2\n\nShe joined a painting class.\n",
                "memory/2026-02-03.md": "# Feb 3\n\nThe class went hiking.\n"})
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / "e.sqlite")}) as m:
        m.sync()
        paths = [h.path for h in m.search("painting", min_score=0).hits]
        assert paths[:2] == ["memory/2026-02-02.md", "memory/2026-02-01.md"]
        paths = [h.path for h in m.search("painted", min_score=0).hits]
        assert paths[:2] == ["memory/2026-02-01.md", "memory/2026-02-02.md"]


def test_an_id_still_ranks_first_among_stemmed_matches(write, tmp_path: Path) -> None:
    files = {f"memory/2026-03-{d:02d}.md": f"# Mar {d}\n\nWe deployed the service again (run {d}).\n"
             for d in range(1, 10)}
    files["memory/2026-03-20.md"] = "# Mar 20\n\nRollback of deploy a828e60 after the outage.\n"
    ws = write(files)
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / "f.sqlite")}) as m:
        m.sync()
        hits = m.search("deploying a828e60", min_score=0).hits
    assert hits[0].path == "memory/2026-03-20.md"
    assert len(hits) > 1  # the stemmed matches ("deployed") are found too, below the ID


def test_a_stemmed_match_covers_but_is_not_exact() -> None:
    a = analyze_query("paintings sunrise", stemming=True)
    (cov_stem, exact_stem), (cov_exact, exact_exact) = a.coverage(
        ["Melanie: I painted a sunrise over the lake.", "Melanie: paintings of a sunrise"])
    # "sunrise" as written, "paintings" only as "painted": found, weaker, no exact-match rescue
    assert cov_stem == pytest.approx((1 + STEM_MATCH_WEIGHT) / 2) and not exact_stem
    assert cov_exact == pytest.approx(1.0) and exact_exact
    assert '"paint"*' in (a.match or "")
    assert '"paint"*' not in (analyze_query("paintings sunrise", stemming=False).match or "")
    # identifiers, CJK and a porter index get no prefix terms
    assert "*" not in (analyze_query("a828e60 项目", stemming=True).match or "")
    assert "*" not in (analyze_query("paintings", tokenizer="porter", stemming=True).match or "")
