"""OpenClawChatMemory (legacy langchain-classic path): recall into the prompt, turns to the transcript."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_classic.chains import ConversationChain
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import PromptTemplate
from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider

from langchain_openclaw_memory import OpenClawChatMemory

PROMPT = PromptTemplate.from_template("Memory:\n{memory}\nHistory:\n{history}\nUser: {input}\nAI:")


class Prompts(BaseCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], **kwargs: Any) -> None:
        self.seen.extend(prompts)


@pytest.mark.filterwarnings("ignore:The class `ConversationChain` was deprecated")
def test_conversation_chain_recalls_memory_and_records_turns(memory: MemoryIndex) -> None:
    chat_memory = OpenClawChatMemory(memory=memory, session_id="s1", max_results=1, min_score=0.0)
    prompts = Prompts()
    chain = ConversationChain(
        llm=FakeListLLM(responses=["Alice owns it.", "They use SQLite."]), memory=chat_memory, prompt=PROMPT
    )
    first = chain.invoke({"input": "Who owns the billing service?"}, {"callbacks": [prompts]})
    chain.invoke({"input": "What do caches use?"}, {"callbacks": [prompts]})

    assert first["response"] == "Alice owns it."
    assert "Alice owns the billing service." in prompts.seen[0]
    assert "[memory/2026-01-15.md#L1-" in prompts.seen[0]
    assert "Human: Who owns the billing service?\nAI: Alice owns it." in prompts.seen[1]

    transcript = memory.config.resolved_sessions_dir() / "s1.jsonl"
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [(r["message"]["role"], r["message"]["content"]) for r in records] == [
        ("user", "Who owns the billing service?"),
        ("assistant", "Alice owns it."),
        ("user", "What do caches use?"),
        ("assistant", "They use SQLite."),
    ]


def test_variables_and_messages_mode(memory: MemoryIndex) -> None:
    chat_memory = OpenClawChatMemory(memory=memory, return_messages=True, min_score=0.0)
    assert chat_memory.memory_variables == ["memory", "history"]
    chat_memory.save_context({"input": "hi"}, {"output": "hello"})
    variables = chat_memory.load_memory_variables({"input": "rate limit"})
    assert "memory/projects/api.md" in variables["memory"]
    assert variables["history"] == [HumanMessage("hi"), AIMessage("hello")]
    chat_memory.clear()
    assert chat_memory.load_memory_variables({"input": "rate limit"})["history"] == []
    strict = OpenClawChatMemory(memory=memory)  # default min_score: an unrelated query recalls nothing
    assert strict.load_memory_variables({"input": "zzzz-nothing"}) == {"memory": "", "history": ""}
    assert chat_memory.transcript.path.read_text().count('"role":"user"') == 1  # clear keeps the transcript

    recall_only = OpenClawChatMemory(memory=memory, history_key=None, memory_key="notes", min_score=0.0)
    assert set(recall_only.load_memory_variables({"q": "Fly.io region"})) == {"notes"}


async def test_async_save_context_writes_the_transcript(memory: MemoryIndex, tmp_path: Path) -> None:
    path = tmp_path / "custom.jsonl"
    chat_memory = OpenClawChatMemory(memory=memory, transcript_path=path)
    await chat_memory.asave_context({"input": "async hi"}, {"output": "async hello"})
    assert '"content":"async hi"' in path.read_text()
    variables = await chat_memory.aload_memory_variables({"input": "async"})
    assert "Human: async hi" in variables["history"]


def test_recorded_turns_become_searchable_with_the_sessions_source(corpus: Path, tmp_path: Path) -> None:
    with MemoryIndex(workspace=corpus, store={"path": str(tmp_path / "s.sqlite")}, provider=FakeEmbeddingProvider(),
                     sources=["memory", "sessions"], sessions_dir=tmp_path / "sessions", watch=False) as index:
        chat_memory = OpenClawChatMemory(memory=index, session_id="chat-7")
        chat_memory.save_context({"input": "Remember the staging password rotates every Tuesday."},
                                 {"output": "Noted: staging rotation on Tuesdays."})
        index.sync()
        hits = index.search("staging rotation Tuesday", min_score=0.0).hits
        assert hits[0].source == "sessions" and hits[0].path == "sessions/chat-7.jsonl"


def test_package_imports_without_langchain_classic() -> None:
    code = (
        "import sys; sys.modules['langchain_classic'] = None\n"
        "import langchain_openclaw_memory as m\n"
        "assert m.OpenClawMemoryRetriever and m.PreCompactionFlushMiddleware\n"
        "from openclaw_memory.errors import MissingDependencyError\n"
        "try:\n"
        "    m.OpenClawChatMemory\n"
        "except MissingDependencyError as exc:\n"
        "    print(exc.extra, '|', exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    extra, message = out.stdout.strip().split(" | ", 1)
    assert extra == "langchain-classic"
    assert "pip install 'openclaw-memory[langchain-classic]'" in message


@pytest.mark.parametrize("session_id", ["../../escaped", "/tmp/openclaw-chat-memory-escaped", "team/alice"])
def test_a_session_id_never_names_a_file_outside_the_sessions_directory(memory: MemoryIndex, session_id: str) -> None:
    # the id often comes from the request (a chat or user id); it names the transcript, never a path
    chat_memory = OpenClawChatMemory(memory=memory, session_id=session_id)
    chat_memory.save_context({"input": "hi"}, {"output": "hello"})
    sessions = memory.config.resolved_sessions_dir()
    written = chat_memory.transcript.path
    try:
        assert written.parent == sessions and written == memory.transcript_path(session_id)
        assert '"content":"hi"' in written.read_text()
    finally:
        Path("/tmp/openclaw-chat-memory-escaped.jsonl").unlink(missing_ok=True)
