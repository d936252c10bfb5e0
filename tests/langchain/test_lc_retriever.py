"""OpenClawMemoryRetriever: documents, metadata, per-call k, async, and use inside an LCEL chain."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import ConfigurableField, RunnableConfig, RunnablePassthrough
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.providers.base import EmbedKind
from openclaw_memory.providers.fake import FakeEmbeddingProvider

from langchain_openclaw_memory import OpenClawMemoryRetriever

pytestmark = pytest.mark.both_stores  # also on PostgreSQL (tests/conftest.py)

METADATA_KEYS = {"path", "start_line", "end_line", "score", "vector_score", "text_score", "source", "citation",
                 "chunk_id"}


def test_documents_carry_hit_metadata_and_chunk_id(memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(memory=memory, k=2, min_score=0.0)
    docs = retriever.invoke("ECONNRESET payments worker")
    hits = memory.search("ECONNRESET payments worker", max_results=2, min_score=0.0).hits

    assert [d.id for d in docs] == [h.chunk_id for h in hits]
    top = docs[0]
    assert set(top.metadata) == METADATA_KEYS
    assert top.metadata["path"] == "memory/2026-01-16.md"
    assert top.metadata["source"] == "memory"
    assert (top.metadata["start_line"], top.metadata["end_line"]) == (hits[0].start_line, hits[0].end_line)
    assert top.metadata["score"] == hits[0].score > 0
    assert "ECONNRESET" in top.page_content


def test_content_text_returns_full_chunk(memory: MemoryIndex) -> None:
    snippet = OpenClawMemoryRetriever(memory=memory, k=1, min_score=0.0).invoke("Alice billing")[0]
    full = OpenClawMemoryRetriever(memory=memory, k=1, min_score=0.0, content="text").invoke("Alice billing")[0]
    assert snippet.id == full.id
    assert "Source:" not in full.page_content
    assert "Alice owns the billing service." in full.page_content


def test_page_content_is_the_text_and_the_citation_is_metadata(memory: MemoryIndex) -> None:
    # as LangChain's retrievers and vector stores do: a prompt that formats its own citations shows each once
    hit = memory.search("Alice billing", max_results=1, min_score=0.0).hits[0]
    assert hit.snippet.endswith(f"Source: {hit.citation}")  # what the agent tools show (citations=auto)
    doc = OpenClawMemoryRetriever(memory, k=1, min_score=0.0).invoke("Alice billing")[0]
    assert "Source:" not in doc.page_content
    assert doc.page_content == hit.snippet[: -len(f"Source: {hit.citation}")].rstrip()
    assert doc.metadata["citation"] == hit.citation == "memory/2026-01-15.md#L1-L4"


def test_defaults_follow_memory_config(memory: MemoryIndex) -> None:
    # Without k / min_score the configured query.max_results / query.min_score apply.
    docs = OpenClawMemoryRetriever(memory=memory).invoke("SQLite cache")
    expected = memory.search("SQLite cache").hits
    assert [d.id for d in docs] == [h.chunk_id for h in expected]


def test_high_min_score_filters_everything(memory: MemoryIndex) -> None:
    assert OpenClawMemoryRetriever(memory=memory, min_score=1.0).invoke("rate limit") == []


def test_k_is_configurable_at_runtime(memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(memory=memory, k=4, min_score=0.0).configurable_fields(
        k=ConfigurableField(id="memory_k")
    )
    assert len(retriever.invoke("SQLite cache")) == 4
    assert len(retriever.invoke("SQLite cache", config={"configurable": {"memory_k": 1}})) == 1


async def test_async_matches_sync(memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(memory=memory, k=3, min_score=0.0)
    sync_docs = retriever.invoke("SQLite cache")
    async_docs = await retriever.ainvoke("SQLite cache", k=2)
    assert [d.id for d in async_docs] == [d.id for d in sync_docs[:2]]


def test_retriever_inside_lcel_chain(memory: MemoryIndex, scripted) -> None:
    def answer(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        return AIMessage(f"ANSWER FROM: {messages[-1].text}")

    model = scripted(answer)
    retriever = OpenClawMemoryRetriever(memory=memory, k=1, min_score=0.0, content="text")
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from memory."), ("human", "Context:\n{context}\n\nQuestion: {question}")]
    )

    def join(docs: list[Document]) -> str:
        return "\n".join(f"[{d.metadata['citation']}] {d.page_content}" for d in docs)

    chain = {"context": retriever | join, "question": RunnablePassthrough()} | prompt | model | StrOutputParser()
    out = chain.invoke("Who owns the billing service?")

    assert out.startswith("ANSWER FROM: Context:")
    assert "[memory/2026-01-15.md#L1-" in out
    assert "Alice owns the billing service." in out
    assert out.endswith("Question: Who owns the billing service?")


# ---- LangChain retriever conventions (issue 12, item 7) ---------------------------------------------


def test_memory_can_be_passed_positionally(memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(memory, k=1, min_score=0.0)
    assert retriever.memory is memory and len(retriever.invoke("Alice billing")) == 1
    with pytest.raises(TypeError, match="both"):
        OpenClawMemoryRetriever(memory, memory=memory)


def test_search_kwargs_are_honoured_and_typos_rejected(memory: MemoryIndex) -> None:
    many = OpenClawMemoryRetriever(memory, search_kwargs={"k": 3, "min_score": 0.0}).invoke("memory")
    one = OpenClawMemoryRetriever(memory, search_kwargs={"k": 1, "score_threshold": 0.0}).invoke("memory")
    assert len(many) > 1 and len(one) == 1
    with pytest.raises(ValueError, match="'kk'"):
        OpenClawMemoryRetriever(memory, search_kwargs={"kk": 1})
    with pytest.raises(ValueError, match="k must be a positive integer"):
        OpenClawMemoryRetriever(memory, search_kwargs={"k": 0})


def test_unknown_constructor_arguments_are_rejected_not_ignored(memory: MemoryIndex) -> None:
    # VectorStoreRetriever's search_type and a metadata filter would otherwise be dropped without a word
    with pytest.raises(ValueError, match="search_type 'mmr' is not supported"):
        OpenClawMemoryRetriever(memory, search_type="mmr")
    # VectorStoreRetriever's other two search types are what this retriever does anyway
    floored = OpenClawMemoryRetriever(memory, search_type="similarity_score_threshold",
                                      search_kwargs={"score_threshold": 0.99})
    assert floored.invoke("Alice billing") == []
    with pytest.raises(ValueError, match="metadata filters are not supported"):
        OpenClawMemoryRetriever(memory, filter={"path": "MEMORY.md"})
    with pytest.raises(ValueError, match="'search_kwarg'"):
        OpenClawMemoryRetriever(memory, search_kwarg={"k": 1})
    tagged = OpenClawMemoryRetriever(memory, k=1, tags=["memory"], metadata={"team": "a"})  # BaseRetriever's own
    assert tagged.tags == ["memory"] and tagged.metadata == {"team": "a"}


@pytest.mark.parametrize(("arguments", "named"), [
    ({"k": 0}, "k"),
    ({"min_score": 2}, "min_score"),
    ({"sources": ["email"]}, "sources"),
    ({"content": "full"}, "content"),
    ({"search_kwargs": {"kk": 1}}, "'kk'"),
    ({"search_kwargs": {"k": 0}}, "k must be a positive integer"),
    ({"search_type": "mmr"}, "search_type 'mmr' is not supported"),
])
def test_bad_constructor_values_raise_memory_argument_error(memory: MemoryIndex, arguments: dict[str, object],
                                                            named: str) -> None:
    """A bad option value is a MemoryArgumentError naming it, as the manual says and the LlamaIndex retriever
    does (it was pydantic's ValidationError, with a link to pydantic's docs)."""
    with pytest.raises(MemoryArgumentError, match=re.escape(named)) as raised:
        OpenClawMemoryRetriever(memory, **arguments)
    assert "pydantic" not in str(raised.value)


def test_invoke_takes_search_options_and_rejects_unknown_ones(memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(memory, k=3)
    assert retriever.invoke("Alice billing", min_score=0.99) == []
    assert len(retriever.invoke("Alice billing", min_score=0.0, k=1)) == 1
    assert {d.metadata["source"] for d in retriever.invoke("Alice", min_score=0.0, sources=["memory"])} == {"memory"}
    with pytest.raises(ValueError, match="metadata filters are not supported"):
        retriever.invoke("Alice", filter={"path": "MEMORY.md"})
    with pytest.raises(ValueError, match="'kk'"):
        retriever.invoke("Alice", kk=1)


async def test_ainvoke_takes_the_same_options(memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(memory, k=3)
    assert len(await retriever.ainvoke("Alice billing", min_score=0.0, k=1)) == 1
    with pytest.raises(ValueError, match="'kk'"):
        await retriever.ainvoke("Alice", kk=1)


def test_a_retriever_pickles(memory: MemoryIndex) -> None:
    import pickle

    retriever = OpenClawMemoryRetriever(memory, search_kwargs={"k": 1, "min_score": 0.0})
    copy = pickle.loads(pickle.dumps(retriever))
    try:
        assert copy.memory is not memory and copy.memory.workspace == memory.workspace
        assert copy.search_kwargs == {"k": 1, "min_score": 0.0}
        assert [d.id for d in copy.invoke("Alice billing")] == [d.id for d in retriever.invoke("Alice billing")]
    finally:
        copy.memory.close()


class _SlowQueries(FakeEmbeddingProvider):
    """The fake embedder with query embeddings that take a few milliseconds, as a real model's do."""

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        if kind == "query":
            time.sleep(0.02)
        return super()._embed(texts, kind)


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_concurrent_queries_all_run_the_hybrid_search(corpus: Path, make_index: Callable[..., MemoryIndex],
                                                            asynchronous: bool) -> None:
    # retriever.batch / abatch (and an agent's parallel tool calls) search at once; none may fall back to
    # keywords because the others are still embedding their queries
    memory = make_index(_SlowQueries(), timezone="UTC")
    memory.sync()
    retriever = OpenClawMemoryRetriever(memory, k=1, min_score=0.0)
    queries = [f"SQLite cache {i}" for i in range(12)]  # distinct: no query-cache hits
    config: RunnableConfig = {"max_concurrency": 8}
    found = await retriever.abatch(queries, config) if asynchronous else retriever.batch(queries, config)
    vector_scores = [documents[0].metadata["vector_score"] for documents in found]
    assert all(score is not None and score > 0 for score in vector_scores), vector_scores


def test_the_period_may_be_a_date_as_in_memory_search(memory: MemoryIndex) -> None:
    """``after`` / ``before`` as fields took only strings (a ``datetime.date`` raised ValidationError), while the same
    options per call, and ``MemoryIndex.search``, take a date or a datetime too."""
    from datetime import date, datetime

    expected = [d.metadata["path"] for d in OpenClawMemoryRetriever(memory, after="2026-01-16", min_score=0.0)
                .invoke("SQLite cache")]
    assert "memory/2026-01-15.md" not in expected and expected
    for after in (date(2026, 1, 16), datetime(2026, 1, 16, 0, 0)):
        retriever = OpenClawMemoryRetriever(memory, after=after, min_score=0.0)
        assert [d.metadata["path"] for d in retriever.invoke("SQLite cache")] == expected
    before = OpenClawMemoryRetriever(memory, before=date(2026, 1, 16), min_score=0.0).invoke("SQLite cache")
    assert "memory/2026-01-16.md" not in [d.metadata["path"] for d in before]
