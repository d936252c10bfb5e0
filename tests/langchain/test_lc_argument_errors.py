"""Bad input to the LangChain / LangGraph adapter raises the library's one exception tree: MemoryArgumentError
(still a ValueError) or, for an object of the wrong type, MemoryArgumentTypeError (still a TypeError), so both
``except OpenClawMemoryError`` and the built-in ``except`` keep working. Inside a pydantic validator the
framework's ValidationError wraps it, as pydantic requires."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.embeddings import FakeEmbeddings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langgraph.store.base import InvalidNamespaceError, PutOp
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import MemoryArgumentTypeError
from tests.helpers.argument_errors import argument_error_tests

from langchain_openclaw_memory import (
    ConsolidationMiddleware,
    LangChainEmbeddingProvider,
    MemoryFlushCallbackHandler,
    OpenClawChatMemory,
    OpenClawMemoryEmbeddings,
    OpenClawMemoryRetriever,
    OpenClawMemoryStore,
    PreCompactionFlushMiddleware,
    consolidate,
    consolidation_node,
    create_long_term_tools,
    create_memory_forget_entry_tool,
    create_memory_get_tool,
    create_memory_search_tool,
    create_memory_tools,
)

BAD_VALUES: dict[str, Callable[[MemoryIndex], Any]] = {
    "retriever invoke option": lambda m: OpenClawMemoryRetriever(m).invoke("sqlite", bogus=1),
    "retriever threshold twice": lambda m: OpenClawMemoryRetriever(m).invoke("sqlite", min_score=0.1,
                                                                              score_threshold=0.2),
    "store index keys": lambda m: OpenClawMemoryStore(m, index={"bogus": 1}),  # type: ignore[typeddict-unknown-key]
    "store dims": lambda m: OpenClawMemoryStore(m, index={"dims": -1, "fields": ["text"]}),
    "store root": lambda m: OpenClawMemoryStore(m, root="langgraph"),
    "store no memories": lambda m: OpenClawMemoryStore({}),
    "store label": lambda m: OpenClawMemoryStore({"a.b": m}),
    "store filter operator": lambda m: OpenClawMemoryStore(m).search(("memory",), filter={"path": {"$in": ["x"]}}),
    "store file value": lambda m: OpenClawMemoryStore(m).put(("memory", "main"), "MEMORY.md", {"note": "x"}),
    "store item value": lambda m: OpenClawMemoryStore(m).put(("users",), "k", {"when": object()}),
    "store item key": lambda m: OpenClawMemoryStore(m).batch([PutOp(("users",), "", {"a": 1})]),
    "callbacks window twice": lambda m: MemoryFlushCallbackHandler(m, context_window=1000, trigger_tokens=500),
    "middleware no model": lambda m: PreCompactionFlushMiddleware(m),
}

BAD_TYPES: dict[str, Callable[[MemoryIndex], Any]] = {
    "retriever memory twice": lambda m: OpenClawMemoryRetriever(m, memory=m),
    "embeddings memory twice": lambda m: OpenClawMemoryEmbeddings(m, memory=m),
    # as LlamaIndex's OpenClawMemoryEmbedding(object()): one class for "not an embedding provider"
    "embeddings provider": lambda m: OpenClawMemoryEmbeddings(provider=object()),
    "embeddings positional provider": lambda m: OpenClawMemoryEmbeddings(object()),  # type: ignore[arg-type]
    "embedding provider": lambda m: LangChainEmbeddingProvider(object()),  # type: ignore[arg-type]
    "consolidation model": lambda m: ConsolidationMiddleware(m, object()),  # type: ignore[arg-type]
    "long-term tools": lambda m: create_long_term_tools(m),  # type: ignore[arg-type]
    "store operation": lambda m: OpenClawMemoryStore(m).batch([object()]),  # type: ignore[list-item]
}

#: Something else where a MemoryIndex belongs (the retriever, the workspace path, ...): as the LlamaIndex adapter
#: says it, at once, instead of a bare TypeError/AttributeError or, for tools and middleware, a failure at the
#: agent's first tool call or a sweep that never runs (logged after each agent run).
NOT_A_MEMORY: dict[str, Callable[[Any], Any]] = {
    "retriever": lambda m: OpenClawMemoryRetriever(m),
    "retriever keyword": lambda m: OpenClawMemoryRetriever(memory=m),
    "embeddings": lambda m: OpenClawMemoryEmbeddings(memory=m),
    "store": lambda m: OpenClawMemoryStore(m),
    "store mapping": lambda m: OpenClawMemoryStore({"main": m}),
    "tools": lambda m: create_memory_tools(m),
    "search tool": lambda m: create_memory_search_tool(m),
    "get tool": lambda m: create_memory_get_tool(m),
    "forget tool": lambda m: create_memory_forget_entry_tool(m),
    "flush middleware": lambda m: PreCompactionFlushMiddleware(m, model=GenericFakeChatModel(messages=iter([]))),
    "flush callbacks": lambda m: MemoryFlushCallbackHandler(m),
    "consolidation middleware": lambda m: ConsolidationMiddleware(m, GenericFakeChatModel(messages=iter([]))),
    "consolidation node": lambda m: consolidation_node(m, GenericFakeChatModel(messages=iter([]))),
    "consolidate": lambda m: consolidate(m, GenericFakeChatModel(messages=iter([]))),
    "chat memory": lambda m: OpenClawChatMemory(memory=m),
}


@pytest.mark.parametrize("call", NOT_A_MEMORY.values(), ids=NOT_A_MEMORY.keys())
def test_something_else_for_the_memory_is_a_memory_argument_type_error(call: Callable[[Any], Any]) -> None:
    with pytest.raises(MemoryArgumentTypeError, match="MemoryIndex.*not str"):
        call("~/notes")  # the workspace path instead of MemoryIndex(workspace="~/notes")


test_a_bad_value_is_a_memory_argument_error, test_a_bad_type_is_a_memory_argument_type_error = argument_error_tests(
    BAD_VALUES, BAD_TYPES)


def test_a_bad_field_in_a_validator_is_pydantics_validation_error_naming_the_fix(memory: MemoryIndex) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="needs provider=<EmbeddingProvider> or memory=<MemoryIndex>"):
        OpenClawMemoryEmbeddings()
    assert FakeEmbeddings(size=4)  # the framework's own embeddings are accepted as a provider source
    LangChainEmbeddingProvider(FakeEmbeddings(size=4))


def test_an_empty_namespace_label_in_a_raw_batch_is_langgraphs_invalid_namespace_error(memory: MemoryIndex) -> None:
    with pytest.raises(InvalidNamespaceError):
        OpenClawMemoryStore(memory).batch([PutOp(("users", ""), "k", {"a": 1})])
