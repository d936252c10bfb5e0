"""Bad search arguments raise MemoryArgumentError (naming the argument) in the core search and in both
frameworks' retrievers, which pass them to the core; good ones still search."""

from __future__ import annotations

from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import MemoryArgumentError

BAD = [
    ({"sources": ["memroy"]}, "unknown source"),
    ({"sources": "memory"}, "sources must be a list"),
    ({"max_results": 0}, "max_results must be a positive integer"),
    ({"max_results": -1}, "max_results must be a positive integer"),
    ({"max_results": 1.5}, "max_results must be a positive integer"),
    ({"max_results": True}, "max_results must be a positive integer"),
    ({"max_results": "2"}, "max_results must be a positive integer"),
    ({"min_score": -0.5}, "min_score must be between 0 and 1"),
    ({"min_score": 1.5}, "min_score must be between 0 and 1"),
    ({"min_score": float("nan")}, "min_score must be between 0 and 1"),
    ({"min_score": True}, "min_score must be between 0 and 1"),
    ({"min_score": "0.2"}, "min_score must be between 0 and 1"),
]


@pytest.fixture
def memory(make_index, write) -> MemoryIndex:
    write({"MEMORY.md": "# Memory\n\nThe coffee order is an oat flat white.\n"})
    idx = make_index(None)
    idx.sync()
    return idx


@pytest.mark.parametrize(("kwargs", "message"), BAD, ids=lambda v: repr(v) if isinstance(v, dict) else "")
def test_core_search_rejects_bad_arguments(memory: MemoryIndex, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(MemoryArgumentError, match=message):
        memory.search("coffee order", **kwargs)


@pytest.mark.parametrize("query", [123, None, b"coffee", ["coffee"]])
def test_a_query_that_is_not_a_string_is_an_argument_error(memory: MemoryIndex, query: Any) -> None:
    with pytest.raises(MemoryArgumentError, match="query must be a string"):
        memory.search(query)


async def test_the_async_search_checks_the_same(memory: MemoryIndex) -> None:
    with pytest.raises(MemoryArgumentError, match="unknown source"):
        await memory.asearch("coffee", sources=["memroy"])


def test_good_arguments_still_search(memory: MemoryIndex) -> None:
    for kwargs in ({"sources": ["memory"]}, {"sources": ("memory", "sessions")}, {"max_results": 1},
                   {"min_score": 0}, {"min_score": 1}, {"max_results": None, "min_score": None, "sources": None}):
        memory.search("coffee order", **kwargs)
    assert [h.path for h in memory.search("coffee order", max_results=3, min_score=0.0).hits] == ["MEMORY.md"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"sources": ["memroy"]}, "unknown source"), ({"k": 1.5}, "k must be a positive integer"),
    ({"k": True}, "k must be a positive integer"), ({"min_score": -0.5}, "min_score must be between 0 and 1"),
])
def test_langchain_retriever_passes_the_core_error(memory: MemoryIndex, kwargs: dict[str, Any], message: str) -> None:
    from langchain_openclaw_memory import OpenClawMemoryRetriever

    retriever = OpenClawMemoryRetriever(memory)
    with pytest.raises(MemoryArgumentError, match=message):
        retriever.invoke("coffee order", **kwargs)
    with pytest.raises(ValueError, match=message):  # at construction, pydantic's ValidationError carries it
        OpenClawMemoryRetriever(memory, search_kwargs=kwargs)


def test_langchain_retriever_sources_field_reaches_the_core(memory: MemoryIndex) -> None:
    from langchain_openclaw_memory import OpenClawMemoryRetriever

    retriever = OpenClawMemoryRetriever(memory, sources=["memory"])
    assert [d.metadata["path"] for d in retriever.invoke("coffee order")] == ["MEMORY.md"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"sources": ["memroy"]}, "unknown source"), ({"similarity_top_k": 1.5}, "similarity_top_k must be a positive"),
    ({"similarity_top_k": True}, "similarity_top_k must be a positive"),
    ({"min_score": -0.5}, "min_score must be between 0 and 1"),
])
def test_llama_index_retriever_passes_the_core_error(memory: MemoryIndex, kwargs: dict[str, Any],
                                                     message: str) -> None:
    from llama_index_openclaw_memory import OpenClawMemoryRetriever

    with pytest.raises(MemoryArgumentError, match=message):
        OpenClawMemoryRetriever(memory, **kwargs)
    retriever = OpenClawMemoryRetriever(memory)
    retriever.sources = kwargs.get("sources", ["memroy"])  # set after construction: the core still refuses it
    with pytest.raises(MemoryArgumentError, match="unknown source"):
        retriever.retrieve("coffee order")
