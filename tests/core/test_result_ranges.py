"""``query.merge_overlapping``: overlapping hits of a note come back as one, and the slot goes to another note,
within the lines the best chunks would have held; every returned range is whole lines of its file."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.retrieval.result_ranges import best_run, fit_ranges
from openclaw_memory.types import Candidate
from tests.helpers.kayak_notes import FILES, KAYAKS


def _index(ws: Path, tmp_path: Path, merge: bool) -> MemoryIndex:
    return MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / f"i-{merge}.sqlite")},
                       chunking={"tokens": 48, "overlap": 16}, query={"merge_overlapping": merge}, citations="on")


def test_overlapping_chunks_come_back_as_one_hit_and_the_slot_goes_to_the_other_note(write, tmp_path: Path) -> None:
    ws = write(FILES)
    before = {p: (ws / p).read_bytes() for p in FILES}
    with _index(ws, tmp_path, merge=False) as memory:
        memory.sync()
        chunks = memory.search("kayak", max_results=2, min_score=0).hits
    # as found: two overlapping chunks of the same note take both places
    assert [h.path for h in chunks] == ["memory/2023-05-02.md"] * 2
    assert chunks[0].start_line <= chunks[1].end_line and chunks[1].start_line <= chunks[0].end_line
    with _index(ws, tmp_path, merge=True) as memory:
        memory.sync()
        hits = memory.search("kayak", max_results=2, min_score=0).hits
        assert [h.path for h in hits] == ["memory/2023-05-02.md", "memory/2023-05-09.md"]
        first, second = hits
        # the union of the two chunks, once
        union = (min(h.start_line for h in chunks), max(h.end_line for h in chunks))
        assert (first.start_line, first.end_line) == union
        # no more lines than the two chunks held: the other note's hit is cut to its matching line and the reply
        assert sum(h.end_line - h.start_line + 1 for h in hits) <= sum(h.end_line - h.start_line + 1 for h in chunks)
        assert (second.start_line, second.end_line) == (3, 4)
        for h in hits:  # each range is whole lines of its file, as memory_get and the citation name them
            lines = FILES[h.path].split("\n")[h.start_line - 1:h.end_line]
            assert h.text == "\n".join(lines)
            got = memory.get(h.path, h.start_line, h.end_line - h.start_line + 1)
            assert (got.text, got.start_line, got.end_line) == (h.text, h.start_line, h.end_line)
            assert h.citation == f"{h.path}#L{h.start_line}-L{h.end_line}"
            assert h.snippet.startswith(h.text[:200])
    assert {p: (ws / p).read_bytes() for p in FILES} == before  # the notes are never written


def _cand(cid: str, path: str, start: int, lines: list[str], score: float, source: str = "memory") -> Candidate:
    return Candidate(id=cid, path=path, start_line=start, end_line=start + len(lines) - 1, text="\n".join(lines),
                     score=score, relevance=score, source=source)


def _words(word: str):
    return lambda lines: [1.0 if word in ln else 0.0 for ln in lines]


FILE = [f"line {i}" for i in range(1, 31)]


def test_a_fold_that_does_not_fit_the_budget_is_left_out() -> None:
    a1 = _cand("a1", "a.md", 1, FILE[0:10], 0.9)
    a2 = _cand("a2", "a.md", 9, FILE[8:18], 0.8)  # adds 8 lines
    b1 = _cand("b1", "b.md", 1, ["x", "y", "z"], 0.7)
    out = fit_ranges([a1, a2, b1], 2, _words("line"))
    assert [(c.id, c.start_line, c.end_line) for c in out] == [("a1", 1, 18), ("b1", 1, 2)]  # 20 lines: 10 + 10
    assert out[0].text == "\n".join(FILE[0:18]) and out[0].score == 0.9
    a3 = _cand("a3", "a.md", 9, FILE[8:30], 0.6)  # would add 20 lines to a1: more than the top 2 (a1, b1) held
    out = fit_ranges([a1, b1, a3], 2, _words("line"))
    assert [(c.id, c.start_line, c.end_line) for c in out] == [("a1", 1, 10), ("b1", 1, 3)]
    assert out[0] is a1 and out[1] is b1  # unchanged hits are the candidates themselves


def test_sessions_and_disagreeing_texts_are_never_folded_or_cut() -> None:
    s1 = _cand("s1", "t.jsonl", 1, ["user: hi"], 0.9, source="sessions")
    s1.end_line = 4  # a transcript chunk's text is extracted from its JSON lines
    s2 = _cand("s2", "t.jsonl", 3, ["assistant: hello"], 0.8, source="sessions")
    s2.end_line = 6
    out = fit_ranges([s1, s2], 2, _words("hi"))
    assert out == [s1, s2]
    # a line longer than a chunk is split between chunks: the shared line number holds different text
    p1 = _cand("p1", "a.md", 1, ["aaa", "bbb (first half"], 0.9)
    p2 = _cand("p2", "a.md", 2, ["second half)", "ccc"], 0.8)
    assert fit_ranges([p1, p2], 2, _words("a")) == [p1, p2]


def test_the_last_hit_is_cut_around_its_best_line_and_never_below_two_lines() -> None:
    assert best_run(["a", "b", "kayak", "c", "d"], 3, _words("kayak")) == 1
    assert best_run(["kayak", "b", "c"], 2, _words("kayak")) == 0
    assert best_run(["a", "b", "c", "kayak"], 2, _words("kayak")) == 2
    assert best_run(["a", "b", "c"], 2, _words("kayak")) == 0  # nothing matches: the head
    a1 = _cand("a1", "a.md", 1, FILE[0:10], 0.9)
    a2 = _cand("a2", "a.md", 10, FILE[9:19], 0.8)  # adds 9 lines: 1 left for b
    b1 = _cand("b1", "b.md", 1, ["x", "kayak", "z"], 0.7)
    assert [c.id for c in fit_ranges([a1, a2, b1], 2, _words("kayak"))] == ["a1"]
    out = fit_ranges([a1, b1, a2], 2, _words("kayak"))  # b ranks before the fold: it keeps its place
    assert [(c.id, c.start_line, c.end_line) for c in out] == [("a1", 1, 10), ("b1", 1, 3)]
    b2 = _cand("b2", "b.md", 1, ["x", "y", "z", "kayak", "w", "v"], 0.7)
    a4 = _cand("a4", "a.md", 8, FILE[7:14], 0.8)  # lines 8-14: adds 4, so 10 + 7 - 14 = 3 lines are left
    out = fit_ranges([a1, a4, b2], 2, _words("kayak"))
    assert [(c.id, c.start_line, c.end_line, c.text) for c in out] == [
        ("a1", 1, 14, "\n".join(FILE[0:14])), ("b2", 3, 5, "z\nkayak\nw")]


@pytest.mark.parametrize("k", [1, 3, 6])
def test_k_hits_of_distinct_notes_are_returned_as_found(k: int) -> None:
    cands = [_cand(f"n{i}", f"n{i}.md", 1, FILE[0:5], 1 - i / 10) for i in range(8)]
    assert fit_ranges(cands, k, _words("line")) == cands[:k]


def test_filtered_searches_return_the_chunks_as_found(write, tmp_path: Path) -> None:
    ws = write(KAYAKS)
    options = [{"where": lambda h: h.path == "memory/b.md"}, {"collapse": lambda h: h.path}]
    got: dict[bool, list[list[tuple[str, int, int, str]]]] = {}
    for merge in (False, True):
        with MemoryIndex(provider=None, workspace=ws, watch=False, store={"path": str(tmp_path / f"{merge}.sqlite")},
                         chunking={"tokens": 48, "overlap": 40}, query={"merge_overlapping": merge}) as memory:
            memory.sync()
            chunks = {c.id: (c.path, c.start_line, c.end_line) for c in memory.iter_chunks()}
            got[merge] = []
            for kw in options:
                hits = memory.search("kayak", max_results=2, min_score=0, **kw).hits
                assert all(chunks[h.chunk_id] == (h.path, h.start_line, h.end_line) for h in hits)
                got[merge].append([(h.path, h.start_line, h.end_line, h.text) for h in hits])
    assert got[True] == got[False]
    where_b, per_path = got[True]
    assert [h[:3] for h in where_b] == [("memory/b.md", 1, 15)]  # was [] : folds of a.md used the budget
    assert sorted(h[0] for h in per_path) == ["memory/a.md", "memory/b.md"]


def test_a_chunk_bridging_two_hits_of_a_note_joins_them_into_the_better_one() -> None:
    c0 = _cand("c0", "a.md", 1, FILE[0:10], 0.9)
    c2 = _cand("c2", "a.md", 15, FILE[14:24], 0.8)
    c1 = _cand("c1", "a.md", 8, FILE[7:17], 0.5)  # lines 8-17: overlaps both
    b1 = _cand("b1", "b.md", 1, ["x", "y", "z"], 0.4)
    out = fit_ranges([c0, c2, c1, b1], 3, _words("line"))
    # one range 1-24 under the better hit's id and scores (24 lines, each once), the slot c2 held goes to b
    assert [(c.id, c.start_line, c.end_line) for c in out] == [("c0", 1, 24), ("b1", 1, 3)]
    assert out[0].text == "\n".join(FILE[0:24]) and out[0].score == 0.9
    # the budget is charged once: 30 lines (3 chunks of 10), 24 + 3 used
    assert sum(c.end_line - c.start_line + 1 for c in out) == 27


@pytest.mark.parametrize("placed", [[(16, 1), (37, 1), (20, 2), (11, 3)], [(14, 2), (8, 3), (6, 3), (5, 3)]])
def test_no_two_hits_of_a_note_overlap(write, tmp_path: Path, placed: list[tuple[int, int]]) -> None:
    lines = ["# Notes", ""] + [f"Ann: filler talk number {i} about nothing" for i in range(40)]
    for at, times in placed:  # placements where a fold used to bridge two hits (the review's real-search repro)
        lines[at] += " kayak" * times
    text = "\n".join(lines) + "\n"
    with MemoryIndex(provider=None, workspace=write({"memory/a.md": text}), watch=False,
                     store={"path": str(tmp_path / "i.sqlite")}, chunking={"tokens": 64, "overlap": 32}) as memory:
        memory.sync()
        for k in (2, 3, 4):
            hits = memory.search("kayak", max_results=k, min_score=0).hits
            assert hits
            for i, a in enumerate(hits):
                assert a.text == "\n".join(text.split("\n")[a.start_line - 1:a.end_line])
                for b in hits[i + 1:]:
                    assert a.end_line < b.start_line or b.end_line < a.start_line, (k, a, b)


def test_a_transcript_hit_that_does_not_fit_leaves_room_for_the_next() -> None:
    a1 = _cand("a1", "a.md", 1, FILE[0:10], 0.9)
    a2 = _cand("a2", "a.md", 5, FILE[4:14], 0.85)  # adds 4 lines: 20 - 14 = 6 left
    s1 = _cand("s1", "t.jsonl", 1, ["user: kayak?"], 0.8, source="sessions")
    s1.end_line = 12  # a transcript chunk's range counts its JSON lines: 12, more than is left, and never cut
    b1 = _cand("b1", "b.md", 1, ["x", "kayak", "z"], 0.7)
    out = fit_ranges([a1, a2, s1, b1], 2, _words("kayak"))
    assert [(c.id, c.start_line, c.end_line) for c in out] == [("a1", 1, 14), ("b1", 1, 3)]
