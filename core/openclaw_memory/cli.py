"""``openclaw-memory``: status, index, search, get, watch and demo, over one agent's memory."""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import click

from openclaw_memory.config import MemoryConfig, default_state_dir
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.index import IndexStatus, MemoryIndex
from openclaw_memory.types import SearchResult

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
        base["store"] = {"path": opts["store"]}
    if opts.get("provider"):
        base["provider"] = opts["provider"]
    base.update(overrides)
    config_path = opts.get("config") or os.environ.get("OPENCLAW_CONFIG_PATH")
    if not config_path and (default_state_dir() / "openclaw.json").is_file():
        config_path = str(default_state_dir() / "openclaw.json")
    if config_path:
        return MemoryConfig.from_openclaw_file(config_path, agent_id=opts.get("agent"), **base)
    if opts.get("agent"):
        base["agent_id"] = opts["agent"]
    return MemoryConfig.load(base)


@contextmanager
def _index(ctx: click.Context, **overrides: Any) -> Iterator[MemoryIndex]:
    try:
        memory = MemoryIndex(_config(ctx, **overrides))
    except (OpenClawMemoryError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    try:
        yield memory
    except (OpenClawMemoryError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        memory.close()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--workspace", "-w", type=click.Path(file_okay=False), help="Workspace holding MEMORY.md and memory/.")
@click.option("--config", "-c", type=click.Path(dir_okay=False), help="An openclaw.json (JSON5) config file.")
@click.option("--agent", "-a", help="Agent id (default: main, or the config's default agent).")
@click.option("--store", type=click.Path(dir_okay=False), help="Index file (default <state_dir>/memory/<agent>.openclaw-memory.sqlite).")
@click.option("--provider", "-p", type=click.Choice(["auto", "local", "openai", "gemini", "voyage", "none"]),
              help="Embedding provider (default: auto).")
@click.option("--verbose", "-v", is_flag=True, help="Log what the index does.")
@click.version_option(package_name="openclaw-memory")
@click.pass_context
def main(ctx: click.Context, workspace: str | None, config: str | None, agent: str | None, store: str | None,
         provider: str | None, verbose: bool) -> None:
    """Index and search an OpenClaw-style Markdown memory workspace."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    ctx.obj = {"workspace": workspace, "config": config, "agent": agent, "store": store, "provider": provider}


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
    click.echo(f"Dirty: {'yes' if st.dirty else 'no'}")
    click.echo(f"Workspace: {st.workspace}")
    click.echo(f"Store: {st.store_path} ({st.backend}, driver {st.driver}, SQLite {st.sqlite_version})")
    vec = st.vector
    click.echo(f"Vector: {vec['path']}" + (f" (dims {vec['dims']})" if vec.get("dims") else ""))
    if vec.get("cache"):
        click.echo(f"Vector cache: {vec['cache']}")
    if vec.get("error"):
        click.echo(f"Vector note: {vec['error']}")
    click.echo(f"FTS: {'ready' if st.fts['available'] else 'unavailable'} ({st.fts['tokenizer']})")
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
    if st.issues:
        click.echo("Issues:")
        for issue in st.issues:
            click.echo(f"  - {issue}")


@main.command()
@click.option("--deep", is_flag=True, help="Also probe the embedding provider with one tiny request.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def status(ctx: click.Context, deep: bool, as_json: bool) -> None:
    """Show what is indexed, which provider and vector path are active, and any problems."""
    with _index(ctx) as memory:
        st = memory.status(deep=deep)
    if as_json:
        click.echo(json.dumps(st.to_dict(), indent=2, ensure_ascii=False, default=str))
    else:
        _print_status(st)


@main.command()
@click.option("--force", is_flag=True, help="Rebuild the whole index (embeddings come from the cache).")
@click.pass_context
def index(ctx: click.Context, force: bool) -> None:
    """Index the workspace (incremental unless --force)."""
    from tqdm import tqdm

    with _index(ctx) as memory:
        bar: Any = None

        def progress(done: int, total: int, label: str) -> None:
            nonlocal bar
            if bar is None:
                bar = tqdm(total=total, desc="Indexing memory files", unit="file", file=sys.stderr,
                           disable=total == 0 or not sys.stderr.isatty())
            bar.update(1)
            bar.set_postfix_str(label[-40:], refresh=False)

        try:
            report = memory.sync(force=force, reason="cli", progress=progress)
        finally:
            if bar is not None:
                bar.close()
        st = memory.status()
    kind = "rebuilt" if report.full_rebuild else "updated"
    click.echo(
        f"Memory index {kind} ({st.agent_id}): {report.files_scanned} files scanned, {report.files_indexed} indexed, "
        f"{report.files_unchanged} unchanged, {report.files_deleted} removed, {report.embedded} embedded, "
        f"{report.cache_hits} from cache ({report.took_ms / 1000:.1f}s)."
    )
    if report.rebuild_reason and report.full_rebuild:
        click.echo(f"Rebuild reason: {report.rebuild_reason}")
    for warning in report.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if st.vector["path"] == "numpy" and st.vector.get("error"):
        click.echo(f"Note: vector search uses numpy ({st.vector['error']}).", err=True)
    if st.search_mode == "keyword":
        click.echo(f"Note: keyword-only mode — {st.keyword_only_reason}", err=True)


def _print_result(result: SearchResult) -> None:
    if not result.hits:
        why = {"empty_index": "the index is empty", "stale": "a sync is running; try again shortly"}.get(
            result.empty_reason or "", "nothing matched")
        click.echo(f"No matches ({why}).")
    for hit in result.hits:
        cite = hit.citation or (f"{hit.path}#L{hit.start_line}" + ("" if hit.start_line == hit.end_line
                                                                   else f"-L{hit.end_line}"))
        click.echo(f"{hit.score:.3f} {cite}  (vector {hit.vector_score:.2f}, keyword {hit.text_score:.2f})")
        snippet = hit.snippet.split("\n\nSource: ")[0].strip()
        for line in snippet.splitlines()[:8]:
            click.echo(f"    {line}")
        click.echo("")
    if result.mode == "keyword" and result.keyword_only_reason:
        click.echo(f"(keyword-only: {result.keyword_only_reason})")


def _read_queries(path: str) -> Iterator[tuple[str, str]]:
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    with stream:
        for n, line in enumerate(stream, start=1):
            line = line.strip()
            if not line:
                continue
            if line.startswith("{"):
                try:
                    obj = json.loads(line)
                except ValueError as exc:
                    raise click.ClickException(f"{path}:{n}: invalid JSON ({exc})") from None
                if "query" not in obj:
                    raise click.ClickException(f"{path}:{n}: a JSON line needs a \"query\" field")
                yield str(obj.get("id", n)), str(obj["query"])
            else:
                yield str(n), line


@main.command()
@click.argument("query", required=False)
@click.option("--max-results", "-n", type=click.IntRange(min=1), help="Maximum results (default 6).")
@click.option("--min-score", type=click.FloatRange(0, 1), help="Score floor (default 0.35).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="Run one query per line (or JSONL with id/query); prints one JSON line per query.")
@click.pass_context
def search(ctx: click.Context, query: str | None, max_results: int | None, min_score: float | None, as_json: bool,
           queries: str | None) -> None:
    """Search the memory (hybrid vector + keyword)."""
    if not query and not queries:
        raise click.UsageError("give a QUERY or --queries FILE")
    with _index(ctx) as memory:
        if queries:
            for qid, text in _read_queries(queries):
                res = memory.search(text, max_results=max_results, min_score=min_score)
                click.echo(json.dumps({"id": qid, "query": text, "results": [h.to_dict() for h in res.hits],
                                       "mode": res.mode}, ensure_ascii=False))
            return
        assert query is not None
        res = memory.search(query, max_results=max_results, min_score=min_score)
    if as_json:
        click.echo(json.dumps(res.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print_result(res)


@main.command()
@click.argument("path")
@click.option("--from", "from_line", type=click.IntRange(min=1), help="First line (1-based).")
@click.option("--lines", type=click.IntRange(min=1), help="Number of lines.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def get(ctx: click.Context, path: str, from_line: int | None, lines: int | None, as_json: bool) -> None:
    """Print lines of a memory file (MEMORY.md, memory/**/*.md or an extra path)."""
    with _index(ctx) as memory:
        got = memory.get(path, from_line=from_line, lines=lines)
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
            st = memory.status()
            click.echo(f"Workspace: {memory.workspace}")
            click.echo(f"Indexed {report.files_scanned} files into {st.chunks} chunks with {st.provider} "
                       f"({st.model}); vector path: {st.vector['path']}; driver: {st.driver}.")
            if st.search_mode == "keyword":
                click.echo(f"Keyword-only mode: {st.keyword_only_reason}")
            for q in DEMO_QUERIES + extra:
                click.echo(f"\n$ openclaw-memory search {json.dumps(q, ensure_ascii=False)}")
                _print_result(memory.search(q, max_results=3))


if __name__ == "__main__":  # pragma: no cover
    main()
