"""The Markdown section format that carries added nodes (pure functions)."""

from __future__ import annotations

import logging

import pytest

from llama_index_openclaw_memory._sections import parse_sections, remove_sections, render_section

HAND = "# 2026-01-16\n\nHand-written line.\n"


def _two() -> str:
    a = render_section("n1", "First node.\nSecond line.", ref_doc_id="doc-a", metadata={"topic": "x"})
    b = render_section("n2", "Other node.", ref_doc_id=None, metadata={})
    return HAND + "\n" + a + "\n" + b


def test_render_then_parse_round_trips_identity_text_and_lines() -> None:
    text = _two()
    sections = parse_sections(text)
    assert [(s.id, s.ref_doc_id, s.metadata, s.text) for s in sections] == [
        ("n1", "doc-a", {"topic": "x"}, "First node.\nSecond line."),
        ("n2", None, {}, "Other node."),
    ]
    lines = text.split("\n")
    first = sections[0]
    assert lines[first.start_line - 1 : first.end_line] == ["First node.", "Second line."]
    assert lines[first.open_line - 1].startswith("<!-- openclaw-memory:node ")
    assert lines[first.close_line - 1] == "<!-- /openclaw-memory:node -->"


def test_metadata_cannot_close_the_html_comment_early() -> None:
    out = render_section("n1", "t", ref_doc_id="a-->b", metadata={"note": "x --> y"})
    assert out.count("-->") == 2  # only the two markers' own ends
    assert parse_sections(out)[0].ref_doc_id == "a-->b"
    assert parse_sections(out)[0].metadata == {"note": "x --> y"}


@pytest.mark.parametrize(
    ("text", "metadata", "message"),
    [
        ("  \n", {}, "has no text"),
        ("a\n<!-- /openclaw-memory:node -->\nb", {}, "marker line"),
        ("ok", {"bad": object()}, "JSON-serializable"),
        ("ok", {"nan": float("nan")}, "JSON-serializable"),
    ],
)
def test_render_rejects_what_cannot_round_trip(text: str, metadata: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render_section("n1", text, ref_doc_id=None, metadata=metadata)


def test_malformed_or_unclosed_markers_count_as_hand_written(caplog: pytest.LogCaptureFixture) -> None:
    good = render_section("ok", "kept", ref_doc_id=None, metadata={})
    text = (
        "<!-- openclaw-memory:node {not json} -->\nx\n<!-- /openclaw-memory:node -->\n"
        "<!-- openclaw-memory:node {\"id\": \"open\"} -->\nnever closed\n" + good
    )
    with caplog.at_level(logging.WARNING):
        sections = parse_sections(text, where="memory/x.md")
    # the unclosed "open" section is superseded by the well-formed one that follows it
    assert [s.id for s in sections] == ["ok"]
    assert "memory/x.md" in caplog.text and "malformed" in caplog.text


def test_remove_keeps_every_other_byte_and_the_separator_layout() -> None:
    text = _two()
    without_first, n = remove_sections(text, lambda s: s.id == "n1")
    assert n == 1
    assert without_first == HAND + "\n" + render_section("n2", "Other node.", ref_doc_id=None, metadata={})
    only_hand, n = remove_sections(text, lambda s: True)
    assert (only_hand, n) == (HAND, 2)


def test_remove_of_a_section_at_the_top_takes_the_following_separator() -> None:
    a = render_section("a", "A", ref_doc_id=None, metadata={})
    b = render_section("b", "B", ref_doc_id=None, metadata={})
    out, n = remove_sections(a + "\n" + b, lambda s: s.id == "a")
    assert (out, n) == (b, 1)


def test_remove_with_no_match_returns_the_text_unchanged() -> None:
    text = _two()
    assert remove_sections(text, lambda s: False) == (text, 0)
    assert remove_sections(HAND, lambda s: True) == (HAND, 0)
