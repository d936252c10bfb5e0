"""OpenClawMemoryRetriever: hybrid search results as NodeWithScore, alone and in a query engine."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import QueryBundle

from llama_index_openclaw_memory import OpenClawMemoryRetriever
from openclaw_memory import MemoryIndex


def test_nodes_carry_the_hybrid_score_and_location(memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(memory, similarity_top_k=2, min_score=0.0)
    results = retriever.retrieve("payments worker error E429-RL")
    expected = memory.search("payments worker error E429-RL", max_results=2, min_score=0.0).hits
    assert [(r.node.node_id, r.score) for r in results] == [(h.chunk_id, pytest.approx(h.score)) for h in expected]
    top = results[0].node
    assert top.metadata["path"] == "memory/2026-01-16.md"
    assert top.ref_doc_id == "memory/2026-01-16.md"
    assert (top.metadata["start_line"], top.metadata["end_line"]) == (expected[0].start_line, expected[0].end_line)
    assert top.metadata["vector_score"] == pytest.approx(expected[0].vector_score)
    assert "E429-RL" in top.get_content()
    assert retriever.last_result is not None and retriever.last_result.mode == "hybrid"


async def test_async_retrieve_matches_sync(memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(memory)
    sync = retriever.retrieve("Stripe webhooks billing")
    asy = await retriever.aretrieve(QueryBundle("Stripe webhooks billing"))
    assert [(n.node.node_id, n.score) for n in asy] == [(n.node.node_id, n.score) for n in sync]
    assert sync and sync[0].node.metadata["path"] == "memory/2026-01-20.md"


def test_citations_follow_the_session_key(make_index: Callable[..., MemoryIndex], corpus: object,
                                          fake_provider: object) -> None:
    memory = make_index(fake_provider, citations="auto")
    private = OpenClawMemoryRetriever(memory, session_key="agent:main:main").retrieve("Stripe webhooks")
    group = OpenClawMemoryRetriever(memory, session_key="agent:main:telegram:group:42").retrieve("Stripe webhooks")
    assert private[0].node.metadata["citation"].startswith("memory/2026-01-20.md#L")
    assert "citation" not in group[0].node.metadata


def test_in_a_query_engine_the_sources_are_memory_chunks(memory: MemoryIndex) -> None:
    engine = RetrieverQueryEngine.from_args(OpenClawMemoryRetriever(memory, similarity_top_k=1), llm=MockLLM())
    response = engine.query("Which region do deployments run in?")
    assert [n.node.metadata["path"] for n in response.source_nodes] == ["MEMORY.md"]
    assert "Frankfurt" in response.source_nodes[0].node.get_content()
    # the LLM prompt gets the location but not the scores
    llm_text = response.source_nodes[0].node.get_content(metadata_mode="llm")  # type: ignore[arg-type]
    assert "path: MEMORY.md" in llm_text and "vector_score" not in llm_text


def test_an_empty_result_says_why(memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(memory)
    assert retriever.retrieve("zebra giraffe safari") == []
    assert retriever.last_result is not None and retriever.last_result.empty_reason == "no_match"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"similarity_top_k": 0}, "similarity_top_k must be a positive integer"), ({"min_score": 1.5}, "min_score must be between 0 and 1")],
)
def test_invalid_arguments(memory: MemoryIndex, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OpenClawMemoryRetriever(memory, **kwargs)
