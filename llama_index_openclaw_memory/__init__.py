"""OpenClaw Markdown memory for LlamaIndex: vector store, retriever, agent tools and memory block.

Thin adapters over :mod:`openclaw_memory`: the Markdown files stay the source of truth and every
search, sync and write goes through the core.

* :class:`OpenClawVectorStore`: the memory workspace as a ``BasePydanticVectorStore``
  (``VectorStoreIndex.from_vector_store`` / ``from_documents``; added nodes become Markdown).
* :class:`OpenClawMemoryRetriever`: hybrid memory search as a ``BaseRetriever``.
* :func:`create_memory_tools`: ``memory_search`` and ``memory_get`` as ``FunctionTool``s for agents.
* :class:`OpenClawMemoryBlock`: a ``Memory`` block that flushes evicted messages to the daily
  note and recalls relevant memory.
* :class:`LongTermMemoryBlock` / :func:`create_long_term_tools`: the LanceDB long-term memory (auto-recall,
  auto-capture, ``memory_store`` / ``memory_recall`` / ``memory_forget``).
* :class:`OpenClawMemoryEmbedding` / :class:`LlamaIndexEmbeddingProvider`: share one embedding model.
* :func:`consolidate` / :func:`aconsolidate`: daily notes consolidated into ``MEMORY.md`` with your LLM.

Old names (``OpenClawEmbedding``, ``memory_tools``, ``memory_search_tool``, ``memory_get_tool``,
``max_results=``, ``session_kind="private"``) still work and warn.
"""

from __future__ import annotations

try:
    import llama_index.core  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    from openclaw_memory.errors import MissingDependencyError

    raise MissingDependencyError("llama-index-core", "llamaindex", "the LlamaIndex adapter") from exc

from typing import Any

from llama_index_openclaw_memory._deprecated import RENAMED, warn_renamed
from llama_index_openclaw_memory.consolidation import aconsolidate, consolidate
from llama_index_openclaw_memory.embeddings import LlamaIndexEmbeddingProvider, OpenClawMemoryEmbedding
from llama_index_openclaw_memory.long_term import LongTermMemoryBlock, create_long_term_tools
from llama_index_openclaw_memory.memory_block import (
    DEFAULT_EXTRACTION_PROMPT,
    NoteExtractor,
    OpenClawMemoryBlock,
    llm_note_extractor,
)
from llama_index_openclaw_memory.retriever import OpenClawMemoryRetriever
from llama_index_openclaw_memory.tools import (
    create_memory_forget_entry_tool,
    create_memory_get_tool,
    create_memory_search_tool,
    create_memory_tools,
    memory_recall_prompt,
)
from llama_index_openclaw_memory.vector_store import DEFAULT_APPEND_PATH, OpenClawVectorStore, ProtectedMemoryError

__all__ = [
    "DEFAULT_APPEND_PATH",
    "DEFAULT_EXTRACTION_PROMPT",
    "LlamaIndexEmbeddingProvider",
    "LongTermMemoryBlock",
    "NoteExtractor",
    "OpenClawMemoryBlock",
    "OpenClawMemoryEmbedding",
    "OpenClawMemoryRetriever",
    "OpenClawVectorStore",
    "ProtectedMemoryError",
    "aconsolidate",
    "consolidate",
    "create_long_term_tools",
    "create_memory_forget_entry_tool",
    "create_memory_get_tool",
    "create_memory_search_tool",
    "create_memory_tools",
    "llm_note_extractor",
    "memory_recall_prompt",
]


def __getattr__(name: str) -> Any:
    # The old names: still importable, with a DeprecationWarning.
    if name in RENAMED:
        warn_renamed(name, RENAMED[name])
        return globals()[RENAMED[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
