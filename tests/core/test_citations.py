"""Citations: the one ``path#L<start>-L<end>`` format, when snippets carry one, the ``Source:`` footer,
and the old ``openclaw_memory.retrieval.ranking`` names that still work."""

from __future__ import annotations

import pytest

from openclaw_memory.retrieval import ranking as hybrid
from openclaw_memory.text.citations import (
    chat_type,
    citation_footer,
    citations_enabled,
    decorate_citation,
    format_citation,
    strip_citation_footer,
)
from openclaw_memory.agent.tools import format_search_text
from openclaw_memory.types import SearchHit


def test_citation_format() -> None:
    assert format_citation("memory/a.md", 3, 3) == "memory/a.md#L3"
    assert format_citation("memory/2026-04-01.md", 1, 16) == "memory/2026-04-01.md#L1-L16"


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        (None, "direct"),
        ("", "direct"),
        ("agent:main:main", "direct"),
        ("agent:main:telegram:direct:42", "direct"),
        ("agent:main:telegram:group:-100123", "group"),
        ("agent:main:discord:channel:987", "channel"),
        ("agent:group:main", "direct"),  # the agent id is not the chat type
    ],
)
def test_chat_type(key: str | None, kind: str) -> None:
    assert chat_type(key) == kind


def test_citation_modes() -> None:
    group = "agent:main:slack:group:1"
    assert citations_enabled("on", group) and not citations_enabled("off", None)
    assert citations_enabled("auto", None) and citations_enabled("auto", "agent:main:main")
    assert not citations_enabled("auto", group)
    assert not citations_enabled("auto", "agent:main:discord:channel:2")


def test_decorate_citation() -> None:
    hit = SearchHit(path="memory/a.md", start_line=1, end_line=2, score=0.5, snippet="  some text \n")
    out = decorate_citation(hit)
    assert out.citation == "memory/a.md#L1-L2"
    assert out.snippet == "some text\n\nSource: memory/a.md#L1-L2"
    assert hit.citation is None  # original untouched


def test_footer_round_trip() -> None:
    hit = decorate_citation(SearchHit(path="MEMORY.md", start_line=4, end_line=4, score=0.9, snippet="the fact"))
    assert hit.snippet == "the fact" + citation_footer("MEMORY.md#L4")
    assert strip_citation_footer(hit.snippet, hit.citation) == "the fact"
    assert strip_citation_footer("no footer", "MEMORY.md#L4") == "no footer"
    assert strip_citation_footer("text\n\nSource: x#L1", None) == "text\n\nSource: x#L1"


def test_tool_text_cites_one_line_like_the_search() -> None:
    """The memory_search tool text names an uncited hit the way a cited one is named: one line is ``#L<n>``."""
    payload = {"mode": "hybrid", "results": [
        {"path": "memory/a.md", "start_line": 3, "end_line": 3, "score": 0.8, "snippet": "one line"},
        {"path": "memory/b.md", "start_line": 1, "end_line": 16, "score": 0.7, "snippet": "many lines"},
    ]}
    text = format_search_text(payload)
    assert "[memory/a.md#L3] (score 0.80)" in text and "#L3-L3" not in text
    assert "[memory/b.md#L1-L16] (score 0.70)" in text


@pytest.mark.parametrize("name", ["ChatType", "chat_type", "citations_enabled", "decorate_citation", "format_citation"])
def test_old_hybrid_names_warn_and_still_work(name: str) -> None:
    import openclaw_memory.text.citations as citations

    with pytest.warns(DeprecationWarning, match=f"openclaw_memory.text.citations.{name}"):
        assert getattr(hybrid, name) is getattr(citations, name)
    with pytest.raises(AttributeError):
        hybrid.no_such_name  # noqa: B018
