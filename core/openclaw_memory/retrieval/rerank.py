"""Reranking through a ``/rerank`` HTTP endpoint (``query.rerank.provider = "http"``, opt-in).

Cohere, Jina, Voyage, vLLM, Infinity and most gateways serve one wire format (Hugging Face TEI's own
``/rerank`` does not: it takes ``texts`` and answers a bare list): ``POST {base_url}/rerank`` with
``{"model", "query", "documents": [str, ...], "top_n"}`` answered by ``{"results": [{"index",
"relevance_score"}, ...]}`` (Voyage names the list ``data``; both are read). :class:`HttpReranker`
speaks it with the standard library (no SDK), with a timeout, and raises
:class:`~openclaw_memory.errors.RerankError` for anything but a well-formed answer, so the search can keep
its own order and say why (``SearchResult.rerank_error``).

:func:`reorder_head` applies an answer: the reranked candidates take the scores the head already had,
in the reranker's order, so hits after the head, ``min_score`` (compared with each hit's relevance,
which is unchanged) and temporal decay work as without reranking.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence

from openclaw_memory.config import RerankConfig
from openclaw_memory.errors import ConfigError, RerankError
from openclaw_memory.redaction import register_secret
from openclaw_memory.types import Candidate

__all__ = ["DEFAULT_API_KEY_ENV", "HttpReranker", "reorder_head"]

#: Environment variable read for the endpoint's API key unless ``query.rerank.api_key_env`` names another.
DEFAULT_API_KEY_ENV = "RERANK_API_KEY"


class HttpReranker:
    """A client for one ``/rerank`` endpoint (see the module docstring for the wire format)."""

    def __init__(self, base_url: str, *, model: str | None = None, api_key: str | None = None,
                 timeout: float = 10.0) -> None:
        url = base_url.rstrip("/")
        self.url = url if url.endswith("/rerank") else f"{url}/rerank"
        self.model = model
        self.timeout = timeout
        self._api_key = api_key
        register_secret(api_key)  # an endpoint that echoes the request never shows it in rerank_error or a log

    @classmethod
    def from_config(cls, config: RerankConfig) -> HttpReranker:
        """The endpoint of ``query.rerank``; its key comes from the environment variable ``api_key_env``.

        Raises ConfigError when ``base_url`` is not set.
        """
        if not config.base_url:
            raise ConfigError('query.rerank.provider "http" needs query.rerank.base_url '
                              '(e.g. "http://127.0.0.1:8080/v1")')
        key = os.environ.get(config.api_key_env, "").strip() or None
        return cls(config.base_url, model=config.model, api_key=key, timeout=config.timeout_seconds)

    def scores(self, query: str, documents: Sequence[str]) -> dict[int, float]:
        """``{document index: relevance_score}`` for the documents the endpoint ranked.

        Raises RerankError on a connection failure, a timeout, an HTTP error or an answer that is not
        the wire format (an index out of range, a score that is not a finite number).
        """
        if not documents:
            return {}
        body: dict[str, object] = {"query": query, "documents": list(documents), "top_n": len(documents)}
        if self.model:
            body["model"] = self.model
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        req = urllib.request.Request(self.url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 (the configured URL)
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", errors="replace").strip()
            raise RerankError(f"{self.url} answered HTTP {exc.code}{': ' + detail if detail else ''}") from None
        except (urllib.error.URLError, OSError) as exc:  # TimeoutError is an OSError
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            if isinstance(reason, TimeoutError):
                raise RerankError(f"{self.url} did not answer within {self.timeout:g} s") from None
            raise RerankError(f"{self.url} could not be reached: {reason}") from None
        return _parse(raw, len(documents), self.url)

    def __repr__(self) -> str:
        return f"HttpReranker(url={self.url!r}, model={self.model!r})"


def _parse(raw: bytes, n: int, url: str) -> dict[int, float]:
    try:
        data = json.loads(raw)
    except ValueError:
        raise RerankError(f"{url} did not answer JSON") from None
    items = data.get("results", data.get("data")) if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise RerankError(f'{url} answered without a "results" list')
    out: dict[int, float] = {}
    for item in items:
        idx = item.get("index") if isinstance(item, dict) else None
        score = item.get("relevance_score", item.get("score")) if isinstance(item, dict) else None
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < n:
            raise RerankError(f"{url} answered an index outside the {n} documents sent: {idx!r}")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or score != score or score in (
                float("inf"), float("-inf")):
            raise RerankError(f"{url} answered a relevance_score that is not a number: {score!r}")
        out[idx] = float(score)
    return out


def reorder_head(head: Sequence[Candidate], scores: dict[int, float]) -> None:
    """In place: order ``head`` (sorted best first) by ``scores`` (index into ``head`` → relevance),
    candidates the reranker left out after the ranked ones in their old order; then hand the head's
    old scores, best first, to the candidates in that new order."""
    old = sorted((c.score for c in head), reverse=True)
    order = sorted(range(len(head)), key=lambda i: (i not in scores, -scores.get(i, 0.0), i))
    for score, i in zip(old, order):
        head[i].score = score
