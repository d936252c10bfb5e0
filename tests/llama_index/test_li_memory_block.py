"""OpenClawMemoryBlock inside llama_index Memory: flush of evicted messages, recall, bootstrap."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import MockLLM
from llama_index.core.memory import Memory
from llama_index.core.storage.chat_store.base_db import MessageStatus

from llama_index_openclaw_memory import OpenClawMemoryBlock, llm_note_extractor
from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import today

FACTS = [
    "My sister Ingrid lives in Bergen and works as a marine biologist.",
    "The staging cluster is called heron-7 and runs in eu-west.",
    "I am allergic to peanuts, so never suggest peanut sauce.",
    "Our quarterly planning offsite is booked at Lake Bled in May.",
    "The invoice numbering scheme switched to INV-2026-XXXX this year.",
    "My favourite editor theme is Solarized Light.",
    "The backup job runs nightly at 02:30 UTC from the cron host.",
    "Please address me as Sam in every reply.",
]


def _daily(workspace: Path) -> Path:
    return workspace / f"memory/{today('UTC').isoformat()}.md"


def _conversation() -> list[ChatMessage]:
    msgs: list[ChatMessage] = []
    for i, fact in enumerate(FACTS):
        msgs.append(ChatMessage(role=MessageRole.USER, content=fact))
        msgs.append(ChatMessage(role=MessageRole.ASSISTANT, content=f"Noted ({i + 1})."))
    return msgs


def _small_memory(block: OpenClawMemoryBlock, session_id: str) -> Memory:
    """A Memory whose short-term buffer holds ~100 tokens, so the conversation overflows it."""
    return Memory.from_defaults(
        session_id=session_id, token_limit=200, chat_history_token_ratio=0.5, token_flush_size=40,
        memory_blocks=[block],
    )


async def test_evicted_messages_are_saved_once_and_recalled_in_a_new_session(
    memory: MemoryIndex, corpus: Path, make_index: Callable[..., MemoryIndex], fake_provider: object
) -> None:
    daily = _daily(corpus)
    daily.write_text("# Today\n\nHand-written: buy stamps.\n", encoding="utf-8")
    block = OpenClawMemoryBlock(memory=memory, bootstrap="off")
    chat = _small_memory(block, "session-a")
    for msg in _conversation():
        await chat.aput(msg)

    archived = await chat.aget_all(status=MessageStatus.ARCHIVED)
    active = await chat.aget_all(status=MessageStatus.ACTIVE)
    assert archived and active, "the conversation must overflow the short-term buffer"
    text = daily.read_text(encoding="utf-8")
    assert text.startswith("# Today\n\nHand-written: buy stamps.\n\n## Conversation notes (")
    assert "session session-a" in text
    for msg in archived:
        if msg.role == MessageRole.USER:
            assert text.count(msg.content) == 1, msg.content  # saved exactly once
    for msg in active:
        if msg.role == MessageRole.USER:
            assert msg.content not in text  # still in context: not flushed yet

    # a new session, with a fresh index object over the same workspace, recalls the saved note
    later = OpenClawMemoryBlock(memory=make_index(fake_provider, timezone="UTC"), bootstrap="off")
    new_chat = Memory.from_defaults(session_id="session-b", memory_blocks=[later])
    first_fact = archived[0].content
    prompt = await new_chat.aget(input="What do you know about my sister Ingrid in Bergen?")
    system = next(m for m in prompt if m.role == MessageRole.SYSTEM)
    assert "## Recalled memory" in system.content
    assert first_fact in system.content
    assert f"[memory/{today('UTC').isoformat()}.md#L" in system.content


async def test_the_same_messages_are_not_saved_twice(memory: MemoryIndex, corpus: Path) -> None:
    block = OpenClawMemoryBlock(memory=memory)
    msgs = _conversation()[:2]
    await block.aput(msgs, from_short_term_memory=True)
    await block.aput(msgs, from_short_term_memory=True)
    assert _daily(corpus).read_text(encoding="utf-8").count(FACTS[0]) == 1


async def test_an_extractor_decides_what_is_durable(memory: MemoryIndex, corpus: Path) -> None:
    seen: list[list[ChatMessage]] = []

    async def extract(messages: list[ChatMessage]) -> str:
        seen.append(messages)
        return "- Sister: Ingrid (Bergen, marine biologist)"

    block = OpenClawMemoryBlock(memory=memory, extractor=extract)
    await block.aput(_conversation()[:2], from_short_term_memory=True)
    text = _daily(corpus).read_text(encoding="utf-8")
    assert "- Sister: Ingrid (Bergen, marine biologist) <!-- origin: agent -->\n" in text and FACTS[0] not in text
    assert [m.content for m in seen[0]] == [FACTS[0], "Noted (1)."]
    assert memory.search("Ingrid Bergen").hits[0].path == f"memory/{today('UTC').isoformat()}.md"


@pytest.mark.parametrize("reply", ["NO_REPLY", "", None, "  **NO_REPLY**  "])
async def test_nothing_durable_writes_nothing(memory: MemoryIndex, corpus: Path, reply: str | None) -> None:
    block = OpenClawMemoryBlock(memory=memory, extractor=lambda _msgs: reply)
    await block.aput(_conversation()[:2], from_short_term_memory=True)
    assert not _daily(corpus).exists()


async def test_llm_note_extractor_sends_the_transcript(memory: MemoryIndex, corpus: Path) -> None:
    # MockLLM echoes its prompt, so the note shows exactly what the LLM was asked
    block = OpenClawMemoryBlock(memory=memory, extractor=llm_note_extractor(MockLLM()))
    await block.aput(_conversation()[:2], from_short_term_memory=True)
    text = _daily(corpus).read_text(encoding="utf-8")
    assert f"user: {FACTS[0]}" in text and "assistant: Noted (1)." in text and "NO_REPLY" in text
    with pytest.raises(ValueError, match=r"\{transcript\}"):
        llm_note_extractor(MockLLM(), prompt="no placeholder")


async def test_flush_errors_are_logged_not_raised(
    memory: MemoryIndex, corpus: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(_messages: list[ChatMessage]) -> str:
        raise RuntimeError("extraction model is down")

    chat = _small_memory(OpenClawMemoryBlock(memory=memory, extractor=broken), "session-err")
    with caplog.at_level(logging.WARNING, logger="llama_index_openclaw_memory.memory_block"):
        for msg in _conversation():
            await chat.aput(msg)  # must not raise although every flush fails
    assert "could not save notes" in caplog.text and "extraction model is down" in caplog.text
    assert not _daily(corpus).exists()


async def test_notes_written_before_a_failed_sync_are_reported_as_saved(
    memory: MemoryIndex, corpus: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The notes reach the daily note, then the index sync fails (here: the index was closed): the log says they
    are saved and the index lags (it said "could not save notes", and whoever read it saved them again)."""
    block = OpenClawMemoryBlock(memory=memory)
    memory.close()
    with caplog.at_level(logging.WARNING, logger="llama_index_openclaw_memory.memory_block"):
        await block.aput([ChatMessage(role=MessageRole.USER, content=FACTS[1]),
                          ChatMessage(role=MessageRole.ASSISTANT, content="Noted.")])
    assert FACTS[1] in _daily(corpus).read_text(encoding="utf-8")
    assert "could not save notes" not in caplog.text
    assert f"saved notes to memory/{today('UTC').isoformat()}.md but could not index them" in caplog.text


async def test_bootstrap_context_on_the_first_turn_only(memory: MemoryIndex, corpus: Path) -> None:
    _daily(corpus).write_text("# Today\n\nStand-up moved to 9:15.\n", encoding="utf-8")
    block = OpenClawMemoryBlock(memory=memory)
    first = await block.aget([ChatMessage(role=MessageRole.USER, content="hello")], session_id="s")
    assert "Stand-up moved to 9:15." in first
    assert "dark roast coffee" in first  # MEMORY.md is part of a private session's bootstrap
    second = await block.aget(
        [ChatMessage(role=MessageRole.USER, content="hello"), ChatMessage(role=MessageRole.ASSISTANT, content="hi"),
         ChatMessage(role=MessageRole.USER, content="thanks")],
        session_id="s",
    )
    assert "Stand-up moved to 9:15." not in second
    always = OpenClawMemoryBlock(memory=memory, bootstrap="always")
    assert "Stand-up moved to 9:15." in await always.aget(
        [ChatMessage(role=MessageRole.USER, content="a"), ChatMessage(role=MessageRole.USER, content="b")], session_id="s")

    group = OpenClawMemoryBlock(memory=memory, session_kind="group")
    shared = await group.aget([ChatMessage(role=MessageRole.USER, content="hello")], session_id="g")
    assert "Stand-up moved to 9:15." in shared and "dark roast coffee" not in shared


async def test_a_new_conversation_in_the_same_session_reads_the_bootstrap_files_again(
        memory: MemoryIndex, corpus: Path) -> None:
    """``Memory.areset()`` starts a new conversation under the same session id: its first turn gets the files as
    they are now (it got the snapshot taken at the first conversation's start, however old); within one turn the
    snapshot holds (the agent's tool steps see the same context)."""
    block = OpenClawMemoryBlock(memory=memory)
    chat = Memory.from_defaults(session_id="s-reset", memory_blocks=[block])
    await chat.aput(ChatMessage(role=MessageRole.USER, content="hello"))
    assert "dark roast coffee" in str((await chat.aget())[0].content)
    (corpus / "MEMORY.md").write_text("# Long-term memory\n\n- The user switched to green tea.\n", encoding="utf-8")
    await chat.aput(ChatMessage(role=MessageRole.ASSISTANT, content="Let me look that up."))
    await chat.aput(ChatMessage(role=MessageRole.TOOL, content="(tool result)"))
    same_turn = str((await chat.aget())[0].content)
    assert "dark roast coffee" in same_turn and "green tea" not in same_turn
    await chat.areset()
    await chat.aput(ChatMessage(role=MessageRole.USER, content="hello again"))
    again = str((await chat.aget())[0].content)
    assert "green tea" in again and "dark roast coffee" not in again  # was the first conversation's snapshot


async def test_a_recall_limit_the_search_refuses_is_refused_up_front(
        memory: MemoryIndex, caplog: pytest.LogCaptureFixture) -> None:
    """The recall runs memory_search, which takes at most 50 results: a block asking for more was built, then
    recalled nothing on every turn without a word. It is refused when built, and a recall the search refuses is
    logged."""
    with pytest.raises(ValueError, match="similarity_top_k"):
        OpenClawMemoryBlock(memory=memory, similarity_top_k=51)
    block = OpenClawMemoryBlock(memory=memory, bootstrap="off", similarity_top_k=50, min_score=0.0)
    assert "Stripe webhooks" in await block.aget([ChatMessage(role=MessageRole.USER, content="Stripe webhooks?")])
    block.similarity_top_k = 80  # set after validation: the search's refusal is logged, not swallowed
    with caplog.at_level(logging.WARNING):
        assert await block.aget([ChatMessage(role=MessageRole.USER, content="Stripe webhooks?")]) == ""
    assert "recall failed" in caplog.text and "less than or equal to 50" in caplog.text


async def test_recall_uses_the_latest_user_message(memory: MemoryIndex) -> None:
    block = OpenClawMemoryBlock(memory=memory, bootstrap="off", similarity_top_k=1)
    out = await block.aget([ChatMessage(role=MessageRole.USER, content="coffee"),
                            ChatMessage(role=MessageRole.ASSISTANT, content="..."),
                            ChatMessage(role=MessageRole.USER, content="Who owns the Stripe webhooks?")])
    assert out.startswith("## Recalled memory\n[memory/2026-01-20.md#L")
    assert await block.aget([ChatMessage(role=MessageRole.USER, content="zebra giraffe safari")]) == ""
    assert await block.aget([]) == ""
