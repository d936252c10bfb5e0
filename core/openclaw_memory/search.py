"""The search pipeline (spec §5): keyword and vector candidates, merge, decay, MMR, filters, snippets.

:func:`run_search` is synchronous and stateless; ``MemoryIndex`` wraps it (and offers the async
twin by running it in a thread). With no provider, or when embedding the query fails, it runs
keyword-only and says why in ``SearchResult.keyword_only_reason``. Ranking rules (the per-query
keyword score and the exact-match rescue) are documented in :mod:`openclaw_memory.hybrid`.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from openclaw_memory.config import MemoryConfig
from openclaw_memory.hybrid import (
    apply_keyword_rescue,
    apply_mmr,
    apply_temporal_decay,
    calibrate_similarity,
    citations_enabled,
    clamp_injected,
    dated_path_timestamp,
    decorate_citation,
    is_evergreen,
    keyword_text_scores,
    merge_rrf,
    merge_weighted,
    truncate_snippet,
)
from openclaw_memory.providers.base import EmbeddingProvider
from openclaw_memory.sessions import parse_timestamp
from openclaw_memory.query import QueryAnalysis, analyze_query
from openclaw_memory.storage import MemoryStore
from openclaw_memory.types import Candidate, SearchHit, SearchMode, SearchResult

__all__ = ["candidate_limit", "keyword_candidates", "run_search", "timestamp_resolver"]

log = logging.getLogger(__name__)

_MAX_CANDIDATES = 200


def candidate_limit(max_results: int, multiplier: int) -> int:
    """How many candidates each side fetches: ``min(200, max(1, max_results·multiplier))``."""
    return min(_MAX_CANDIDATES, max(1, math.floor(max_results * multiplier)))


def _keyword_rows(store: MemoryStore, match: str, limit: int, sources: Sequence[str] | None,
                  like: Sequence[str] = ()) -> list[tuple[Candidate, float]]:
    return store.keyword_search(match, limit=limit, sources=sources, like_terms=like)


def keyword_candidates(
    store: MemoryStore, analysis: QueryAnalysis, *, limit: int, sources: Sequence[str] | None = None,
    enough: int | None = None,
) -> list[Candidate]:
    """FTS candidates with per-query ``text_score`` and ``exact_match`` set, best first.

    Searches the query phrase, then the tiers of :meth:`QueryAnalysis.match_tiers` from strict to
    loose until ``enough`` (default ``limit``) chunks are found. A query FTS5 rejects contributes
    nothing (the store logs it); a database failure raises StoreError.
    """
    want = max(1, min(limit, enough or limit))
    batches: list[list[tuple[Candidate, float]]] = []
    seen: set[str] = set()
    phrase = analysis.phrase_match
    if phrase:
        batches.append(_keyword_rows(store, phrase, limit, sources))
        seen.update(c.id for c, _ in batches[-1])
    tiers = analysis.match_tiers()
    like: list[str] = []
    if not tiers and not phrase and analysis.tokenizer == "trigram":
        # a trigram index cannot MATCH terms under 3 characters: fall back to one LIKE scan
        like = sorted((t.text for t in analysis.terms if t.group is not None), key=len, reverse=True)[:1]
        tiers = [""] if like else []
    for i, match in enumerate(tiers):  # strict to loose
        rows = _keyword_rows(store, match, limit, sources, like)
        if i == len(tiers) - 1 or len(seen | {c.id for c, _ in rows}) >= want:
            batches.append([(c, r) for c, r in rows if c.id not in seen])
            break
    cands: list[Candidate] = []
    scores: list[float] = []
    ranks: list[float] = []
    for batch in batches:  # BM25 is only comparable within one MATCH expression
        if not batch:
            continue
        stats = analysis.coverage([c.text for c, _ in batch])
        for (c, rank), (_, exact), score in zip(batch, stats, keyword_text_scores([r for _, r in batch],
                                                                                  [cov for cov, _ in stats])):
            c.exact_match = exact
            cands.append(c)
            scores.append(score)
            ranks.append(rank)
    order = sorted(range(len(cands)), key=lambda i: (-scores[i], ranks[i], i))
    out: list[Candidate] = []
    for pos, i in enumerate(order[:limit], start=1):
        c = cands[i]
        c.text_score, c.text_rank = scores[i], pos
        out.append(c)
    return out


# ---- timestamps for temporal decay -----------------------------------------------------------------


def _session_timestamp(path: Path, start_line: int, end_line: int) -> datetime | None:
    """Latest message timestamp on JSONL lines ``start..end``, else the file's mtime."""
    latest: float | None = None
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            for line in itertools.islice(fh, max(0, start_line - 1), max(start_line, end_line)):
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(rec, dict):
                    continue
                msg = rec.get("message")
                raw = msg.get("timestamp") if isinstance(msg, dict) else None
                ts = parse_timestamp(raw if raw is not None else rec.get("timestamp"))
                if ts is not None and (latest is None or ts > latest):
                    latest = ts
        if latest is None:
            latest = path.stat().st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(latest, tz=timezone.utc)


def timestamp_resolver(config: MemoryConfig, workspace: Path | None = None) -> Callable[[Candidate], datetime | None]:
    """When a hit was written: dated memory files by name, transcripts by message timestamps,
    other files by mtime; None (no decay) for evergreen or missing files."""
    ws = Path(workspace) if workspace is not None else config.resolved_workspace()
    sessions_dir = config.resolved_sessions_dir()

    def resolve(c: Candidate) -> datetime | None:
        dated = dated_path_timestamp(c.path)
        if dated is not None:
            return dated
        if is_evergreen(c.path, c.source):
            return None
        if c.source == "sessions":
            return _session_timestamp(sessions_dir / Path(c.path).name, c.start_line, c.end_line)
        p = Path(c.path)
        try:
            return datetime.fromtimestamp((p if p.is_absolute() else ws / p).stat().st_mtime, tz=timezone.utc)
        except OSError:
            return None

    return resolve


# ---- the pipeline --------------------------------------------------------------------------------------


def run_search(
    store: MemoryStore,
    config: MemoryConfig,
    query: str,
    *,
    provider: EmbeddingProvider | None,
    max_results: int | None = None,
    min_score: float | None = None,
    sources: Sequence[str] | None = None,
    session_key: str | None = None,
    keyword_only_reason: str | None = None,
    workspace: Path | None = None,
    now: datetime | None = None,
    query_vector: np.ndarray | None = None,
    query_embedder: Callable[[str], np.ndarray] | None = None,
    executor: Executor | None = None,
) -> SearchResult:
    """Search the index for ``query`` (spec §5, with the improvements described in :mod:`hybrid`).

    ``query_vector`` skips ``provider.embed_query``; ``query_embedder`` replaces it (e.g. a cache).
    With an ``executor``, the keyword side runs there while the query is embedded and the vector
    side searched (SQLite and numpy release the GIL), so hybrid latency is close to the slower side. ``empty_reason`` is ``"no_match"`` when
    nothing is returned (the caller knows better when the index is empty or stale).
    """
    started = time.perf_counter()
    qcfg, hy = config.query, config.query.hybrid
    n_results = max(1, int(max_results if max_results is not None else qcfg.max_results))
    floor = qcfg.min_score if min_score is None else float(min_score)
    prov_id = provider.id if provider is not None else "none"
    model = provider.model if provider is not None else "none"
    q = (query or "").strip()

    reason = keyword_only_reason
    if provider is None and reason is None:
        reason = "no embedding provider"

    def result(hits: list[SearchHit], mode: SearchMode) -> SearchResult:
        return SearchResult(
            query=query, hits=hits, mode=mode, provider=prov_id, model=model,
            keyword_only_reason=reason if mode == "keyword" else None,
            empty_reason=None if hits else "no_match", took_ms=(time.perf_counter() - started) * 1000,
        )

    if not q:
        return result([], "keyword" if provider is None else ("hybrid" if hy.enabled else "vector"))

    n_cand = candidate_limit(n_results, hy.candidate_multiplier)
    analysis = analyze_query(q, tokenizer=config.store.fts.tokenizer)

    # keyword side, in parallel with the vector side when it can run concurrently
    hybrid_planned = hy.enabled and (provider is not None or query_vector is not None)
    pending: Future[list[Candidate]] | None = None
    if hybrid_planned and executor is not None:
        pending = executor.submit(keyword_candidates, store, analysis, limit=n_cand, sources=sources,
                                  enough=n_results)

    # vector side
    qv: np.ndarray | None = None
    if query_vector is not None:
        qv = np.asarray(query_vector, dtype=np.float32)
    elif provider is not None:
        try:
            embed = query_embedder or provider.embed_query
            qv = np.asarray(embed(q), dtype=np.float32)
        except Exception as exc:
            log.warning("query embedding failed; searching keywords only: %s", exc)
            reason = f"query embedding failed ({type(exc).__name__}: {exc})"
    vector: list[Candidate] = []
    if qv is not None and qv.size and np.all(np.isfinite(qv)) and np.any(qv):
        try:
            vector = store.vector_search(qv, limit=n_cand, sources=sources,
                                         model=provider.model if provider is not None else None)
            sim_floor = getattr(provider, "similarity_floor", None)
            for c in vector:
                c.vector_score = calibrate_similarity(c.vector_score, sim_floor)
        except Exception as exc:
            log.warning("vector search failed; searching keywords only: %s", exc)
            reason, qv = f"vector search failed ({type(exc).__name__}: {exc})", None

    if qv is None:
        mode: SearchMode = "keyword"
        keyword = keyword_candidates(store, analysis, limit=min(_MAX_CANDIDATES, 2 * n_cand), sources=sources,
                                     enough=n_results)
        merged = keyword
        for c in merged:
            c.score = c.text_score
    elif not hy.enabled:
        mode = "vector"
        merged = list(vector)
        for c in merged:
            c.vector_score = max(0.0, c.vector_score)
            c.score = c.vector_score
    else:
        mode = "hybrid"
        keyword = pending.result() if pending is not None else keyword_candidates(
            store, analysis, limit=n_cand, sources=sources, enough=n_results)
        vw, tw = hy.vector_weight, hy.text_weight
        if hy.merge == "rrf":
            merged = merge_rrf(vector, keyword, vector_weight=vw, text_weight=tw, k=hy.rrf_k)
        else:
            merged = merge_weighted(vector, keyword, vector_weight=vw, text_weight=tw)
        if tw > 0:
            apply_keyword_rescue(merged, rrf_k=hy.rrf_k if hy.merge == "rrf" else None)

    if hy.temporal_decay.enabled and merged:
        apply_temporal_decay(
            merged, timestamp_resolver(config, workspace), now=now or datetime.now(timezone.utc),
            half_life_days=hy.temporal_decay.half_life_days,
        )
    merged.sort(key=lambda c: (-c.score, -c.text_score, -c.vector_score, c.path, c.start_line, c.id))
    if hy.mmr.enabled and len(merged) > 1:
        merged = apply_mmr(merged, hy.mmr.lambda_)
    chosen = [c for c in merged if c.score >= floor][:n_results]
    if not chosen and mode == "keyword":
        # As the original: with no embeddings, the best partial matches beat an empty answer.
        chosen = [c for c in merged if c.score > 0][:n_results]

    cite = citations_enabled(config.citations, session_key)
    hits: list[SearchHit] = []
    for c in chosen:
        hit = SearchHit(
            path=c.path, start_line=c.start_line, end_line=c.end_line, score=float(c.score),
            snippet=truncate_snippet(c.text, qcfg.snippet_max_chars), source=c.source,
            vector_score=float(c.vector_score), text_score=float(c.text_score), chunk_id=c.id, text=c.text,
        )
        hits.append(decorate_citation(hit) if cite else hit)
    return result(clamp_injected(hits, qcfg.max_injected_chars), mode)
