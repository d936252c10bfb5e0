"""Chunking conformance (spec §2, internal.test.ts) and the overlap-overshoot fix."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_memory.text.chunker import (
    chunk_id,
    chunk_markdown,
    indexed_text,
    remap_chunk_lines,
    split_for_input_limit,
    split_text_for_input_limit,
    text_weight,
)
from openclaw_memory.files.records import render_record
from openclaw_memory.types import Chunk


def ranges(chunks: list[Chunk]) -> list[tuple[int, int]]:
    return [(c.start_line, c.end_line) for c in chunks]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---- text_weight -------------------------------------------------------------------------


def test_text_weight_counts_dense_scripts_four_times() -> None:
    assert text_weight("abc") == 3
    assert text_weight("中文") == 8
    assert text_weight("かなカナ한글") == 24
    assert text_weight("\U00020000") == 4  # CJK ext-B: one code point, weighted
    assert text_weight("😀") == 1  # emoji: one code point, not weighted
    assert text_weight("ภาษาไทย") == 28  # Thai: extension over the original


# ---- line numbers and basic shapes -------------------------------------------------------


def test_a_final_newline_adds_no_line() -> None:
    """Issue 12: a 2-line file ending in a newline was cited as #L1-L3, past its end."""
    chunks = chunk_markdown("a\nb\n")
    assert len(chunks) == 1
    c = chunks[0]
    assert (c.start_line, c.end_line, c.text) == (1, 2, "a\nb")
    assert c.hash == sha("a\nb")
    assert [(c.start_line, c.end_line) for c in chunk_markdown("a\nb\n\n")] == [(1, 3)]  # a blank line is one


def test_carriage_returns_are_kept() -> None:
    [chunk] = chunk_markdown("a\r\nb")
    assert chunk.text == "a\r\nb"
    assert (chunk.start_line, chunk.end_line) == (1, 2)


def test_empty_and_whitespace_only_content_give_no_chunks() -> None:
    assert chunk_markdown("") == []
    assert chunk_markdown("   \n\t\n  \n") == []


def test_whitespace_only_chunks_are_dropped_but_line_numbers_kept() -> None:
    blank = "\n".join([" " * 20] * 10)
    text = "first\n" + blank + "\n" + "\n".join(" " * 20 for _ in range(100)) + "\nlast"
    chunks = chunk_markdown(text, tokens=40, overlap=0)
    assert all(c.text.strip() for c in chunks)
    assert chunks[0].start_line == 1
    assert chunks[-1].end_line == text.count("\n") + 1
    assert chunks[-1].text.endswith("last")


def test_overlap_in_whole_lines() -> None:
    text = "\n".join(f"{i:03d}" + "x" * 95 for i in range(1, 41))  # 99-char lines
    assert ranges(chunk_markdown(text)) == [(1, 16), (13, 28), (25, 40)]


def test_no_overlap_gives_disjoint_ranges() -> None:
    text = "\n".join("y" * 99 for _ in range(40))
    assert ranges(chunk_markdown(text, overlap=0)) == [(1, 16), (17, 32), (33, 40)]


def test_tokens_below_one_are_raised_to_one() -> None:
    text = "\n".join(["中" * 20, "z" * 10])
    assert chunk_markdown(text, tokens=0, overlap=0) == chunk_markdown(text, tokens=1, overlap=0)


# ---- long lines --------------------------------------------------------------------------


def test_long_lines_without_overlap_fit_the_budget() -> None:
    chunks = chunk_markdown("a" * (1600 * 3 + 25), tokens=400, overlap=0)
    assert len(chunks) == 4
    assert all(len(c.text) <= 1600 for c in chunks)
    assert all(ranges(chunks)[i] == (1, 1) for i in range(4))


def test_long_latin_line_is_not_over_split() -> None:
    assert len(chunk_markdown("a" * 2000, tokens=200, overlap=0)) <= 5


def test_overlap_with_long_line_does_not_overshoot_the_budget() -> None:
    chunks = chunk_markdown("x" * 4000)  # defaults: 1600-char budget, 320-char overlap
    lengths = [len(c.text) for c in chunks]
    assert 3201 not in lengths  # what the original produced
    assert max(lengths) <= 1600
    assert "".join(c.text for c in chunks) == "x" * 4000
    assert ranges(chunks) == [(1, 1)] * 3


def test_overlap_after_long_line_still_carries_short_lines() -> None:
    text = "\n".join(["s" * 50] * 3 + ["L" * 3000] + ["t" * 50] * 40)
    chunks = chunk_markdown(text)
    assert all(text_weight(c.text) <= 1600 for c in chunks)
    # the 1400-char tail of line 4 is too big to carry; lines 5-7 still overlap
    assert ranges(chunks) == [(1, 3), (4, 4), (4, 7), (5, 35), (29, 44)]


# ---- CJK ---------------------------------------------------------------------------------


def test_cjk_makes_more_chunks_than_equal_length_ascii() -> None:
    ascii_text = "\n".join(["a" * 20] * 20)
    cjk_text = "\n".join(["你" * 20] * 20)
    assert len(chunk_markdown(cjk_text, tokens=50, overlap=0)) > len(chunk_markdown(ascii_text, tokens=50, overlap=0))


def test_ten_cjk_lines_overlap_one_line() -> None:
    text = "\n".join(["中" * 100] * 10)
    assert ranges(chunk_markdown(text)) == [(1, 3), (3, 5), (5, 7), (7, 9), (9, 10)]


def test_long_cjk_line_is_fine_split() -> None:
    chunks = chunk_markdown("中" * 2000, tokens=200, overlap=0)
    assert len(chunks) >= 8
    assert [len(c.text) for c in chunks] == [200] * 10


def test_long_cjk_line_with_defaults_stays_in_budget() -> None:
    chunks = chunk_markdown("中" * 2000)
    assert all(text_weight(c.text) <= 1600 for c in chunks)
    assert "".join(c.text for c in chunks) == "中" * 2000


def test_cjk_budget_respected() -> None:
    text = "\n".join(["这是一个测试句子用来验证分块逻辑是否正确处理中文文本内容"] * 50)
    chunks = chunk_markdown(text, tokens=100, overlap=0)
    assert len(chunks) > 1
    assert all(sum("\u4e00" <= ch <= "\u9fff" for ch in c.text) <= 100 for c in chunks)


def test_astral_characters_are_never_cut() -> None:
    for text, tokens in (("😀" * 500, 99), ("\U00020000" * 120, 31), ("a😀中" * 300, 99)):
        chunks = chunk_markdown(text, tokens=tokens, overlap=0)
        assert len(chunks) > 1
        assert "".join(c.text for c in chunks) == text
        for c in chunks:
            c.text.encode("utf-8")  # raises on a lone surrogate
            assert "\ufffd" not in c.text


# ---- chunk ids and post-processing -------------------------------------------------------


def test_chunk_id_formula() -> None:
    assert chunk_id("memory", "memory/a.md", 1, 3, "h", "fts-only") == sha("memory:memory/a.md:1:3:h:fts-only")
    assert chunk_id("memory", "memory/a.md", 1, 3, "h", "m1") != chunk_id("memory", "memory/a.md", 1, 3, "h", "m2")


def test_split_for_input_limit_bounds_bytes_and_keeps_lines() -> None:
    text = "ab😀" * 100 + "中" * 50
    parent = Chunk(start_line=3, end_line=9, text=text, hash=sha(text))
    small = Chunk(start_line=1, end_line=2, text="ok", hash=sha("ok"))
    out = split_for_input_limit([small, parent], max_bytes=63)
    assert out[0] is small
    pieces = out[1:]
    assert len(pieces) > 1
    assert "".join(p.text for p in pieces) == text
    for p in pieces:
        assert len(p.text.encode("utf-8")) <= 63
        assert (p.start_line, p.end_line) == (3, 9)
        assert p.hash == sha(p.text)


def test_split_for_input_limit_cuts_at_line_breaks_and_narrows_line_ranges() -> None:
    text = "\n".join(f"line {i} " + "word " * 8 for i in range(1, 11))  # 10 lines, ~48 bytes each
    parent = Chunk(start_line=5, end_line=14, text=text, hash=sha(text))
    pieces = split_for_input_limit([parent], max_bytes=120)
    assert "".join(p.text for p in pieces) == text
    assert all(p.text.startswith("line ") for p in pieces)  # never cut mid-line here
    assert pieces[0].start_line == 5 and pieces[-1].end_line == 14
    for a, b in zip(pieces, pieces[1:]):
        assert b.start_line == a.end_line + 1
    for p in pieces:
        first = int(p.text.split()[1])
        assert p.start_line == 4 + first


def test_split_for_input_limit_with_limit_below_one_character() -> None:
    out = split_for_input_limit([Chunk(1, 1, "😀😀", sha("😀😀"))], max_bytes=2)
    assert [c.text for c in out] == ["😀", "😀"]


def test_remap_chunk_lines() -> None:
    content = "User: Hello\nAssistant: Hi\nUser: Question\nAssistant: Answer\nUser: Thanks"
    chunks = chunk_markdown(content, tokens=400, overlap=0)
    assert ranges(chunks) == [(1, 5)]
    remapped = remap_chunk_lines(chunks, [4, 6, 7, 10, 13])
    assert ranges(remapped) == [(4, 13)]
    assert remapped[0].text == chunks[0].text
    assert ranges(remap_chunk_lines(chunks, [])) == [(1, 5)]
    assert ranges(remap_chunk_lines(chunk_markdown(content + "\n"), [4, 6, 7, 10, 13])) == [(4, 13)]


# ---- properties --------------------------------------------------------------------------

_texts = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=60),
        st.text(alphabet="中かภ😀 \t\r", max_size=300),
        st.just("w" * 900),
    ),
    max_size=30,
).map("\n".join)


@settings(max_examples=200, deadline=None)
@given(text=_texts, tokens=st.integers(1, 120), overlap=st.integers(0, 120))
def test_chunks_cover_every_non_blank_line(text: str, tokens: int, overlap: int) -> None:
    lines = text.split("\n")
    chunks = chunk_markdown(text, tokens=tokens, overlap=overlap)
    max_chars = max(32, tokens * 4)
    covered: set[int] = set()
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert c.text.strip()
        assert c.hash == sha(c.text)
        assert text_weight(c.text) <= max_chars
        covered.update(range(c.start_line, c.end_line + 1))
    for number, line in enumerate(lines, start=1):
        if line.strip():
            assert number in covered


def test_records_get_chunks_of_their_own() -> None:
    from openclaw_memory.text.chunker import RECORD_CLOSE_PREFIX, RECORD_OPEN_PREFIX

    text = "\n".join([
        "# Notes", "hand-written intro",
        f'{RECORD_OPEN_PREFIX}node {{"id": "a"}} -->', "first record", f"{RECORD_CLOSE_PREFIX}node -->",
        f'{RECORD_OPEN_PREFIX}node {{"id": "b"}} -->', "second record", f"{RECORD_CLOSE_PREFIX}node -->",
        "hand-written outro",
    ])
    chunks = chunk_markdown(text, tokens=400, overlap=80)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 2), (3, 5), (6, 8), (9, 9)]
    assert "first record" in chunks[1].text and "second record" not in chunks[1].text


def test_split_text_for_input_limit_cuts_a_long_text_into_pieces_that_fit() -> None:
    text = "Zürich 😀 " * 400 + "\n\n" + "last line with quokka"
    pieces = split_text_for_input_limit(text, 500)
    assert len(pieces) > 1 and all(0 < len(p.encode("utf-8")) <= 500 for p in pieces)
    assert "".join(pieces) == text  # nothing lost, no character cut (blank pieces only are left out)
    assert all(p.endswith((" ", "\n")) for p in pieces[:-1])  # at a space or line break
    assert split_text_for_input_limit("short", 500) == ["short"]


def test_a_record_whose_body_is_not_indexed_stays_one_chunk_with_its_long_index_text() -> None:
    md = render_record("item", {"key": "k", "index_body": False, "index_text": "word " * 2000}, "```json\n{}\n```")
    (chunk,) = split_for_input_limit(chunk_markdown(md), 8000)  # one search hit: the record's lines
    assert (chunk.start_line, chunk.end_line) == (1, md.rstrip("\n").count("\n") + 1)
    pieces = split_text_for_input_limit(indexed_text(chunk.text), 8000)  # what the sync embeds for it
    assert len(pieces) == 2 and all(len(p.encode("utf-8")) <= 8000 for p in pieces)


def test_an_opening_marker_heavier_than_a_chunk_keeps_its_records_lines() -> None:
    # a LlamaIndex node whose embedded metadata (its index text) is longer than a chunk: no chunk of the marker alone
    md = "# Nodes\n\n" + render_record("node", {"id": "n", "index_text": "summary: " + "word " * 600},
                                       "The harbour survey found two cracked bollards.")
    chunks = chunk_markdown(md)
    last = md.rstrip("\n").count("\n") + 1
    record = [c for c in chunks if c.end_line >= 3]
    assert [(c.start_line, c.end_line) for c in record] == [(3, last)]
    assert "cracked bollards" in record[0].text and "word word" in indexed_text(record[0].text)
