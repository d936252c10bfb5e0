"""The agent tools ``memory_search`` / ``memory_get`` (and, opt-in, ``memory_forget_entry``) as LangChain
``StructuredTool`` objects.

Both return ``(text for the model, structured artifact)``; a refused path, an empty query or an
unavailable embedding provider comes back to the model as a tool error (``ToolMessage`` with
``status="error"``) it can act on, never as an exception in the agent loop.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import StructuredTool, ToolException
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.index import MemoryIndex
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
    format_forget_text,
    format_get_text,
    format_search_text,
    memory_forget_entry,
    memory_get,
    memory_recall_prompt,
    memory_search,
)

from langchain_openclaw_memory._convert import check_memory_index, validation_error_text

__all__ = [
    "create_memory_forget_entry_tool",
    "create_memory_get_tool",
    "create_memory_search_tool",
    "create_memory_tools",
    "memory_recall_prompt",
]

SearchOutput = tuple[str, dict[str, Any]]


def _search_output(payload: dict[str, Any]) -> SearchOutput:
    if payload.get("error"):
        raise ToolException(format_search_text(payload))
    return format_search_text(payload), payload


def _get_output(payload: dict[str, Any]) -> SearchOutput:
    if payload.get("error"):
        raise ToolException(str(payload["error"]))
    return format_get_text(payload), payload


def create_memory_search_tool(
    memory: MemoryIndex,
    *,
    name: str = "memory_search",
    description: str = MEMORY_SEARCH_DESCRIPTION,
    session_key: str | None = None,
) -> StructuredTool:
    """The ``memory_search`` tool over ``memory``: cited snippets for the model, the full
    result payload (hits with path, lines and scores) as the ``ToolMessage.artifact``."""
    check_memory_index(memory)

    def _run(query: str, max_results: int | None = None, min_score: float | None = None, after: str | None = None,
             before: str | None = None, corpus: str | None = None) -> SearchOutput:
        try:
            payload = memory_search(memory, query, max_results, min_score, session_key=session_key, after=after,
                                    before=before, corpus=corpus)
        except OpenClawMemoryError as exc:
            raise ToolException(f"memory_search failed: {exc}") from exc
        return _search_output(payload)

    async def _arun(query: str, max_results: int | None = None, min_score: float | None = None,
                    after: str | None = None, before: str | None = None, corpus: str | None = None) -> SearchOutput:
        try:
            payload = await amemory_search(memory, query, max_results, min_score, session_key=session_key,
                                           after=after, before=before, corpus=corpus)
        except OpenClawMemoryError as exc:
            raise ToolException(f"memory_search failed: {exc}") from exc
        return _search_output(payload)

    return StructuredTool.from_function(
        func=_run,
        coroutine=_arun,
        name=name,
        description=description,
        args_schema=MemorySearchArgs,
        response_format="content_and_artifact",
        handle_tool_error=True,
        handle_validation_error=validation_error_text,
    )


def create_memory_get_tool(
    memory: MemoryIndex, *, name: str = "memory_get", description: str = MEMORY_GET_DESCRIPTION
) -> StructuredTool:
    """The ``memory_get`` tool over ``memory``: the requested lines for the model,
    ``{path, text, start_line, end_line}`` as the artifact."""
    check_memory_index(memory)

    def _run(path: str, from_line: int | None = None, lines: int | None = None) -> SearchOutput:
        return _get_output(memory_get(memory, path, from_line, lines))

    async def _arun(path: str, from_line: int | None = None, lines: int | None = None) -> SearchOutput:
        return _get_output(await amemory_get(memory, path, from_line, lines))

    return StructuredTool.from_function(
        func=_run,
        coroutine=_arun,
        name=name,
        description=description,
        args_schema=MemoryGetArgs,
        response_format="content_and_artifact",
        handle_tool_error=True,
        handle_validation_error=validation_error_text,
    )



def _forget_output(payload: dict[str, Any]) -> SearchOutput:
    if payload.get("error"):
        raise ToolException(str(payload["error"]))
    return format_forget_text(payload), payload


def create_memory_forget_entry_tool(
    memory: MemoryIndex, *, name: str = "memory_forget_entry", description: str = MEMORY_FORGET_ENTRY_DESCRIPTION
) -> StructuredTool:
    """The ``memory_forget_entry`` tool over ``memory`` (not in :func:`create_memory_tools`: add it when
    the agent may forget on the user's request): removes the memory from MEMORY.md and records it so
    consolidation never promotes it again; the payload is the artifact."""
    check_memory_index(memory)

    def _run(what: str) -> SearchOutput:
        return _forget_output(memory_forget_entry(memory, what))

    async def _arun(what: str) -> SearchOutput:
        return _forget_output(await amemory_forget_entry(memory, what))

    return StructuredTool.from_function(
        func=_run,
        coroutine=_arun,
        name=name,
        description=description,
        args_schema=MemoryForgetEntryArgs,
        response_format="content_and_artifact",
        handle_tool_error=True,
        handle_validation_error=validation_error_text,
    )

def create_memory_tools(memory: MemoryIndex, *, session_key: str | None = None) -> list[StructuredTool]:
    """``[memory_search, memory_get]`` over ``memory``, ready for ``create_agent(tools=...)``."""
    return [create_memory_search_tool(memory, session_key=session_key), create_memory_get_tool(memory)]
