"""``query.hybrid.drop_speaker_names``: in notes of a dialogue, the vector side ranks by the question without the
speakers' names, which every chunk says."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.config import MemoryConfig
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.text.speakers import speaker_labels, without_speakers

DIALOGUE = [
    "Caroline: Hey Mel, how are you?\nMelanie: Fine, thanks!\nCaroline: Good to hear.",
    "Melanie: I went camping.\nCaroline: Where?\nMelanie: By the lake.",
]


def test_speaker_labels_of_a_dialogue() -> None:
    assert speaker_labels(DIALOGUE) == {"Caroline", "Melanie"}
    assert speaker_labels(["- Dr Smith: hello\n- Dr Smith: again\n- Dr Smith: third\nAnn Lee: a\nAnn Lee: b\nAnn Lee: c"]) \
        == {"Dr Smith", "Ann Lee"}


def test_no_dialogue_no_labels() -> None:
    assert speaker_labels(["Note: one\nNote: two\nNote: three\nplain text"]) == set()  # one recurring field
    assert speaker_labels(["Caroline: hi\nMelanie: hello"]) == set()  # too few lines to tell
    assert speaker_labels(["see https://example.com: a link\ntodo: lower-case labels are no speakers\n" * 3]) == set()


def test_without_speakers() -> None:
    labels = {"Caroline", "Melanie"}
    assert without_speakers("What has Melanie painted?", labels) == "What has painted?"
    assert without_speakers("What are Melanie's pets' names?", labels) == "What are pets' names?"
    assert without_speakers("Did Caroline and Melanie both go?", labels) is None  # two speakers: kept
    assert without_speakers("What did Mel paint?", labels) is None  # names no speaker: the question as it is
    assert without_speakers("Melaniesque art?", labels) is None  # a whole word only
    assert without_speakers("Melanie?", labels) is None  # nothing left to embed


def test_config_default_and_camel_case() -> None:
    assert MemoryConfig().query.hybrid.drop_speaker_names is True
    assert MemoryConfig.load(None, query={"hybrid": {"dropSpeakerNames": False}}).query.hybrid.drop_speaker_names is False


# The fake embedder reads "painted" as "watercolour"; the keyword side does not, so it finds only the name.
DOCS = {
    "memory/2023-05-01.md": (
        "Caroline: Melanie, how is Melanie doing?\nMelanie: Melanie is fine, Caroline.\nCaroline: Good, Melanie.\n\n"
        "Melanie: I made a watercolour of the lake.\nCaroline: Lovely colours there.\nMelanie: Thanks a lot.\n"
    ),
}


@pytest.mark.parametrize("drop", [False, True])
def test_the_chunk_about_the_question_beats_the_chunk_that_says_the_name(write, tmp_path: Path, drop: bool) -> None:
    provider = FakeEmbeddingProvider(dims=256, model=f"fake-speakers-{drop}", synonyms={"painted": "watercolour"})
    ws = write(DOCS)
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / "s.sqlite")},
                     chunking={"tokens": 30, "overlap": 0},
                     query={"hybrid": {"drop_speaker_names": drop}}) as m:
        m.sync()
        assert [c.start_line for c in m.iter_chunks()] == [1, 5]  # the setup: one chunk per paragraph
        hits = m.search("What has Melanie painted?", max_results=2, min_score=0).hits
    by_line = {h.start_line: h for h in hits}
    assert by_line[1].text_score > 0 and by_line[5].text_score > 0  # the keyword side finds both by the name
    if not drop:  # the whole question's embedding prefers the chunk that says "Melanie" four times
        assert by_line[1].vector_score > by_line[5].vector_score
        assert hits[0].start_line == 1
    else:
        assert by_line[5].vector_score > by_line[1].vector_score
        assert hits[0].start_line == 5


def test_notes_without_a_dialogue_are_searched_as_before(write, tmp_path: Path) -> None:
    docs = {"memory/notes.md": "Melanie painted the fence.\n\nMelanie, Melanie and Melanie met.\n"}
    results = {}
    for drop in (False, True):
        provider = FakeEmbeddingProvider(dims=256, model="fake-speakers-none")
        ws = write(docs)
        with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / f"{drop}.sqlite")},
                         chunking={"tokens": 12, "overlap": 0},
                         query={"hybrid": {"drop_speaker_names": drop}}) as m:
            m.sync()
            results[drop] = [(h.start_line, h.score) for h in m.search("What has Melanie painted?", min_score=0).hits]
    assert results[True] == results[False]


def test_min_score_still_judges_by_the_whole_question(write, tmp_path: Path) -> None:
    """Without the name every cosine is lower; a hit that passed ``min_score`` with the whole question still does."""
    ws = write(DOCS)
    found = {}
    for drop in (False, True):
        provider = FakeEmbeddingProvider(dims=256, model="fake-speakers-floor", synonyms={"painted": "watercolour"})
        with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / f"{drop}.sqlite")},
                         chunking={"tokens": 30, "overlap": 0},
                         query={"hybrid": {"drop_speaker_names": drop}}) as m:
            m.sync()
            found[drop] = m.search("What has Melanie painted?", max_results=2, min_score=0).hits
            if drop:
                floor = min(h.score for h in found[False])  # both hits pass it with the whole question
                kept = m.search("What has Melanie painted?", max_results=2, min_score=floor).hits
    assert min(h.score for h in found[True]) < floor  # the setup: without the name, one hit scores under it
    assert {h.start_line for h in kept} == {1, 5}
