"""The pre-compaction memory flush, framework-neutral (spec §8.1–8.3).

When a session's token count reaches ``context_window - reserve_tokens_floor - soft_threshold_tokens``
the agent gets one silent turn to append durable memories to today's daily note (or ``MEMORY.md``)
before its context is compacted. :class:`FlushPolicy` decides when (at most once per compaction
cycle, tracked in a persistent :class:`SessionStateStore`), builds the turn's prompts, and applies
the agent's writes append-only. Adapters swallow the turn's reply when :func:`is_no_reply`.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Literal

from openclaw_memory.files.append import append_memory, daily_note_path, local_now, normalize_rel_path
from openclaw_memory.text.chunker import text_weight
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError, MemoryPathError, OpenClawMemoryError
from openclaw_memory.files.session_state import SessionFlushState, SessionStateStore

__all__ = [
    "DEFAULT_FLUSH_PROMPT",
    "DEFAULT_FLUSH_SYSTEM_PROMPT",
    "NO_REPLY",
    "FlushDecision",
    "FlushPolicy",
    "FlushTurn",
    "FlushWriteResult",
    "SessionFlushState",
    "SessionStateStore",
    "TokenCounter",
    "WorkspaceAccess",
    "apply_flush_writes",
    "build_flush_messages",
    "estimate_tokens",
    "is_no_reply",
    "text_weight",
]

log = logging.getLogger(__name__)

NO_REPLY = "NO_REPLY"
WorkspaceAccess = Literal["rw", "ro", "none"]
TokenCounter = Callable[[Any], int]

# ---- token estimate ------------------------------------------------------------------------

def estimate_tokens(value: Any) -> int:
    """Estimated tokens (weight/4, rounded up) of a string, a message, or a list of either.

    Messages may be dicts (``content`` as a string or a list of ``{"type": "text", "text": ...}``
    blocks) or objects with a ``content`` attribute (LangChain / LlamaIndex messages).
    """
    return math.ceil(_weight(value) / 4)


def _weight(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, str):
        return text_weight(value)
    if isinstance(value, Mapping):
        if "content" in value:
            return _weight(value["content"])
        if isinstance(value.get("text"), str):
            return text_weight(value["text"])
        return 0
    if isinstance(value, (list, tuple)):
        return sum(_weight(v) for v in value)
    content = getattr(value, "content", None)
    if content is not None:
        return _weight(content)
    return text_weight(str(value))


# ---- NO_REPLY --------------------------------------------------------------------------------

_NO_REPLY_RE = re.compile(r"^[\W_]*no_reply[\W_]*$", re.IGNORECASE)


def is_no_reply(text: Any) -> bool:
    """True when a reply is the silent token alone: ``NO_REPLY`` (any case, surrounded only by
    whitespace/punctuation/markup such as ``**NO_REPLY**.``) or ``{"action": "NO_REPLY"}``."""
    if not isinstance(text, str):
        return False
    stripped = text.strip()
    if not stripped:
        return False
    if _NO_REPLY_RE.match(stripped):
        return True
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            return False
        return isinstance(data, dict) and str(data.get("action", "")).strip().upper() == NO_REPLY
    return False


# ---- prompts ---------------------------------------------------------------------------------

_READ_ONLY_FILES = "DREAMS.md, SOUL.md, TOOLS.md, and AGENTS.md"
_TIMESTAMP_HINT = (
    "Do NOT create timestamped variant files (e.g., YYYY-MM-DD-HHMM.md); always use the canonical "
    "YYYY-MM-DD.md filename."
)
_NO_REPLY_HINT = "If no user-visible reply is needed, reply with NO_REPLY only."


def _hints(allow_memory_md: bool) -> tuple[str, str, str]:
    if allow_memory_md:
        target = (
            "Store durable memories in memory/YYYY-MM-DD.md (create memory/ if needed); lasting decisions, "
            "preferences and facts may also be appended to MEMORY.md."
        )
        read_only = _READ_ONLY_FILES
    else:
        target = "Store durable memories only in memory/YYYY-MM-DD.md (create memory/ if needed)."
        read_only = "MEMORY.md, " + _READ_ONLY_FILES
    ro = (
        f"Treat workspace bootstrap/reference files such as {read_only} as read-only during this flush; "
        "never overwrite, replace, or edit them."
    )
    append = "If memory/YYYY-MM-DD.md already exists, APPEND new content only and do not overwrite existing entries."
    return target, ro, append


def _default_prompts(allow_memory_md: bool) -> tuple[str, str]:
    target, ro, append = _hints(allow_memory_md)
    user = (
        f"Pre-compaction memory flush. {target} {ro} {append} {_TIMESTAMP_HINT} "
        "If nothing to store, reply with NO_REPLY."
    )
    system = (
        "Pre-compaction memory flush turn. The session is near auto-compaction; capture durable memories "
        f"to disk. {target} {ro} {append} You may reply, but usually NO_REPLY is correct."
    )
    return user, system


#: Default user prompt of the flush turn (``YYYY-MM-DD`` is replaced by today's date).
DEFAULT_FLUSH_PROMPT, DEFAULT_FLUSH_SYSTEM_PROMPT = _default_prompts(True)


def _harden_custom(prompt: str, allow_memory_md: bool) -> str:
    """A configured prompt plus whichever safety hints and NO_REPLY instruction it lacks."""
    out = prompt.rstrip()
    missing = [h for h in _hints(allow_memory_md) if h not in out]
    if missing:
        out += "\n\n" + " ".join(missing)
    if NO_REPLY not in out:
        out += "\n\n" + _NO_REPLY_HINT
    return out


@dataclass(frozen=True)
class FlushTurn:
    """The silent flush turn: prompts to send and the files the agent may append to."""

    system_prompt: str
    user_prompt: str
    target_path: str
    date: date
    allowed_paths: tuple[str, ...]


def build_flush_messages(
    config: MemoryConfig, *, now: datetime | None = None, allow_memory_md: bool = True
) -> FlushTurn:
    """Build the flush turn's prompts with today's date (``config.timezone``) substituted."""
    local = local_now(config.timezone, now)
    day = local.date()
    flush_cfg = config.compaction.memory_flush
    default_user, default_system = _default_prompts(allow_memory_md)
    user = _harden_custom(flush_cfg.prompt, allow_memory_md) if flush_cfg.prompt else default_user
    system = _harden_custom(flush_cfg.system_prompt, allow_memory_md) if flush_cfg.system_prompt else default_system
    stamp = day.isoformat()
    user, system = user.replace("YYYY-MM-DD", stamp), system.replace("YYYY-MM-DD", stamp)
    tz_name = config.timezone or local.tzname() or "local"
    utc = local.astimezone(timezone.utc)
    user += f"\nCurrent time: {local:%Y-%m-%d %H:%M} ({tz_name}) / {utc:%Y-%m-%d %H:%M} UTC"
    target = daily_note_path(day)
    allowed = (target, "MEMORY.md") if allow_memory_md else (target,)
    return FlushTurn(system_prompt=system, user_prompt=user, target_path=target, date=day, allowed_paths=allowed)


# ---- applying the agent's writes ---------------------------------------------------------------


@dataclass(frozen=True)
class FlushWriteResult:
    """Outcome of one write the agent attempted during the flush turn."""

    path: str
    ok: bool
    error: str | None = None
    abs_path: str | None = None


def _write_items(writes: Iterable[Any]) -> Iterable[tuple[str, str]]:
    """``(path, text)`` of each write."""
    for item in writes:
        if isinstance(item, Mapping):
            text = item.get("content", item.get("text"))
            path, text = item.get("path", ""), "" if text is None else text
        else:
            path, text = item
        yield str(path), str(text)


def apply_flush_writes(
    workspace: str | os.PathLike[str],
    writes: Iterable[tuple[str, str] | Mapping[str, Any]],
    *,
    day: date,
    allow_memory_md: bool = True,
) -> list[FlushWriteResult]:
    """Append each ``(path, text)`` (or ``{"path", "content"}``) the agent wrote during the flush.

    Each entry written is marked origin ``agent`` (:mod:`openclaw_memory.text.provenance`); a lone
    surrogate in a text (half an emoji) is written as U+FFFD.
    Only ``memory/<day>.md`` (and ``MEMORY.md`` when ``allow_memory_md``) are accepted; anything
    else is refused without touching the disk. Never raises for a refused or failed write: the
    result carries the error so the adapter can report it back to the agent.
    """
    ws = Path(workspace).expanduser().resolve()
    target = daily_note_path(day)
    allowed = {target, "MEMORY.md"} if allow_memory_md else {target}
    where = f"{target} or MEMORY.md" if allow_memory_md else target
    results: list[FlushWriteResult] = []
    for raw_path, text in _write_items(writes):
        try:
            rel = normalize_rel_path(ws, raw_path)
            if rel not in allowed:
                raise MemoryPathError(f"Memory flush writes are restricted to {where}; use that path only.")
            written = append_memory(ws, rel, text, allowed=allowed, origin="agent")
        except MemoryPathError as exc:
            log.warning("memory flush: refused write to %r: %s", raw_path, exc)
            results.append(FlushWriteResult(path=raw_path, ok=False, error=str(exc)))
        except (OpenClawMemoryError, OSError) as exc:  # a full disk; the note's lock held too long by another writer
            log.error("memory flush: could not append to %r: %s", raw_path, exc)
            results.append(FlushWriteResult(path=raw_path, ok=False, error=f"write failed: {exc}"))
        else:
            log.info("memory flush: appended %d chars to %s", len(text), rel)
            results.append(FlushWriteResult(path=rel, ok=True, abs_path=str(written)))
    return results


# ---- the policy --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FlushDecision:
    """Whether to run the flush turn now, and why (``reason`` is a stable identifier)."""

    flush: bool
    reason: str
    threshold: int
    session_key: str = ""
    total_tokens: int | None = None
    token_source: Literal["usage", "estimate", "none"] = "none"
    compaction_count: int = 0
    flushed_at_count: int | None = None
    transcript_bytes: int | None = None
    at: float = field(default_factory=time.time)


class FlushPolicy:
    """Decides when to run the pre-compaction flush and records that it ran.

    ``decisions`` keeps the most recent decisions (also logged on ``openclaw_memory.agent.flush``).
    Call :meth:`record_compaction` after each compaction, and record each flush, so the flush
    fires at most once per compaction cycle, across restarts. When several processes (or
    threads) may serve the same session, claim the cycle right before running the turn::

        decision = policy.should_flush(key, total_tokens=usage)
        if decision.flush and policy.claim_flush(key, compaction_count=decision.compaction_count):
            ...  # run the flush turn; the claim already recorded it

    Only one caller per cycle gets True from :meth:`claim_flush`. A single process may instead
    run the turn and then call :meth:`mark_flushed`.
    """

    def __init__(
        self,
        config: MemoryConfig,
        *,
        store: SessionStateStore | None = None,
        store_path: str | os.PathLike[str] | None = None,
        token_counter: TokenCounter = estimate_tokens,
        context_window: int | None = None,
        allow_memory_md: bool = True,
        max_decisions: int = 1000,
    ) -> None:
        self.config = config
        self.store = store if store is not None else SessionStateStore.for_config(config, path=store_path)
        self.token_counter = token_counter
        self.context_window = context_window if context_window is not None else config.compaction.context_window
        self.allow_memory_md = allow_memory_md
        self.max_decisions = max(1, max_decisions)
        self.decisions: list[FlushDecision] = []

    @property
    def threshold(self) -> int:
        """``context_window - reserve_tokens_floor - soft_threshold_tokens`` (176 000 by default)."""
        c = self.config.compaction
        return self.context_window - c.reserve_tokens_floor - c.memory_flush.soft_threshold_tokens

    def check_threshold(self) -> None:
        """Raise ConfigError when the threshold is not positive: the token trigger could never fire
        (``should_flush`` would always answer ``threshold_not_positive``). Adapters call it when
        they are built, so a too-small context window is an error, not a flush that never runs."""
        threshold = self.threshold
        if threshold > 0:
            return
        c = self.config.compaction
        raise ConfigError(
            f"the memory flush would never run: its threshold is {threshold} tokens (context_window "
            f"{self.context_window} - compaction.reserve_tokens_floor {c.reserve_tokens_floor} - "
            f"compaction.memory_flush.soft_threshold_tokens {c.memory_flush.soft_threshold_tokens}). For a small "
            "model lower those two settings (e.g. reserve_tokens_floor=1000, soft_threshold_tokens=1000 for 8k), "
            "or give the compaction threshold itself as trigger_tokens"
        )

    def should_flush(
        self,
        session_key: str,
        total_tokens: int | None = None,
        *,
        compaction_count: int | None = None,
        messages: Any = None,
        transcript_bytes: int | None = None,
        is_heartbeat: bool = False,
        workspace_access: WorkspaceAccess = "rw",
        provider_supports_flush: bool = True,
    ) -> FlushDecision:
        """Decide whether to run the flush turn for ``session_key`` now.

        ``total_tokens`` is the model's reported usage; when None, ``messages`` (if given) are
        counted with the token counter. ``compaction_count``, when given, is the caller's
        authoritative count and is saved to the store. ``transcript_bytes`` enables the
        ``force_flush_transcript_bytes`` trigger.
        """
        threshold = self.threshold
        source: Literal["usage", "estimate", "none"] = "none"
        tokens = total_tokens
        if tokens is not None:
            source = "usage"
        elif messages is not None:
            tokens, source = int(self.token_counter(messages)), "estimate"
        state = self.store.get(session_key)
        if compaction_count is not None and compaction_count != state.compaction_count:
            state = self.store.set_compaction_count(session_key, compaction_count)

        def decide(flush: bool, reason: str) -> FlushDecision:
            d = FlushDecision(
                flush=flush,
                reason=reason,
                threshold=threshold,
                session_key=session_key,
                total_tokens=tokens,
                token_source=source,
                compaction_count=state.compaction_count,
                flushed_at_count=state.flushed_at_count,
                transcript_bytes=transcript_bytes,
            )
            self._record(d)
            return d

        flush_cfg = self.config.compaction.memory_flush
        if not flush_cfg.enabled:
            return decide(False, "disabled")
        if is_heartbeat:
            return decide(False, "heartbeat")
        if workspace_access != "rw":
            return decide(False, "workspace_read_only" if workspace_access == "ro" else "workspace_unavailable")
        if not provider_supports_flush:
            return decide(False, "provider_unsupported")
        ws = self.config.resolved_workspace()
        if ws.exists() and not os.access(ws, os.W_OK):
            return decide(False, "workspace_not_writable")
        token_hit = threshold > 0 and tokens is not None and tokens >= threshold
        force_bytes = flush_cfg.force_flush_transcript_bytes
        bytes_hit = force_bytes > 0 and transcript_bytes is not None and transcript_bytes >= force_bytes
        if not token_hit and not bytes_hit:
            if tokens is None and transcript_bytes is None:
                return decide(False, "no_token_count")
            return decide(False, "threshold_not_positive" if threshold <= 0 and not bytes_hit else "below_threshold")
        if state.flushed_at_count == state.compaction_count:
            return decide(False, "already_flushed_this_cycle")
        return decide(True, "threshold_reached" if token_hit else "transcript_bytes_reached")

    def claim_flush(self, session_key: str, *, compaction_count: int | None = None) -> bool:
        """Atomically claim (and record) the flush of the current or given compaction cycle.

        True for exactly one caller per cycle across threads and processes sharing the store;
        False when the cycle was already flushed or claimed, or a newer compaction was recorded
        since the caller decided. A lost claim is recorded as an ``already_claimed`` decision.
        """
        won = self.store.claim_flush(session_key, compaction_count)
        if won:
            log.info("memory flush: %s claimed the flush of compaction cycle %s", session_key,
                     "current" if compaction_count is None else compaction_count)
        else:
            state = self.store.get(session_key)
            self._record(
                FlushDecision(
                    flush=False,
                    reason="already_claimed",
                    threshold=self.threshold,
                    session_key=session_key,
                    compaction_count=state.compaction_count,
                    flushed_at_count=state.flushed_at_count,
                )
            )
        return won

    def mark_flushed(self, session_key: str, *, compaction_count: int | None = None) -> SessionFlushState:
        """Record that the flush ran in the current (or given) compaction cycle."""
        state = self.store.mark_flushed(session_key, compaction_count=compaction_count)
        log.info("memory flush: marked %s flushed at compaction %d", session_key, state.compaction_count)
        return state

    def record_compaction(self, session_key: str) -> int:
        """Record a compaction of ``session_key``; returns the new compaction count.

        To keep the compacted conversation searchable, also call
        :meth:`MemoryIndex.after_compaction` with the session's transcript (the adapters do both).
        """
        count = self.store.record_compaction(session_key)
        log.info("memory flush: %s compacted (count %d)", session_key, count)
        return count

    def build_flush_messages(self, *, now: datetime | None = None) -> FlushTurn:
        """The flush turn's prompts for today (configured timezone)."""
        return build_flush_messages(self.config, now=now, allow_memory_md=self.allow_memory_md)

    def apply_flush_writes(
        self,
        writes: Iterable[tuple[str, str] | Mapping[str, Any]],
        *,
        turn: FlushTurn | None = None,
        now: datetime | None = None,
    ) -> list[FlushWriteResult]:
        """Append the agent's flush writes to the workspace (today's note or MEMORY.md only)."""
        day = turn.date if turn is not None else local_now(self.config.timezone, now).date()
        return apply_flush_writes(
            self.config.resolved_workspace(), writes, day=day, allow_memory_md=self.allow_memory_md
        )

    def _record(self, decision: FlushDecision) -> None:
        self.decisions.append(decision)
        if len(self.decisions) > self.max_decisions:
            del self.decisions[: len(self.decisions) - self.max_decisions]
        level = logging.INFO if decision.flush else logging.DEBUG
        log.log(
            level,
            "memory flush decision for %s: %s (%s; tokens=%s/%d via %s, compaction=%d, flushed_at=%s)",
            decision.session_key,
            "flush" if decision.flush else "skip",
            decision.reason,
            decision.total_tokens,
            decision.threshold,
            decision.token_source,
            decision.compaction_count,
            decision.flushed_at_count,
        )
