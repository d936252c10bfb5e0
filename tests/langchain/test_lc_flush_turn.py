"""The silent flush turn on its own: append-only writes, refusals fed back, bounded loop, re-index."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import daily_note_path, today
from openclaw_memory.agent.flush import FlushPolicy
from openclaw_memory.providers.fake import FakeEmbeddingProvider

from langchain_openclaw_memory._flush import SilentFlushRunner

CONVERSATION: list[BaseMessage] = [HumanMessage("We picked Kafka for the event bus."), AIMessage("Great choice.")]


def _calls(*args: dict[str, object]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": a.pop("name", "write_memory"), "args": a, "id": f"c{i}"}
                                     for i, a in enumerate(args)])


def test_refused_write_is_reported_to_the_model_and_allowed_ones_append(memory: MemoryIndex, scripted) -> None:
    seen: list[list[BaseMessage]] = []

    def respond(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        seen.append(messages)
        if len(seen) == 1:
            return _calls({"path": "SOUL.md", "content": "- I am a cat."},
                          {"path": "MEMORY.md", "content": "- Event bus: Kafka."},
                          {"content": "- Picked Kafka for the event bus."})
        return AIMessage("NO_REPLY")

    before = (memory.workspace / "MEMORY.md").read_text()
    runner = SilentFlushRunner(scripted(respond), FlushPolicy(memory.config), memory=memory)
    outcome = runner.run(CONVERSATION, session_key="k")

    assert [(w.path, w.ok) for w in outcome.writes] == [
        ("SOUL.md", False), ("MEMORY.md", True), (daily_note_path(today("UTC")), True)
    ]
    assert not (memory.workspace / "SOUL.md").exists()
    assert (memory.workspace / "MEMORY.md").read_text() == before + "- Event bus: Kafka. <!-- origin: agent -->\n"
    assert (memory.workspace / outcome.target_path).read_text() == "- Picked Kafka for the event bus. <!-- origin: agent -->\n"
    results = [m for m in seen[1] if isinstance(m, ToolMessage)]
    assert [m.status for m in results] == ["error", "success", "success"]
    assert "restricted" in results[0].content
    assert outcome.no_reply and outcome.model_calls == 2
    # The flush turn saw the conversation between its own system and user prompts.
    assert [m.text for m in seen[0][1:3]] == [m.text for m in CONVERSATION]


def test_group_sessions_cannot_write_memory_md(memory: MemoryIndex, scripted) -> None:
    replies = iter([_calls({"path": "MEMORY.md", "content": "x"}), AIMessage("NO_REPLY")])
    policy = FlushPolicy(memory.config, allow_memory_md=False)
    outcome = SilentFlushRunner(scripted(lambda m, t: next(replies)), policy).run(CONVERSATION)
    assert [w.ok for w in outcome.writes] == [False]
    assert "x" not in (memory.workspace / "MEMORY.md").read_text().splitlines()


def test_tool_loop_is_bounded_and_unknown_tools_are_errors(memory: MemoryIndex, scripted) -> None:
    seen: list[list[BaseMessage]] = []

    def respond(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        seen.append(messages)
        return _calls({"name": "shell", "cmd": "rm -rf /"})

    outcome = SilentFlushRunner(scripted(respond), FlushPolicy(memory.config), max_model_calls=3).run(CONVERSATION)
    assert outcome.model_calls == 3 and outcome.writes == []
    assert isinstance(seen[1][-1], ToolMessage) and seen[1][-1].status == "error"
    assert "only write_memory" in seen[1][-1].content
    with pytest.raises(ValueError, match="max_model_calls"):
        SilentFlushRunner(scripted(respond), FlushPolicy(memory.config), max_model_calls=0)


def test_visible_reply_is_discarded_but_reported(memory: MemoryIndex, scripted) -> None:
    outcome = SilentFlushRunner(scripted(lambda m, t: AIMessage("I saved nothing.")), FlushPolicy(memory.config)).run(
        CONVERSATION
    )
    assert outcome.reply == "I saved nothing." and not outcome.no_reply and outcome.written == []


async def test_awaited_reindex_makes_the_note_searchable(corpus: Path, tmp_path: Path, scripted) -> None:
    replies = iter([_calls({"content": "- The event bus runs on Redpanda now."}), AIMessage("NO_REPLY")])
    with MemoryIndex(workspace=corpus, store={"path": str(tmp_path / "f.sqlite")}, provider=FakeEmbeddingProvider(),
                     timezone="UTC", compaction={"post_index_sync": "await"}, watch=False) as index:
        index.sync()
        runner = SilentFlushRunner(scripted(lambda m, t: next(replies)), FlushPolicy(index.config), memory=index)
        outcome = await runner.arun(CONVERSATION)
        assert outcome.written == [daily_note_path(today("UTC"))]
        hits = index.search("Redpanda event bus", min_score=0.0).hits
        assert hits[0].path == outcome.target_path


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_a_write_with_wrong_arguments_is_reported_to_the_model(memory: MemoryIndex, scripted,
                                                                     asynchronous: bool) -> None:
    # models often name the argument "text"; told so, they call again, and the flush still writes
    seen: list[list[BaseMessage]] = []

    def respond(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        seen.append(messages)
        replies = [_calls({"text": "- Picked Kafka for the event bus."}),
                   _calls({"content": "- Picked Kafka for the event bus."}), AIMessage("NO_REPLY")]
        return replies[len(seen) - 1]

    runner = SilentFlushRunner(scripted(respond), FlushPolicy(memory.config), memory=memory)
    outcome = await runner.arun(CONVERSATION) if asynchronous else runner.run(CONVERSATION)
    refused = seen[1][-1]
    assert isinstance(refused, ToolMessage) and refused.status == "error" and "content" in refused.content
    assert outcome.written == [daily_note_path(today("UTC"))] and outcome.model_calls == 3
    written = (memory.workspace / outcome.target_path).read_text()
    assert written == "- Picked Kafka for the event bus. <!-- origin: agent -->\n"
