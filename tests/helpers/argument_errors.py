"""The two checks an adapter's argument-error table runs: a bad value raises MemoryArgumentError (still a
ValueError), a bad type MemoryArgumentTypeError (still a TypeError and an OpenClawMemoryError)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import MemoryArgumentError, MemoryArgumentTypeError, OpenClawMemoryError


def assert_bad_value(memory: MemoryIndex, call: Callable[[MemoryIndex], Any]) -> None:
    """``call(memory)`` raises MemoryArgumentError, which is a ValueError."""
    with pytest.raises(MemoryArgumentError) as caught:
        call(memory)
    assert isinstance(caught.value, ValueError)


def assert_bad_type(memory: MemoryIndex, call: Callable[[MemoryIndex], Any]) -> None:
    """``call(memory)`` raises MemoryArgumentTypeError, which is a TypeError and an OpenClawMemoryError."""
    with pytest.raises(MemoryArgumentTypeError) as caught:
        call(memory)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, OpenClawMemoryError)
