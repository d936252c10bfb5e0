"""The two lifecycle hooks of long-term memory, framework-neutral.

* :class:`AutoRecall` (before a model call): embeds the user's prompt (5+ characters), over-fetches
  10 memories scoring at least the model's recall level (``MemoryThresholds.recall``; 0.3 for the
  original's OpenAI embeddings), leaves out superseded ones, drops contaminated ones (injected
  memory blocks, system text, prompt-injection-looking text), keeps 3 and renders them as an escaped ``<relevant-memories>``
  block marked as untrusted data. A recall that fails or takes longer than 15 s is skipped, and
  recall then rests for 60 s, so a broken provider never stalls or breaks the agent.
* :class:`AutoCapture` (after a run, off by default): stores up to 3 user messages per run that
  match the capture triggers (:mod:`openclaw_memory.long_term.capture`) with their heuristic
  category (the next run stores the ones beyond that); a capture cursor kept in the memory's state
  dir per thread makes sure no message is stored twice, across restarts and processes.

Adapters call these; they hold all the logic.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import html
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.long_term.capture import (
    MAX_CAPTURES_PER_RUN,
    RECALL_TAG,
    UNTRUSTED_NOTE,
    CaptureCandidate,
    CaptureCursor,
    compile_triggers,
    detect_category,
    is_contaminated,
    select_captures,
)
from openclaw_memory.long_term.store import LongTermMemory, RecallHit, StoreResult

__all__ = [
    "AutoCapture",
    "AutoRecall",
    "OVER_FETCH",
    "escape_memory_text",
    "format_memories_block",
    "recall_for_model",
]

log = logging.getLogger(__name__)


def escape_memory_text(text: str) -> str:
    """``text`` with ``& < > " '`` escaped and folded onto one line, safe inside the memory block."""
    return html.escape(re.sub(r"\s+", " ", text).strip(), quote=True)


#: How many memories a recall for a model fetches at least, so that dropping contaminated ones still leaves enough.
OVER_FETCH = 10


def recall_for_model(memory: LongTermMemory, query: str, *, limit: int, min_score: float,
                     over_fetch: int = OVER_FETCH) -> list[RecallHit]:
    """The ``limit`` best memories for ``query`` scoring at least ``min_score`` that may be put in front of a model
    (auto-recall's block, the ``memory_recall`` tool): contaminated ones (an injected memory block, system text,
    prompt-injection-looking text; :func:`~openclaw_memory.long_term.capture.is_contaminated`) are dropped from
    the ``max(limit, over_fetch)`` fetched, best first."""
    hits = memory.recall(query, limit=max(limit, over_fetch), min_score=min_score)
    return [h for h in hits if is_contaminated(h.record.text) is None][:limit]


def format_memories_block(hits: Sequence[RecallHit]) -> str:
    """The ``<relevant-memories>`` block for ``hits`` ("" for none): escaped, numbered, marked untrusted."""
    if not hits:
        return ""
    lines = [f"{i}. [{h.record.category}] {escape_memory_text(h.record.text)}" for i, h in enumerate(hits, 1)]
    return f"<{RECALL_TAG}>\n{UNTRUSTED_NOTE}\n" + "\n".join(lines) + f"\n</{RECALL_TAG}>"


@dataclass
class AutoRecall:
    """Finds the memories relevant to a prompt and renders them for injection before a model call."""

    memory: LongTermMemory
    limit: int = 3
    #: None: the memory's calibrated level for its embedding model
    min_score: float | None = None
    over_fetch: int = OVER_FETCH
    min_prompt_chars: int = 5
    timeout_s: float = 15.0
    cooldown_s: float = 60.0
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self._failed_at: float | None = None
        self._lock = threading.Lock()
        self.last_error: str | None = None

    def cooling_down(self) -> bool:
        """True during the cooldown after a failed or timed-out recall."""
        with self._lock:
            return self._failed_at is not None and self.clock() - self._failed_at < self.cooldown_s

    def _failed(self, error: str) -> None:
        with self._lock:
            self._failed_at = self.clock()
            self.last_error = error
        log.warning("long-term memory recall skipped for %.0f s: %s", self.cooldown_s, error)

    def _wanted(self, prompt: str | None) -> bool:
        return isinstance(prompt, str) and len(prompt.strip()) >= self.min_prompt_chars and not self.cooling_down()

    def _select(self, prompt: str) -> list[RecallHit]:
        floor = self.min_score if self.min_score is not None else self.memory.thresholds.recall
        return recall_for_model(self.memory, prompt.strip()[: 8000], limit=self.limit, min_score=floor,
                                over_fetch=self.over_fetch)

    def recall(self, prompt: str | None) -> list[RecallHit]:
        """The memories to inject for ``prompt`` ([] for a short prompt, during the cooldown, or on failure)."""
        if not self._wanted(prompt):
            return []
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ltm-recall")
        try:
            future = pool.submit(self._select, prompt or "")
            try:
                return future.result(timeout=self.timeout_s)
            except concurrent.futures.TimeoutError:
                self._failed(f"recall took longer than {self.timeout_s:g} s")
            except (OpenClawMemoryError, OSError) as exc:
                self._failed(str(exc))
            return []
        finally:
            pool.shutdown(wait=False)

    async def arecall(self, prompt: str | None) -> list[RecallHit]:
        """Async twin of :meth:`recall`."""
        if not self._wanted(prompt):
            return []
        try:
            return await asyncio.wait_for(asyncio.to_thread(self._select, prompt or ""), self.timeout_s)
        except asyncio.TimeoutError:
            self._failed(f"recall took longer than {self.timeout_s:g} s")
        except (OpenClawMemoryError, OSError) as exc:
            self._failed(str(exc))
        return []

    def context(self, prompt: str | None) -> str:
        """The ``<relevant-memories>`` block for ``prompt``, or "" when there is nothing to inject."""
        return format_memories_block(self.recall(prompt))

    async def acontext(self, prompt: str | None) -> str:
        """Async twin of :meth:`context`."""
        return format_memories_block(await self.arecall(prompt))


class AutoCapture:
    """Stores the memorable user messages of finished runs (each message considered once per thread,
    ``session``, whichever process or restart sees it: the cursor is kept in the memory's state dir)."""

    def __init__(
        self,
        memory: LongTermMemory,
        *,
        triggers: Iterable[str | re.Pattern[str]] = (),
        default_triggers: bool = True,
        max_per_run: int = MAX_CAPTURES_PER_RUN,
        importance: float = 0.7,
        cursor: CaptureCursor | None = None,
    ) -> None:
        self.memory = memory
        self.triggers = compile_triggers(triggers, defaults=default_triggers)
        self.max_per_run = max_per_run
        self.importance = importance
        self.cursor = cursor if cursor is not None else CaptureCursor(memory.state.capture_dir)
        self._lock = threading.Lock()

    def capture(self, messages: Sequence[CaptureCandidate], *, session: str = "default") -> list[StoreResult]:
        """Store the trigger-matching user messages of ``messages`` not seen before in ``session``.

        At most ``max_per_run`` are stored; the triggered messages beyond them are offered again by the next run
        of ``session`` (oldest first), as are those a failure left unstored. Failures are logged and end the
        capture early; they never raise (the run already finished).
        """
        try:
            with self._lock:
                fresh = self.cursor.unseen(session, messages)
        except (OpenClawMemoryError, OSError) as exc:
            log.warning("auto-capture skipped: its cursor could not be read or saved: %s", exc)
            return []
        results: list[StoreResult] = []
        triggered = select_captures(fresh, triggers=self.triggers, max_per_run=None)
        chosen, later = triggered[: self.max_per_run], triggered[self.max_per_run:]
        for done, message in enumerate(chosen):
            try:
                results.append(self.memory.store(message.text, self.importance, detect_category(message.text),
                                                  origin="owner"))
            except (OpenClawMemoryError, OSError) as exc:
                log.warning("auto-capture could not store a memory (offered again by the next run): %s", exc)
                later = [*chosen[done:], *later]
                break
        if later:  # beyond this run's cap (or not stored): the next run of the thread offers them again
            self._give_back(session, later)
        return results

    def _give_back(self, session: str, messages: Sequence[CaptureCandidate]) -> None:
        try:
            with self._lock:
                self.cursor.give_back(session, messages)
        except (OpenClawMemoryError, OSError) as exc:
            log.warning("auto-capture could not mark %d message(s) for another try: %s", len(messages), exc)

    async def acapture(self, messages: Sequence[CaptureCandidate], *, session: str = "default") -> list[StoreResult]:
        """Async twin of :meth:`capture`."""
        return await asyncio.to_thread(self.capture, messages, session=session)
