#!/usr/bin/env python3
"""A loopback ``/rerank`` server in the Cohere/Jina wire format around a local model folder, for measuring.

    python -m bench rerank-server --model DIR [--kind cross-encoder|splade] [--port 8787]

``POST /v1/rerank`` with ``{"query", "documents", "top_n"}`` answers ``{"results": [{"index",
"relevance_score"}]}``, best first (what ``query.rerank.provider = "http"`` and ``bench_rerank.py
--rerank-url http://127.0.0.1:PORT/v1`` send). ``--kind cross-encoder``: a ``transformers`` sequence
classification model scoring each (query, document) pair (the first logit). ``--kind splade``: a SPLADE
masked-LM model; the score is the dot product of the two sparse vectors (``log(1 + relu(logits))``,
max-pooled; a document's vector is kept for later requests). Needs ``transformers`` and ``torch`` (the
sentence-transformers setup of the Makefile has them). Binds 127.0.0.1 only; one request at a time;
``GET /`` tells the requests served and their seconds.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _scorer(model_dir: str, kind: str, threads: int) -> Any:
    import torch
    from transformers import AutoModelForMaskedLM, AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(threads)
    tok = AutoTokenizer.from_pretrained(model_dir)
    if kind == "splade":
        mlm = AutoModelForMaskedLM.from_pretrained(model_dir).eval()

        def sparse(texts: list[str], max_length: int) -> Any:
            enc = tok(texts, max_length=max_length, padding=True, truncation=True, return_tensors="pt")
            act = torch.log1p(torch.relu(mlm(**enc).logits)) * enc["attention_mask"].unsqueeze(-1)
            return act.max(dim=1).values

        cache: dict[str, Any] = {}  # a document's sparse vector: the same chunks come back query after query

        def score(query: str, docs: list[str]) -> list[float]:
            with torch.no_grad():
                new = [d for d in dict.fromkeys(docs) if d not in cache]
                for i in range(0, len(new), 4):  # the vocabulary projection is seq × 30k floats a document
                    cache.update(zip(new[i:i + 4], sparse(new[i:i + 4], 512)))
                while len(cache) > 4096:
                    cache.pop(next(iter(cache)))
                return (torch.stack([cache[d] for d in docs]) @ sparse([query], 64)[0]).tolist()
        return score
    clf = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()

    def score_pairs(query: str, docs: list[str]) -> list[float]:
        with torch.no_grad():
            enc = tok([query] * len(docs), docs, max_length=512, padding=True, truncation="only_second",
                      return_tensors="pt")
            return clf(**enc).logits[:, 0].tolist()
    return score_pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a local model folder (config.json, weights, tokenizer)")
    ap.add_argument("--kind", choices=["cross-encoder", "splade"], default="cross-encoder")
    ap.add_argument("--port", type=int, default=8787)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the machine is shared)")
    a = ap.parse_args()
    score = _scorer(a.model, a.kind, a.threads)
    lock, stats = threading.Lock(), {"requests": 0, "seconds": 0.0, "documents": 0}

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, obj: Any) -> None:
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                query, docs = str(req["query"]), [str(d) for d in req["documents"]]
            except (ValueError, KeyError, TypeError) as exc:
                self._send(400, {"message": f"expected {{query, documents}}: {exc}"})
                return
            with lock:
                started = time.perf_counter()
                scores = score(query, docs) if docs else []
                stats["requests"] += 1
                stats["documents"] += len(docs)
                stats["seconds"] += time.perf_counter() - started
            ranked = sorted(({"index": i, "relevance_score": float(s)} for i, s in enumerate(scores)),
                            key=lambda r: -r["relevance_score"])
            self._send(200, {"results": ranked[: req.get("top_n") or len(ranked)]})

        def do_GET(self) -> None:  # noqa: N802
            self._send(200, stats)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print(f"serving {a.kind} {a.model} at http://127.0.0.1:{a.port}/v1/rerank", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


if __name__ == "__main__":
    main()
