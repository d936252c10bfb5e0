"""A circuit breaker for the embedding provider: after ``failures`` failed calls in a row it opens
for ``cooldown`` seconds, during which nobody waits for the provider (searches are keyword-only,
syncs fail at once); the first call after the cool-down tries the provider again."""

from __future__ import annotations

import threading
import time
from typing import Any

from openclaw_memory.redaction import redact

__all__ = ["CircuitBreaker"]


class CircuitBreaker:
    """Counts consecutive provider failures; thread-safe. ``failures=0`` never opens."""

    def __init__(self, failures: int = 3, cooldown: float = 60.0, *, clock: Any = time.monotonic) -> None:
        self.failures = int(failures)
        self.cooldown = float(cooldown)
        self._clock = clock
        self._lock = threading.Lock()
        self._count = 0
        self._opened_at: float | None = None
        self.last_error: str | None = None

    def allow(self) -> bool:
        """True when the provider may be called (closed, or the cool-down is over: one trial)."""
        with self._lock:
            if self._opened_at is None:
                return True
            if self._clock() - self._opened_at >= self.cooldown:
                self._opened_at = None  # half-open: the next failure opens it again at once
                self._count = max(0, self.failures - 1)
                return True
            return False

    def trial(self) -> None:
        """Let the next call through even during the cool-down (an explicit request by the user);
        one more failure opens the breaker again."""
        with self._lock:
            if self._opened_at is not None:
                self._opened_at = None
                self._count = max(0, self.failures - 1)

    def reset(self) -> None:
        """Forget past failures (e.g. after switching to another provider)."""
        self.record_success()

    def record_success(self) -> None:
        with self._lock:
            self._count, self._opened_at, self.last_error = 0, None, None

    def record_failure(self, exc: BaseException) -> None:
        with self._lock:
            self._count += 1
            self.last_error = redact(f"{type(exc).__name__}: {exc}")
            if self.failures and self._count >= self.failures and self._opened_at is None:
                self._opened_at = self._clock()

    def trip(self, exc: BaseException) -> None:
        """Open now (the provider was given up on after a long silence: one failure is enough)."""
        with self._lock:
            self._count = max(self._count + 1, self.failures)
            self.last_error = redact(f"{type(exc).__name__}: {exc}")
            if self.failures and self._opened_at is None:
                self._opened_at = self._clock()

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._opened_at is not None and self._clock() - self._opened_at < self.cooldown

    def reason(self) -> str:
        """Why the provider is not asked (for results and status)."""
        with self._lock:
            left = 0.0 if self._opened_at is None else max(0.0, self.cooldown - (self._clock() - self._opened_at))
            return (f"the embedding provider failed {self._count} times in a row (last: {self.last_error}); "
                    f"keyword-only for {left:.0f}s more (provider_limits.breaker_cooldown_seconds)")

    def to_dict(self) -> dict[str, Any]:
        """``{open, consecutive_failures, threshold, cooldown_s, last_error}`` for status."""
        is_open = self.is_open
        with self._lock:
            return {"open": is_open, "consecutive_failures": self._count, "threshold": self.failures,
                    "cooldown_s": self.cooldown, "last_error": self.last_error}
