"""The post-compaction transcript sync through the LangChain adapters: a summarisation seen by
``PreCompactionFlushMiddleware`` or ``MemoryFlushCallbackHandler`` makes the session's transcript
searchable, although it grew far less than the ``sync.sessions`` delta thresholds."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langgraph.checkpoint.memory import InMemorySaver
from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.files.sessions import TranscriptWriter

from langchain_openclaw_memory import FlushRequest, MemoryFlushCallbackHandler, PreCompactionFlushMiddleware

PHRASE = "quokka ledger reconciliation"
PADDING = " lorem ipsum" * 34  # ~100 tokens per message
TIMEOUT = 15.0


def sessions_index(make_index: Callable[..., MemoryIndex], mode: str | None = None) -> MemoryIndex:
    overrides: dict[str, Any] = {"sources": ["memory", "sessions"], "chunking": {"tokens": 16, "overlap": 0}}
    if mode is not None:
        overrides["compaction"] = {"post_index_sync": mode}
    return make_index(FakeEmbeddingProvider(), timezone="UTC", **overrides)


def found(memory: MemoryIndex) -> bool:
    hits = memory.search(PHRASE, sources=["sessions"], min_score=0.0, max_results=20).hits
    return any("quokka" in h.text for h in hits)


def grown_transcript(memory: MemoryIndex, session_id: str) -> Path:
    """Indexed once, then grown by two messages: below the thresholds, so not re-indexed."""
    writer = TranscriptWriter(memory.transcript_path(session_id))
    writer.append_messages([("user", "hello"), ("assistant", "hi")])
    memory.sync()
    writer.append_messages([("user", f"remember the {PHRASE}"), ("assistant", "noted")])
    assert memory.sync().files_indexed == 0 and not found(memory)
    return writer.path


def wait_until_found(memory: MemoryIndex) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not found(memory):
        assert time.monotonic() < deadline, "the transcript was not indexed after the compaction"
        time.sleep(0.02)


def test_middleware_summarisation_indexes_the_threads_transcript(
    corpus: Path, make_index: Callable[..., MemoryIndex], scripted
) -> None:
    memory = sessions_index(make_index)  # default post_index_sync: async
    grown_transcript(memory, "t-1")
    events: list[str] = []

    def respond(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        last = messages[-1]
        if "write_memory" in tools:
            return AIMessage("NO_REPLY")
        if "Context Extraction Assistant" in last.text:
            events.append("summary")
            return AIMessage("SUMMARY")
        return AIMessage(f"Reply:{PADDING}")

    model = scripted(respond)
    summarize = SummarizationMiddleware(model, trigger=("tokens", 2000), keep=("messages", 4))
    flush = PreCompactionFlushMiddleware(memory, model, summarization=summarize, soft_threshold_tokens=800)
    agent = create_agent(model, middleware=[flush, summarize], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t-1"}}

    for turn in range(40):
        agent.invoke({"messages": [HumanMessage(f"user message {turn}:{PADDING}")]}, config)
        if events:
            break
    assert events == ["summary"]
    assert not found(memory)  # the middleware notices the summary at the next model call
    agent.invoke({"messages": [HumanMessage(f"one more:{PADDING}")]}, config)
    wait_until_found(memory)


def test_callback_handler_summary_and_record_compaction_index_the_transcript(
    corpus: Path, make_index: Callable[..., MemoryIndex], scripted
) -> None:
    memory = sessions_index(make_index, mode="await")
    grown_transcript(memory, "s")
    model = scripted(lambda messages, tools: AIMessage("ok", usage_metadata={
        "input_tokens": 10, "output_tokens": 1, "total_tokens": 11}))
    requests: list[FlushRequest] = []
    handler = MemoryFlushCallbackHandler(memory, flush_runner=requests.append)
    chain = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{q}")]) | model
    summary = HumanMessage("Here is a summary of the conversation to date:\n\nS", id="sum-1",
                           additional_kwargs={"lc_source": "summarization"})
    cfg = {"callbacks": [handler], "metadata": {"session_key": "s"}}

    chain.invoke({"history": [], "q": "a"}, cfg)
    assert not found(memory)
    chain.invoke({"history": [summary], "q": "b"}, cfg)  # await mode: indexed before the call returns
    assert found(memory)

    # An explicit record_compaction does the same for a session whose transcript grew since.
    writer = TranscriptWriter(memory.transcript_path("s"))
    writer.append_message("user", "and the pangolin invoice too")
    assert memory.sync().files_indexed == 0
    handler.record_compaction("s")
    hits = memory.search("pangolin invoice", sources=["sessions"], min_score=0.0).hits
    assert any("pangolin" in h.text for h in hits)


def test_sessions_off_a_compaction_indexes_no_transcript(
    corpus: Path, make_index: Callable[..., MemoryIndex]
) -> None:
    memory = make_index(FakeEmbeddingProvider(), timezone="UTC")
    TranscriptWriter(memory.transcript_path("t")).append_message("user", f"the {PHRASE}")
    handler = MemoryFlushCallbackHandler(memory, flush_runner=lambda req: None)
    handler.record_compaction("t")
    memory.sync()
    assert memory.store.file_records("sessions") == {}
