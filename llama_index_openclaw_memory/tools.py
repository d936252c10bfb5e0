"""The ``memory_search`` and ``memory_get`` agent tools (and, opt-in, ``memory_forget_entry``) as LlamaIndex
``FunctionTool``s.

Both have a sync and an async implementation, so they work in ``FunctionAgent``,
``AgentWorkflow``, ``ReActAgent`` and plain ``tool.call``/``tool.acall``. The model sees
compact text (search hits with ``path#Lstart-Lend`` citations; the requested lines as text, or what is there
instead: a missing file, lines past its end), as the LangChain tools and the MCP server say it;
``ToolOutput.raw_output`` keeps the full payload of :mod:`openclaw_memory.agent.tools` (path, lines, text). Provider or
path problems and bad arguments are returned to the model as an explanation, never raised, in a
``ToolOutput`` with ``is_error=True`` (as LlamaIndex's agents mark a failed tool call). The
argument schemas carry the core's bounds (``max_results`` 1..50, ``min_score`` 0..1, lines >= 1).

    >>> agent = FunctionAgent(tools=create_memory_tools(memory), llm=llm, system_prompt=memory_recall_prompt())  # doctest: +SKIP
"""

# No `from __future__ import annotations`: FunctionTool builds the argument schema from these
# annotations at runtime, so they must be real objects, not strings.
from typing import Any

from llama_index.core.bridge.pydantic import BaseModel, create_model
from llama_index.core.tools import FunctionTool, ToolOutput
from openclaw_memory import MemoryIndex
from openclaw_memory.agent.tools import (
    MEMORY_FORGET_ENTRY_DESCRIPTION,
    MEMORY_GET_DESCRIPTION,
    MEMORY_SEARCH_DESCRIPTION,
    MemoryForgetEntryArgs,
    MemoryGetArgs,
    MemorySearchArgs,
    amemory_forget_entry,
    amemory_get,
    amemory_search,
    field_annotation,
    format_forget_text,
    format_get_text,
    format_search_text,
    memory_forget_entry,
    memory_get,
    memory_recall_prompt,
    memory_search,
)

from llama_index_openclaw_memory._convert import check_memory_index
from llama_index_openclaw_memory._deprecated import RENAMED, warn_renamed

__all__ = ["MemoryTool", "argument_schema", "create_memory_forget_entry_tool", "create_memory_get_tool",
           "create_memory_search_tool", "create_memory_tools", "memory_recall_prompt"]

# the core's argument models are the one source of descriptions and bounds
_Query = field_annotation(MemorySearchArgs, "query")
_MaxResults = field_annotation(MemorySearchArgs, "max_results")
_MinScore = field_annotation(MemorySearchArgs, "min_score")
_After = field_annotation(MemorySearchArgs, "after")
_Before = field_annotation(MemorySearchArgs, "before")
_Corpus = field_annotation(MemorySearchArgs, "corpus")
_Path = field_annotation(MemoryGetArgs, "path")
_FromLine = field_annotation(MemoryGetArgs, "from_line")
_Lines = field_annotation(MemoryGetArgs, "lines")
_What = field_annotation(MemoryForgetEntryArgs, "what")


def _get_text(payload: dict[str, Any]) -> str:
    """What the model reads for a ``memory_get`` payload: the refusal's explanation, else the core's text of the
    lines (as the LangChain tool and the MCP server say it)."""
    return str(payload["error"]) if payload.get("error") else format_get_text(payload)


def argument_schema(name: str, model: type[BaseModel]) -> type[BaseModel]:
    """``model``'s fields under their Python names (the names the tool function takes), with their
    descriptions and bounds: LlamaIndex's schema from a signature keeps only the descriptions."""
    fields: dict[str, Any] = {
        field: (field_annotation(model, field), ... if info.is_required() else info.default)
        for field, info in model.model_fields.items()
    }
    return create_model(name, **fields)


class MemoryTool(FunctionTool):
    """A FunctionTool whose output is marked ``is_error`` when the core's payload holds an ``error``."""

    @staticmethod
    def _marked(output: ToolOutput) -> ToolOutput:
        payload = output.raw_output
        if isinstance(payload, dict) and payload.get("error"):
            output.is_error = True
        return output

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return self._marked(super().call(*args, **kwargs))

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return self._marked(await super().acall(*args, **kwargs))


def create_memory_search_tool(memory: MemoryIndex, *, session_key: str | None = None, name: str = "memory_search") -> FunctionTool:
    """The ``memory_search`` tool over ``memory`` (``session_key`` decides citations in ``auto`` mode)."""
    check_memory_index(memory)

    def search(query: _Query, max_results: _MaxResults = None, min_score: _MinScore = None, after: _After = None,
               before: _Before = None, corpus: _Corpus = None) -> dict[str, Any]:
        return memory_search(memory, query, max_results, min_score, session_key=session_key, after=after,
                             before=before, corpus=corpus)

    async def asearch(query: _Query, max_results: _MaxResults = None, min_score: _MinScore = None,
                      after: _After = None, before: _Before = None, corpus: _Corpus = None) -> dict[str, Any]:
        return await amemory_search(memory, query, max_results, min_score, session_key=session_key, after=after,
                                    before=before, corpus=corpus)

    async def aformat(payload: dict[str, Any]) -> str:
        return format_search_text(payload)

    return MemoryTool.from_defaults(
        fn=search, async_fn=asearch, name=name, description=MEMORY_SEARCH_DESCRIPTION,
        fn_schema=argument_schema(name, MemorySearchArgs),
        callback=format_search_text, async_callback=aformat,
    )


def create_memory_get_tool(memory: MemoryIndex, *, name: str = "memory_get") -> FunctionTool:
    """The ``memory_get`` tool over ``memory``: read lines of one memory file."""
    check_memory_index(memory)

    def get(path: _Path, from_line: _FromLine = None, lines: _Lines = None) -> dict[str, Any]:
        return memory_get(memory, path, from_line, lines)

    async def aget(path: _Path, from_line: _FromLine = None, lines: _Lines = None) -> dict[str, Any]:
        return await amemory_get(memory, path, from_line, lines)

    async def aformat(payload: dict[str, Any]) -> str:
        return _get_text(payload)

    return MemoryTool.from_defaults(
        fn=get, async_fn=aget, name=name, description=MEMORY_GET_DESCRIPTION,
        fn_schema=argument_schema(name, MemoryGetArgs),
        callback=_get_text, async_callback=aformat,
    )



def create_memory_forget_entry_tool(memory: MemoryIndex, *, name: str = "memory_forget_entry") -> FunctionTool:
    """The ``memory_forget_entry`` tool over ``memory`` (not in :func:`create_memory_tools`: add it when
    the agent may forget on the user's request): removes the memory from MEMORY.md and records it so
    consolidation never promotes it again."""
    check_memory_index(memory)

    def forget(what: _What) -> dict[str, Any]:
        return memory_forget_entry(memory, what)

    async def aforget(what: _What) -> dict[str, Any]:
        return await amemory_forget_entry(memory, what)

    async def aformat(payload: dict[str, Any]) -> str:
        return format_forget_text(payload)

    return MemoryTool.from_defaults(
        fn=forget, async_fn=aforget, name=name, description=MEMORY_FORGET_ENTRY_DESCRIPTION,
        fn_schema=argument_schema(name, MemoryForgetEntryArgs),
        callback=format_forget_text, async_callback=aformat,
    )

def create_memory_tools(memory: MemoryIndex, *, session_key: str | None = None) -> list[FunctionTool]:
    """``[memory_search, memory_get]`` for an agent's ``tools=``."""
    return [create_memory_search_tool(memory, session_key=session_key), create_memory_get_tool(memory)]


def __getattr__(name: str) -> Any:
    # the old names (memory_search_tool, memory_get_tool): still importable, with a DeprecationWarning
    if name in RENAMED and RENAMED[name] in __all__:
        warn_renamed(name, RENAMED[name])
        return globals()[RENAMED[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
