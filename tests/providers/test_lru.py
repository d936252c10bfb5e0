"""The bounded least-recently-used cache behind the query, passage and token-vector caches."""

from __future__ import annotations

from openclaw_memory.providers.lru import LruCache


def test_the_least_recently_used_entry_goes_first() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert cache.usage() == (2, 2)


def test_a_weighed_cache_stays_within_its_weight_and_keeps_no_entry_heavier_than_it() -> None:
    cache: LruCache[str, str] = LruCache(10, lambda _key, value: len(value))
    for key, value in [("a", "xxxx"), ("b", "xxxx"), ("c", "xxxx")]:
        cache.put(key, value)
    assert cache.usage() == (2, 8) and cache.get("a") is None
    cache.put("b", "x")  # a new value in place of the old: its weight replaces the old one's
    assert cache.usage() == (2, 5)
    cache.put("huge", "x" * 11)
    assert cache.get("huge") is None and cache.usage() == (2, 5)


def test_a_limit_read_at_each_store() -> None:
    limit = [3]
    cache: LruCache[int, int] = LruCache(lambda: limit[0])
    for key in range(3):
        cache.put(key, key)
    limit[0] = 1
    cache.put(9, 9)
    assert len(cache) == 1 and cache.get(9) == 9
    cache.clear()
    assert cache.usage() == (0, 0)
