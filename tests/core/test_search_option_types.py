"""Search options of the wrong type are MemoryArgumentErrors naming the option, as the docstring says; they were a
bare ValueError ("could not convert string to float"), TypeError ("'str' object is not callable") or
AttributeError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryArgumentError, MemoryIndex


@pytest.fixture
def memory(tmp_path: Path) -> MemoryIndex:
    (tmp_path / "MEMORY.md").write_text("The billing database is PostgreSQL.\n")
    index = MemoryIndex(workspace=tmp_path, state_dir=str(tmp_path / "state"), provider=None, watch=False)
    index.sync()
    yield index  # type: ignore[misc]
    index.close()


@pytest.mark.parametrize(("options", "message"), [
    ({"mmr": "yes"}, "MMR lambda must be between 0 and 1"),
    ({"vector_weight": "abc"}, "vector_weight must be between 0"),
    ({"vector_weight": [1]}, "vector_weight must be between 0"),
    ({"where": "path == 'MEMORY.md'"}, "where must be a function of a hit"),
    ({"collapse": 3}, "collapse must be a function of a hit"),
    ({"session_key": 5}, "session_key must be a string"),
])
def test_wrong_types_are_argument_errors(memory: MemoryIndex, options: dict[str, Any], message: str) -> None:
    with pytest.raises(MemoryArgumentError, match=message):
        memory.search("billing", **options)


def test_numbers_given_as_text_still_work(memory: MemoryIndex) -> None:
    assert memory.search("billing", vector_weight="0.5", mmr="0.7", min_score=0).hits
