"""Fixtures for the LangChain adapter: a small memory workspace and a scripted chat model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from pydantic import ConfigDict, Field

CORPUS = {
    "MEMORY.md": (
        "# Long-term memory\n\n"
        "- The user prefers SQLite for local caches.\n"
        "- Deployments run on Fly.io in the Frankfurt region.\n"
    ),
    "memory/2026-01-15.md": (
        "# 2026-01-15\n\n"
        "- Decided the cache layer uses SQLite with WAL mode.\n"
        "- Alice owns the billing service.\n"
    ),
    "memory/2026-01-16.md": (
        "# 2026-01-16\n\n"
        "- Benchmarked the SQLite cache: 2 ms p95 reads.\n"
        "- Error ECONNRESET seen in the payments worker.\n"
    ),
    "memory/projects/api.md": (
        "# API project\n\n"
        "- The public API caches sessions in SQLite.\n"
        "- Rate limit is 100 requests per minute.\n"
    ),
}


@pytest.fixture
def corpus(write: Callable[[dict[str, str | bytes]], Path]) -> Path:
    """A workspace with MEMORY.md and three notes (four files that mention SQLite)."""
    return write(dict(CORPUS))


@pytest.fixture
def memory(corpus: Path, make_index: Callable[..., MemoryIndex], fake_provider: FakeEmbeddingProvider) -> MemoryIndex:
    """A synced index over the corpus, with the offline fake embedder and UTC dates."""
    index = make_index(fake_provider, timezone="UTC")
    index.sync()
    return index


Responder = Callable[[list[BaseMessage], list[str]], AIMessage]


@dataclass
class Call:
    """One recorded model call: its messages and the names of the tools bound to it."""

    messages: list[BaseMessage]
    tools: list[str] = field(default_factory=list)


class ScriptedChatModel(BaseChatModel):
    """A chat model whose replies come from ``responder(messages, tool_names)``.

    ``bind_tools`` works (the tool names reach the responder), every call is recorded in
    ``calls``; nothing touches the network.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responder: Any
    calls: list[Call] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-test-model"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        names = [t.name if hasattr(t, "name") else t["name"] if isinstance(t, dict) else t.__name__ for t in tools]
        return self.bind(tool_names=names, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        names = list(kwargs.get("tool_names") or [])
        self.calls.append(Call(list(messages), names))
        reply = self.responder(list(messages), names)
        return ChatResult(generations=[ChatGeneration(message=reply)])


@pytest.fixture
def scripted() -> Callable[[Responder], ScriptedChatModel]:
    """Build a :class:`ScriptedChatModel` from a responder function."""
    return lambda responder: ScriptedChatModel(responder=responder)
