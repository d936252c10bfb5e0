"""The framework-neutral tools: payload shape, citations, never-raising errors, the recall prompt."""

from __future__ import annotations

import asyncio

import pytest

from openclaw_memory.errors import ProviderError
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.tools import (
    MemoryGetArgs,
    MemorySearchArgs,
    amemory_get,
    amemory_search,
    format_search_text,
    memory_get,
    memory_recall_prompt,
    memory_search,
)

NOTES = {
    "MEMORY.md": "# Memory\n\n- Priya runs the deployment pipeline.\n",
    "memory/2026-11-20.md": "# 2026-11-20\n\n- Root cause was commit a828e60 racing the watcher.\n- Second line.\n",
}


def test_search_payload_has_locations_scores_and_metadata(write, make_index, fake_provider):
    write(NOTES)
    payload = memory_search(make_index(fake_provider, citations="on"), "a828e60")
    top = payload["results"][0]
    assert top["path"] == "memory/2026-11-20.md" and (top["start_line"], top["end_line"]) == (1, 5)
    assert top["citation"] == "memory/2026-11-20.md#L1-L5"
    assert top["snippet"].endswith("Source: memory/2026-11-20.md#L1-L5")
    assert {"score", "vector_score", "text_score", "source"} <= top.keys()
    assert payload["provider"] == "fake" and payload["mode"] == "hybrid" and payload["citations"] == "on"
    text = format_search_text(payload)
    assert text.startswith("[memory/2026-11-20.md#L1-L5]") and text.count("Source:") == 0


def test_citations_off_and_auto_for_group_chats(write, make_index, fake_provider):
    write(NOTES)
    assert "citation" not in memory_search(make_index(fake_provider, citations="off"), "a828e60")["results"][0]
    memory = make_index(fake_provider)  # auto
    assert "citation" in memory_search(memory, "a828e60", session_key="agent:main:direct:bob")["results"][0]
    assert "citation" not in memory_search(memory, "a828e60", session_key="agent:main:group:42")["results"][0]


def test_empty_results_say_why(write, make_index, fake_provider):
    make_index(fake_provider)  # nothing written yet
    payload = memory_search(make_index(fake_provider), "anything at all")
    assert payload["results"] == [] and payload["empty_reason"] == "empty_index"
    assert "empty" in payload["message"]
    write(NOTES)
    payload = memory_search(make_index(fake_provider, store={"path": str(write({}).parent / "b.sqlite")}),
                            "zebra xylophone quantum")
    assert payload["results"] == [] and payload["empty_reason"] == "no_match"
    assert memory_search(make_index(fake_provider), "   ")["error"].startswith("query required")


def test_query_time_provider_failure_falls_back_to_keywords(write, make_index):
    write(NOTES)
    provider = FakeEmbeddingProvider()
    memory = make_index(provider)
    memory.sync()
    provider.fail_with = ProviderError("HTTP 429 insufficient_quota")
    payload = memory_search(memory, "a828e60")
    assert payload["mode"] == "keyword" and "insufficient_quota" in payload["keyword_only_reason"]
    assert payload["results"][0]["path"] == "memory/2026-11-20.md"


def test_max_injected_chars_clamps_the_payload(write, make_index, fake_provider):
    write({f"memory/n{i}.md": f"# Note {i}\n\nshared topic words here {'x' * 200}\n" for i in range(5)})
    payload = memory_search(make_index(fake_provider, query={"max_injected_chars": 300}), "shared topic words",
                            min_score=0)
    assert sum(len(r["snippet"]) for r in payload["results"]) <= 300
    assert len(payload["results"]) >= 1


def test_get_reads_lines_and_reports_errors_without_raising(write, make_index, fake_provider):
    write(NOTES)
    memory = make_index(fake_provider)
    got = memory_get(memory, "memory/2026-11-20.md", from_line=3, lines=1)
    assert got == {"path": "memory/2026-11-20.md", "text": "- Root cause was commit a828e60 racing the watcher.",
                   "start_line": 3, "end_line": 3}
    for bad in ("../secrets.md", "/etc/passwd", "memory/notes.txt", "memory"):
        err = memory_get(memory, bad)
        assert err["disabled"] is True and err["text"] == "" and err["error"]
    assert memory_get(memory, "memory/2099-01-01.md")["text"] == ""


def test_async_twins(write, make_index, fake_provider):
    write(NOTES)
    memory = make_index(fake_provider)

    async def go():
        return await asyncio.gather(amemory_search(memory, "deployment pipeline"), amemory_get(memory, "MEMORY.md"))

    search, got = asyncio.run(go())
    assert search["results"][0]["path"] == "MEMORY.md" and got["text"].startswith("# Memory")


def test_args_accept_camel_case():
    assert MemorySearchArgs.model_validate({"query": "q", "maxResults": 3, "minScore": 0.1}).max_results == 3
    assert MemoryGetArgs.model_validate({"path": "MEMORY.md", "from": 2, "lines": 5}).from_line == 2
    with pytest.raises(ValueError):
        MemorySearchArgs.model_validate({"query": "q", "maxResults": 0})


def test_recall_prompt_variants():
    both = memory_recall_prompt()
    assert both.startswith("## Memory Recall") and "memory_search" in both and "memory_get" in both
    assert "Source: <path#line>" in both
    assert "Citations are disabled" in memory_recall_prompt(citations="off")
    assert "session transcripts" in memory_recall_prompt(sessions=True)
    assert "memory_get" not in memory_recall_prompt(get=False)
    assert memory_recall_prompt(search=False, get=False) == ""


def test_disabled_memory_offers_nothing(write, make_index, fake_provider):
    write(NOTES)
    memory = make_index(fake_provider, enabled=False)
    assert memory_search(memory, "a828e60")["disabled"] is True
    assert memory_get(memory, "MEMORY.md")["disabled"] is True
