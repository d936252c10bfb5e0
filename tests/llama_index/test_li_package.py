"""The adapter package's exports."""

from __future__ import annotations

import llama_index_openclaw_memory


def test_all_is_sorted_and_importable() -> None:
    names = llama_index_openclaw_memory.__all__
    assert names == sorted(names)
    for name in names:
        assert hasattr(llama_index_openclaw_memory, name), name
