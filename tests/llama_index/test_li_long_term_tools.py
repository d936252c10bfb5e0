"""memory_store / memory_recall / memory_forget (the LanceDB long-term memory) as FunctionTools: a failed call
is a tool error, as the memory_search / memory_get tools' (and the LangChain long-term tools') are, and the
argument schemas carry the core's bounds."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("lancedb")

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock  # noqa: E402
from llama_index.core.llms import MockFunctionCallingLLM  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from openclaw_memory.long_term import LongTermMemory  # noqa: E402
from openclaw_memory.providers.fake import FakeEmbeddingProvider  # noqa: E402

from llama_index_openclaw_memory import create_long_term_tools  # noqa: E402


@pytest.fixture
def tools(tmp_path: Path, fake_provider: FakeEmbeddingProvider) -> Iterator[dict[str, FunctionTool]]:
    memory = LongTermMemory(tmp_path / "lancedb", provider=fake_provider)
    yield {t.metadata.name: t for t in create_long_term_tools(memory)}
    memory.close()


@pytest.mark.parametrize(("name", "kwargs"), [
    ("memory_store", {"text": "   "}),
    ("memory_recall", {"query": "tea", "limit": 500}),
    ("memory_forget", {"memory_id": "x' OR '1'='1"}),
])
async def test_failures_are_tool_errors_the_model_can_read(tools: dict[str, FunctionTool], name: str,
                                                           kwargs: dict[str, Any]) -> None:
    for out in (tools[name].call(**kwargs), await tools[name].acall(**kwargs)):
        assert out.is_error is True  # was False: the agent took the refusal for a result
        assert out.raw_output["error"] in out.content
    fine = tools["memory_store"].call(text="The user prefers green tea")
    assert fine.is_error is False and tools["memory_recall"].call(query="green tea").is_error is False


def test_argument_schemas_carry_the_core_bounds(tools: dict[str, FunctionTool]) -> None:
    store = tools["memory_store"].metadata.get_parameters_dict()["properties"]
    recall = tools["memory_recall"].metadata.get_parameters_dict()["properties"]
    assert (store["importance"].get("minimum"), store["importance"].get("maximum")) == (0, 1)  # were missing
    assert (recall["limit"].get("minimum"), recall["limit"].get("maximum")) == (1, 20)
    assert (recall["min_score"].get("minimum"), recall["min_score"].get("maximum")) == (0, 1)
    assert store["category"]["enum"] == ["preference", "fact", "decision", "entity", "other"]


async def test_an_agent_sees_a_refused_call_as_a_tool_error(tools: dict[str, FunctionTool]) -> None:
    def respond(messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
        if not [m for m in messages if m.role == MessageRole.TOOL]:
            call = ToolCallBlock(tool_call_id="call-1", tool_name="memory_recall",
                                 tool_kwargs={"query": "tea", "limit": 500})
            return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])
        return ChatMessage(role=MessageRole.ASSISTANT, content="I asked for too many.")

    agent = FunctionAgent(tools=list(tools.values()), llm=MockFunctionCallingLLM(response_generator=respond))
    handler = agent.run(user_msg="What tea do I like?", memory=Memory.from_defaults(session_id="long-term"))
    results = [ev async for ev in handler.stream_events() if isinstance(ev, ToolCallResult)]
    await handler
    assert len(results) == 1 and results[0].tool_output.is_error is True
    assert "limit" in results[0].tool_output.content
