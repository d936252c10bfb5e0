"""The type of the long-term memory tests' ``make_ltm`` factory."""

from __future__ import annotations

from collections.abc import Callable

from openclaw_memory.long_term import LongTermMemory


MakeMemory = Callable[..., LongTermMemory]

