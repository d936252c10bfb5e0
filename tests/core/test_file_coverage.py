"""``query.hybrid.file_coverage_weight``: a near-tie of the vector side goes to the chunk whose file's
candidates hold the query's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError
from openclaw_memory.hybrid import apply_file_coverage
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.query import analyze_query
from openclaw_memory.types import Candidate

# The fake embedder reads "fiddle" as "violin" and "tuition" as "lessons"; the keyword side does not.
DOCS = {
    # two chunks (one per line at this chunk size, 48 characters): one says the query's words, one only resembles them
    "memory/notes-a.md": "violin lessons notes\n\nfiddle tuition diary entry one two three four\n",
    # resembles the query a little more than the second chunk of notes-a.md, and its file never says its words
    "memory/notes-b.md": "fiddle tuition diary entry one two three\n",
}


def _cand(cid: str, path: str, text: str, score: float, start: int = 1) -> Candidate:
    return Candidate(id=cid, path=path, start_line=start, end_line=start, text=text, score=score)


def _coverage(query: str):  # noqa: ANN202 - a test helper
    analysis = analyze_query(query, stemming=True)
    return lambda texts: [cov for cov, _ in analysis.coverage(texts)]


def test_a_file_earns_the_coverage_of_all_its_candidates_together() -> None:
    a1 = _cand("a1", "memory/a.md", "the violin is tuned", 0.5)
    a2 = _cand("a2", "memory/a.md", "lessons on tuesday", 0.4, start=5)
    b1 = _cand("b1", "memory/b.md", "violin strings", 0.45)
    c1 = _cand("c1", "memory/c.md", "nothing relevant here", 0.3)
    apply_file_coverage([a1, a2, b1, c1], _coverage("violin lessons"), weight=0.04)
    # a.md holds both words (in two chunks): each of its chunks earns the whole weight
    assert a1.file_bonus == pytest.approx(0.04) and a2.file_bonus == pytest.approx(0.04)
    assert a2.score == pytest.approx(0.44)
    # b.md holds one word of two: a quarter (coverage squared), c.md none
    assert b1.file_bonus == pytest.approx(0.01) and b1.score == pytest.approx(0.46)
    assert c1.file_bonus == 0.0 and c1.score == pytest.approx(0.3)


def test_weight_zero_changes_nothing() -> None:
    a1 = _cand("a1", "memory/a.md", "violin lessons", 0.5)
    apply_file_coverage([a1], _coverage("violin lessons"), weight=0.0)
    assert a1.score == 0.5 and a1.file_bonus == 0.0


def test_same_path_of_another_source_is_another_file() -> None:
    a1 = _cand("a1", "x.md", "violin lessons", 0.5)
    s1 = Candidate(id="s1", path="x.md", start_line=1, end_line=1, text="nothing", score=0.5, source="sessions")
    apply_file_coverage([a1, s1], _coverage("violin lessons"), weight=0.04)
    assert a1.file_bonus == pytest.approx(0.04) and s1.file_bonus == 0.0


@pytest.mark.parametrize("weight", [0.0, 0.04])
def test_near_tie_goes_to_the_chunk_of_the_file_that_says_the_words(write, tmp_path: Path, weight: float) -> None:
    provider = FakeEmbeddingProvider(dims=256, model=f"fake-file-cov-{weight}",
                                     synonyms={"fiddle": "violin", "tuition": "lessons"})
    ws = write(DOCS)
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / "f.sqlite")},
                     chunking={"tokens": 12, "overlap": 0},
                     # the note-repeat penalty off: the second chunk of notes-a.md would pay it (this rule alone)
                     query={"hybrid": {"file_coverage_weight": weight, "file_repeat_penalty": 0.0}}) as m:
        m.sync()
        chunks = {(c.path, c.start_line): c.text for c in m.iter_chunks()}
        assert len(chunks) == 3  # the setup: notes-a.md is two chunks
        hits = m.search("violin lessons", max_results=3, min_score=0).hits
    order = [(h.path, h.start_line) for h in hits]
    assert order[0] == ("memory/notes-a.md", 1)  # the chunk that says the words
    diary_a, diary_b = ("memory/notes-a.md", 3), ("memory/notes-b.md", 1)
    by_key = {(h.path, h.start_line): h for h in hits}
    assert by_key[diary_b].vector_score > by_key[diary_a].vector_score  # the vector side prefers notes-b.md
    if weight == 0:  # without the rule, the vector side's order stands
        assert order.index(diary_b) < order.index(diary_a)
    else:  # with it, the diary of the file that says "violin lessons" wins the near-tie
        assert order.index(diary_a) < order.index(diary_b)


def test_config_key_default_camel_case_and_bounds() -> None:
    assert MemoryConfig().query.hybrid.file_coverage_weight == pytest.approx(0.04)
    cfg = MemoryConfig.load(None, query={"hybrid": {"fileCoverageWeight": 0.1}})
    assert cfg.query.hybrid.file_coverage_weight == pytest.approx(0.1)
    with pytest.raises(ConfigError, match="file_coverage_weight"):
        MemoryConfig.load(None, query={"hybrid": {"file_coverage_weight": -1}})


def test_no_share_when_either_side_has_no_weight(write, tmp_path: Path) -> None:
    """With vector_weight 0 a hybrid search scores as keyword-only search does (LlamaIndex's alpha 0)."""
    provider = FakeEmbeddingProvider(dims=256, model="fake-file-cov-weights",
                                     synonyms={"fiddle": "violin", "tuition": "lessons"})
    ws = write(DOCS)
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / "w.sqlite")},
                     chunking={"tokens": 12, "overlap": 0},
                     query={"hybrid": {"vector_weight": 0.0, "text_weight": 1.0}}) as m:
        m.sync()
        result = m.search("violin lessons", max_results=3, min_score=0)
    assert result.mode == "hybrid"
    top = result.hits[0]
    assert (top.path, top.start_line) == ("memory/notes-a.md", 1) and top.text_score > 0
    assert [h.score for h in result.hits] == pytest.approx([h.text_score for h in result.hits])


# "notes" is in every file, "violin" in one: a file holding the rare word of the query covers more of it
RARITY_DOCS = {
    "memory/rare.md": "violin practice\n\nfiddle diary entry one two three four\n",
    "memory/common.md": "notes practice\n\nfiddle diary entry one two three five\n",
    **{f"memory/filler-{i}.md": f"notes of day {i}\n" for i in range(6)},
}


@pytest.mark.parametrize("rarity", [True, False])
def test_file_coverage_weighs_the_query_words_by_rarity_as_the_keyword_side_does(write, tmp_path: Path,
                                                                                  rarity: bool) -> None:
    provider = FakeEmbeddingProvider(dims=256, model=f"fake-file-cov-rarity-{rarity}")
    ws = write(RARITY_DOCS)
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / "r.sqlite")},
                     chunking={"tokens": 12, "overlap": 0},
                     # the note-repeat penalty off: a file's second chunk would pay it (the bonus is read off the score)
                     query={"keyword": {"rarity_weights": rarity}, "hybrid": {"file_repeat_penalty": 0.0}}) as m:
        m.sync()
        hits = m.search("violin notes", max_results=20, min_score=0).hits
    by_file = {h.path: h for h in hits if "diary" in h.text}  # chunks without a query word: only the file's share
    assert set(by_file) == {"memory/rare.md", "memory/common.md"} and all(h.text_score == 0 for h in by_file.values())
    bonus = {p: h.score - 0.7 * h.vector_score for p, h in by_file.items()}
    if rarity:  # the file holding the rare word earns more of the weight (0.04) than the one holding the common word
        assert bonus["memory/rare.md"] > 2 * bonus["memory/common.md"] > 0
    else:  # unweighted, each file holds one word of two: a quarter of the weight each
        assert bonus["memory/rare.md"] == pytest.approx(0.01) and bonus["memory/common.md"] == pytest.approx(0.01)
