"""The session-memory hook (``/new`` / ``/reset``, spec §8.4): save the recent conversation as
``memory/YYYY-MM-DD-<slug>.md`` when a session ends, so it becomes searchable memory."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from openclaw_memory.files.append import local_now
from openclaw_memory.config import MemoryConfig
from openclaw_memory.files.memory_writes import create_file
from openclaw_memory.files.sessions import message_text

__all__ = ["SLUG_PROMPT", "format_conversation", "sanitize_slug", "save_session_memory", "slug_prompt"]

log = logging.getLogger(__name__)

SLUG_PROMPT = (
    "Based on this conversation, generate a short 1-2 word filename slug (lowercase, hyphen-separated, "
    "no file extension).\n\nConversation summary:\n{conversation}\n\n"
    'Reply with ONLY the slug, nothing else. Examples: "vendor-pitch", "api-design", "bug-fix"'
)
_MAX_SLUG = 30
_MAX_SUFFIX = 1000


def slug_prompt(conversation: str) -> str:
    """The prompt a slug LLM receives (the conversation is cut to its first 2000 characters)."""
    return SLUG_PROMPT.format(conversation=conversation[:2000])


def sanitize_slug(raw: str) -> str:
    """Lowercase, ``[a-z0-9-]`` only, dashes collapsed and trimmed, at most 30 characters."""
    line = next((ln for ln in str(raw).splitlines() if ln.strip()), "")
    slug = re.sub(r"[^a-z0-9-]+", "-", line.strip().lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-")
    return slug[:_MAX_SLUG].rstrip("-")


#: LangChain's message types (``HumanMessage.type == "human"``) as the roles they stand for
_ROLE_OF_TYPE = {"human": "user", "ai": "assistant"}


def _role_and_text(message: Any) -> tuple[str, str]:
    """A message's role (``user``, ``assistant``, ...) and text: a dict (``role`` or LangChain's ``type``), a
    LangChain message (``type`` "human"/"ai") or a LlamaIndex ``ChatMessage`` (``role`` an enum)."""
    if isinstance(message, Mapping):
        role, content = message.get("role") or message.get("type"), message.get("content")
    else:
        role = getattr(message, "role", None) or getattr(message, "type", None)
        content = getattr(message, "content", None)
    role = str(getattr(role, "value", role) or "").lower()
    return _ROLE_OF_TYPE.get(role, role), message_text(content).strip()


def format_conversation(messages: Iterable[Any], max_messages: int = 15) -> list[str]:
    """The last ``max_messages`` user/assistant messages as ``"<role>: <text>"`` lines.

    Messages may be dicts (``role`` or ``type``), LangChain messages or LlamaIndex ``ChatMessage``s. Empty
    messages and slash commands (text starting with ``/``) are dropped before slicing.
    """
    kept = []
    for m in messages:
        role, text = _role_and_text(m)
        if role in ("user", "assistant") and text and not text.startswith("/"):
            kept.append(f"{role}: {text}")
    return kept[-max_messages:] if max_messages > 0 else []


def _make_slug(slug_fn: Callable[[str], str] | None, conversation: str, local: datetime) -> str:
    if slug_fn is not None:
        try:
            slug = sanitize_slug(slug_fn(slug_prompt(conversation)))
        except Exception as exc:  # noqa: BLE001 - an LLM failure must not lose the conversation
            log.warning("session memory: slug generation failed (%s); using a time-based slug", exc)
            slug = ""
        if slug:
            return slug
        log.info("session memory: slug function returned nothing usable; using a time-based slug")
    return local.strftime("%H%M%S")


def _create_exclusive(workspace: Path, stem: str, content: str) -> str:
    """Create ``memory/<stem>.md`` (or ``-2``, ``-3`` … when taken); its workspace-relative path."""
    for n in range(1, _MAX_SUFFIX + 1):
        rel = f"memory/{stem}.md" if n == 1 else f"memory/{stem}-{n}.md"
        if create_file(workspace, rel, content):
            return rel
    raise FileExistsError(
        f"{workspace}/memory/{stem}.md and {_MAX_SUFFIX - 1} numbered variants already exist; pick another slug"
    )


def save_session_memory(
    config: MemoryConfig,
    messages: Iterable[Mapping[str, Any] | Any],
    *,
    slug_fn: Callable[[str], str] | None = None,
    now: datetime | None = None,
    max_messages: int = 15,
    session_id: str | None = None,
    session_key: str | None = None,
    source: str | None = None,
) -> Path | None:
    """Save the last ``max_messages`` user/assistant messages to ``memory/YYYY-MM-DD-<slug>.md``.

    ``slug_fn`` receives the slug prompt (:func:`slug_prompt`) and returns a slug; without it, or
    when it fails, the slug is the local time ``HHMMSS``. The date and time use
    ``config.timezone``. An existing file is never overwritten (``-2``, ``-3`` … are tried).
    Returns the new file, or None when there was no conversation to save.
    """
    lines = format_conversation(messages, max_messages)
    if not lines:
        log.info("session memory: no user/assistant messages to save")
        return None
    local = local_now(config.timezone, now)
    conversation = "\n".join(lines)
    slug = _make_slug(slug_fn, conversation, local)

    ws = config.resolved_workspace()
    ws.mkdir(parents=True, exist_ok=True)  # the workspace itself is trusted configuration

    tz_name = config.timezone or local.tzname() or "local"
    meta = [
        f"- **Session Key**: {session_key}" if session_key else "",
        f"- **Session ID**: {session_id}" if session_id else "",
        f"- **Source**: {source}" if source else "",
        f"- **Messages**: {len(lines)}",
    ]
    content = (
        f"# Session: {local:%Y-%m-%d %H:%M:%S} {tz_name}\n\n"
        + "\n".join(m for m in meta if m)
        + "\n\n## Conversation Summary\n\n"
        + conversation
        + "\n"
    )
    # opened by descriptor from the workspace down: a symlink below it is refused (MemoryPathError), never followed
    rel = _create_exclusive(ws, f"{local:%Y-%m-%d}-{slug}", content)
    log.info("session memory: saved %d messages to %s", len(lines), rel)
    return ws / rel
