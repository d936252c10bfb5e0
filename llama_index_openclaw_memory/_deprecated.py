"""Old names of this adapter, kept working with a DeprecationWarning (one vocabulary across the
adapters: ``similarity_top_k``, ``create_memory_tools``, ``create_memory_search_tool``,
``create_memory_get_tool``, ``OpenClawMemoryEmbedding``, ``session_kind="direct"``)."""

from __future__ import annotations

import warnings

__all__ = ["RENAMED", "warn_renamed"]

#: Old public name -> new public name, for module-level aliases.
RENAMED = {
    "OpenClawEmbedding": "OpenClawMemoryEmbedding",
    "memory_tools": "create_memory_tools",
    "memory_search_tool": "create_memory_search_tool",
    "memory_get_tool": "create_memory_get_tool",
}


def warn_renamed(old: str, new: str) -> None:
    """Warn that ``old`` is deprecated in favour of ``new`` (pointing at the caller's caller)."""
    warnings.warn(f"{old} is deprecated; use {new} (the old name will be removed in a future release)",
                  DeprecationWarning, stacklevel=3)
