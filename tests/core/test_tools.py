"""The framework-neutral tools: payload shape, citations, never-raising errors, the recall prompt."""

from __future__ import annotations

import asyncio
import time

import pytest

from openclaw_memory.errors import MemoryArgumentError, MemoryPathError, OpenClawMemoryError, ProviderError
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.agent.tools import (
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
    assert top["path"] == "memory/2026-11-20.md" and (top["start_line"], top["end_line"]) == (1, 4)
    assert top["citation"] == "memory/2026-11-20.md#L1-L4"
    assert top["snippet"].endswith("Source: memory/2026-11-20.md#L1-L4")
    assert {"score", "vector_score", "text_score", "source"} <= top.keys()
    assert payload["provider"] == "fake" and payload["mode"] == "hybrid" and payload["citations"] == "on"
    text = format_search_text(payload)
    assert text.startswith("[memory/2026-11-20.md#L1-L4]") and text.count("Source:") == 0


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


def test_get_of_a_binary_markdown_file_is_an_error_payload(write, make_index):
    ws = write({"MEMORY.md": "# Memory\n"})
    (ws / "memory").mkdir(exist_ok=True)
    (ws / "memory" / "bin.md").write_bytes(b"abc\x00def")
    memory = make_index(FakeEmbeddingProvider())
    err = memory_get(memory, "memory/bin.md")
    assert err["disabled"] is True and err["text"] == "" and "bin.md" in err["error"]


def test_get_args_truncate_like_the_core_tool():
    args = MemoryGetArgs.model_validate({"path": "MEMORY.md", "from": 2.7, "lines": "3"})
    assert (args.from_line, args.lines) == (2, 3)
    for bad in ({"from": True}, {"lines": "many"}, {"from": 0}):
        with pytest.raises(ValueError):
            MemoryGetArgs.model_validate({"path": "MEMORY.md", **bad})
    with pytest.raises(ValueError):
        MemorySearchArgs.model_validate({"query": "q", "maxResults": True})
    schema = MemoryGetArgs.model_json_schema()["properties"]["from"]
    assert {"type": "integer", "minimum": 1} in schema["anyOf"]


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


# ---- argument validation (the raw core tools are called by adapters without schemas, too) -------


def test_search_validates_its_arguments(write, make_index, fake_provider):
    write(NOTES)
    memory = make_index(fake_provider)
    for args, fragment in [
        ((5,), "query"),
        ((None,), "query required"),
        (("",), "query required"),
        (("a828e60", 0), "max_results"),
        (("a828e60", 51), "max_results"),
        (("a828e60", "many"), "max_results"),
        (("a828e60", 2.5), "max_results"),
        (("a828e60", True), "max_results"),
        (("a828e60", None, 2), "min_score"),
        (("a828e60", None, "high"), "min_score"),
        (("a828e60", None, float("nan")), "min_score"),
    ]:
        payload = memory_search(memory, *args)
        assert payload["results"] == [] and fragment in payload["error"], (args, payload)
        assert "disabled" not in payload  # an input error, not an unavailable memory
    assert memory_search(memory, "a828e60", "2", "0.1")["results"]  # numeric strings and floats coerce
    assert len(memory_search(memory, "Second line", 1.0, 0)["results"]) == 1
    assert asyncio.run(amemory_search(memory, 5))["error"].startswith("invalid memory_search arguments")


def test_get_refuses_bad_paths_with_an_error_payload(write, make_index, fake_provider):
    write({**NOTES, "memory/a.md": "a1\na2\n"})
    memory = make_index(fake_provider)
    for bad in ("memory/a\x00.md", "MEMORY.md\x00.txt", "MEMORY.md/", "memory/a.md/.", "memory/a.md/x.md",
                "memory/a.md/sub/x.md", "memory/\ud800.md", None, 5, ["MEMORY.md"]):
        err = memory_get(memory, bad)  # type: ignore[arg-type]
        assert err["disabled"] is True and err["text"] == "" and err["error"], (bad, err)
    assert "null byte" in memory_get(memory, "memory/a\x00.md")["error"]
    assert "not a file" in memory_get(memory, "MEMORY.md/")["error"]
    assert "not a directory" in memory_get(memory, "memory/a.md/x.md")["error"]
    assert memory_get(memory, None)["error"].startswith("path required")  # type: ignore[arg-type]
    assert asyncio.run(amemory_get(memory, "memory/a\x00.md"))["disabled"] is True
    with pytest.raises(MemoryPathError):
        memory.get("memory/a\x00.md")
    with pytest.raises(MemoryPathError):
        memory.get("memory/a.md/x.md")
    assert memory_get(memory, "memory/./a.md")["text"] == "a1\na2\n"  # a "." inside the path is fine


def test_get_line_numbers_are_truncated_to_int_or_refused(write, make_index, fake_provider):
    write({"MEMORY.md": "l1\nl2\nl3\n"})
    memory = make_index(fake_provider)
    assert memory_get(memory, "MEMORY.md", 2.9, 1.5) == {"path": "MEMORY.md", "text": "l2", "start_line": 2,
                                                       "end_line": 2}
    assert memory_get(memory, "MEMORY.md", "2", " 1 ")["text"] == "l2"  # numeric strings, as agents send them
    assert memory_get(memory, "MEMORY.md", 0, -4)["text"] == "l1"  # spec: max(1, ...)
    missing = memory_get(memory, "memory/none.md", 1.5)
    assert missing["text"] == "" and missing["start_line"] == 1 and isinstance(missing["start_line"], int)
    for fl, ln in [("two", None), (None, "1.5x"), (True, None), (None, False), (float("nan"), None),
                   (None, float("inf")), ([2], None), (None, {"n": 1})]:
        err = memory_get(memory, "MEMORY.md", fl, ln)  # type: ignore[arg-type]
        assert err["disabled"] is True and err["text"] == "", (fl, ln, err)
        assert ("from_line" if fl is not None else "lines") in err["error"], err
    with pytest.raises(MemoryArgumentError, match="from_line"):
        memory.get("MEMORY.md", from_line="x")  # type: ignore[arg-type]


# ---- sync failures are not "empty workspace" ---------------------------------------------------------


def test_failed_first_sync_is_reported_and_not_retried_on_every_search(write, make_index, monkeypatch):
    import openclaw_memory.index.freshness as freshness_mod
    import openclaw_memory.index.sync_runner as runner_mod

    write(NOTES)
    provider = FakeEmbeddingProvider()
    provider.fail_with = ProviderError("HTTP 401 invalid api key")
    memory = make_index(provider)
    runs: list[str] = []
    real_run_sync = runner_mod.run_sync

    def counting(*a, **kw):
        runs.append(kw.get("reason", "?"))
        return real_run_sync(*a, **kw)

    monkeypatch.setattr(runner_mod, "run_sync", counting)
    payload = memory_search(memory, "a828e60")
    # issue 20: the first index builds the keyword index even when embedding fails, and says it failed
    assert payload["results"] and "401" in payload["sync_error"]
    assert "no memory files" not in payload.get("message", "")
    for _ in range(3):
        assert "401" in memory_search(memory, "a828e60")["sync_error"]
    assert len(runs) == 1  # not re-run (with the provider's retries) on every search
    assert not memory.syncing

    monkeypatch.setattr(freshness_mod, "_SYNC_RETRY_INTERVAL_S", 0.0)  # the back-off is over
    memory_search(memory, "a828e60")  # retries the sync, in the background
    deadline = time.monotonic() + 30
    while memory.scheduler.busy and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(runs) == 2

    provider.fail_with = None  # fixed; an explicit sync clears the failure
    memory.sync()
    payload = memory_search(memory, "a828e60")
    assert payload["results"] and "sync_error" not in payload and "empty_reason" not in payload


def test_results_served_while_the_last_sync_failed_say_so(write, make_index, workspace):
    write(NOTES)
    provider = FakeEmbeddingProvider()
    memory = make_index(provider)
    memory.sync()
    (workspace / "memory" / "2026-11-21.md").write_text("new note about kiwis\n", encoding="utf-8")
    provider.fail_with = ProviderError("HTTP 401 invalid api key")
    with pytest.raises(OpenClawMemoryError):
        memory.sync()
    payload = memory_search(memory, "a828e60")
    assert payload["results"] and "401" in payload["sync_error"]
    assert memory.search("a828e60").to_dict()["sync_error"] == payload["sync_error"]
    empty = memory_search(memory, "kiwis zebra")
    assert empty["empty_reason"] == "sync_failed" and "401" in empty["message"]


# ---- the recall prompt ---------------------------------------------------------------------------


def test_bootstrap_recall_prompt_is_absent_when_memory_is_disabled():
    from openclaw_memory.config import MemoryConfig

    assert memory_recall_prompt(MemoryConfig.load({"enabled": False})) == ""
    assert memory_recall_prompt(MemoryConfig.load({"enabled": False}), session_kind="group") == ""
    assert memory_recall_prompt(MemoryConfig.load({})).startswith("## Memory Recall")


def test_get_of_a_missing_file_says_so(write, make_index, fake_provider):
    """Issue 12: a missing file gave empty text and nothing else."""
    write(NOTES)
    memory = make_index(fake_provider)
    got = memory.get("memory/nope.md")
    assert (got.text, got.exists) == ("", False)
    assert memory.get("MEMORY.md").exists
    assert memory_get(memory, "memory/nope.md")["exists"] is False
    assert "exists" not in memory_get(memory, "MEMORY.md")  # OpenClaw's payload shape otherwise
