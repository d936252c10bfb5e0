"""A bounded least-recently-used cache: the one behind the in-memory vector caches (query vectors, the passages a
search embeds, the lines' token vectors for late interaction)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["LruCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _one(_key: object, _value: object) -> int:
    return 1


class LruCache(Generic[K, V]):
    """A thread-safe mapping that holds at most ``limit`` of weight, dropping the least recently used entries first.

    Each entry weighs 1 unless ``weigh(key, value)`` says otherwise (bytes, say). ``limit`` is a number, or a
    function read at each store (a module constant a user may change). An entry heavier than the limit is not kept.
    """

    def __init__(self, limit: int | Callable[[], int], weigh: Callable[[K, V], int] = _one) -> None:
        self._limit = limit
        self._weigh = weigh
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    @property
    def limit(self) -> int:
        """The most weight kept."""
        return self._limit() if callable(self._limit) else self._limit

    def get(self, key: K) -> V | None:
        """The value under ``key``, now the most recently used; None when it is not kept."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` under ``key`` (in place of an earlier one) as the most recently used, then drop the least
        recently used entries until the weight is within the limit."""
        limit, weight = self.limit, self._weigh(key, value)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._weight -= self._weigh(key, old)
            if weight <= limit:  # a heavier entry is not kept
                self._entries[key] = value
                self._weight += weight
            while self._weight > limit:
                dropped_key, dropped = self._entries.popitem(last=False)
                self._weight -= self._weigh(dropped_key, dropped)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
            self._weight = 0

    def usage(self) -> tuple[int, int]:
        """(entries, weight) now."""
        with self._lock:
            return len(self._entries), self._weight

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
