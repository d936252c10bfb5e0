"""docs/errors.md draws the exception tree of `openclaw_memory.errors`: every class a user may catch is on it,
under its real parent."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import openclaw_memory.errors as errors

PAGE = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def _library_exceptions() -> dict[str, type[BaseException]]:
    return {
        name: cls
        for name, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__ == errors.__name__
    }


def test_the_errors_page_names_every_exception_of_the_library() -> None:
    page = PAGE.read_text(encoding="utf-8")
    missing = [name for name in _library_exceptions() if not re.search(rf"\b{name}\b", page)]
    assert not missing, f"docs/errors.md does not name {missing}"


def test_each_exception_on_the_tree_sits_under_its_parent() -> None:
    tree = PAGE.read_text(encoding="utf-8").split("```")[1]
    classes = _library_exceptions()
    parents: list[tuple[int, str]] = []
    for line in tree.splitlines():
        match = re.match(r"^([│├└─\s]*)(\w+)", line)
        if not match or match.group(2) not in classes:
            continue
        depth = len(match.group(1))
        while parents and parents[-1][0] >= depth:
            parents.pop()
        if parents:
            parent = classes[parents[-1][1]]
            assert issubclass(classes[match.group(2)], parent), f"{match.group(2)} is drawn under {parent.__name__}"
        parents.append((depth, match.group(2)))
