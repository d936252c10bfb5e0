"""A search ``filter`` with comparison operators matches what LangGraph's ``InMemoryStore`` matches, given the
same items: ``$gt``/``$gte``/``$lt``/``$lte`` compare numbers as numbers, a number written as a string ("30")
too, and an item whose value cannot be compared is not matched rather than failing the whole search.

The store compared with Python's operators: a value stored as a string (``{"age": "30"}``, as a form or a
CSV gives it) against ``{"$gt": 18}`` raised ``TypeError: '>' not supported between 'str' and 'int'`` from
inside the search, and ``None`` (a missing field) against a number was never matched the same way."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from openclaw_memory import MemoryIndex

from langchain_openclaw_memory import OpenClawMemoryStore

NS = ("people",)
ITEMS: dict[str, dict[str, Any]] = {
    "ada": {"name": "Ada", "age": 36, "score": 9.5},
    "bo": {"name": "Bo", "age": "30", "score": "7"},
    "cy": {"name": "Cy", "age": 12, "score": 3},
    "di": {"name": "Di", "age": 18.0},
}

FILTERS: list[dict[str, Any]] = [
    {"age": {"$gt": 18}},
    {"age": {"$gte": 18}},
    {"age": {"$lt": 31}},
    {"age": {"$lte": "30"}},
    {"age": {"$gt": 10, "$lt": 20}},
    {"score": {"$gte": 7}},
    {"age": {"$eq": 36}},
    {"age": {"$ne": 36}},
    {"age": 18},
]


@pytest.mark.parametrize("conditions", FILTERS, ids=[repr(f) for f in FILTERS])
def test_operator_filters_match_as_in_langgraphs_in_memory_store(memory: MemoryIndex,
                                                                 conditions: dict[str, Any]) -> None:
    store, reference = OpenClawMemoryStore(memory), InMemoryStore()
    for key, value in ITEMS.items():
        store.put(NS, key, value)
        reference.put(NS, key, value)
    try:
        expected: set[str] | type[Exception] = {i.key for i in reference.search(NS, filter=conditions, limit=50)}
    except (TypeError, ValueError):  # InMemoryStore cannot compare a missing field: it matches nothing here
        expected = {k for k, v in ITEMS.items() if "score" in v and _numeric_match(v["score"], conditions["score"])}
    assert {i.key for i in store.search(NS, filter=conditions, limit=50)} == expected
    assert {i.key for i in store.search(NS, query="Ada Bo Cy Di", filter=conditions, limit=50)} == expected


def _numeric_match(value: Any, condition: dict[str, Any]) -> bool:
    ops = {"$gt": float.__gt__, "$gte": float.__ge__, "$lt": float.__lt__, "$lte": float.__le__}
    return all(ops[op](float(value), float(expected)) for op, expected in condition.items())


def test_a_value_that_cannot_be_compared_is_not_matched(memory: MemoryIndex) -> None:
    store = OpenClawMemoryStore(memory)
    store.put(NS, "eve", {"name": "Eve", "age": "unknown"})
    store.put(NS, "fay", {"name": "Fay", "age": 40})
    assert [i.key for i in store.search(NS, filter={"age": {"$gt": 18}})] == ["fay"]
    assert [i.key for i in store.search(NS, filter={"name": {"$gte": "F"}})] == ["fay"]
