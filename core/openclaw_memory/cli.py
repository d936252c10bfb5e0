"""``openclaw-memory``: status, index, search, eval, get, watch and demo, over one agent's memory."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import click

from openclaw_memory.text.citations import format_citation, strip_citation_footer
from openclaw_memory.config import MemoryConfig, store_shorthand
from openclaw_memory.errors import IndexingError, IndexLockedError, OpenClawMemoryError
from openclaw_memory.index import IndexStatus, MemoryIndex
from openclaw_memory.text.query_analysis import QueryAnalysis, analyze_query
from openclaw_memory.indexing.sync import Progress
from openclaw_memory.agent.tools import cited_lines, corpus_error, corpus_sources
from openclaw_memory.types import SearchResult, SyncReport

__all__ = ["main"]

DEMO_QUERIES = (
    "what database did we choose for the index?",
    "a828e60",
    "咖啡",
    "who should I talk to about the deployment?",
)


def _config(ctx: click.Context, **overrides: Any) -> MemoryConfig:
    opts = ctx.obj or {}
    base: dict[str, Any] = {}
    if opts.get("workspace"):
        base["workspace"] = opts["workspace"]
    if opts.get("store"):
        base["store"] = store_shorthand(opts["store"])
    if opts.get("namespace"):
        base["store"] = {**base.get("store", {}), "namespace": opts["namespace"]}
    if opts.get("provider"):
        base["provider"] = opts["provider"]
    base.update(overrides)
    config_path = _config_file(ctx)
    if config_path:
        return MemoryConfig.from_openclaw_file(config_path, agent_id=opts.get("agent"), **base)
    if opts.get("agent"):
        base["agent_id"] = opts["agent"]
    return MemoryConfig.load(base)


def _config_file(ctx: click.Context) -> str | None:
    """The config file the command reads: ``--config``, else ``$OPENCLAW_CONFIG_PATH``, else none (as in
    Python, no file is read unless named: ``<state_dir>/openclaw.json`` is not read implicitly)."""
    return (ctx.obj or {}).get("config") or os.environ.get("OPENCLAW_CONFIG_PATH") or None


# A CLI command ends (and closes its index) right after its work: a background sync would only be
# cancelled by close(). So its index starts none (no watcher, interval timer, on-search or
# session-start sync); ``search`` brings the index up to date in the foreground instead.
_NO_BACKGROUND_SYNC = {"on_search": False, "on_session_start": False, "watch": False, "interval_minutes": 0}


def _one_line(message: str) -> str:
    """``message`` on one line: its lines joined, a ``;`` closing each that ends without punctuation (psycopg's
    "Connection refused" before its hint, a failed provider's reason before the fallback's), so that where one
    ended stays visible."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return " ".join([*(ln if ln.endswith((".", ":", ";", ",", "?", "!")) else ln + ";" for ln in lines[:-1]),
                     *lines[-1:]])


@contextmanager
def _user_errors() -> Iterator[None]:
    """The library's errors (and OS errors) as a one-line CLI error instead of a traceback (a message spread over
    several lines, such as psycopg's, joined into one by :func:`_one_line`)."""
    try:
        yield
    except (OpenClawMemoryError, OSError) as exc:
        raise click.ClickException(_one_line(str(exc))) from None


def _load_config(ctx: click.Context) -> MemoryConfig:
    with _user_errors():
        return _config(ctx)


def _check_workspace_exists(ctx: click.Context, config: MemoryConfig) -> None:
    """A workspace folder that does not exist (and no --create), said with the CLI's options: whether it was
    given or is the default, and what to pass (the library's own error names Python's ``create=True``)."""
    opts = ctx.obj or {}
    workspace = config.resolved_workspace()
    if opts.get("create") or workspace.exists():
        return
    create = "or add --create to start an empty memory there"
    if opts.get("workspace"):
        raise click.ClickException(f"workspace {workspace} does not exist: check the --workspace path (the folder "
                                   f"holding MEMORY.md and memory/), {create}")
    if _config_file(ctx):
        raise click.ClickException(f"workspace {workspace} of agent {config.agent_id!r} (from {_config_file(ctx)}) "
                                   f"does not exist: fix it in that file or pass --workspace FOLDER, {create}")
    raise click.ClickException(f"no --workspace given, and the default workspace {workspace} does not exist: pass "
                               f"--workspace FOLDER (the folder holding MEMORY.md and memory/), {create}")


@contextmanager
def _index(ctx: click.Context, config: MemoryConfig | None = None) -> Iterator[MemoryIndex]:
    with _user_errors():
        config = config if config is not None else _config(ctx)
        _check_workspace_exists(ctx, config)
        memory = MemoryIndex(MemoryConfig.load(config, sync=_NO_BACKGROUND_SYNC), watch=False,
                             create=bool((ctx.obj or {}).get("create")))
    try:
        with _user_errors():
            yield memory
    finally:
        memory.close()


class _GlobalOptionsAnywhere(click.Group):
    """A group whose own options may also follow the subcommand (``index --workspace ~/notes``):
    they are moved in front of it before parsing, unless the subcommand has an option of that name."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value = {
            name: not opt.is_flag for opt in self.params if isinstance(opt, click.Option) and opt.expose_value
            for name in opt.opts + opt.secondary_opts
        }
        front: list[str] = []
        rest = list(args)
        i = 0
        while i < len(rest) and rest[i].startswith("-") and rest[i] != "--":  # options before the subcommand
            i += 1 + (rest[i] in takes_value and takes_value[rest[i]])
        cmd = self.get_command(ctx, rest[i]) if i < len(rest) else None
        if cmd is not None:
            own = {name for p in cmd.params for name in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])}
            tail: list[str] = []
            j = i + 1
            while j < len(rest):
                token = rest[j]
                if token == "--":
                    tail.extend(rest[j:])
                    break
                name = token.split("=", 1)[0]
                if name in takes_value and name not in own:
                    width = 1 if "=" in token or not takes_value[name] else 2
                    front.extend(rest[j : j + width])
                    j += width
                    continue
                tail.append(token)
                j += 1
            rest = rest[: i + 1] + tail
        return super().parse_args(ctx, rest[:i] + front + rest[i:])


@click.group(cls=_GlobalOptionsAnywhere, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help="Workspace holding MEMORY.md and memory/.")
@click.option("--config", "-c", type=click.Path(dir_okay=False),
              help="An openclaw.json (JSON5) config file (default: $OPENCLAW_CONFIG_PATH; no file is read unless "
                   "named, not even <state_dir>/openclaw.json).")
@click.option("--create", is_flag=True, help="Create the workspace folder if it does not exist (else an error).")
@click.option("--agent", "-a", help="Agent id (default: main, or the config's default agent).")
@click.option("--store", type=click.Path(dir_okay=False),
              help="Index file (default: one per agent and workspace in <state_dir>/memory/; ending in .sqlite, "
                   ".sqlite3, .db or .db3), or a PostgreSQL URL (postgresql://user:password@host/db) or DSN "
                   "(host=… dbname=…).")
@click.option("--namespace", help="PostgreSQL namespace of the index (default: store.namespace, else the agent id).")
@click.option("--provider", "-p", type=click.Choice(["auto", "local", "openai", "gemini", "voyage", "none"]),
              help="Embedding provider (default: auto).")
@click.option("--verbose", "-v", is_flag=True, help="Log what the index does.")
@click.version_option(package_name="openclaw-memory")
@click.pass_context
def main(ctx: click.Context, workspace: str | None, config: str | None, create: bool, agent: str | None,
         store: str | None, namespace: str | None, provider: str | None, verbose: bool) -> None:
    """Index and search an OpenClaw-style Markdown memory workspace.

    Settings come from the options, plus the config file named by --config or $OPENCLAW_CONFIG_PATH (none
    otherwise); `status` names the file in use."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    ctx.obj = {"workspace": workspace, "config": config, "agent": agent, "store": store, "namespace": namespace,
               "provider": provider, "create": create}


def _indexing_line(live: dict[str, Any]) -> str:
    """``Indexing (reason): 400 / 1,000 files · vectors: 1,234 / ~3,000 chunks · ETA 3m 10s``, or what it waits for
    (``Indexing (reason): waiting for another process's sync of <index>``)."""
    if live.get("waiting_for"):
        return f"Indexing ({live['reason']}): waiting for {live['waiting_for']}"
    total = live.get("files_total")
    files = f"{live['files_done']:,} / {total:,} files" if total is not None else "starting"
    estimate = live.get("chunks_estimate")
    of = f" / ~{estimate:,}" if estimate is not None else ""
    vectors = f"vectors: {live['chunks_embedded']:,}{of} chunks"
    eta = live.get("eta_s")
    when = f"ETA {int(eta) // 60}m {int(eta) % 60:02d}s" if eta is not None else "ETA unknown"
    return f"Indexing ({live['reason']}): {files} · {vectors} · {when}"


def _upgrade_line(up: dict[str, Any]) -> str:
    """``Vectors: fast tier live (…@head192B) · upgrade to … embedding: 1,200 / 3,000 chunks · ETA 9m 00s``."""
    if up["live"] == "full" or up["state"] == "done":
        return f"Vectors: full model live ({up['target_model']})"
    live = f"{up['live']} tier live ({up['live_model']})" if up["live"] else "no vectors yet"
    total = up.get("chunks_total")
    done = f": {up['chunks_done']:,} / {total:,} chunks" if total is not None else ""
    eta = up.get("eta_s")
    when = f" · ETA {int(eta) // 60}m {int(eta) % 60:02d}s" if eta is not None else ""
    err = f" · failed: {up['error']}" if up.get("error") else ""
    return f"Vectors: {live} · upgrade to {up['target_model']} {up['state']}{done}{when}{err}"


def _print_status(st: IndexStatus) -> None:
    click.echo(f"Memory Search ({st.agent_id})")
    requested = f" (requested: {st.requested_provider})" if st.requested_provider != st.provider else ""
    click.echo(f"Provider: {st.provider}{requested}")
    click.echo(f"Model: {st.model}")
    click.echo(f"Search mode: {st.search_mode}" + (f" — {st.keyword_only_reason}" if st.keyword_only_reason else ""))
    if st.fallback:
        click.echo(f"Fallback: from {st.fallback['from']} ({st.fallback['reason']})")
    click.echo(f"Sources: {', '.join(st.sources)}")
    if st.extra_paths:
        click.echo(f"Extra paths: {', '.join(st.extra_paths)}")
    click.echo(f"Indexed: {st.files} files · {st.chunks} chunks")
    for source, c in sorted(st.source_counts.items()):
        click.echo(f"  {source} · {c['files']} files · {c['chunks']} chunks")
    if st.indexing:
        click.echo(_indexing_line(st.indexing))
    if st.embedding_upgrade:
        click.echo(_upgrade_line(st.embedding_upgrade))
    click.echo(f"Dirty: {'yes' if st.dirty else 'no'}")
    click.echo(f"Workspace: {st.workspace}")
    if st.server is not None:  # PostgreSQL
        srv = st.server
        click.echo(f"Store: {st.store_path} ({st.backend} {srv['server_version']}, pgvector "
                   f"{srv['pgvector_version']}, driver {st.driver}, namespace {srv['namespace']}, "
                   f"{(srv['size_bytes'] or 0) / 1e6:.1f} MB on the server)")
    else:
        click.echo(f"Store: {st.store_path} ({st.backend}, driver {st.driver}, SQLite {st.sqlite_version})")
    if st.backend_info is not None:
        _print_backend_info(st.backend, st.backend_info)
    vec = st.vector
    click.echo(f"Vector: {vec['path']}" + (f" (dims {vec['dims']})" if vec.get("dims") else ""))
    if vec.get("cache"):
        click.echo(f"Vector cache: {vec['cache']}")
    if vec.get("error"):
        click.echo(f"Vector note: {vec['error']}")
    click.echo(f"FTS: {'ready' if st.fts['available'] else 'unavailable'} ({st.fts['tokenizer']})")
    if st.fts.get("cache"):
        click.echo(f"Keyword cache: {st.fts['cache']}")
    if st.fts.get("error"):
        click.echo(f"FTS error: {st.fts['error']}")
    cache = st.cache
    cap = f", cap {cache['max_entries']}" if cache.get("max_entries") else ""
    rate = f", last sync hit rate {cache['last_sync_hit_rate']:.0%}" if cache.get("last_sync_hit_rate") is not None else ""
    click.echo(f"Embedding cache: {'enabled' if cache['enabled'] else 'disabled'} ({cache['entries']} entries{cap}{rate})")
    if st.batch:
        click.echo(f"Batch: {'enabled' if st.batch.get('enabled') else 'disabled'} "
                   f"(failures {st.batch.get('failures', 0)}/{st.batch.get('limit', 2)})")
    if st.embedding_probe is not None:
        probe = st.embedding_probe
        click.echo("Embeddings: ready" if probe.get("ok") else f"Embeddings: unavailable ({probe.get('error')})")
    if st.key_source:
        click.echo(f"API key from: {st.key_source}")
    for note in st.notes:
        click.echo(f"Note: {note}")
    if st.integrity is not None:
        ig = st.integrity
        counts = ", ".join(f"{k} {ig[k]}" for k in ("chunks", "fts_rows", "vector_rows", "chunks_with_vector") if k in ig)
        check = f"quick_check {ig['quick_check']}; " if "quick_check" in ig else ""  # SQLite's check only
        click.echo(f"Integrity: {'ok' if not ig['problems'] else 'PROBLEMS'} ({check}{counts})")
        for problem in ig["problems"]:
            click.echo(f"  - {problem}")
    if st.issues:
        click.echo("Issues:")
        for issue in st.issues:
            click.echo(f"  - {issue}")


def _print_backend_info(backend: str, info: dict[str, Any]) -> None:
    """The ``memory.backend = "qmd"`` lines of ``status``."""
    if info.get("disabled"):
        click.echo(f"Backend: {backend} (QMD disabled for this run: {info.get('reason')})")
        return
    unusable = info.get("command_error")
    version = info.get("version") or ("not run: QMD failed recently" if info.get("failure") else "version unknown")
    click.echo(f"Backend: {backend} ({version}, command {info.get('command')})"
               if not unusable else f"Backend: {backend} (command {info.get('command')} does not run: {unusable})")
    if info.get("failure"):
        failure = info["failure"]
        click.echo(f"QMD failed at {failure['at']}: searches use the builtin index until {failure['retry_at']} "
                   f"({failure['reason']})")
    click.echo(f"QMD search mode: {info.get('search_mode')}")
    click.echo(f"QMD index: {info.get('index_path')}")
    for coll in info.get("collections") or []:
        state = ("" if coll.get("registered") else " (not added: folder missing)" if not coll.get("folder_exists")
                 else " (not added: QMD does not run)" if unusable else " (not added yet: the first search adds it)")
        click.echo(f"QMD collection: {coll['name']} = {coll['path']} ({coll['pattern']}){state}")
    click.echo(f"QMD last update: {info.get('last_update_at') or 'never'}")
    vec = info.get("vectors") or {}
    click.echo(f"QMD vectors: available ({vec.get('count')})" if vec.get("available")
               else f"QMD vectors: unavailable ({vec.get('error')})")
    daemon = info.get("daemon") or {}
    click.echo("QMD daemon: " + ("running" if daemon.get("running") else
                                 f"off ({daemon['error']})" if daemon.get("error") else
                                 "enabled" if daemon.get("enabled") else "off"))
    if info.get("error"):
        click.echo(f"QMD error: {info['error']}")


@main.command()
@click.option("--deep", is_flag=True, help="Also probe the embedding provider with one tiny request.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def status(ctx: click.Context, deep: bool, as_json: bool) -> None:
    """Show what is indexed, which provider and vector path are active, and any problems."""
    with _index(ctx) as memory:
        st = memory.status(deep=deep)
    config_file = _config_file(ctx)
    if as_json:
        click.echo(json.dumps({**st.to_dict(), "config_file": config_file}, indent=2, ensure_ascii=False, default=str))
    else:
        click.echo(f"Config file: {config_file or 'none (pass --config FILE or set OPENCLAW_CONFIG_PATH)'}")
        _print_status(st)


@contextmanager
def _progress_bar(desc: str) -> Iterator[Progress]:
    """A sync ``progress`` callback drawing a bar with an ETA on stderr (only on a terminal, only
    when files are (re)indexed), closed on exit."""
    from openclaw_memory.indexing.progress import progress_bar

    with progress_bar(desc, file=sys.stderr, disable=None) as bar:
        yield bar


def _sync_saying_when_it_waits(memory: MemoryIndex, *, force: bool, progress: Progress) -> SyncReport:
    """``memory.sync`` for ``index``; when another process is indexing the same memory, a line on stderr says that
    it waits for it (up to the sync's usual ten minutes)."""
    try:
        return memory.sync(force=force, reason="cli", progress=progress, lock_timeout=1.0)
    except IndexLockedError:
        click.echo("Waiting for another process to finish indexing this memory (an `openclaw-memory mcp` server or "
                   "`watch`, say)…", err=True)
    return memory.sync(force=force, reason="cli", progress=progress)


@main.command()
@click.option("--force", is_flag=True, help="Rebuild the whole index (embeddings come from the cache).")
@click.option("--no-upgrade", is_flag=True,
              help="With the bundled model's fast first index (local.first_index = fast): stop once it is "
                   "searchable; the full vectors follow with a later `index` or a long-running process.")
@click.pass_context
def index(ctx: click.Context, force: bool, no_upgrade: bool) -> None:
    """Index the workspace (incremental unless --force)."""
    with _index(ctx) as memory:
        with _progress_bar("Indexing memory files") as progress:
            report = _sync_saying_when_it_waits(memory, force=force, progress=progress)
        if not no_upgrade:
            with _progress_bar("Upgrading vectors to the full model") as progress:
                upgraded = memory.upgrade_embeddings(progress)
            if upgraded is not None and (upgraded.cache_hits or upgraded.embedded):  # not for an empty memory
                click.echo("Fast first index searchable; full vectors swapped in "
                           f"({upgraded.cache_hits} from the upgrade, {upgraded.embedded} embedded since).")
        st = memory.status()
    kind = "rebuilt" if report.full_rebuild else "updated"
    click.echo(
        f"Memory index {kind} ({st.agent_id}): {report.files_scanned} files scanned, {report.files_indexed} indexed, "
        f"{report.files_unchanged} unchanged, {report.files_deleted} removed, {report.embedded} embedded, "
        f"{report.cache_hits} from cache ({report.took_ms / 1000:.1f}s)."
    )
    if report.rebuild_reason and report.full_rebuild:
        click.echo(f"Rebuild reason: {report.rebuild_reason}")
    if st.fallback:
        click.echo(f"Note: fell back from {st.fallback['from']}: {st.fallback['reason']}")
    for warning in report.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if st.vector["path"] == "numpy" and st.vector.get("error"):
        click.echo(f"Note: vector search uses numpy ({st.vector['error']}).", err=True)
    if st.search_mode == "keyword":
        click.echo(f"Note: keyword-only mode — {st.keyword_only_reason}", err=True)


def _files_text(paths: list[str]) -> str:
    if len(paths) == 1:
        return paths[0]
    shown = ", ".join(paths[:3]) + (", …" if len(paths) > 3 else "")
    return f"{len(paths)} files ({shown})"


_SHOWN_LINES = 8
_CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _shown(text: str) -> str:
    """``text`` with its control characters (a terminal's escape sequences, tab aside) spelt out as ``\\x1b``:
    a note's text is shown, never run by the terminal."""
    return _CONTROL_CHARACTERS.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def _best_window(lines: list[str], query: QueryAnalysis, size: int) -> int:
    """Start of the ``size`` consecutive lines that cover the most of ``query`` (0 when none does)."""
    if len(lines) <= size:
        return 0
    covered = [cov for cov, _ in query.coverage(lines)]
    if not any(covered):
        return 0
    top = covered.index(max(covered))  # among the best windows, show this line near the top
    sums = [sum(covered[i:i + size]) for i in range(len(lines) - size + 1)]
    return max(range(len(sums)), key=lambda i: (round(sums[i], 9), -abs(i - (top - 2)), -i))


def _print_result(result: SearchResult, stale: list[str] | None = None) -> None:
    """Human output of one search; ``stale``: files changed since the last sync (none were synced)."""
    sync_error = (result.sync_error or "").rstrip(".")
    if not result.hits:
        if result.empty_reason == "sync_failed":
            why = f"indexing failed: {sync_error}"
        elif stale:
            why = (f"the index is out of date: {_files_text(stale)} changed since the last sync; "
                   "run `openclaw-memory index` to update it")
        else:
            why = {"empty_index": "the index is empty", "stale": "a sync is running; try again shortly"}.get(
                result.empty_reason or "", "nothing matched")
        click.echo(f"No matches ({why}).")
    if result.fallback is not None:
        instead = "the builtin index" if result.fallback.from_provider == "qmd" else result.provider
        click.echo(f"Note: {result.fallback.from_provider} failed, so {instead} answered: {result.fallback.reason}")
    analysis = analyze_query(result.query) if result.hits else None
    for hit in result.hits:
        cite = hit.citation or format_citation(hit.path, hit.start_line, hit.end_line)
        click.echo(f"{hit.score:.3f} {_shown(cite)}  (vector {hit.vector_score:.2f}, keyword {hit.text_score:.2f})")
        lines = (hit.text or strip_citation_footer(hit.snippet, hit.citation)).strip("\n").splitlines()
        start = _best_window(lines, analysis, _SHOWN_LINES) if analysis is not None else 0
        if start > 0:
            click.echo("    …")
        for line in lines[start:start + _SHOWN_LINES]:
            click.echo(f"    {_shown(line)}")
        if start + _SHOWN_LINES < len(lines):
            click.echo("    …")
        click.echo("")
    if result.mode == "keyword" and result.keyword_only_reason:
        click.echo(f"(keyword-only: {result.keyword_only_reason})")
    if result.hits and sync_error:
        click.echo(f"Note: the last sync failed, so recent edits may be missing: {sync_error}.")
    elif result.hits and stale:
        click.echo(f"Note: the index is out of date: {_files_text(stale)} changed since the last sync; these "
                   "results may miss those edits. Run `openclaw-memory index` to update it.")


def _stale_fields(stale: list[str]) -> dict[str, Any]:
    return {"stale": True, "stale_files": stale} if stale else {}


def _bring_up_to_date(memory: MemoryIndex, *, sync: bool) -> list[str]:
    """Index changed files in the foreground (progress on stderr) when ``sync``; return the memory
    files that changed since the last successful sync and are not in the index (``[]`` when it is
    up to date). A failed sync is not fatal: the search then reports it (``sync_error``)."""
    if sync:
        try:
            with _progress_bar("Indexing changed memory files") as progress:
                # another process rebuilding: search the index as it is rather than wait for it
                memory.sync(reason="cli-search", progress=progress, lock_timeout=0.5 if memory.has_index() else 600.0)
            return []
        except IndexingError:
            pass  # memory.search() carries the error (sync_error / empty_reason="sync_failed")
        except IndexLockedError:
            click.echo("Note: another process is updating the index; searched the index as it was before "
                       "(results may be stale).", err=True)
    else:
        memory.ensure_fresh()  # an empty index is built in any case: what it then holds is not stale
    return memory.changed_files()


def _reject_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _read_queries(path: str) -> Iterator[tuple[Any, Any, str | None]]:
    """``(id, query, error)`` for each non-blank line of a --queries file; ``error`` is None for a
    usable line, else what is wrong with it (then ``query`` may be None)."""
    with click.open_file(path, "rb") as stream:
        for n, raw in enumerate(stream, start=1):
            try:
                line = raw.decode("utf-8").removeprefix("\ufeff").strip()
            except UnicodeDecodeError as exc:
                yield n, None, f"line {n}: not UTF-8 text ({exc.reason} at byte {exc.start})"
                continue
            if not line:
                continue
            if not line.startswith("{"):
                yield n, line, None
                continue
            try:
                obj = json.loads(line, parse_constant=_reject_json_constant)
            except ValueError as exc:
                yield n, None, f"line {n}: invalid JSON ({exc})"
                continue
            qid, text = obj.get("id", n), obj.get("query")
            if isinstance(qid, (dict, list)):
                yield qid, text, f'line {n}: "id" must be a JSON string, number, boolean or null'
            elif "query" not in obj:
                yield qid, None, f'line {n}: a JSON line needs a "query" field'
            elif not isinstance(text, str):
                yield qid, text, f'line {n}: "query" must be a string, not {type(text).__name__}'
            elif not text.strip():
                yield qid, text, f"line {n}: query required (the query is blank)"
            else:
                yield qid, text, None


def _run_queries(memory: MemoryIndex, path: str, stale: list[str], **search_args: Any) -> tuple[int, int]:
    """Print one JSON line per query of ``path``; return (queries, failed)."""
    total = failed = 0
    for qid, text, error in _read_queries(path):
        total += 1
        if error is None:
            try:
                res = memory.search(text, **search_args)
            except OpenClawMemoryError as exc:
                error = f"search failed: {exc}"
        if error is not None:
            failed += 1
            click.echo(json.dumps({"id": qid, "query": text, "error": error}, ensure_ascii=False))
            continue
        row: dict[str, Any] = {"id": qid, "query": text, "results": [h.to_dict() for h in res.hits],
                               "mode": res.mode, "took_ms": round(res.took_ms, 3)}
        if not res.hits:
            row["empty_reason"] = res.empty_reason
        if res.keyword_only_reason:
            row["keyword_only_reason"] = res.keyword_only_reason
        if res.sync_error:
            row["sync_error"] = res.sync_error
        row.update(_stale_fields(stale))
        click.echo(json.dumps(row, ensure_ascii=False))
    return total, failed


@main.command()
@click.argument("query", required=False)
@click.option("--max-results", "-n", type=click.IntRange(min=1), help="Maximum results (default 6).")
@click.option("--min-score", type=click.FloatRange(0, 1), help="Score floor (default 0.35).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="Run the queries of FILE (\"-\": stdin), one per line; prints one JSON line per query (see below).")
@click.option("--no-sync", is_flag=True,
              help="Search the index as it is, without indexing changed files first; results are then marked "
                   "stale when files changed.")
@click.option("--after", help="Only notes dated on or after this day: 2024-05-01, or words such as 'last week' "
                              "(undated notes such as MEMORY.md always count).")
@click.option("--before", help="Only notes dated before this day: 2024-05-01, or words such as 'yesterday'.")
@click.option("--corpus", type=click.Choice(["memory", "sessions", "all"]), default="all", show_default=True,
              help="Search the memory files, the indexed session transcripts, or both.")
@click.pass_context
def search(ctx: click.Context, query: str | None, max_results: int | None, min_score: float | None, as_json: bool,
           queries: str | None, no_sync: bool, after: str | None, before: str | None, corpus: str) -> None:
    """Search the memory (hybrid vector + keyword).

    Memory files changed since the last sync are indexed first (incrementally: cheap when nothing
    changed; progress on stderr), unless --no-sync is given or the config sets sync.onSearch to
    false. Then, when files changed, the results are marked as stale ("stale": true and
    "stale_files" in JSON). An empty index is always built first.

    \b
    --queries FILE: each non-blank line is one query.
      * A line starting with "{" is a JSON object: {"id": ..., "query": "..."}.
        "id" (any JSON string, number, boolean or null) is echoed as given and
        defaults to the line number; other keys are ignored.
      * Any other line is the query text; its id is the line number.
    Each query prints one JSON line: id, query, results, mode, took_ms, plus
    empty_reason (no results), keyword_only_reason (keyword-only search),
    sync_error and stale/stale_files when they apply. A line that cannot be run
    prints {"id": ..., "query": ..., "error": "..."} and the batch goes on;
    the exit status is then 1.
    """
    if query is not None and queries:
        raise click.UsageError("give either a QUERY or --queries FILE, not both")
    if not query and not queries:
        raise click.UsageError("give a QUERY or --queries FILE")
    if query is not None and not query.strip():
        raise click.UsageError("QUERY is blank: give the text to search for")
    config = _load_config(ctx)
    unsearchable = corpus_error(config, corpus)
    if unsearchable:
        raise click.ClickException(unsearchable)
    with _index(ctx, config) as memory:
        stale = _bring_up_to_date(memory, sync=config.sync.on_search and not no_sync)
        if queries:
            total, failed = _run_queries(memory, queries, stale, max_results=max_results, min_score=min_score,
                                         after=after, before=before, sources=corpus_sources(corpus))
            if failed:
                click.echo(f"Error: {failed} of {total} queries failed (see their \"error\").", err=True)
                ctx.exit(1)
            return
        assert query is not None
        res = memory.search(query, max_results=max_results, min_score=min_score, after=after, before=before,
                            sources=corpus_sources(corpus))
    if as_json:
        click.echo(json.dumps({**res.to_dict(), **_stale_fields(stale)}, indent=2, ensure_ascii=False))
    else:
        _print_result(res, stale)


@main.command("eval")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False))
@click.option("--k", "ks", default="1,3,6,10", show_default=True, help="Cut-offs, comma-separated.")
@click.option("--compare", is_flag=True, help="Keyword-only, vector-only and hybrid side by side.")
@click.option("--min-score", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              help="Score floor of each search (0: every search returns k results).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--questions", "per_question", is_flag=True, help="With --json: each question's recall and hit too.")
@click.option("--baseline", type=click.Path(exists=True, dir_okay=False),
              help="An earlier `eval --json --questions` output: print this run minus it, per question kind, "
                   "with the paired standard error.")
@click.pass_context
def eval_(ctx: click.Context, questions: str, ks: str, compare: bool, min_score: float, as_json: bool,
          per_question: bool, baseline: str | None) -> None:
    """Score search on labelled QUESTIONS (JSON Lines) against this workspace.

    \b
    Each line: {"question": "...", "evidence": [{"path": "memory/2026-01-05.md", "line": 12}],
                "category": "...", "id": "..."}   (category, id optional; a range:
                "start_line"/"end_line" or "lines": [a, b]).
    Prints recall@k, hit@k, MRR@k and the mean lines returned at each k, overall and per category.
    """
    try:
        cutoffs = sorted({int(x) for x in ks.split(",") if x.strip()})
    except ValueError:
        raise click.BadParameter(f"{ks!r} is not a comma-separated list of numbers", param_hint="--k") from None
    if not cutoffs or cutoffs[0] < 1:
        raise click.BadParameter("give at least one k >= 1", param_hint="--k")
    from openclaw_memory.retrieval.evaluation import format_report

    with _index(ctx) as memory:
        modes = ["keyword", "vector", "hybrid"] if memory.provider is not None else ["keyword"]
        if not compare:
            modes = modes[-1:]
        reports = memory.evaluate(questions, ks=cutoffs, modes=modes, min_score=min_score)
    if as_json:
        click.echo(json.dumps({m: r.to_dict(questions=per_question) for m, r in reports.items()}, ensure_ascii=False))
    else:
        click.echo(format_report(reports))
    if baseline:
        _print_baseline_comparison(Path(baseline), reports, cutoffs, to_stderr=as_json)


def _print_baseline_comparison(baseline: Path, reports: dict[str, Any], cutoffs: list[int], *, to_stderr: bool) -> None:
    """``eval --baseline``: each mode of this run against the same mode of an earlier JSON report (on stderr
    under ``--json``, so stdout stays one JSON document)."""
    from openclaw_memory.retrieval.evaluation import compare_questions, format_comparison

    try:
        before = json.loads(baseline.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise click.BadParameter(f"cannot read {baseline} as JSON: {exc}", param_hint="--baseline") from None
    for mode, rep in reports.items():
        entry = before.get(mode) if isinstance(before, dict) else None
        rows = entry.get("questions") if isinstance(entry, dict) else None
        if not rows:
            raise click.BadParameter(f"{baseline} has no per-question figures for mode {mode!r}: write it with "
                                     "`eval --json --questions` (same --compare)", param_hint="--baseline")
        for k in cutoffs:
            try:
                diffs = compare_questions(rows, rep.per_question, k)
            except ValueError as exc:
                raise click.BadParameter(f"{baseline}: {exc}", param_hint="--baseline") from None
            click.echo(f"\n{mode}, this run (B) minus {baseline.name} (A), k={k}:", err=to_stderr)
            click.echo(format_comparison(diffs, k, label="category"), err=to_stderr)


@main.command()
@click.argument("path")
@click.option("--from", "from_line", type=click.IntRange(min=1), help="First line (1-based).")
@click.option("--lines", type=click.IntRange(min=1), help="Number of lines.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def get(ctx: click.Context, path: str, from_line: int | None, lines: int | None, as_json: bool) -> None:
    """Print lines of a memory file (MEMORY.md, memory/**/*.md or an extra path). PATH may be a citation as
    `search` prints it (memory/2026-11-21.md#L3-L12): its lines are read unless --from or --lines is given."""
    path, from_line, lines = cited_lines(path, from_line, lines)
    with _index(ctx) as memory:
        got = memory.get(path, from_line=from_line, lines=lines)
    if not got.exists:
        raise click.ClickException(f"{got.path} does not exist in {memory.workspace}")
    if got.start_line > max(got.end_line, 1):
        raise click.ClickException(f"{got.path} has no line {got.start_line}: the file is shorter (leave out --from "
                                   "to read it from line 1)")
    if as_json:
        click.echo(json.dumps(got.to_dict(), ensure_ascii=False))
    else:
        click.echo(got.text)


@main.command()
@click.pass_context
def watch(ctx: click.Context) -> None:
    """Watch the workspace and re-index on changes until interrupted (Ctrl-C)."""
    with _index(ctx) as memory:
        report = memory.sync(reason="watch-start")
        click.echo(f"Indexed {report.files_scanned} files. Watching {memory.workspace} (Ctrl-C to stop)…")
        try:
            memory.watch_forever(on_sync=lambda r: click.echo(
                f"sync ({r.reason}): {r.files_indexed} indexed, {r.files_deleted} removed, "
                f"{r.took_ms / 1000:.1f}s"))
        except KeyboardInterrupt:
            click.echo("Stopped.")


def sample_workspace() -> Path:
    """The small sample workspace shipped with the package."""
    return Path(str(resources.files("openclaw_memory") / "sample_workspace"))


@main.command()
@click.option("--query", "-q", "extra", multiple=True, help="Extra queries to run.")
@click.pass_context
def demo(ctx: click.Context, extra: tuple[str, ...]) -> None:
    """Index the bundled sample workspace on the embedded defaults and run a few searches."""
    opts = ctx.obj
    with tempfile.TemporaryDirectory(prefix="openclaw-memory-demo-") as tmp:
        opts.setdefault("workspace", None)
        opts["workspace"] = opts.get("workspace") or str(sample_workspace())
        opts["store"] = opts.get("store") or str(Path(tmp) / "demo.sqlite")
        with _index(ctx) as memory:
            report = memory.sync(reason="demo")
            memory.upgrade_embeddings()  # a fast first index (local.first_index) gets its full vectors now
            st = memory.status()
            click.echo(f"Workspace: {memory.workspace}")
            click.echo(f"Indexed {report.files_scanned} files into {st.chunks} chunks with {st.provider} "
                       f"({st.model}); vector path: {st.vector['path']}; driver: {st.driver}.")
            if st.search_mode == "keyword":
                click.echo(f"Keyword-only mode: {st.keyword_only_reason}")
            for q in DEMO_QUERIES + extra:
                click.echo(f"\n$ openclaw-memory search {json.dumps(q, ensure_ascii=False)}")
                _print_result(memory.search(q, max_results=3))


# ---- mcp: the memory as an MCP server (openclaw_memory.agent.mcp_server) -------------------------------

_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


def _served_agents(ctx: click.Context, agent_ids: list[str], long_term: bool) -> list[Any]:
    """One warm index (watcher on, first sync started) per agent, and its long-term memory if asked."""
    from openclaw_memory.agent.mcp_server import ServedAgent

    served: list[Any] = []
    try:
        for agent_id in agent_ids or [None]:
            if agent_id is not None:
                ctx.obj["agent"] = agent_id
            config = _config(ctx)
            _check_workspace_exists(ctx, config)
            memory = MemoryIndex(config, watch=True, create=bool(ctx.obj.get("create")))
            served.append(ServedAgent(config.agent_id, memory))  # closed if a later agent fails to open
            memory.sync_in_background("mcp server start")
            if long_term:
                from openclaw_memory.long_term import LongTermMemory

                served[-1] = ServedAgent(config.agent_id, memory,
                                         LongTermMemory(provider=config, agent_id=config.agent_id))
    except BaseException:
        _close_served(served)
        raise
    return served


def _close_served(served: list[Any]) -> None:
    """Close each served agent's index and long-term memory."""
    for agent in served:
        agent.memory.close()
        if agent.long_term is not None:
            agent.long_term.close()


def _listening_socket(host: str, port: int, address: str) -> socket.socket:
    """A socket bound to ``host``:``port``; a port in use or an address this machine lacks is a CLI error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise click.ClickException(f"cannot serve on {address}:{port}: {exc.strerror or exc}; pass a free --port "
                                   "(and a --host that is an address of this machine)") from None


def _check_http_options(ctx: click.Context, use_http: bool) -> None:
    """Refuse --host, --port or --token given without --http (a stdio server would ignore them)."""
    given = [f"--{name}" for name in ("host", "port", "token")
             if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]
    if given and not use_http:
        raise click.UsageError(f"{', '.join(given)} apply to the HTTP server only: add --http (without it the "
                               "server speaks MCP over stdin/stdout)")


@main.command()
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP address to bind (with --http).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535), help="HTTP port (with --http).")
@click.option("--token", envvar="OPENCLAW_MCP_TOKEN", help="Bearer token HTTP clients must send (env "
              "OPENCLAW_MCP_TOKEN); required when --host is not a loopback address.")
@click.option("--agents", "agent_list", help="Serve these agents of the config file, comma-separated "
              "(tools then take an `agent` argument; default: the one agent --agent selects).")
@click.option("--long-term", is_flag=True, help="Also serve memory_store / memory_recall / memory_forget "
              "(the LanceDB long-term memory, pip install 'openclaw-memory[lancedb]').")
@click.pass_context
def mcp(ctx: click.Context, use_http: bool, host: str, port: int, token: str | None, agent_list: str | None,
        long_term: bool) -> None:
    """Serve the memory to MCP clients (pip install 'openclaw-memory[mcp]'): memory_search, memory_get,
    memory_append, memory_forget_entry, and MEMORY.md and the daily notes as read-only resources. stdio by
    default."""
    _check_http_options(ctx, use_http)
    token = (token or "").strip() or None  # an env file's trailing newline is no part of what clients send
    if use_http and host not in _LOOPBACK_HOSTS and not token:
        raise click.UsageError(f"--host {host} is reachable from other machines: give --token (or set "
                               "OPENCLAW_MCP_TOKEN) so only clients with the token get in")
    agent_ids = list(dict.fromkeys(a.strip() for a in (agent_list or "").split(",") if a.strip()))  # once each
    with _user_errors():
        from openclaw_memory.agent.mcp_server import bearer_token_guard, create_mcp_server

        served = _served_agents(ctx, agent_ids, long_term)
    try:
        with _user_errors():
            server = create_mcp_server(served)
        if not use_http:
            server.run("stdio")
            return
        import anyio
        import uvicorn

        app = server.streamable_http_app(host=host)
        if token:
            app = bearer_token_guard(app, token)
        address = f"[{host}]" if ":" in host else host  # an IPv6 address is bracketed in a URL
        with _listening_socket(host, port, address) as listening:
            click.echo(f"openclaw-memory MCP server on http://{address}:{port}/mcp", err=True)
            anyio.run(uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).serve,
                      [listening])
    finally:
        _close_served(served)


# ---- ltm: the LanceDB long-term memory (openclaw_memory.long_term) ------------------------------

@main.group()
@click.option("--db", "db_path", help="LanceDB folder or scheme:// URI (default <state_dir>/memory/lancedb).")
@click.option("--table", default="memories", show_default=True, help="Table name.")
@click.option("--mirror-workspace", type=click.Path(file_okay=False),
              help="Workspace whose daily notes mirror the memories (forget also removes the mirrored line).")
@click.pass_context
def ltm(ctx: click.Context, db_path: str | None, table: str, mirror_workspace: str | None) -> None:
    """Long-term memories in LanceDB (pip install 'openclaw-memory[lancedb]'), per agent (--agent)."""
    ctx.obj = {**(ctx.obj or {}), "ltm": {"db_path": db_path, "table_name": table, "mirror_workspace": mirror_workspace}}


@contextmanager
def _long_term(ctx: click.Context) -> Iterator[Any]:
    from openclaw_memory.long_term import LongTermMemory

    with _user_errors():
        config = _config(ctx)
        memory = LongTermMemory(provider=config, agent_id=config.agent_id, **ctx.obj["ltm"])
    try:
        with _user_errors():
            yield memory
    finally:
        memory.close()


def _ltm_line(item: dict[str, Any]) -> str:
    score = f" ({item['score'] * 100:.0f}%)" if "score" in item else ""
    replaced = f" (superseded by {item['superseded_by'][:8]})" if item.get("superseded_by") else ""
    return f"{item['id']}  {item['created'][:10]}  [{item['category']}] {item['text']}{score}{replaced}"


@ltm.command("list")
@click.option("--limit", "-n", type=click.IntRange(min=1), help="Newest N only.")
@click.option("--category", type=click.Choice(["preference", "fact", "decision", "entity", "other"]))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def ltm_list(ctx: click.Context, limit: int | None, category: str | None, as_json: bool) -> None:
    """List this agent's memories, newest first."""
    with _long_term(ctx) as memory:
        items = [r.to_dict() for r in memory.list(limit=limit, category=category)]
    if as_json:
        click.echo(json.dumps(items, ensure_ascii=False, indent=2))
        return
    for item in items:
        click.echo(_ltm_line(item))
    click.echo(f"Total memories: {len(items)}")


@ltm.command("search")
@click.argument("query")
@click.option("--limit", "-n", type=click.IntRange(1, 100), default=5, show_default=True, help="Maximum results.")
@click.option("--min-score", type=click.FloatRange(0, 1), help="Score floor (default: the model's recall level).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def ltm_search(ctx: click.Context, query: str, limit: int, min_score: float | None, as_json: bool) -> None:
    """Search this agent's memories (not those a correction superseded)."""
    with _long_term(ctx) as memory:
        floor = min_score if min_score is not None else memory.thresholds.recall
        items = [h.to_dict() for h in memory.recall(query, limit=limit, min_score=floor)]
    if as_json:
        click.echo(json.dumps(items, ensure_ascii=False, indent=2))
        return
    for item in items:
        click.echo(_ltm_line(item))
    if not items:
        click.echo("No relevant memories found.")


@ltm.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def ltm_stats(ctx: click.Context, as_json: bool) -> None:
    """Count this agent's memories (total and per category)."""
    with _long_term(ctx) as memory:
        stats = memory.stats()
    if as_json:
        click.echo(json.dumps(stats, ensure_ascii=False, indent=2))
        return
    click.echo(f"Long-term memory ({stats['agent_id']})")
    click.echo(f"Total memories: {stats['count']}")
    click.echo("By category: " + ", ".join(f"{k} {v}" for k, v in stats["by_category"].items()))
    click.echo(f"Database: {stats['db_path']} (table {stats['table']})")
    click.echo(f"Embeddings: {stats['provider']} ({stats['model']})")


@ltm.command("forget")
@click.argument("query", required=False)
@click.option("--id", "memory_id", help="The memory id (or its first 8+ characters).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def ltm_forget(ctx: click.Context, query: str | None, memory_id: str | None, as_json: bool) -> None:
    """Delete one memory by --id, or by QUERY when exactly one memory matches it closely.

    Exits with 1 when nothing was deleted (no match, or several candidates: they are listed).
    """
    if bool(query) == bool(memory_id):
        raise click.UsageError("give either QUERY or --id")
    with _long_term(ctx) as memory:
        result = memory.forget(query=query, memory_id=memory_id)
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    elif result.action == "deleted" and result.deleted is not None:
        click.echo(f"Forgotten: {result.deleted.id} {result.deleted.text}")
        for again in result.restored:
            click.echo(f"Active again (the memory it had corrected): {again.id} {again.text}")
    elif result.action == "not_found":
        click.echo("No matching memory found.")
    else:
        click.echo("Several memories match; nothing was deleted. Run again with --id:")
        for hit in result.candidates:
            click.echo(_ltm_line(hit.to_dict()))
    if result.action != "deleted":
        ctx.exit(1)


def _print_dream(report: Any) -> None:
    for decision in report.decisions:
        target = f" {decision.entry}" if decision.entry else ""
        click.echo(f"{decision.op:9} {decision.candidate}{target}")
    if report.fallback_reason:
        click.echo(f"append-only: {report.fallback_reason}")
    click.echo(report.diff or "MEMORY.md unchanged.")
    counts = report.counts
    click.echo(f"{report.mode}: added {len(report.added)}, merged {len(report.merged)}, superseded "
               f"{len(report.superseded)}, deferred {len(report.deferred)} (candidates: {counts.found} found, "
               f"{counts.already_in_memory} already in MEMORY.md, {counts.below_gates} below the gates, "
               f"{counts.stale} stale)")
    if report.skipped_reason:
        click.echo(report.skipped_reason)
    elif report.applied:
        click.echo("Written: MEMORY.md (undo: openclaw-memory dream --undo), summary in DREAMS.md.")
    elif report.mode != "none":
        click.echo("Dry run: nothing written; run with --apply to write it.")


@main.command()
@click.option("--apply", "apply_", is_flag=True, help="Write MEMORY.md (default: a dry run that only prints).")
@click.option("--undo", "undo_", is_flag=True, help="Restore MEMORY.md as it was before the last applied sweep.")
@click.option("--force", is_flag=True, help="With --undo: restore even if MEMORY.md changed since that sweep.")
@click.option("--forget", "forget_", metavar="TEXT_OR_SOURCE",
              help="Remove this memory (its text, or memory/YYYY-MM-DD.md#Lx-Ly) from MEMORY.md; never promote it again.")
@click.option("--model", help="The chat model (default: dreaming.model of the config).")
@click.option("--base-url", help="The OpenAI-compatible endpoint (default: dreaming.baseUrl of the config); the key "
                                 "is dreaming.apiKey or OPENAI_API_KEY.")
@click.pass_context
def dream(ctx: click.Context, apply_: bool, undo_: bool, force: bool, forget_: str | None, model: str | None,
          base_url: str | None) -> None:
    """Consolidate recent daily notes into MEMORY.md with the model of the config's ``dreaming`` section
    (an OpenAI-compatible endpoint): prints the model's decisions and the diff."""
    from openclaw_memory.consolidation import consolidate, forget, undo
    from openclaw_memory.consolidation.openai_model import openai_completion

    config = _load_config(ctx)
    with _user_errors():
        if forget_ is not None:
            removed = forget(config, forget_)
            click.echo(f"Forgotten: {removed} MEMORY.md entr{'y' if removed == 1 else 'ies'} removed; it will not be "
                       "promoted again.")
            return
        if undo_:
            undo(config, force=force)
            click.echo(f"MEMORY.md restored in {config.resolved_workspace()}.")
            return
        settings = config.dreaming.model_copy(update={k: v for k, v in (("model", model), ("base_url", base_url)) if v})
        report = consolidate(config, openai_completion(settings), apply=apply_)
    _print_dream(report)


if __name__ == "__main__":  # pragma: no cover
    main()
