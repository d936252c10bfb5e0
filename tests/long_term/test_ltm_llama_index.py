"""The LlamaIndex adapter: the three FunctionTools (sync + async) and LongTermMemoryBlock inside a
real ``llama_index.core.memory.Memory`` (recall before the model call, capture of finished turns)."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory
from openclaw_memory.long_term import LongTermMemory
from openclaw_memory.long_term.tools import MemoryStoreArgs
from openclaw_memory.providers.fake import FakeEmbeddingProvider

from llama_index_openclaw_memory.long_term import LongTermMemoryBlock, create_long_term_tools


def _tools(ltm: LongTermMemory) -> dict[str, object]:
    return {t.metadata.name: t for t in create_long_term_tools(ltm)}


def test_tools_store_recall_forget(ltm: LongTermMemory) -> None:
    tools = _tools(ltm)
    out = tools["memory_store"].call(text="The deploy server is called atlas", category="entity")
    assert out.raw_output["action"] == "created" and "Stored" in out.content
    memory_id = out.raw_output["id"]
    found = tools["memory_recall"].call(query="deploy server atlas")
    assert "atlas" in found.content and found.raw_output["memories"][0]["id"] == memory_id
    gone = tools["memory_forget"].call(memory_id=memory_id)
    assert gone.raw_output["action"] == "deleted" and ltm.list() == []


def test_tool_schema_comes_from_the_core_models(ltm: LongTermMemory) -> None:
    params = _tools(ltm)["memory_store"].metadata.get_parameters_dict()
    assert params["required"] == ["text"]
    assert params["properties"]["text"]["description"] == MemoryStoreArgs.model_fields["text"].description
    assert params["properties"]["category"]["enum"] == ["preference", "fact", "decision", "entity", "other"]


@pytest.mark.parametrize(("name", "kwargs", "fragment"), [
    ("memory_store", {"text": "   "}, "empty"),
    ("memory_store", {"text": "y" * 100_000}, "at most 8000"),
    ("memory_recall", {"query": "tea", "limit": 500}, "limit"),
    ("memory_forget", {"memory_id": "x' OR '1'='1"}, "not a memory id"),
])
def test_bad_arguments_are_explained_not_raised(ltm: LongTermMemory, name: str, kwargs: dict[str, object],
                                                fragment: str) -> None:
    out = _tools(ltm)[name].call(**kwargs)
    assert out.raw_output["error"] and fragment in out.content
    assert ltm.list() == []


async def test_async_tools(ltm: LongTermMemory) -> None:
    tools = _tools(ltm)
    out = await tools["memory_store"].acall(text="I prefer vim keybindings", category="preference")
    assert out.raw_output["action"] == "created"
    assert "vim" in (await tools["memory_recall"].acall(query="vim keybindings")).content


async def test_block_injects_escaped_memories_into_the_system_message(ltm: LongTermMemory) -> None:
    ltm.store("The user prefers <i>green</i> tea", category="preference")
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[LongTermMemoryBlock(memory=ltm)])
    await memory.aput(ChatMessage(role=MessageRole.USER, content="what tea do I like?"))
    messages = await memory.aget()
    system = messages[0]
    assert system.role == MessageRole.SYSTEM
    assert "<relevant-memories>" in system.content and "Untrusted data" in system.content
    assert "[preference] The user prefers &lt;i&gt;green&lt;/i&gt; tea" in system.content


async def test_block_contributes_nothing_for_a_short_prompt(ltm: LongTermMemory) -> None:
    ltm.store("The user prefers green tea")
    block = LongTermMemoryBlock(memory=ltm)
    assert await block.aget([ChatMessage(role=MessageRole.USER, content="hi")]) == ""


async def test_block_auto_capture_is_off_by_default(ltm: LongTermMemory) -> None:
    block = LongTermMemoryBlock(memory=ltm)
    history = [ChatMessage(role=MessageRole.USER, content="I prefer answers in Czech"),
               ChatMessage(role=MessageRole.ASSISTANT, content="Dobře"),
               ChatMessage(role=MessageRole.USER, content="what is the time?")]
    await block.aget(history)
    await block.aput(history)
    assert ltm.list() == []


async def test_block_captures_finished_turns_and_evicted_messages_once(ltm: LongTermMemory) -> None:
    block = LongTermMemoryBlock(memory=ltm, auto_capture=True, capture_triggers=[r"\bTODO\b"])
    turn1 = [ChatMessage(role=MessageRole.USER, content="I prefer answers in Czech")]
    await block.aget(turn1, session_id="s")
    assert ltm.list() == []  # the current input is not captured before its turn finished
    turn2 = [*turn1, ChatMessage(role=MessageRole.ASSISTANT, content="Dobře, I always will"),
             ChatMessage(role=MessageRole.USER, content="TODO: renew the TLS certificate")]
    await block.aget(turn2, session_id="s")
    await block.aget([*turn2, ChatMessage(role=MessageRole.USER, content="thanks!")], session_id="s")
    assert sorted(r.text for r in ltm.list()) == ["I prefer answers in Czech", "TODO: renew the TLS certificate"]
    await block.aput([ChatMessage(role=MessageRole.USER, content="My sister's name is Eva",
                                  additional_kwargs={"session_id": "s"})])
    assert any(r.text == "My sister's name is Eva" for r in ltm.list())
    assert len(ltm.list()) == 3


async def test_block_recall_failure_never_fails_memory_aget(ltm: LongTermMemory,
                                                            fake_provider: FakeEmbeddingProvider) -> None:
    ltm.store("The user prefers green tea")
    block = LongTermMemoryBlock(memory=ltm)
    fake_provider.fail_with = RuntimeError("down")
    assert await block.aget([ChatMessage(role=MessageRole.USER, content="what tea do I like?")]) == ""
    assert block.recaller.cooling_down()
