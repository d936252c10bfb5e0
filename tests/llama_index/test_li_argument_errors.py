"""Bad input to the LlamaIndex adapter raises the library's one exception tree: MemoryArgumentError (still a
ValueError) or, for an object of the wrong type, MemoryArgumentTypeError (still a TypeError), so both
``except OpenClawMemoryError`` and the built-in ``except`` keep working."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)
from openclaw_memory import MemoryIndex
from tests.helpers.argument_errors import argument_error_tests

from llama_index_openclaw_memory import (
    LlamaIndexEmbeddingProvider,
    LongTermMemoryBlock,
    OpenClawMemoryBlock,
    aconsolidate,
    OpenClawMemoryEmbedding,
    OpenClawMemoryRetriever,
    OpenClawVectorStore,
    consolidate,
    create_long_term_tools,
    create_memory_tools,
    llm_note_extractor,
)


def _query(memory: MemoryIndex, **fields: Any) -> Any:
    return OpenClawVectorStore(memory).query(VectorStoreQuery(**fields))


def _unknown_condition(memory: MemoryIndex) -> Any:
    filters = MetadataFilters(filters=[MetadataFilter(key="path", value="MEMORY.md")])
    filters.condition = "XOR"  # type: ignore[assignment]  # set after validation, as a caller's typo would be
    return _query(memory, query_str="sqlite", similarity_top_k=2, filters=filters)


BAD_VALUES: dict[str, Callable[[MemoryIndex], Any]] = {
    "top_k zero": lambda m: _query(m, query_str="sqlite", similarity_top_k=0),
    "alpha": lambda m: _query(m, query_str="sqlite", mode=VectorStoreQueryMode.HYBRID, alpha=2.0),
    "no query": lambda m: _query(m, query_str="", mode=VectorStoreQueryMode.SPARSE),
    "query mode": lambda m: _query(m, query_str="sqlite", mode=VectorStoreQueryMode.SVM),
    "filter condition": _unknown_condition,
    "delete nothing": lambda m: OpenClawVectorStore(m).delete_nodes(),
    "duplicate ids": lambda m: OpenClawVectorStore(m).add([TextNode(id_="a", text="x"), TextNode(id_="a", text="y")]),
    "append path": lambda m: OpenClawVectorStore(m, append_path="notes/elsewhere.txt").add([TextNode(text="x")]),
    "from_dict config": lambda m: OpenClawVectorStore.from_dict({}),
    "retriever alias twice": lambda m: OpenClawMemoryRetriever(m, similarity_top_k=2, max_results=3),
    "empty node text": lambda m: OpenClawVectorStore(m).add([TextNode(text="  ")]),
    "marker line in text": lambda m: OpenClawVectorStore(m).add([TextNode(text="<!-- /openclaw-memory:node -->")]),
    "metadata not JSON": lambda m: OpenClawVectorStore(m).add([TextNode(text="x", metadata={"when": object()})]),
    "extractor prompt": lambda m: llm_note_extractor(MockLLM(), prompt="no placeholder"),
}

BAD_TYPES: dict[str, Callable[[MemoryIndex], Any]] = {
    "vector store memory": lambda m: OpenClawVectorStore(object()),  # type: ignore[arg-type]
    "from_dict keyword": lambda m: OpenClawVectorStore.from_dict(OpenClawVectorStore(m).to_dict(), bogus=1),
    "retriever memory": lambda m: OpenClawMemoryRetriever(object()),  # type: ignore[arg-type]
    "tools memory": lambda m: create_memory_tools(object()),  # type: ignore[arg-type]
    "long-term tools": lambda m: create_long_term_tools(m),  # type: ignore[arg-type]
    "embedding provider": lambda m: LlamaIndexEmbeddingProvider(object()),  # type: ignore[arg-type]
    "embedding model": lambda m: OpenClawMemoryEmbedding(object()),  # type: ignore[arg-type]
    "consolidation llm": lambda m: consolidate(m, object()),  # type: ignore[arg-type]
    # the workspace path (or another memory) where the memory belongs: not a bare AttributeError/ValidationError
    "consolidation memory": lambda m: consolidate("~/notes", MockLLM()),  # type: ignore[arg-type]
    "async consolidation memory": lambda m: asyncio.run(aconsolidate("~/notes", MockLLM())),  # type: ignore[arg-type]
    "memory block memory": lambda m: OpenClawMemoryBlock(memory="~/notes"),  # type: ignore[arg-type]
    "long-term block memory": lambda m: LongTermMemoryBlock(memory=m),  # type: ignore[arg-type]
}


test_a_bad_value_is_a_memory_argument_error, test_a_bad_type_is_a_memory_argument_type_error = argument_error_tests(
    BAD_VALUES, BAD_TYPES)


def test_the_conditions_it_names_are_the_ones_it_takes(memory: MemoryIndex) -> None:
    filters = MetadataFilters(filters=[MetadataFilter(key="path", value="MEMORY.md")], condition=FilterCondition.OR)
    assert _query(memory, query_str="sqlite", similarity_top_k=2, filters=filters).nodes
