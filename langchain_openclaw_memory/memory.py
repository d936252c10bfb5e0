"""``OpenClawChatMemory``: OpenClaw memory for legacy ``langchain-classic`` chains.

This is the legacy path (``BaseChatMemory`` is deprecated upstream and does not support native
tool calling). New code should use ``create_agent`` with :class:`PreCompactionFlushMiddleware`,
the memory tools and a checkpointer. Needs the ``langchain-classic`` extra.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from langchain_core.messages import BaseMessage, get_buffer_string
from openclaw_memory.errors import MissingDependencyError
from openclaw_memory.files.sessions import TranscriptWriter
from openclaw_memory.agent.tools import format_search_text, memory_search
from pydantic import ConfigDict, Field, PrivateAttr

from langchain_openclaw_memory._convert import SerialisedMemory, check_memory_index

try:
    from langchain_classic.memory.chat_memory import BaseChatMemory
    from langchain_classic.memory.utils import get_prompt_input_key
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise MissingDependencyError("langchain-classic", "langchain-classic", "OpenClawChatMemory") from exc

__all__ = ["OpenClawChatMemory"]


class _History(InMemoryChatMessageHistory):
    """The turn buffer (a subclass, so the upstream deprecation notice is not repeated per chain)."""


class OpenClawChatMemory(BaseChatMemory):
    """Chat memory for classic ``Chain`` / ``ConversationChain`` / ``AgentExecutor`` users.

    ``load_memory_variables`` searches the memory for the chain's input and returns the cited
    snippets under ``memory_key`` (plus the turn buffer under ``history_key`` unless
    ``history_key`` is None). ``save_context`` appends the turn to the buffer and to the session
    transcript ``memory.transcript_path(session_id)`` (``<sessions_dir>/<session_id>.jsonl``), which
    the index searches when the ``sessions`` source is enabled. ``clear`` empties the buffer only;
    the transcript and the Markdown memory are never deleted.

    Example:
        ```python
        chat_memory = OpenClawChatMemory(memory=memory, session_id="support-42")
        chain = ConversationChain(llm=llm, memory=chat_memory, prompt=prompt)  # prompt uses {memory} {history} {input}
        ```
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: SerialisedMemory
    """The memory index to recall from (serialised to JSON as its workspace, agent, backend and store class)."""
    memory_key: str = "memory"
    """Prompt variable that receives the recalled snippets."""
    history_key: str | None = "history"
    """Prompt variable that receives the turn buffer (None: do not provide it)."""
    session_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    """Names the transcript file in the sessions directory (:meth:`MemoryIndex.transcript_path`: an id that is not
    a plain name is made one, so it never names a path)."""
    session_key: str | None = None
    """Passed to the search for session-scoped filtering."""
    transcript_path: Path | None = None
    """Transcript file (default: ``memory.transcript_path(session_id)``, in the sessions directory)."""
    max_results: int | None = None
    """How many snippets to recall (None: ``query.max_results``)."""
    min_score: float | None = None
    """Score floor of the recall (None: ``query.min_score``)."""
    chat_memory: BaseChatMessageHistory = Field(default_factory=_History)

    _writer: TranscriptWriter | None = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        if "memory" in data:
            check_memory_index(data["memory"])  # before pydantic, which would wrap it in a ValidationError
        super().__init__(**data)

    @property
    def memory_variables(self) -> list[str]:
        """The prompt variables this memory provides."""
        return [self.memory_key] + ([self.history_key] if self.history_key else [])

    @property
    def transcript(self) -> TranscriptWriter:
        """The writer of this session's JSONL transcript."""
        if self._writer is None:
            path = self.transcript_path or self.memory.transcript_path(self.session_id)
            self._writer = TranscriptWriter(path)
        return self._writer

    def _query(self, inputs: dict[str, Any]) -> str:
        key = self.input_key or get_prompt_input_key(inputs, self.memory_variables)
        return str(inputs[key])

    def _variables(self, payload: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {self.memory_key: format_search_text(payload) if payload.get("results") else ""}
        if self.history_key:
            messages: list[BaseMessage] = list(self.chat_memory.messages)
            out[self.history_key] = messages if self.return_messages else get_buffer_string(messages)
        return out

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Recall memory relevant to the chain's input (and the turn buffer)."""
        payload = memory_search(self.memory, self._query(inputs), self.max_results, self.min_score,
                                session_key=self.session_key)
        return self._variables(payload)

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Record the turn in the buffer and in the session transcript."""
        user, assistant = self._get_input_output(inputs, outputs)
        super().save_context(inputs, outputs)
        self.transcript.append_messages([("user", str(user)), ("assistant", str(assistant))])

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Async twin of :meth:`save_context`."""
        await asyncio.to_thread(self.save_context, inputs, outputs)
