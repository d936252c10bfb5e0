"""Fixtures for provider tests: one loopback vendor server per session, reset per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from openclaw_memory.providers.batching import RetryPolicy
from tests.helpers.vendor_server import VendorServer

# Fast retries for tests; Retry-After still wins when the server sends it.
FAST_RETRY = RetryPolicy(retries=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture(scope="session")
def _vendor_server() -> Iterator[VendorServer]:
    server = VendorServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def vendor(_vendor_server: VendorServer) -> Iterator[VendorServer]:
    """The loopback vendor API with no recorded calls, faults or overrides."""
    _vendor_server.reset()
    yield _vendor_server
    _vendor_server.reset()


@pytest.fixture
def fast_retry() -> RetryPolicy:
    return FAST_RETRY
