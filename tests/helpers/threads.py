"""Run one function in several threads at once and collect what they raise."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TypeVar

_T = TypeVar("_T")


def errors_in_threads(call: Callable[[_T], object], arguments: Iterable[_T], *,
                      together: bool = False) -> list[BaseException]:
    """``call(argument)`` for each of ``arguments``, each in a thread of its own (``together``: all released at
    once by a barrier); the exceptions they raised."""
    items = list(arguments)
    errors: list[BaseException] = []
    start = threading.Barrier(len(items)) if together and items else None

    def run(argument: _T) -> None:
        if start is not None:
            start.wait()
        try:
            call(argument)
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(item,)) for item in items]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors
