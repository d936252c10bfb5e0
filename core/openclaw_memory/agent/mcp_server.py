"""The memory as a Model Context Protocol server: the agent tools and the memory files for any MCP client.

:func:`create_mcp_server` builds an ``MCPServer`` (the official SDK, ``pip install 'openclaw-memory[mcp]'``)
over one warm :class:`~openclaw_memory.index.MemoryIndex` per served agent. Its tools keep the
contracts of the agent tools (:mod:`openclaw_memory.agent.tools`, :mod:`openclaw_memory.long_term.tools`):
the same arguments, payloads, citations and path rules. A failure is an MCP tool error
(``isError``), never a dropped connection. ``MEMORY.md`` and the daily notes are read-only resources
(``memory://<agent>/<path>``).
"""

import asyncio
import hmac
import inspect
import logging
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin
from typing import Literal
from urllib.parse import unquote, urlsplit

from pydantic import AliasChoices, Field, ValidationError
from pydantic.fields import FieldInfo

from openclaw_memory.errors import MissingDependencyError

try:
    from mcp.server.lowlevel.helper_types import ReadResourceContents
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError, UnexpectedToolError
    from mcp_types import CallToolResult, Resource, TextContent
except ImportError as exc:  # pragma: no cover - the `mcp` extra is missing
    raise MissingDependencyError(
        "the MCP server needs the official MCP SDK: pip install 'openclaw-memory[mcp]'") from exc

from openclaw_memory.files.append import append_memory, daily_note_path, today
from openclaw_memory.errors import MemoryArgumentError, MemoryPathError, OpenClawMemoryError, UnreadableFileError
from openclaw_memory.index import MemoryIndex
from openclaw_memory.agent.tools import (
    MEMORY_FORGET_ENTRY_DESCRIPTION,
    MEMORY_GET_DESCRIPTION,
    MEMORY_SEARCH_DESCRIPTION,
    MemoryForgetEntryArgs,
    MemoryGetArgs,
    MemorySearchArgs,
    amemory_forget_entry,
    field_annotation,
    format_forget_text,
    format_get_text,
    format_search_text,
    invalid_arguments_text,
    memory_get,
    memory_search,
)

if TYPE_CHECKING:
    from openclaw_memory.long_term import LongTermMemory

__all__ = ["MEMORY_APPEND_DESCRIPTION", "ServedAgent", "bearer_token_guard", "create_mcp_server"]

log = logging.getLogger(__name__)

MEMORY_APPEND_DESCRIPTION = (
    "Append a note to today's daily memory file (memory/YYYY-MM-DD.md). Use for durable facts, decisions "
    "and preferences worth remembering; write plain Markdown. The note is searchable right after. "
    "Set origin to 'untrusted' when the text comes from a tool's output, a web page or a document."
)
RESOURCE_SCHEME = "memory"


@dataclass(frozen=True)
class ServedAgent:
    """One agent the server answers for: its id, its warm index and, optionally, its long-term memory."""

    agent_id: str
    memory: MemoryIndex
    long_term: "LongTermMemory | None" = None


def _result(text: str, payload: dict[str, Any], *, error: bool) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload, is_error=error)


AgentArgument = Annotated[str | None, Field(description="Which agent's memory (default: the first served).")]


class _Agents:
    """The served agents by id; the first is the default."""

    def __init__(self, agents: Sequence[ServedAgent]) -> None:
        if not agents:
            raise MemoryArgumentError("the MCP server needs at least one agent to serve")
        self.by_id = {agent.agent_id: agent for agent in agents}
        if len(self.by_id) != len(agents):
            raise MemoryArgumentError("each served agent needs its own agent id")
        self.default = agents[0]

    def pick(self, agent_id: str | None) -> ServedAgent:
        if agent_id is None or agent_id == "":
            return self.default
        try:
            return self.by_id[agent_id]
        except KeyError:
            known = ", ".join(sorted(self.by_id))
            raise MemoryArgumentError(f"unknown agent {agent_id!r}: this server serves {known}") from None


def _both_spellings(name: str, camel: str) -> Any:
    """``MemorySearchArgs``' field ``name``, named ``camel`` in the tool's schema and taken under either name (as
    :class:`MemorySearchArgs` takes both; an argument the schema does not name would be dropped without a word)."""
    return Annotated[field_annotation(MemorySearchArgs, name), Field(validation_alias=AliasChoices(camel, name))]


def _search_tool(agents: _Agents) -> Any:
    async def memory_search_tool(
        query: field_annotation(MemorySearchArgs, "query"),  # type: ignore[valid-type]
        max_results: _both_spellings("max_results", "maxResults") = None,  # type: ignore[valid-type]
        min_score: _both_spellings("min_score", "minScore") = None,  # type: ignore[valid-type]
        after: field_annotation(MemorySearchArgs, "after") = None,  # type: ignore[valid-type]
        before: field_annotation(MemorySearchArgs, "before") = None,  # type: ignore[valid-type]
        corpus: field_annotation(MemorySearchArgs, "corpus") = None,  # type: ignore[valid-type]
        agent: AgentArgument = None,
    ) -> CallToolResult:
        try:
            served = agents.pick(agent)
        except MemoryArgumentError as exc:
            return _result(str(exc), {"results": [], "error": str(exc)}, error=True)
        payload = await asyncio.to_thread(lambda: memory_search(served.memory, query, max_results, min_score,
                                                                after=after, before=before, corpus=corpus))
        failed = bool(payload.get("error") or payload.get("disabled"))
        return _result(format_search_text(payload), payload, error=failed)

    return memory_search_tool


def _get_signature() -> inspect.Signature:
    """``memory_get``'s arguments as the agent tool names them: ``from`` (a Python keyword; the schema's name),
    also taken as ``from_line``, the name of the tool's description and of its "read on" notice."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature([
        inspect.Parameter("path", keyword, annotation=field_annotation(MemoryGetArgs, "path")),
        inspect.Parameter("from_line", keyword, default=None, annotation=Annotated[
            int | None, Field(ge=1, validation_alias=AliasChoices("from", "from_line"),
                              description="First line to read (1-based).")]),
        inspect.Parameter("lines", keyword, default=None, annotation=Annotated[
            int | None, Field(ge=1, description="How many lines to read (default: to the end).")]),
        inspect.Parameter("agent", keyword, default=None, annotation=AgentArgument),
    ], return_annotation=CallToolResult)


def _get_tool(agents: _Agents) -> Any:
    async def memory_get_tool(**arguments: Any) -> CallToolResult:
        path, from_line, lines, agent = (arguments.get(name) for name in ("path", "from_line", "lines", "agent"))
        try:
            served = agents.pick(agent)
        except MemoryArgumentError as exc:
            return _result(str(exc), {"path": path, "text": "", "error": str(exc)}, error=True)
        payload = await asyncio.to_thread(memory_get, served.memory, path, from_line, lines)
        if payload.get("error"):
            return _result(str(payload["error"]), payload, error=True)
        return _result(format_get_text(payload), payload, error=False)

    memory_get_tool.__signature__ = _get_signature()  # type: ignore[attr-defined]
    return memory_get_tool


def _append_note(served: ServedAgent, text: str, origin: str = "agent") -> dict[str, Any]:
    memory = served.memory
    rel = daily_note_path(today(memory.config.timezone))  # the day the bootstrap and the sweep read
    append_memory(memory.workspace, rel, text, origin=origin)
    payload: dict[str, Any] = {"path": rel, "appended_chars": len(text), "origin": origin}
    try:
        report = memory.sync(reason="mcp append")
    except (OpenClawMemoryError, OSError) as exc:  # the note is written: a retry would write it twice
        return {**payload, "indexed": False, "warning": f"the note is saved but not searchable yet: {exc}"}
    return {**payload, "indexed": report.files_indexed > 0}


def _appended_text(payload: dict[str, Any]) -> str:
    if "warning" not in payload:
        return f"Appended to {payload['path']}."
    return f"Appended to {payload['path']}; {payload['warning']} Do not append it again."


def _append_tool(agents: _Agents) -> Any:
    async def memory_append_tool(
        text: Annotated[str, Field(min_length=1, max_length=20_000,
                                   description="The note: plain Markdown, one or a few lines.")],
        agent: AgentArgument = None,
        origin: Annotated[Literal["agent", "untrusted"], Field(
            description="Where the note's text came from: 'agent' (your own note, the default) or 'untrusted' "
                        "(tool output, a web page, a document: kept, searchable, never promoted to MEMORY.md)."
        )] = "agent",
    ) -> CallToolResult:
        if not text.strip():
            return _result("text required: pass the note to append", {"error": "text required"}, error=True)
        try:
            served = agents.pick(agent)
            payload = await asyncio.to_thread(_append_note, served, text, origin)
        except (OpenClawMemoryError, OSError) as exc:
            message = f"memory_append failed: {exc}"
            return _result(message, {"error": message}, error=True)
        return _result(_appended_text(payload), payload, error=False)

    return memory_append_tool


def _forget_entry_tool(agents: _Agents) -> Any:
    async def memory_forget_entry_tool(
        what: field_annotation(MemoryForgetEntryArgs, "what"),  # type: ignore[valid-type]
        agent: AgentArgument = None,
    ) -> CallToolResult:
        try:
            served = agents.pick(agent)
        except MemoryArgumentError as exc:
            return _result(str(exc), {"error": str(exc)}, error=True)
        payload = await amemory_forget_entry(served.memory, what)
        return _result(format_forget_text(payload), payload, error=bool(payload.get("error")))

    return memory_forget_entry_tool


def _long_term_tools(agents: _Agents) -> list[tuple[str, str, Any]]:
    from openclaw_memory.long_term.tools import (
        MEMORY_FORGET_DESCRIPTION,
        MEMORY_RECALL_DESCRIPTION,
        MEMORY_STORE_DESCRIPTION,
        MemoryForgetArgs,
        MemoryRecallArgs,
        MemoryStoreArgs,
        memory_forget,
        memory_recall,
        memory_store,
    )

    def long_term(agent: str | None) -> "LongTermMemory":
        served = agents.pick(agent)
        if served.long_term is None:
            raise MemoryArgumentError(f"agent {served.agent_id!r} has no long-term memory on this server")
        return served.long_term

    async def run(call: Any, agent: str | None, *args: Any) -> CallToolResult:
        try:
            text, payload = await asyncio.to_thread(call, long_term(agent), *args)
        except MemoryArgumentError as exc:
            return _result(str(exc), {"error": str(exc)}, error=True)
        return _result(text, payload, error="error" in payload)

    async def memory_store_tool(
        text: field_annotation(MemoryStoreArgs, "text"),  # type: ignore[valid-type]
        importance: field_annotation(MemoryStoreArgs, "importance") = 0.7,  # type: ignore[valid-type]
        category: field_annotation(MemoryStoreArgs, "category") = "other",  # type: ignore[valid-type]
        agent: AgentArgument = None,
    ) -> CallToolResult:
        return await run(memory_store, agent, text, importance, category)

    async def memory_recall_tool(
        query: field_annotation(MemoryRecallArgs, "query"),  # type: ignore[valid-type]
        limit: field_annotation(MemoryRecallArgs, "limit") = 5,  # type: ignore[valid-type]
        minScore: field_annotation(MemoryRecallArgs, "min_score") = 0.1,  # type: ignore[valid-type]  # noqa: N803
        agent: AgentArgument = None,
    ) -> CallToolResult:
        return await run(memory_recall, agent, query, limit, minScore)

    async def memory_forget_tool(
        query: field_annotation(MemoryForgetArgs, "query") = None,  # type: ignore[valid-type]
        memoryId: field_annotation(MemoryForgetArgs, "memory_id") = None,  # type: ignore[valid-type]  # noqa: N803
        agent: AgentArgument = None,
    ) -> CallToolResult:
        return await run(memory_forget, agent, query, memoryId)

    return [("memory_store", MEMORY_STORE_DESCRIPTION, memory_store_tool),
            ("memory_recall", MEMORY_RECALL_DESCRIPTION, memory_recall_tool),
            ("memory_forget", MEMORY_FORGET_DESCRIPTION, memory_forget_tool)]


def _resource_uri(agent_id: str, rel: str) -> str:
    return f"{RESOURCE_SCHEME}://{agent_id}/{rel}"


def _readable_file(path: Path) -> bool:
    """Whether ``path`` is a file ``memory_get`` reads: a regular file, not a symlink, with no other hard link."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


def _memory_files(served: ServedAgent) -> list[str]:
    """``MEMORY.md`` (or ``memory.md``) and the daily notes, as workspace-relative paths."""
    workspace = served.memory.workspace
    found = [name for name in ("MEMORY.md", "memory.md") if _readable_file(workspace / name)][:1]
    daily = workspace / "memory"
    if daily.is_dir() and not daily.is_symlink():
        found += sorted(f"memory/{p.name}" for p in daily.glob("????-??-??.md") if _readable_file(p))
    return found


def _invalid_arguments(tool: str, exc: ValidationError) -> CallToolResult:
    """The error result of a call whose arguments ``exc`` refused, shaped as that tool's error payload."""
    return _error_result(tool, invalid_arguments_text(tool, exc))


def _error_result(tool: str, text: str) -> CallToolResult:
    """The error result of ``tool`` saying ``text``, shaped as that tool's error payload."""
    payload: dict[str, Any] = {"error": text}
    if tool == "memory_search":
        payload = {"results": [], **payload}
    return _result(text, payload, error=True)


@dataclass(frozen=True)
class _ToolArguments:
    """The arguments a tool takes: as its schema names them, and every spelling it accepts."""

    named: tuple[str, ...]
    accepted: frozenset[str]

    def unknown_text(self, tool: str, arguments: Iterable[str]) -> str | None:
        """The error for the arguments ``tool`` does not take, None when it takes them all."""
        unknown = [name for name in arguments if name not in self.accepted]
        if not unknown:
            return None
        listed = ", ".join(repr(name) for name in unknown)
        return (f"invalid {tool} arguments: unknown argument{'s' if len(unknown) > 1 else ''} {listed}; {tool} takes "
                f"{', '.join(self.named)}. Fix them and call {tool} again.")


def _tool_arguments(function: Any) -> _ToolArguments:
    """The arguments ``function`` (a tool) takes: each parameter's schema name (the first of its
    ``validation_alias`` choices, else its own) and all its spellings."""
    named: list[str] = []
    accepted: set[str] = set()
    for parameter in inspect.signature(function).parameters.values():
        spellings = [parameter.name]
        annotation = parameter.annotation
        metadata = get_args(annotation)[1:] if get_origin(annotation) is Annotated else ()
        for info in (item for item in metadata if isinstance(item, FieldInfo)):
            alias = info.validation_alias
            if isinstance(alias, AliasChoices):
                spellings = [*(c for c in alias.choices if isinstance(c, str)), *spellings]
            elif isinstance(alias, str):
                spellings = [alias, *spellings]
        named.append(spellings[0])
        accepted.update(spellings)
    return _ToolArguments(tuple(named), frozenset(accepted))


class MemoryMCPServer(MCPServer):
    """An MCPServer whose resources are the served agents' memory files, listed live."""

    def __init__(self, agents: _Agents, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.memory_agents = agents
        self.tool_arguments: dict[str, _ToolArguments] = {}

    def add_memory_tool(self, function: Any, name: str, description: str) -> None:
        """Serve ``function`` as the tool ``name``; a call with an argument it does not take is refused."""
        self.add_tool(function, name=name, description=description, structured_output=False)
        self.tool_arguments[name] = _tool_arguments(function)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """The tool's result; arguments its schema refuses, or does not name, give the agent tools' error result."""
        known = self.tool_arguments.get(name)
        unknown = known.unknown_text(name, arguments or {}) if known is not None else None
        if unknown is not None:
            return _error_result(name, unknown)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, ValidationError):
                raise
            return _invalid_arguments(name, exc.__cause__)

    async def list_resources(self) -> list[Resource]:
        listed = []
        for served in self.memory_agents.by_id.values():
            for rel in await asyncio.to_thread(_memory_files, served):
                listed.append(Resource(uri=_resource_uri(served.agent_id, rel), name=rel,
                                       description=f"{rel} of agent {served.agent_id} (read-only)",
                                       mime_type="text/markdown"))
        return listed

    async def read_resource(self, uri: Any, context: Any = None) -> Iterable[ReadResourceContents]:
        parts = urlsplit(str(uri))
        if parts.scheme != RESOURCE_SCHEME:
            raise ResourceNotFoundError(f"unknown resource {uri}: memory files are {RESOURCE_SCHEME}://<agent>/<path>")
        try:
            served = self.memory_agents.pick(parts.netloc)
        except MemoryArgumentError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        rel = unquote(parts.path.lstrip("/"))
        try:
            got = await asyncio.to_thread(served.memory.get, rel)
        except (MemoryPathError, MemoryArgumentError, UnreadableFileError) as exc:  # refused, or binary: say which
            raise ResourceError(str(exc)) from None
        except OSError as exc:
            raise ResourceError(f"cannot read {rel}: {exc.strerror or exc}") from None
        if not got.exists:
            raise ResourceNotFoundError(f"{rel} does not exist")
        return [ReadResourceContents(content=got.text, mime_type="text/markdown")]



def _package_version() -> str:
    """openclaw-memory's version, as ``openclaw_memory.__version__`` gives it (what the server tells clients); read
    here, since the agent stage imports nothing from the package's entry point (tests/core/test_import_graph.py)."""
    try:
        return version("openclaw-memory")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"


def create_mcp_server(
    agents: MemoryIndex | ServedAgent | Sequence[ServedAgent], *, name: str = "openclaw-memory",
) -> MCPServer:
    """An MCP server over the given memory: ``memory_search``, ``memory_get``, ``memory_append``,
    ``memory_forget_entry`` and,
    for agents with a long-term memory, ``memory_store`` / ``memory_recall`` / ``memory_forget``.

    ``agents`` is one index, one :class:`ServedAgent`, or several (the first is the default; the tools
    then take an ``agent`` argument). The caller owns the indexes: close them after the server stops.
    Raises MissingDependencyError without the ``mcp`` extra.
    """
    if isinstance(agents, MemoryIndex):
        agents = [ServedAgent(agents.config.agent_id, agents)]
    elif isinstance(agents, ServedAgent):
        agents = [agents]
    served = _Agents(list(agents))
    server = MemoryMCPServer(served, name=name, version=_package_version(), log_level="WARNING", instructions=(
        "Memory of the user's agents: Markdown notes (MEMORY.md, memory/YYYY-MM-DD.md). Call memory_search "
        "before answering about prior work, decisions, dates, people, preferences or todos; then memory_get "
        "for the lines you need. Results carry citations (path#Lx-Ly)."))
    tools: list[tuple[str, str, Any]] = [
        ("memory_search", MEMORY_SEARCH_DESCRIPTION, _search_tool(served)),
        ("memory_get", MEMORY_GET_DESCRIPTION, _get_tool(served)),
        ("memory_append", MEMORY_APPEND_DESCRIPTION, _append_tool(served)),
        ("memory_forget_entry", MEMORY_FORGET_ENTRY_DESCRIPTION, _forget_entry_tool(served)),
    ]
    if any(agent.long_term is not None for agent in served.by_id.values()):
        tools += _long_term_tools(served)
    for tool_name, description, function in tools:
        server.add_memory_tool(function, tool_name, description)
    return server


def bearer_token_guard(app: Any, token: str) -> Any:
    """``app`` (ASGI) answering 401 to any HTTP request without ``Authorization: Bearer <token>`` (the scheme in
    any case); ``token``'s surrounding whitespace is no part of it, as HTTP strips it from what clients send. A
    blank ``token`` is a MemoryArgumentError: it would let in any request saying ``Bearer`` and nothing more."""
    expected = token.strip().encode()
    if not expected:
        raise MemoryArgumentError("the bearer token is blank: give a secret clients must send")

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scheme, _, given = dict(scope.get("headers") or []).get(b"authorization", b"").partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token"})
                return
        await app(scope, receive, send)

    return guarded
