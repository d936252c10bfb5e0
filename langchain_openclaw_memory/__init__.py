"""OpenClaw's Markdown agent memory for LangChain 1.x and LangGraph.

* :class:`OpenClawMemoryRetriever`: hybrid memory search as a retriever.
* :func:`create_memory_tools`: ``memory_search`` / ``memory_get`` for agents, plus
  :func:`memory_recall_prompt` for the system prompt.
* :class:`PreCompactionFlushMiddleware`: for ``create_agent``, listed before
  ``SummarizationMiddleware``: writes durable notes to ``memory/YYYY-MM-DD.md`` before the
  history is compacted, registers the tools and injects the session's memory context.
* :class:`MemoryFlushCallbackHandler`: the same flush for any runnable, driven by token usage.
* :class:`LongTermMemoryMiddleware` / :func:`create_long_term_tools`: the LanceDB long-term memory
  (auto-recall, auto-capture, ``memory_store`` / ``memory_recall`` / ``memory_forget``).
* :class:`OpenClawMemoryStore`: the memory as a LangGraph ``BaseStore``.
* :func:`consolidate` / :class:`ConsolidationMiddleware` / :func:`consolidation_node`: daily notes
  consolidated into ``MEMORY.md`` with your chat model ("dreaming").
* :class:`OpenClawMemoryEmbeddings` / :class:`LangChainEmbeddingProvider`: embeddings both ways.
* :class:`OpenClawChatMemory`: legacy ``langchain-classic`` chat memory (imported on first use;
  needs ``pip install 'openclaw-memory[langchain-classic]'``; not in ``__all__``, so ``import *`` works
  without that extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_openclaw_memory._flush import FlushOutcome
from langchain_openclaw_memory.callbacks import FlushRequest, MemoryFlushCallbackHandler
from langchain_openclaw_memory.consolidation import (
    ConsolidationMiddleware,
    aconsolidate,
    consolidate,
    consolidation_node,
)
from langchain_openclaw_memory.embeddings import LangChainEmbeddingProvider, OpenClawMemoryEmbeddings
from langchain_openclaw_memory.long_term import LongTermMemoryMiddleware, LongTermMemoryState, create_long_term_tools
from langchain_openclaw_memory.middleware import MemoryFlushState, PreCompactionFlushMiddleware
from langchain_openclaw_memory.retriever import OpenClawMemoryRetriever
from langchain_openclaw_memory.store import OpenClawMemoryStore
from langchain_openclaw_memory.tools import (
    create_memory_forget_entry_tool,
    create_memory_get_tool,
    create_memory_search_tool,
    create_memory_tools,
    memory_recall_prompt,
)

if TYPE_CHECKING:
    from langchain_openclaw_memory.memory import OpenClawChatMemory as OpenClawChatMemory

__all__ = [
    "ConsolidationMiddleware",
    "FlushOutcome",
    "FlushRequest",
    "LangChainEmbeddingProvider",
    "LongTermMemoryMiddleware",
    "LongTermMemoryState",
    "MemoryFlushCallbackHandler",
    "MemoryFlushState",
    "OpenClawMemoryEmbeddings",
    "OpenClawMemoryRetriever",
    "OpenClawMemoryStore",
    "PreCompactionFlushMiddleware",
    "aconsolidate",
    "consolidate",
    "consolidation_node",
    "create_long_term_tools",
    "create_memory_forget_entry_tool",
    "create_memory_get_tool",
    "create_memory_search_tool",
    "create_memory_tools",
    "memory_recall_prompt",
]


def __getattr__(name: str) -> Any:
    # OpenClawChatMemory needs the optional langchain-classic package: import it on first use,
    # so the rest of the package works without it (a MissingDependencyError names the extra).
    if name == "OpenClawChatMemory":
        from langchain_openclaw_memory.memory import OpenClawChatMemory

        return OpenClawChatMemory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | {"OpenClawChatMemory"})
