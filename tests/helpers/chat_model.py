"""A LangChain chat model whose replies come from a test's responder function; it records every call."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict, Field


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

