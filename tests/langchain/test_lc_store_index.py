"""LangGraph's ``index`` on the store: which part of an item's value is embedded and keyword-indexed.

``put(ns, key, value, index=None | False | [paths])`` and the store's ``index={"fields": [...]}`` choose the
text as LangGraph's own stores do (``InMemoryStore``, ``PostgresStore``): the whole value by default, the
texts at the fields / JSON paths when named, nothing for ``index=False`` (such an item is kept and listed but
never ranked by a query: it follows the ranked items with ``score=None``). Before, ``index=[...]`` was ignored and
every field was searchable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ProviderError
from openclaw_memory.providers.base import EmbedKind
from openclaw_memory.providers.fake import FakeEmbeddingProvider

from langchain_openclaw_memory import OpenClawMemoryStore

NS = ("users", "u1", "memories")
VALUE = {"data": "The user likes pepperoni pizza.", "note": "Asked about quokka habitats."}


def keys(hits: Sequence[Any]) -> list[str]:
    return [h.key for h in hits]


#: A store search ranks every item (no score floor, as LangGraph's stores); with the memory's own floor
#: (``min_score=None``: ``query.min_score``) an item whose indexed text does not match is left out, which is what
#: these tests look at.
FLOORED = {"min_score": None}


def test_put_index_fields_choose_what_a_query_finds(memory: MemoryIndex) -> None:
    store = OpenClawMemoryStore(memory, **FLOORED)
    store.put(NS, "k1", VALUE, index=["data"])
    store.put(NS, "k2", VALUE)  # default: the whole value
    assert "k1" in keys(store.search(NS, query="pepperoni pizza"))
    assert keys(store.search(NS, query="quokka habitats")) == ["k2"]  # k1's note is not indexed
    item = store.get(NS, "k1")
    assert item is not None and item.value == VALUE  # every field is still kept

    store.put(NS, "k1", VALUE, index=["note"])  # a put decides again
    assert "k1" in keys(store.search(NS, query="quokka habitats"))
    assert "k1" not in keys(store.search(NS, query="pepperoni pizza"))


def test_the_stores_index_fields_are_the_default(memory: MemoryIndex) -> None:
    store = OpenClawMemoryStore(memory, index={"fields": ["note"]}, **FLOORED)
    store.put(NS, "k1", VALUE)
    store.put(NS, "k2", VALUE, index=["data"])  # the put's own index wins
    assert keys(store.search(NS, query="quokka habitats")) == ["k1"]
    assert keys(store.search(NS, query="pepperoni pizza")) == ["k2"]
    for whole in ({}, {"fields": []}, {"fields": ["$"]}):  # as LangGraph reads them: the whole value
        assert OpenClawMemoryStore(memory, index=whole).index_fields in (None, ["$"])


def test_index_false_keeps_the_item_out_of_queries_only(memory: MemoryIndex) -> None:
    store = OpenClawMemoryStore(memory)
    store.put(NS, "k1", VALUE, index=False)
    store.put(NS, "k2", {"data": "The user's dog is called Rex."})
    for query in ("pepperoni pizza", "quokka habitats"):  # never ranked: after the ranked items, as InMemoryStore
        found = store.search(NS, query=query)
        assert [(h.key, h.score) for h in found if h.key == "k1"] == [("k1", None)] and found[-1].key == "k1"
    assert "k1" not in keys(OpenClawMemoryStore(memory, **FLOORED).search(NS, query="pepperoni pizza"))
    item = store.get(NS, "k1")
    assert item is not None and item.value == VALUE
    assert sorted(keys(store.search(NS))) == ["k1", "k2"]  # listed without a query
    assert keys(store.search(NS, filter={"note": "Asked about quokka habitats."})) == ["k1"]
    assert keys(store.search(NS, query="dog Rex")) == ["k2", "k1"]  # the items beside it still are ranked

    store.put(NS, "k1", VALUE)  # put again with the default: searchable
    assert "k1" in keys(store.search(NS, query="pepperoni pizza"))


def test_a_config_copied_from_langgraphs_docs_is_accepted(memory: MemoryIndex) -> None:
    called: list[Sequence[str]] = []

    def embed(texts: Sequence[str]) -> list[list[float]]:
        called.append(texts)
        return [[0.0] * 64 for _ in texts]

    with pytest.warns(UserWarning, match="ignores 'embed'.*own embedding provider"):
        store = OpenClawMemoryStore(memory, index={"dims": 64, "embed": embed, "fields": ["note"]},  # the fake's 64
                                    **FLOORED)
    store.put(NS, "k1", VALUE)
    assert keys(store.search(NS, query="quokka habitats")) == ["k1"]  # its fields are used
    assert keys(store.search(NS, query="pepperoni pizza")) == []
    assert called == []  # the memory's provider embeds
    assert OpenClawMemoryStore(memory, index={"dims": 64}).index_fields is None  # dims alone: no warning needed


def test_a_dims_other_than_the_providers_is_refused(memory: MemoryIndex) -> None:
    with pytest.raises(ValueError, match=r"'dims' is 1536.*64-dimensional"):
        OpenClawMemoryStore(memory, index={"dims": 1536, "fields": ["data"]})
    with pytest.raises(ValueError, match="'dims' must be a positive integer"):
        OpenClawMemoryStore(memory, index={"dims": "1536"})  # type: ignore[typeddict-item]
    with pytest.raises(ValueError, match=r"takes only 'fields'.*\['distance_type'\]"):
        OpenClawMemoryStore(memory, index={"fields": ["data"], "distance_type": "cosine"})  # type: ignore[typeddict-unknown-key]


def test_dims_is_accepted_while_the_providers_dimension_is_unknown(
        make_index: Callable[..., MemoryIndex], corpus: object) -> None:
    unknown = make_index(FakeEmbeddingProvider(dims=None), timezone="UTC")  # type: ignore[arg-type]
    assert unknown.provider is not None and unknown.provider.dims is None  # as an API that decides it
    store = OpenClawMemoryStore(unknown, index={"dims": 1536, "fields": ["data"]})
    store.put(NS, "k1", VALUE)
    assert keys(store.search(NS, query="pepperoni pizza")) == ["k1"]


class RecordingProvider(FakeEmbeddingProvider):
    """The fake embedder, keeping every document text it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.documents: list[str] = []

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        if kind != "query":
            self.documents.extend(texts)
        return super()._embed(texts, kind)


PUTS: list[tuple[dict[str, Any], Any]] = [
    ({"data": "alpha bravo", "extra": "charlie"}, None),
    ({"data": "delta echo", "extra": "foxtrot"}, ["extra"]),
    ({"profile": {"name": "Golf", "langs": ["hotel", "india"]}, "tags": ["juliet", "kilo"]},
     ["profile.name", "profile.langs[*]", "tags[-1]"]),
    ({"data": "lima mike", "n": 7, "ok": True}, ["{data,n}", "ok"]),
    ({"data": "november oscar"}, False),
    ({"data": "papa quebec"}, ["missing"]),
]


@pytest.mark.parametrize("fields", [None, ["data"]])
def test_the_embedded_text_is_what_langgraphs_in_memory_store_embeds(
        make_index: Callable[..., MemoryIndex], corpus: object, fields: list[str] | None) -> None:
    reference: list[list[str]] = []

    def embed(texts: Sequence[str]) -> list[list[float]]:
        reference.append(list(texts))
        return [[1.0, 0.0] for _ in texts]

    theirs = InMemoryStore(index={"dims": 2, "embed": embed, **({"fields": fields} if fields else {})})
    provider = RecordingProvider()
    memory = make_index(provider, timezone="UTC")
    memory.sync()
    ours = OpenClawMemoryStore(memory, index={"fields": fields} if fields else None)
    for n, (value, index) in enumerate(PUTS):
        reference.clear()
        provider.documents.clear()
        theirs.put(("t",), f"k{n}", value, index=index)
        ours.put(("t", f"k{n}"), "k", value, index=index)  # a namespace (file) each: only this item is embedded
        expected = [t for batch in reference for t in batch]
        item_texts = [t for t in provider.documents if not t.startswith("# Store items")]  # not the file's header
        words = set(re.findall(r"[a-z]{3,}", json.dumps(value).lower())) - {"true", "data", "extra", "profile", "name",
                                                                            "langs", "tags"}
        embedded = set(re.findall(r"[a-z]{3,}", " ".join(item_texts).lower()))
        if index is None and not fields:  # the whole value: ours embeds the record's JSON body
            assert words <= embedded
            continue
        assert embedded & words == set(re.findall(r"[a-z]{3,}", " ".join(expected).lower())) & words
        if expected:
            assert "\n".join(expected) + "\n" in item_texts  # one text per line (+ the marker's blank line)
        else:  # nothing LangGraph would embed: nothing embedded here, and the item is kept
            assert item_texts == [] and ours.get(("t", f"k{n}"), "k") is not None


class LimitedProvider(FakeEmbeddingProvider):
    """The fake embedder with a remote API's input limit: it rejects a text longer than the limit (as an endpoint
    answers 400) and keeps every document text it embeds."""

    max_input_tokens = 512  # a remote provider: the index sends at most this many bytes in one text

    def __init__(self) -> None:
        super().__init__()
        self.documents: list[str] = []

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        too_long = [len(t.encode("utf-8")) for t in texts if len(t.encode("utf-8")) > self.max_input_tokens]
        if too_long:
            raise ProviderError(f"input too long: {too_long} bytes > {self.max_input_tokens}")
        if kind != "query":
            self.documents.extend(texts)
        return super()._embed(texts, kind)


def test_a_long_index_text_is_embedded_in_pieces_that_fit(
        make_index: Callable[..., MemoryIndex], corpus: object) -> None:
    provider = LimitedProvider()
    memory = make_index(provider, timezone="UTC")
    memory.sync()
    store = OpenClawMemoryStore(memory, **FLOORED)
    summary = " ".join(f"word{i}" for i in range(3000)) + " zanzibar"  # ~26 kB in one field
    store.put(NS, "long", {"summary": summary, "source": "chat"}, index=["summary"])
    store.put(NS, "short", {"summary": "The user's dog is called Rex.", "source": "chat"}, index=["summary"])
    store.put(NS, "whole", {"summary": summary.replace("zanzibar", "quokka"), "source": "chat"})  # body indexed

    assert all(len(t.encode("utf-8")) <= 512 for t in provider.documents)
    embedded = " ".join(provider.documents)
    assert "word2999 zanzibar" in embedded and "word0 " in embedded  # all of the field, in pieces
    assert "chat" not in embedded.split()  # the field not named is still not indexed
    # one item per record however many pieces it was embedded in: the keyword side finds the end of the field
    assert keys(store.search(NS, query="zanzibar")) == ["long"]
    hits = keys(store.search(NS, query="word2999", limit=10))
    assert hits.count("long") == 1 and hits.count("whole") == 1
    assert keys(store.search(NS, query="dog Rex"))[0] == "short"
    deep = memory.status(deep=True)
    assert deep.dirty is False and deep.integrity is not None
    assert deep.integrity["chunks_with_vector"] == deep.integrity["chunks"]  # the long item's one vector too


def test_the_vector_of_a_long_index_text_stands_for_all_of_it(
        make_index: Callable[..., MemoryIndex], corpus: object) -> None:
    memory = make_index(LimitedProvider(), timezone="UTC")
    memory.sync()
    store = OpenClawMemoryStore(memory)
    for key, topic in (("boats", "kayak paddle river"), ("cakes", "flour sugar oven")):
        text = " ".join(f"{topic} filler{i}" for i in range(400))  # ~9-10 kB: many pieces, the topic in each
        store.put(("t", key), "k", {"summary": text}, index=["summary"])  # a namespace (file) each
    for query, path in (("kayak paddle river", "memory/store/t/boats.md"), ("flour sugar oven", "memory/store/t/cakes.md")):
        hits = memory.search(query, mode="vector", max_results=3).hits
        assert hits and hits[0].path == path
