"""OpenClaw Markdown memory for LlamaIndex: vector store, retriever, agent tools and memory block.

Thin adapters over :mod:`openclaw_memory`: the Markdown files stay the source of truth and every
search, sync and write goes through the core.

* :class:`OpenClawVectorStore`: the memory workspace as a ``BasePydanticVectorStore``
  (``VectorStoreIndex.from_vector_store`` / ``from_documents``; added nodes become Markdown).
* :class:`OpenClawMemoryRetriever`: hybrid memory search as a ``BaseRetriever``.
* :func:`memory_tools`: ``memory_search`` and ``memory_get`` as ``FunctionTool``s for agents.
* :class:`OpenClawMemoryBlock`: a ``Memory`` block that flushes evicted messages to the daily
  note and recalls relevant memory.
* :class:`LongTermMemoryBlock` / :func:`long_term_tools`: the LanceDB long-term memory (auto-recall,
  auto-capture, ``memory_store`` / ``memory_recall`` / ``memory_forget``).
* :class:`OpenClawEmbedding` / :class:`LlamaIndexEmbeddingProvider`: share one embedding model.
"""

from __future__ import annotations

try:
    import llama_index.core  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    from openclaw_memory.errors import MissingDependencyError

    raise MissingDependencyError("llama-index-core", "llamaindex", "the LlamaIndex adapter") from exc

from llama_index_openclaw_memory.embeddings import LlamaIndexEmbeddingProvider, OpenClawEmbedding
from llama_index_openclaw_memory.long_term import LongTermMemoryBlock, long_term_tools
from llama_index_openclaw_memory.memory_block import (
    DEFAULT_EXTRACTION_PROMPT,
    NoteExtractor,
    OpenClawMemoryBlock,
    llm_note_extractor,
)
from llama_index_openclaw_memory.retriever import OpenClawMemoryRetriever
from llama_index_openclaw_memory.tools import memory_get_tool, memory_recall_prompt, memory_search_tool, memory_tools
from llama_index_openclaw_memory.vector_store import DEFAULT_APPEND_PATH, OpenClawVectorStore, ProtectedMemoryError

__all__ = [
    "DEFAULT_APPEND_PATH",
    "DEFAULT_EXTRACTION_PROMPT",
    "LlamaIndexEmbeddingProvider",
    "LongTermMemoryBlock",
    "NoteExtractor",
    "OpenClawEmbedding",
    "OpenClawMemoryBlock",
    "OpenClawMemoryRetriever",
    "OpenClawVectorStore",
    "ProtectedMemoryError",
    "llm_note_extractor",
    "long_term_tools",
    "memory_get_tool",
    "memory_recall_prompt",
    "memory_search_tool",
    "memory_tools",
]
