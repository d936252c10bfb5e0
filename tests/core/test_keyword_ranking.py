"""``query.keyword`` and the pronoun stop words (issue 13, keyword side): how keyword hits are ordered
when several chunks contain the query's words. Each test also runs the rule switched off, so it shows
the order the old ranking gave."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.text.query_analysis import analyze_query
from openclaw_memory.retrieval.pipeline import chunk_total

FILLER = "\n".join(f"Line {i}: the weather was fine and nothing else happened." for i in range(8))


def _search(write, tmp_path: Path, docs: dict[str, str], query: str, **keyword: Any) -> list[str]:
    ws = write(docs)
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / "i.sqlite")},
                     query={"keyword": keyword} if keyword else {}) as m:
        m.sync()
        return [h.path for h in m.search(query, min_score=0).hits]


def test_pronouns_are_not_search_terms() -> None:
    a = analyze_query("What did Melanie make with her kids for his birthday?")
    keys = {k for g in a.groups for k in g.keys}
    assert keys == {"melanie", "make", "kids", "birthday"}
    # an acronym that spells a pronoun stays searchable
    assert "us" in {k for g in analyze_query("Which US holiday?").groups for k in g.keys}


def test_a_pronoun_does_not_outrank_the_topic(write, tmp_path: Path) -> None:
    docs = {
        "memory/2026-01-02.md": "Melanie: her sister visited her mother.\n",
        "memory/2026-01-03.md": "Melanie: the kids loved the beach.\n",
    }
    # with "her" a search word, both cover two of three words and "her" (twice) wins on BM25
    assert _search(write, tmp_path, docs, "What did Melanie do with her kids?")[0] == "memory/2026-01-03.md"


def test_words_on_neighbouring_lines_beat_scattered_words(write, tmp_path: Path) -> None:
    docs = {
        # both words twice (higher BM25), but nine lines apart
        "memory/2026-01-02.md": f"pottery pottery\n{FILLER}\nkids kids\n",
        # both words once, in one line
        "memory/2026-01-03.md": f"We made pottery with the kids.\n{FILLER}\n",
    }
    assert _search(write, tmp_path / "a", docs, "pottery kids", window_lines=3)[0] == "memory/2026-01-03.md"
    # coverage of the whole chunk (the old rule): both chunks cover both words, BM25 decides
    assert _search(write, tmp_path / "b", docs, "pottery kids", window_lines=0)[0] == "memory/2026-01-02.md"


def test_a_word_found_in_most_chunks_counts_little(write, tmp_path: Path) -> None:
    # a two-person conversation: both names in almost every chunk; the rare word is what is asked about
    docs = {f"memory/2026-01-0{d}.md": f"Maria: hi Jon, how was your day? Jon: fine, Maria, thanks ({d}).\n"
            for d in range(2, 6)}
    docs["memory/2026-01-06.md"] = "Went to the gym in the morning and lifted weights.\n"
    query = "Maria Jon gym"
    assert _search(write, tmp_path / "a", docs, query, rarity_weights=True, window_lines=0)[0] == \
        "memory/2026-01-06.md"
    # unweighted (the old rule): two of three words beat one of three
    assert _search(write, tmp_path / "b", docs, query, rarity_weights=False, window_lines=0)[0] != \
        "memory/2026-01-06.md"


@pytest.mark.parametrize("window", [1, 3])
def test_window_coverage_of_short_and_blank_texts(window: int) -> None:
    a = analyze_query("pottery kids")
    covs = a.window_coverage(["pottery\n\n\nkids", "", "nothing here", "pottery kids\nmore\nmore\nmore"], window)
    assert covs[0] == (1.0 if window == 3 else 0.5)  # blank lines do not separate a run
    assert covs[1] == 0.0 and covs[2] == 0.0 and covs[3] == 1.0


def test_the_chunk_count_is_reused_until_the_store_changes() -> None:
    """The count is kept per store generation (it was kept 30 s, leftovers3 item 3: see the conformance suite)."""
    class Store:
        def __init__(self, n: int = 10_000) -> None:
            self.n, self.calls, self.gen = n, 0, 0

        def generation(self) -> str:
            return str(self.gen)

        def counts(self) -> dict[str, dict[str, int]]:
            self.calls += 1
            return {"memory": {"files": 1, "chunks": self.n}}

    store = Store()
    assert chunk_total(store) == 10_000 and chunk_total(store) == 10_000 and store.calls == 1
    store.n, store.gen = 10_002, 1  # any write, however small
    assert chunk_total(store) == 10_002 and store.calls == 2
    small = Store(10)
    assert chunk_total(small) == 10
    small.n, small.gen = 12, 1
    assert chunk_total(small) == 12

    class Unhashable(Store):
        __hash__ = None  # type: ignore[assignment]

    assert chunk_total(Unhashable()) == 10_000  # no cache, still counted


def test_a_word_no_chunk_has_weighs_like_an_average_word() -> None:
    a = analyze_query("Maria shelter Xmasss").weighted_by_rarity([90, 2, 0], total=100)
    w = [g.weight for g in a.groups]
    assert w[0] < w[1] and w[2] == pytest.approx((w[0] + w[1]) / 2)
    # so a chunk with the two known words is not pushed down by the unknown one more than before
    assert a.coverage(["Maria at the shelter"])[0][0] == pytest.approx(2 / 3)


def test_a_daily_note_counts_its_date_as_words_of_its_lines(write, tmp_path: Path) -> None:
    docs = {
        # the day asked about: the note never says its own date
        "memory/2023-10-13.md": "Melanie: here is my painting, finished after a long walk by the river with the dog.\n",
        # another day: the query's word twice in fewer words (higher BM25)
        "memory/2023-10-20.md": "Melanie: a painting, my painting of the lake.\n",
    }
    query = "What painting did Melanie share on October 13, 2023?"
    assert _search(write, tmp_path / "a", docs, query)[0] == "memory/2023-10-13.md"
    assert _search(write, tmp_path / "b", docs, query, note_dates=False)[0] == "memory/2023-10-20.md"
    ws = write(docs)
    with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / "c.sqlite")}) as m:
        m.sync()
        hit = m.search(query, min_score=0).hits[0]
    assert hit.path == "memory/2023-10-13.md" and "October" not in hit.text  # the text is returned as written


def test_note_date_words() -> None:
    from openclaw_memory.text.note_dates import note_date_words

    assert note_date_words("memory/2023-10-13.md") == "13 October 2023"
    assert note_date_words("memory/trips/2024-02-05-rome.md") == "5 February 2024"
    assert note_date_words("MEMORY.md") is None and note_date_words("memory/2023-13-40.md") is None


def test_note_dates_config_key() -> None:
    from openclaw_memory.config import MemoryConfig

    assert MemoryConfig().query.keyword.note_dates is True
    assert MemoryConfig.load(None, query={"keyword": {"noteDates": False}}).query.keyword.note_dates is False


def test_reporting_verbs_and_both_are_not_search_terms() -> None:
    a = analyze_query("What did Jon say about Gina's store? Did they both mention it, as described?")
    assert {k for g in a.groups for k in g.keys} == {"jon", "gina", "store"}
    assert "discussed" in {k for g in analyze_query("what we discussed").groups for k in g.keys}  # the spec's example


def test_a_reporting_verb_does_not_outrank_the_topic(write, tmp_path: Path) -> None:
    docs = {
        "memory/2026-01-02.md": "Jon: I have to say, the weather was awful.\n",  # "say" as a figure of speech
        "memory/2026-01-03.md": "Jon: the store opens next week.\n",  # what Jon said about the store
        **{f"memory/2026-01-1{i}.md": f"Gina: the store was closed on day {i}.\n" for i in range(4)},
    }
    # with "say" a search word, it is the rarest word of the question and its chunk ranked first
    assert _search(write, tmp_path, docs, "What did Jon say about the store?")[0] == "memory/2026-01-03.md"


def test_window_coverage_context_counts_in_every_run_of_its_text() -> None:
    a = analyze_query("painting October 2023")
    texts = ["painting\nline\nline\nline\nline", "", "nothing here", "painting"]
    covs = a.window_coverage(texts, 1, context=["13 October 2023", "13 October 2023", None, None])
    assert covs == [1.0, 0.0, 0.0, pytest.approx(1 / 3)]  # a blank text earns nothing from its context


def test_a_slice_of_the_keyword_candidates_keeps_their_ranking(write, tmp_path: Path) -> None:
    """leftovers4: ``keyword_candidates`` returned a list subclass whose slices were plain lists without
    ``ranking`` (the rarity-weighted analysis later rules measure coverage with)."""
    from openclaw_memory.retrieval.pipeline import KeywordCandidates, keyword_candidates

    docs = {f"memory/2026-01-{d:02d}.md": f"Sam painted a lake at dawn, day {d}.\nSam: nice.\n" for d in range(1, 6)}
    with MemoryIndex(provider=None, workspace=write(docs), watch=False,
                     store={"path": str(tmp_path / "kc.sqlite")}) as m:
        m.sync()
        cands = keyword_candidates(m.store, analyze_query("what did Sam paint at dawn"), limit=10, rarity_weights=True)
    assert len(cands) == 5 and cands.ranking is not None
    head = cands[:2]
    assert isinstance(head, KeywordCandidates) and head.ranking is cands.ranking
    assert list(head) == list(cands)[:2] and cands[0] is list(cands)[0]
