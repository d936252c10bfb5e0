"""Consolidation ("dreaming") with a LlamaIndex ``LLM``: :func:`consolidate` / :func:`aconsolidate`.
The LLM is only translated into the core's ``str -> str`` completion; everything else is
:mod:`openclaw_memory.consolidation`."""

from __future__ import annotations

from datetime import date

from llama_index.core.llms import LLM
from openclaw_memory.errors import MemoryArgumentTypeError
from openclaw_memory import consolidation as core
from openclaw_memory.config import MemoryConfig
from openclaw_memory.consolidation import AsyncCompletion, Completion, ConsolidationReport
from openclaw_memory.index import MemoryIndex

from llama_index_openclaw_memory._convert import check_memory_index

__all__ = ["aconsolidate", "completion", "consolidate"]


def completion(llm: LLM) -> tuple[Completion, AsyncCompletion]:
    """The core's completion functions (sync, async) over ``llm``: one fresh, tool-free completion."""
    if not isinstance(llm, LLM):
        raise MemoryArgumentTypeError(f"llm must be a llama_index.core LLM, not {type(llm).__name__}")

    def complete(prompt: str) -> str:
        return llm.complete(prompt).text

    async def acomplete(prompt: str) -> str:
        return (await llm.acomplete(prompt)).text

    return complete, acomplete


def consolidate(memory: MemoryIndex | MemoryConfig, llm: LLM, *, apply: bool = True,
                today: date | None = None) -> ConsolidationReport:
    """Consolidate the recent daily notes into MEMORY.md with ``llm`` (see
    :func:`openclaw_memory.consolidation.consolidate`)."""
    check_memory_index(memory, config=True)
    return core.consolidate(memory, completion(llm)[0], apply=apply, today=today)


async def aconsolidate(memory: MemoryIndex | MemoryConfig, llm: LLM, *, apply: bool = True,
                       today: date | None = None) -> ConsolidationReport:
    """Async twin of :func:`consolidate`."""
    check_memory_index(memory, config=True)
    return await core.aconsolidate(memory, completion(llm)[1], apply=apply, today=today)
