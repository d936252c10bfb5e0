"""Long-term memory in LanceDB: OpenClaw's ``memory-lancedb`` slot (``pip install 'openclaw-memory[lancedb]'``).

* :class:`LongTermMemory`: store / recall / forget / list / stats of short, categorised memories
  per agent, with an optional Markdown mirror into the daily notes.
* :class:`AutoRecall` / :class:`AutoCapture`: the before-model-call recall and after-run capture hooks.
* :mod:`openclaw_memory.long_term.tools`: the ``memory_store`` / ``memory_recall`` / ``memory_forget`` tools.
"""

from __future__ import annotations

from openclaw_memory.long_term.capture import (
    CATEGORIES,
    DEFAULT_TRIGGERS,
    CaptureCandidate,
    CaptureCursor,
    MemoryCategory,
    capture_rejection,
    detect_category,
    is_contaminated,
    looks_like_prompt_injection,
)
from openclaw_memory.long_term.hooks import AutoCapture, AutoRecall, escape_memory_text, format_memories_block
from openclaw_memory.long_term.mirror import MarkdownMirror
from openclaw_memory.long_term.store import (
    DUPLICATE_SCORE,
    MAX_TEXT_CHARS,
    MODEL_THRESHOLDS,
    ForgetResult,
    LongTermMemory,
    LongTermRecord,
    MemoryThresholds,
    RecallHit,
    StoreResult,
    default_db_path,
    distance_to_score,
)

__all__ = [
    "AutoCapture",
    "AutoRecall",
    "CATEGORIES",
    "CaptureCandidate",
    "CaptureCursor",
    "DEFAULT_TRIGGERS",
    "DUPLICATE_SCORE",
    "ForgetResult",
    "LongTermMemory",
    "LongTermRecord",
    "MAX_TEXT_CHARS",
    "MODEL_THRESHOLDS",
    "MarkdownMirror",
    "MemoryCategory",
    "MemoryThresholds",
    "RecallHit",
    "StoreResult",
    "capture_rejection",
    "default_db_path",
    "detect_category",
    "distance_to_score",
    "escape_memory_text",
    "format_memories_block",
    "is_contaminated",
    "looks_like_prompt_injection",
]
