"""The agent tools, framework-neutral: ``memory_search``, ``memory_get`` and ``memory_forget_entry``.

Adapters wrap these (LangChain ``StructuredTool``, LlamaIndex ``FunctionTool``). They return
plain JSON-able payloads and never raise for provider or path problems: the model gets an
explanation it can act on (``disabled``/``unavailable`` with ``warning`` and ``action``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from openclaw_memory.text.citations import (
    ChatType,
    format_citation,
    normalize_session_kind,
    parse_citation,
    strip_citation_footer,
)
from openclaw_memory.config import MemoryConfig
from openclaw_memory.files.discovery import UnreadableFileError, line_number
from openclaw_memory.errors import MemoryArgumentError, MemoryPathError, OpenClawMemoryError
from openclaw_memory.index import MemoryIndex
from openclaw_memory.index.search_options import indexed_sources
from openclaw_memory.types import SearchResult
from openclaw_memory.consolidation import forget as forget_memory

__all__ = [
    "MEMORY_FORGET_ENTRY_DESCRIPTION",
    "MEMORY_GET_DESCRIPTION",
    "MEMORY_GET_MAX_CHARS",
    "MEMORY_SEARCH_DESCRIPTION",
    "MemoryForgetEntryArgs",
    "MemoryGetArgs",
    "MemorySearchArgs",
    "amemory_forget_entry",
    "amemory_get",
    "amemory_search",
    "cited_lines",
    "corpus_error",
    "corpus_sources",
    "field_annotation",
    "format_forget_text",
    "format_get_text",
    "format_search_text",
    "invalid_arguments_text",
    "memory_forget_entry",
    "memory_get",
    "memory_recall_prompt",
    "memory_search",
]

log = logging.getLogger(__name__)

MEMORY_SEARCH_DESCRIPTION = (
    "Mandatory recall step: search MEMORY.md + memory/*.md (and indexed session transcripts, if enabled) "
    "before answering questions about prior work, decisions, dates, people, preferences, or todos. "
    "Finds paraphrases and exact tokens (IDs, names, error strings). Returns snippets with path and line "
    "numbers; use memory_get to read more lines. If the response has disabled=true, memory retrieval is "
    "unavailable and that should be surfaced to the user."
)
#: The most characters of note text one ``memory_get`` returns (OpenClaw's read budget, 12,000).
MEMORY_GET_MAX_CHARS = 12_000
MEMORY_GET_DESCRIPTION = (
    "Safe read of MEMORY.md, memory.md or memory/**/*.md (and configured extra paths) with optional "
    "from_line/lines. Use after memory_search to pull only the needed lines and keep context small."
)


def _not_boolean(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a number is required, not a boolean")
    return value


# in the field's metadata, so field_annotation (the MCP server, the LlamaIndex tools) carries it too
_NOT_BOOLEAN = BeforeValidator(_not_boolean)


class MemorySearchArgs(BaseModel):
    """Arguments of ``memory_search`` (camelCase names are accepted too).

    The single source of the bounds: the LangChain adapter uses it as its tool schema, the
    LlamaIndex adapter copies its fields (:func:`field_annotation`), and :func:`memory_search`
    validates its arguments with it.
    """

    model_config = ConfigDict(populate_by_name=True)

    query: str = Field(description="What to look for: a question, a name, an ID or an error message.")
    max_results: Annotated[int | None, _NOT_BOOLEAN] = Field(
        None, ge=1, le=50, alias="maxResults", description="Maximum results (default 6).")
    min_score: Annotated[float | None, _NOT_BOOLEAN] = Field(
        None, ge=0, le=1, alias="minScore", description="Score floor 0..1 (default 0.35).")
    after: str | None = Field(None, description="Only notes dated on or after this day: an ISO date (2024-05-01) or "
                                                "words such as 'last week' or 'March 2024'. Undated notes always count.")
    before: str | None = Field(None, description="Only notes dated before this day (ISO date or words such as "
                                                 "'yesterday'). Undated notes always count.")
    corpus: Literal["memory", "sessions", "all"] | None = Field(
        None, description="memory (the memory files), sessions (indexed session transcripts) or all (default).")


def _line_arg(name: str) -> BeforeValidator:
    return BeforeValidator(lambda value: line_number(value, name))


class MemoryGetArgs(BaseModel):
    """Arguments of ``memory_get`` (camelCase ``from``/``lines`` are accepted too; fractional
    numbers and numeric strings are truncated to int, as :func:`memory_get` does)."""

    model_config = ConfigDict(populate_by_name=True)

    path: str = Field(description="A memory file path as returned by memory_search, e.g. memory/2026-01-16.md.")
    # the schema asks for >= 1; memory_get itself reads values below 1 as 1 (spec §7.3)
    from_line: Annotated[int | None, _line_arg("from_line")] = Field(
        None, ge=1, alias="from", description="First line to read (1-based).")
    lines: Annotated[int | None, _line_arg("lines")] = Field(
        None, ge=1, description="How many lines to read (default: to the end).")


MEMORY_FORGET_ENTRY_DESCRIPTION = (
    "Forget a curated memory when the user asks you to: removes the MEMORY.md entries that hold this text or cite "
    "this source, and keeps it from ever being promoted into MEMORY.md again. The daily notes stay as the record "
    "of the day."
)


class MemoryForgetEntryArgs(BaseModel):
    """Arguments of ``memory_forget_entry``."""

    what: str = Field(min_length=1, max_length=4000, description=(
        "The memory's text, or its source as memory_search cites it (memory/2026-11-26.md#L3-L3)."))


def field_annotation(model: type[BaseModel], name: str) -> Any:
    """``Annotated[type, Field(description=...), *constraints]`` of one field of ``model``, without its
    alias: for frameworks that build a tool schema from a function signature."""
    info = model.model_fields[name]
    return Annotated[info.annotation, Field(description=info.description), *info.metadata]


def invalid_arguments_text(tool: str, exc: ValidationError) -> str:
    """The error a model gets for arguments of ``tool`` that ``exc`` refused: each argument, what it got, what to do."""
    def got(value: Any) -> str:
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."

    parts = [
        f"{'.'.join(str(p) for p in e.get('loc', ())) or 'arguments'}: {e.get('msg')} (got {got(e.get('input'))})"
        for e in exc.errors()
    ]
    return f"invalid {tool} arguments: " + "; ".join(parts) + f". Fix them and call {tool} again."


def _search_args(query: Any, max_results: Any, min_score: Any, after: Any = None,
                 before: Any = None, corpus: Any = None) -> MemorySearchArgs | str:
    """The validated ``memory_search`` arguments, or the error text for the payload."""
    if query is None or (isinstance(query, str) and not query.strip()):
        return "query required: pass the text to search for"
    try:
        return MemorySearchArgs.model_validate({"query": query, "max_results": max_results, "min_score": min_score,
                                                "after": after, "before": before, "corpus": corpus})
    except ValidationError as exc:
        return invalid_arguments_text("memory_search", exc)


def _unavailable(error: str) -> dict[str, Any]:
    quota = any(word in error.lower() for word in ("insufficient_quota", "quota", "429"))
    warning = (
        "Memory search is unavailable because the embedding provider quota is exhausted."
        if quota else "Memory search is unavailable due to an embedding/provider error."
    )
    action = (
        "Top up or switch embedding provider, then retry memory_search."
        if quota else "Check embedding provider configuration and retry memory_search."
    )
    return {"results": [], "disabled": True, "unavailable": True, "error": error, "warning": warning, "action": action}


def _payload(memory: MemoryIndex, result: SearchResult) -> dict[str, Any]:
    results = [
        {
            "path": h.path,
            "start_line": h.start_line,
            "end_line": h.end_line,
            "score": round(h.score, 4),
            "vector_score": round(h.vector_score, 4),
            "text_score": round(h.text_score, 4),
            "snippet": h.snippet,
            "source": h.source,
            **({"citation": h.citation} if h.citation else {}),
        }
        for h in result.hits
    ]
    payload: dict[str, Any] = {
        "results": results,  # already within query.max_injected_chars (applied by search)
        "provider": result.provider,
        "model": result.model,
        "mode": result.mode,
        "citations": memory.config.citations,
    }
    if result.fallback:
        payload["fallback"] = result.fallback.to_dict()
    if result.keyword_only_reason:
        payload["keyword_only_reason"] = result.keyword_only_reason
    if not result.hits:
        payload["empty_reason"] = result.empty_reason or "no_match"
        payload["message"] = {
            "empty_index": "The memory index is empty: no memory files have been written yet.",
            "stale": "Nothing matched yet, but the index is being updated; try again shortly.",
            "sync_failed": (
                f"Nothing found, possibly because indexing the memory files failed: "
                f"{(result.sync_error or '').rstrip('.')}. Memory search cannot see notes that were not indexed; "
                "tell the user memory search is not working and why. Later searches retry the sync now and then."
            ),
        }.get(payload["empty_reason"], "No memory matched this query. Say that you checked.")
    if result.sync_scheduled:
        payload["sync_scheduled"] = True
    if result.sync_error:
        payload["sync_error"] = result.sync_error
    return payload


_CORPUS_SOURCES: dict[str, list[str] | None] = {"memory": ["memory"], "sessions": ["sessions"], "all": None}


def corpus_sources(corpus: str | None) -> list[str] | None:
    """The ``sources`` a search over ``corpus`` (memory | sessions | all; None = all) is limited to."""
    return _CORPUS_SOURCES[corpus or "all"]


def corpus_error(config: MemoryConfig, corpus: str | None) -> str | None:
    """Why a search over ``corpus`` cannot find anything in this memory (its session transcripts are not
    indexed), or None."""
    if corpus == "sessions" and "sessions" not in indexed_sources(config):
        return (f"corpus 'sessions': session transcripts are not indexed in this memory (memorySearch.sources is "
                f"{list(config.sources)}); search corpus 'memory' or 'all' instead")
    return None


def memory_search(
    memory: MemoryIndex,
    query: str,
    max_results: int | None = None,
    min_score: float | None = None,
    *,
    session_key: str | None = None,
    after: str | None = None,
    before: str | None = None,
    corpus: str | None = None,
) -> dict[str, Any]:
    """Run the ``memory_search`` tool: a JSON-able payload with ``results`` and how they were found.

    ``corpus`` is ``"memory"`` (the memory files only), ``"sessions"`` (indexed session transcripts
    only) or ``"all"`` / None (every configured source).

    Never raises for bad input or provider problems. Invalid arguments (a blank or non-string
    ``query``, ``max_results`` outside 1..50, ``min_score`` outside 0..1, see
    :class:`MemorySearchArgs`) give ``{"results": [], "error": "..."}``; an embedding/provider
    failure gives the ``disabled``/``unavailable`` payload. An empty ``results`` comes with
    ``empty_reason`` and ``message``; ``sync_error`` is set while the last sync failed.
    """
    if not memory.config.enabled:
        return {"results": [], "disabled": True, "error": "memory search is disabled (memorySearch.enabled=false)"}
    args = _search_args(query, max_results, min_score, after, before, corpus)
    if isinstance(args, str):
        return {"results": [], "error": args}
    unsearchable = corpus_error(memory.config, args.corpus)
    if unsearchable:
        return {"results": [], "error": unsearchable}
    try:
        result = memory.search(args.query, max_results=args.max_results, min_score=args.min_score,
                               session_key=session_key, after=args.after, before=args.before,
                               sources=corpus_sources(args.corpus))
    except MemoryArgumentError as exc:
        return {"results": [], "error": f"{exc}. Fix the argument and call memory_search again."}
    except OpenClawMemoryError as exc:
        log.warning("memory_search failed: %s", exc)
        return _unavailable(str(exc))
    return _payload(memory, result)


def cited_lines(path: Any, from_line: Any, lines: Any) -> tuple[Any, Any, Any]:
    """``path``, ``from_line`` and ``lines`` with a citation (``memory/2026-01-16.md#L3-L7``, as a search shows its
    hits) split into its path and, unless lines are given, the lines it names."""
    cited = parse_citation(path) if isinstance(path, str) else None
    if cited is None:
        return path, from_line, lines
    rel, start, end = cited
    if from_line is not None or lines is not None:
        return rel, from_line, lines
    return rel, start, max(end - start + 1, 1)


def memory_get(memory: MemoryIndex, path: str, from_line: int | None = None, lines: int | None = None, *,
               max_chars: int = MEMORY_GET_MAX_CHARS) -> dict[str, Any]:
    """Run the ``memory_get`` tool: ``{path, text, start_line, end_line}`` or ``{path, text: "",
    disabled: true, error}``.

    Never raises for bad input: a path that is not a string or not a memory file, and
    ``from_line``/``lines`` that are not numbers, give the error payload. Fractional numbers and
    numeric strings are truncated to int; values below 1 count as 1 (spec §7.3). At most
    ``max_chars`` characters of text are returned, whole lines where one fits: a longer read is
    cut, says so at the end of ``text`` and sets ``truncated`` (and ``next_from_line`` when the
    next lines can be read with ``from_line``). A citation as ``path`` (``memory/2026-01-16.md#L3-L7``,
    the name a search gives a hit) reads the lines it names unless ``from_line`` or ``lines`` is given.
    """
    path, from_line, lines = cited_lines(path, from_line, lines)
    requested = path if path is None or isinstance(path, (str, int, float)) else repr(path)  # JSON-able
    if not memory.config.enabled:
        return {"path": requested, "text": "", "disabled": True,
                "error": "memory is disabled (memorySearch.enabled=false)"}
    try:
        got = memory.get(path, from_line=from_line, lines=lines)
    except (MemoryPathError, MemoryArgumentError, UnreadableFileError) as exc:
        return {"path": requested, "text": "", "disabled": True, "error": str(exc)}
    except OSError as exc:
        return {"path": requested, "text": "", "disabled": True,
                "error": f"cannot read {path}: {exc.strerror or exc}"}
    payload = got.to_dict()
    if got.exists:  # OpenClaw's shape; a missing file keeps "exists": false so the agent can tell
        del payload["exists"]
    return _fit_text(payload, max_chars)


def _fit_text(payload: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """``payload`` with its text cut to ``max_chars`` characters (whole lines where one fits)."""
    text: str = payload["text"]
    if len(text) <= max_chars:
        return payload
    lines = text.split("\n")
    kept, size = 0, -1
    while kept < len(lines) and size + 1 + len(lines[kept]) <= max_chars:
        size += 1 + len(lines[kept])
        kept += 1
    start = payload["start_line"]
    if kept:
        next_from = start + kept
        notice = f"[Cut at {max_chars} characters. Use from_line={next_from} to read on.]"
        payload["text"] = "\n".join(lines[:kept]) + "\n\n" + notice
    else:  # the first line alone is longer than the budget
        next_from = start + 1 if len(lines) > 1 else None
        notice = f"[Line {start} is longer than {max_chars} characters and was cut.]"
        payload["text"] = lines[0][:max_chars] + "\n\n" + notice
        kept = 1
    payload["end_line"] = start + kept - 1
    payload["truncated"] = True
    if next_from is not None:
        payload["next_from_line"] = next_from
    return payload


async def amemory_search(
    memory: MemoryIndex,
    query: str,
    max_results: int | None = None,
    min_score: float | None = None,
    *,
    session_key: str | None = None,
    after: str | None = None,
    before: str | None = None,
    corpus: str | None = None,
) -> dict[str, Any]:
    """Async twin of :func:`memory_search`."""
    return await asyncio.to_thread(memory_search, memory, query, max_results, min_score, session_key=session_key,
                                   after=after, before=before, corpus=corpus)


async def amemory_get(
    memory: MemoryIndex, path: str, from_line: int | None = None, lines: int | None = None
) -> dict[str, Any]:
    """Async twin of :func:`memory_get`."""
    return await asyncio.to_thread(memory_get, memory, path, from_line, lines)



def memory_forget_entry(memory: MemoryIndex, what: Any) -> dict[str, Any]:
    """Run ``memory_forget_entry``: forget ``what`` (a memory's text or its ``path#Lx-Ly`` source)
    with :func:`openclaw_memory.consolidation.forget` and bring the index up to date. The payload
    has ``removed`` (MEMORY.md entries removed; :func:`~openclaw_memory.consolidation.undo` brings
    them back) and ``forgotten`` (the source or text recorded), or ``error``."""
    try:
        args = MemoryForgetEntryArgs.model_validate({"what": what})
        removed = forget_memory(memory, args.what)
    except ValidationError as exc:
        return {"error": invalid_arguments_text("memory_forget_entry", exc)}
    except OpenClawMemoryError as exc:
        return {"error": f"memory_forget_entry failed: {exc}"}
    except OSError as exc:  # the file's own text, never a descriptor number or a traceback
        return {"error": f"memory_forget_entry failed: cannot read or write MEMORY.md or the record of forgotten "
                         f"memories ({exc.strerror or exc}); tell the user, who can check the files"}
    payload: dict[str, Any] = {"path": "MEMORY.md", "removed": removed, "forgotten": args.what.strip()}
    if removed:
        try:
            memory.sync(reason="memory forget")
        except OpenClawMemoryError as exc:  # the files are changed; the next sync catches the index up
            payload["warning"] = f"the index is not updated yet: {exc}"
    return payload


async def amemory_forget_entry(memory: MemoryIndex, what: Any) -> dict[str, Any]:
    """Async twin of :func:`memory_forget_entry`."""
    return await asyncio.to_thread(memory_forget_entry, memory, what)


def format_forget_text(payload: dict[str, Any]) -> str:
    """The text a model sees for a ``memory_forget_entry`` payload."""
    if payload.get("error"):
        return str(payload["error"])
    removed = payload.get("removed", 0)
    if removed:
        return (f"Forgotten: {removed} entr{'y' if removed == 1 else 'ies'} removed from MEMORY.md; it will not be "
                "promoted again.")
    return "No MEMORY.md entry holds it; it is recorded as forgotten and will not be promoted into MEMORY.md."


def format_get_text(payload: dict[str, Any]) -> str:
    """The text a model sees for a ``memory_get`` payload without an error: the lines read, or what there is
    instead (a missing file, lines past the end of the file, blank lines), never an empty text."""
    path, text = payload.get("path"), payload.get("text") or ""
    if text.strip():
        return text
    start, end = payload.get("start_line", 1), payload.get("end_line", 0)
    if payload.get("exists") is False:
        return f"{path} does not exist yet."
    if start > end:
        return f"{path} has no line {start}: the file is shorter. Call memory_get without from to read it from line 1."
    if start == 1 and not text:
        return f"{path} is empty."
    lines = f"Line {start}" if start == end else f"Lines {start}-{end}"
    return f"{lines} of {path} {'is' if start == end else 'are'} blank."


def format_search_text(payload: dict[str, Any]) -> str:
    """The text a model sees for a ``memory_search`` payload: compact, with citations."""
    if payload.get("disabled"):
        return json.dumps({k: payload[k] for k in ("disabled", "unavailable", "error", "warning", "action")
                           if k in payload}, ensure_ascii=False)
    if not payload.get("results"):
        return payload.get("message") or payload.get("error") or "No memory matched."
    parts = []
    for r in payload["results"]:
        where = r.get("citation") or format_citation(r["path"], r["start_line"], r["end_line"])
        snippet = strip_citation_footer(r["snippet"], r.get("citation"))
        parts.append(f"[{where}] (score {r['score']:.2f})\n{snippet}")
    if payload.get("mode") == "keyword":
        parts.append(f"(keyword-only search: {payload.get('keyword_only_reason') or 'no embeddings'})")
    if payload.get("sync_error"):
        parts.append(f"(the last memory sync failed, so recent edits may be missing: {payload['sync_error']})")
    return "\n\n".join(parts)


def memory_recall_prompt(
    memory: MemoryIndex | MemoryConfig | None = None,
    *,
    session_kind: ChatType = "direct",
    citations: Literal["auto", "on", "off"] | None = None,
    sessions: bool | None = None,
    search: bool = True,
    get: bool = True,
) -> str:
    """The "## Memory Recall" system-prompt section for an agent that has the memory tools.

    With ``memory`` (an index or its config) the section follows the config: ``""`` when memory
    search is disabled (the tools are not offered then, spec §7.1), citations per
    ``config.citations``, transcripts mentioned when the index holds them (a source, or QMD's exported ones).
    ``citations`` and ``sessions`` override the config (without ``memory``: citations ``auto``, no sessions).
    Citations ``auto`` are on in a ``"direct"`` session and off in a ``"group"`` or ``"channel"``.
    ``search`` / ``get`` say which of the two tools the agent has.
    """
    kind = normalize_session_kind(session_kind)
    config = memory.config if isinstance(memory, MemoryIndex) else memory
    if config is not None and not config.enabled:
        return ""
    if not (search or get):
        return ""
    mode = citations or (config.citations if config is not None else "auto")
    cite_on = mode == "on" or (mode == "auto" and kind == "direct")
    if sessions is None:
        sessions = "sessions" in indexed_sources(config) if config is not None else False
    where = "MEMORY.md + memory/*.md" + (" + indexed session transcripts" if sessions else "")
    if search and get:
        body = (
            "Before answering anything about prior work, decisions, dates, people, preferences, or todos: "
            f"run memory_search on {where}; then use memory_get to pull only the needed lines. "
            "If low confidence after search, say you checked."
        )
    elif search:
        body = (
            "Before answering anything about prior work, decisions, dates, people, preferences, or todos: "
            f"run memory_search on {where}. If low confidence after search, say you checked."
        )
    else:
        body = "Use memory_get to read MEMORY.md or memory/*.md when prior work, decisions or preferences matter."
    cite = (
        "Citations are disabled: do not mention file paths or line numbers in replies unless the user "
        "explicitly asks."
        if not cite_on else
        "Citations: include Source: <path#line> when it helps the user verify memory snippets."
    )
    return f"## Memory Recall\n{body}\n{cite}"
