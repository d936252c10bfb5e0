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


def argument_error_tests(bad_values: dict[str, Callable[[MemoryIndex], Any]],
                         bad_types: dict[str, Callable[[MemoryIndex], Any]]) -> tuple[Callable[..., None], ...]:
    """An adapter's two table tests (each entry of ``bad_values`` passes :func:`assert_bad_value`, each of
    ``bad_types`` :func:`assert_bad_type`), for its module to bind to ``test_`` names; they take its ``memory``
    fixture."""

    @pytest.mark.parametrize("call", bad_values.values(), ids=bad_values.keys())
    def test_a_bad_value_is_a_memory_argument_error(memory: MemoryIndex, call: Callable[[MemoryIndex], Any]) -> None:
        assert_bad_value(memory, call)

    @pytest.mark.parametrize("call", bad_types.values(), ids=bad_types.keys())
    def test_a_bad_type_is_a_memory_argument_type_error(memory: MemoryIndex,
                                                        call: Callable[[MemoryIndex], Any]) -> None:
        assert_bad_type(memory, call)

    return test_a_bad_value_is_a_memory_argument_error, test_a_bad_type_is_a_memory_argument_type_error
