"""MemoryFlushCallbackHandler on a plain prompt | chat-model chain."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, Generation, LLMResult
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from openclaw_memory import MemoryConfig, MemoryIndex
from openclaw_memory.files.append import daily_note_path, today

from langchain_openclaw_memory import FlushOutcome, FlushRequest, MemoryFlushCallbackHandler
from langchain_openclaw_memory.callbacks import reported_tokens

THRESHOLD = 10_000 - 1000 - 1000


@pytest.fixture
def config(memory: MemoryIndex) -> MemoryConfig:
    """The memory config with a 10k-token window: the flush fires at 8000 tokens."""
    return MemoryConfig.load(
        memory.config,
        compaction={
            "context_window": 10_000,
            "reserve_tokens_floor": 1000,
            "memory_flush": {"soft_threshold_tokens": 1000},
        },
    )


def _usage_model(scripted, tokens: list[int]):
    """A chat model that reports the next token count of ``tokens`` on each call."""
    remaining = iter(tokens)

    def respond(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        total = next(remaining)
        return AIMessage(
            f"answer to {messages[-1].text}",
            usage_metadata={"input_tokens": total - 10, "output_tokens": 10, "total_tokens": total},
        )

    return scripted(respond)


def _flush_model(scripted):
    def respond(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        assert tools == ["write_memory"]
        if isinstance(messages[-1], ToolMessage):
            return AIMessage("NO_REPLY")
        n = sum(m.text.startswith("question:") for m in messages)
        return AIMessage("", tool_calls=[{"name": "write_memory", "args": {"content": f"- note after {n} questions"},
                                          "id": "w"}])

    return scripted(respond)


def test_flushes_at_threshold_once_per_cycle_and_per_thread(
    memory: MemoryIndex, config: MemoryConfig, scripted
) -> None:
    model = _usage_model(scripted, [3000, 8500, 9000, 8600, 9100])
    flush_model = _flush_model(scripted)
    handler = MemoryFlushCallbackHandler(config, model=flush_model)
    chain = ChatPromptTemplate.from_messages([("human", "question: {q}")]) | model
    note = memory.workspace / daily_note_path(today("UTC"))

    def ask(q: str, thread: str) -> Any:
        return chain.invoke({"q": q}, config={"callbacks": [handler], "metadata": {"thread_id": thread}})

    assert ask("one", "t1").content == "answer to question: one"
    assert not note.exists()
    ask("two", "t1")  # 8500 >= 8000: flush
    ask("three", "t1")  # same compaction cycle: no second flush
    assert note.read_text().count("- note after 1 questions") == 1
    assert [d.reason for d in handler.policy.decisions if d.session_key == "t1"] == [
        "below_threshold", "threshold_reached", "already_flushed_this_cycle"
    ]
    assert handler.record_compaction("t1") == 1
    ask("four", "t1")  # new cycle: flushes again
    ask("five", "t2")  # another thread has its own cycle
    assert note.read_text().count("- note after") == 3
    assert [o.written for o in handler.outcomes] == [[daily_note_path(today("UTC"))]] * 3
    assert all(isinstance(o, FlushOutcome) and o.no_reply for o in handler.outcomes)
    # The flush turn saw the conversation, including the reply that crossed the threshold.
    flush_prompt = flush_model.calls[0].messages
    assert any(m.text == "question: two" for m in flush_prompt)
    assert any(m.text == "answer to question: two" for m in flush_prompt)


def test_summary_message_starts_a_new_cycle(config: MemoryConfig, scripted) -> None:
    model = _usage_model(scripted, [8500, 8600, 8700])
    requests: list[FlushRequest] = []
    handler = MemoryFlushCallbackHandler(config, flush_runner=requests.append)
    chain = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{q}")]) | model
    summary = HumanMessage("Here is a summary of the conversation to date:\n\nS", id="sum-1",
                           additional_kwargs={"lc_source": "summarization"})
    cfg = {"callbacks": [handler], "metadata": {"session_key": "s"}}

    chain.invoke({"history": [], "q": "a"}, cfg)
    chain.invoke({"history": [], "q": "b"}, cfg)
    chain.invoke({"history": [summary], "q": "c"}, cfg)
    assert [r.decision.compaction_count for r in requests] == [0, 1]
    assert all(r.session_key == "s" and r.decision.flush for r in requests)
    assert requests[1].messages[0] is not None and requests[1].messages[0].id == "sum-1"


async def test_async_chain(config: MemoryConfig, scripted) -> None:
    model = _usage_model(scripted, [9000])
    requests: list[FlushRequest] = []
    handler = MemoryFlushCallbackHandler(config, flush_runner=requests.append, default_session_key="solo")
    await (ChatPromptTemplate.from_messages([("human", "{q}")]) | model).ainvoke({"q": "x"}, {"callbacks": [handler]})
    assert [r.session_key for r in requests] == ["solo"]
    assert requests[0].decision.token_source == "usage" and requests[0].decision.total_tokens == 9000


def test_failing_runner_is_logged_and_retried(config: MemoryConfig, scripted, caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] = []

    def runner(request: FlushRequest) -> None:
        calls.append(request.session_key)
        if len(calls) == 1:
            raise RuntimeError("disk full")

    handler = MemoryFlushCallbackHandler(config, flush_runner=runner)
    model = _usage_model(scripted, [9000, 9000, 9000])
    for _ in range(3):
        model.invoke("hi", config={"callbacks": [handler]})
    assert len(calls) == 2  # failed once, succeeded on the next call, then once-per-cycle holds
    assert "disk full" in caplog.text


def test_flush_turn_calls_are_ignored(config: MemoryConfig, scripted) -> None:
    requests: list[FlushRequest] = []
    handler = MemoryFlushCallbackHandler(config, flush_runner=requests.append)
    model = _usage_model(scripted, [9000])
    model.invoke("hi", config={"callbacks": [handler], "tags": ["memory_flush"]})
    assert requests == [] and handler.policy.decisions == []


def test_token_usage_sources() -> None:
    usage = AIMessage("x", usage_metadata={"input_tokens": 5, "output_tokens": 2, "total_tokens": 7})
    assert reported_tokens(LLMResult(generations=[[ChatGeneration(message=usage)]])) == 7
    from_llm_output = LLMResult(generations=[[Generation(text="x")]],
                                llm_output={"token_usage": {"prompt_tokens": 40, "completion_tokens": 2}})
    assert reported_tokens(from_llm_output) == 42
    assert reported_tokens(LLMResult(generations=[[Generation(text="x")]])) is None


def test_without_usage_the_prompt_is_estimated(config: MemoryConfig, scripted) -> None:
    handler = MemoryFlushCallbackHandler(config, flush_runner=lambda r: None)
    scripted(lambda m, t: AIMessage("short")).invoke("hello", config={"callbacks": [handler]})
    decision = handler.policy.decisions[-1]
    assert decision.token_source == "estimate" and not decision.flush
    assert decision.total_tokens is not None and 0 < decision.total_tokens < 20


def test_needs_a_model_or_a_runner(config: MemoryConfig) -> None:
    with pytest.raises(ValueError, match="model=<chat model>"):
        MemoryFlushCallbackHandler(config)
