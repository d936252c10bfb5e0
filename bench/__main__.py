"""``python -m bench <command> [args]``: run one benchmark (``python -m bench --help`` lists them).

Run from the repository root with the project installed; each command's own ``--help`` gives its flags.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

#: command → (module under ``bench``, what it measures)
COMMANDS: dict[str, tuple[str, str]] = {
    "compare": ("bench_compare", "this library next to the peers users would pick instead (make bench)"),
    "peers": ("peers", "one peer system in a worker process (started by compare)"),
    "search": ("bench_search", "search latency on synthetic corpora"),
    "index": ("bench_index", "indexing throughput and first-index time"),
    "embeddings": ("bench_embeddings", "embedding providers: quality, speed, cold load"),
    "quality": ("bench_quality", "retrieval quality on a development set"),
    "rerank": ("bench_rerank", "rerankers on a development set"),
    "rerank-server": ("rerank_server", "a local rerank server for the rerank command"),
    "qmd": ("bench_qmd", "the built-in searcher next to the QMD backend"),
    "postgres": ("bench_postgres", "the PostgreSQL store next to SQLite"),
    "pg-agents": ("bench_pg_agents", "many agents on one PostgreSQL database"),
    "long-term": ("bench_long_term", "long-term memory writes and searches"),
    "ltm-thresholds": ("bench_ltm_thresholds", "long-term memory similarity thresholds of a model"),
    "search-ab": ("bench_search_ab", "search latency of this checkout against another"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    rows = "\n".join(f"  {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items())
    return f"usage: python -m bench <command> [args]\n\ncommands:\n{rows}\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage(), end="")
        return 0
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"unknown command {command!r}\n\n{usage()}", end="", file=sys.stderr)
        return 2
    module = importlib.import_module(f"bench.{COMMANDS[command][0]}")
    sys.argv = [f"python -m bench {command}", *rest]
    result = module.main()
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
