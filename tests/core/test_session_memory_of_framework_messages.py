"""``save_session_memory`` given a framework's own messages (a LangGraph state's ``messages``, a LlamaIndex chat
history) saved nothing and returned None: LangChain messages carry their role as ``type`` ("human", "ai") and
LlamaIndex ``ChatMessage`` as an enum, so no message counted as the user's or the assistant's."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from openclaw_memory.agent.session_hook import format_conversation, save_session_memory
from openclaw_memory.config import MemoryConfig

NOW = datetime(2026, 1, 16, 14, 30)


def test_langchain_messages_are_saved(tmp_path: Path) -> None:
    messages = pytest.importorskip("langchain_core.messages")
    history = [messages.SystemMessage("be brief"), messages.HumanMessage("We chose SQLite for the index."),
               messages.AIMessage("Noted: SQLite."), messages.HumanMessage("/new")]
    saved = save_session_memory(MemoryConfig(workspace=tmp_path), history, now=NOW)
    assert saved is not None
    assert saved.read_text().endswith("user: We chose SQLite for the index.\nassistant: Noted: SQLite.\n")


def test_llama_index_chat_messages_are_saved(tmp_path: Path) -> None:
    llms = pytest.importorskip("llama_index.core.llms")
    history = [llms.ChatMessage(role="user", content="Deploys happen on Fridays now."),
               llms.ChatMessage(role="assistant", content="Understood.")]
    saved = save_session_memory(MemoryConfig(workspace=tmp_path), history, now=NOW)
    assert saved is not None and "user: Deploys happen on Fridays now.\nassistant: Understood." in saved.read_text()


def test_dicts_with_a_type_or_a_role_in_capitals() -> None:
    assert format_conversation([{"type": "human", "content": "a"}, {"role": "Assistant", "content": "b"}]) == [
        "user: a", "assistant: b"]
