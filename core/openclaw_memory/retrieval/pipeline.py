"""The search pipeline (spec §5): keyword and vector candidates, merge, decay, MMR, filters, snippets.

:func:`run_search` drives the stages in order: the vector side (:func:`_vector_side`), the keyword side
(:mod:`openclaw_memory.retrieval.keyword_side`), the merge (keyword-only, vector-only or hybrid), the reorder
(rerankers, temporal decay, MMR) and the selection of the hits (``min_score``, overlapping ranges, snippets).

:func:`run_search` is synchronous and stateless; ``MemoryIndex.search`` is its public face (and offers
the async twin by running it in a thread). With no provider, or when embedding the query fails, it runs
keyword-only and says why in ``SearchResult.keyword_only_reason``. Ranking rules (the per-query
keyword score and the exact-match rescue) are documented in :mod:`openclaw_memory.retrieval.ranking`.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field, replace
from functools import partial
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from openclaw_memory.text.chunker import shown_text
from openclaw_memory.text.citations import citations_enabled, decorate_citation
from openclaw_memory.config import HybridConfig, MemoryConfig
from openclaw_memory.errors import OpenClawMemoryError, StoreError
from openclaw_memory.indexing.fingerprint import FTS_ONLY_MODEL
from openclaw_memory.text.note_dates import (
    dated_path_timestamp,
    dates_said,
    is_evergreen,
    note_date_share,
)
from openclaw_memory.text.time_ranges import period_share, periods_said
from openclaw_memory.retrieval.keyword_side import (
    COMMON_MATCHES,
    RANK_WINDOW,
    RECENT_CHUNKS,
    KeywordCandidates,
    chunk_total,
    keyword_candidates,
)
from openclaw_memory.retrieval.ranking import (
    apply_file_coverage,
    apply_file_repeat_penalty,
    apply_keyword_rescue,
    apply_mmr,
    apply_temporal_decay,
    bound_score,
    calibrate_similarity,
    clamp_injected,
    merge_rrf,
    merge_weighted,
    truncate_snippet,
)
from openclaw_memory.providers.base import EmbeddingProvider, TokenEmbeddingProvider, provider_key
from openclaw_memory.files.sessions import parse_timestamp
from openclaw_memory.text.query_analysis import QueryAnalysis, analyze_query
from openclaw_memory.redaction import redact
from openclaw_memory.retrieval.passage_vectors import passage_vectors
from openclaw_memory.retrieval.result_ranges import fit_ranges, range_id
from openclaw_memory.retrieval.standing_instructions import (
    instruction_lines_of,
    matching_instruction,
    with_instruction,
)
from openclaw_memory.retrieval.user_turns import with_user_turns
from openclaw_memory.storage import MemoryStore
from openclaw_memory.text.speakers import speaker_labels, without_speakers
from openclaw_memory.text.preparation import nonblank_lines
from openclaw_memory.types import Candidate, SearchHit, SearchMode, SearchResult, SearchState
from openclaw_memory.indexing.line_units import best_unit_similarities, blend_unit_similarity, unit_vectors

__all__ = ["COMMON_MATCHES", "RANK_WINDOW", "RECENT_CHUNKS",
           "KeywordCandidates", "candidate_limit",
           "chunk_total", "keyword_candidates", "line_windows", "run_search", "stored_similarities",
           "timestamp_resolver", "window_similarities"]

log = logging.getLogger(__name__)

_MAX_CANDIDATES = 200


def candidate_limit(max_results: int, multiplier: int) -> int:
    """How many candidates each side fetches: ``min(200, max(1, max_results·multiplier))``."""
    return min(_MAX_CANDIDATES, max(1, math.floor(max_results * multiplier)))


def stored_similarities(store: MemoryStore, qv: np.ndarray, candidates: Sequence[Candidate], *,
                        model: str | None, similarity_floor: float | None) -> dict[str, float]:
    """Calibrated cosine between ``qv`` and the stored vectors of ``candidates``, by chunk id.

    Only vectors of ``model`` (any model when None) and of the query's dimension count; a chunk
    without one is left out (it scores 0 on the vector side, as before). The cosine is the store's
    (:meth:`~openclaw_memory.storage.MemoryStore.vector_scores`): the value the vector side gives a chunk it
    ranks, served from the in-memory vectors where the store keeps them.
    """
    if not candidates:
        return {}
    raw = store.vector_scores(qv, [c.id for c in candidates], model=model)
    return {cid: calibrate_similarity(score, similarity_floor) for cid, score in raw.items()}


def _unit_rescored(store: MemoryStore, provider: EmbeddingProvider, candidates: Sequence[Candidate],
                   *queries: tuple[np.ndarray, Mapping[str, float]], size: int,
                   weight: float) -> list[dict[str, float]] | None:
    """For each ``(query vector, raw cosines by chunk id)`` of ``queries``: the calibrated vector-side score of
    each candidate with a raw cosine there and cached line units, the blend of that cosine with its best unit's
    (:mod:`openclaw_memory.indexing.line_units`), by chunk id. The unit vectors are read once for all queries.
    Candidates without cached units are left out (they keep their score); None when the store cannot read the units
    (StoreError, logged). Any other error is a bug and is raised."""
    todo = {c.id: c.text for c in candidates if any(c.id in raw for _, raw in queries)}
    if not todo:
        return [{} for _ in queries]
    try:
        vectors = unit_vectors(store, todo, size=size, provider=provider.id, model=provider.model,
                               provider_key=provider_key(provider.fingerprint()))
    except StoreError as exc:  # the chunk cosines still rank
        log.warning("reading the line units' vectors failed; chunk vectors only: %s", exc)
        return None
    out: list[dict[str, float]] = []
    for qv, raw in queries:
        best = best_unit_similarities({cid: m for cid, m in vectors.items() if cid in raw}, qv)
        out.append({cid: calibrate_similarity(blend_unit_similarity(raw[cid], u, weight), provider.similarity_floor)
                    for cid, u in best.items()})
    return out


def _whole_question_cosines(store: MemoryStore, provider: EmbeddingProvider, whole: np.ndarray,
                            scanned: Mapping[str, float], vector: Sequence[Candidate],
                            keyword: Sequence[Candidate]) -> dict[str, float] | None:
    """The raw cosine between the whole question's embedding ``whole`` and each candidate of both sides: those
    its own scan found (``scanned``), the others read from the store. None when that read fails (logged)."""
    ids = list(dict.fromkeys(c.id for c in [*vector, *keyword]))
    missing = [cid for cid in ids if cid not in scanned]
    try:
        read = store.vector_scores(whole, missing, model=provider.model) if missing else {}
    except Exception as exc:
        log.warning("scoring the whole question's vectors for min_score failed: %s", exc)
        return None
    return {cid: v for cid in ids if (v := scanned.get(cid, read.get(cid))) is not None}


def _judge(relevance: dict[str, float], vector: Sequence[Candidate], keyword: Sequence[Candidate], *,
           vector_weight: float, text_weight: float, vector_scores: Mapping[str, float] | None,
           bonus: Mapping[str, float] | None = None) -> None:
    """In place: each merged candidate's relevance (what ``min_score`` compares) becomes the larger of itself and
    the score :func:`~openclaw_memory.retrieval.ranking.merge_weighted` gives it with these weights or this vector side
    (``vector`` and ``vector_scores`` as there), plus its file-coverage ``bonus`` when given, and the keyword
    rescue."""
    judged = merge_weighted(vector, keyword, vector_weight=vector_weight, text_weight=text_weight,
                            vector_scores=vector_scores)
    if bonus:
        for c in judged:
            c.score += bonus.get(c.id, 0.0)
    if text_weight > 0:
        apply_keyword_rescue(judged)
    for c in judged:
        relevance[c.id] = max(relevance[c.id], c.score)


def line_windows(text: str, size: int) -> list[str]:
    """Every run of ``size`` consecutive non-blank lines of ``text`` (the whole text when shorter)."""
    lines = nonblank_lines(text)
    if len(lines) <= size:
        return ["\n".join(lines)] if lines else []
    return ["\n".join(lines[i:i + size]) for i in range(len(lines) - size + 1)]


def window_similarities(provider: EmbeddingProvider, qv: np.ndarray, texts: Sequence[str], size: int) -> list[float]:
    """For each text, the best cosine between the query vector and one of its line windows (raw, -1..1)."""
    wins = [line_windows(t, size) for t in texts]
    vecs = passage_vectors(provider, [w for ws in wins for w in ws])
    return [max((float(np.dot(vecs[w], qv)) for w in ws), default=-1.0) for ws in wins]


def _rerank_by_windows(merged: list[Candidate], qv: np.ndarray, provider: EmbeddingProvider, config: MemoryConfig,
                       mode: SearchMode, sim_floor: float | None) -> tuple[list[Candidate], str | None]:
    """``query.rerank``: the best ``top`` candidates of the merge get ``vector_score = max(chunk
    similarity, best line-window similarity)`` and are scored again as the weighted merge did (with the
    keyword rescue); the rest keep their scores. Not applied under ``merge="rrf"`` (rank fusion has no
    similarity to raise). When the windows cannot be embedded, the hits keep their order (logged)."""
    rr, hy = config.query.rerank, config.query.hybrid
    merged = sorted(merged, key=lambda c: (-c.score, -c.text_score, -c.vector_score, c.path, c.start_line, c.id))
    head = merged[:rr.top]
    try:
        sims = window_similarities(provider, qv, [c.text for c in head], rr.window_lines)
    except Exception as exc:  # a provider failure must not break a search that already has results
        log.warning("reranking skipped: embedding the line windows failed: %s", exc)
        return merged, f"embedding the line windows failed ({type(exc).__name__}: {exc})"
    for c, sim in zip(head, sims):
        c.vector_score = max(c.vector_score, calibrate_similarity(sim, sim_floor))
        c.score = (hy.vector_weight * c.vector_score + hy.text_weight * c.text_score + c.file_bonus) \
            if mode == "hybrid" else c.vector_score
    if mode == "hybrid" and hy.text_weight > 0:
        apply_keyword_rescue(head)
    for c in head:
        c.relevance = max(c.relevance, c.score)
    return merged, None


def _hit_order(c: Candidate) -> tuple[float, float, float, float, str, int, str]:
    """The sort key of a search's final order: score, then keyword score, vector score, keyword rank, place."""
    return (-c.score, -c.text_score, -c.vector_score, c.text_rank if c.text_rank is not None else math.inf,
            c.path, c.start_line, c.id)


def _late_rerank(merged: list[Candidate], query: str, provider: EmbeddingProvider, top: int,
                 weight: float) -> str | None:
    """``query.hybrid.late_interaction``: in place, the best ``top`` candidates re-scored by
    :func:`~openclaw_memory.retrieval.late_interaction.late_rerank` when the provider gives per-token vectors (a
    :class:`~openclaw_memory.providers.base.TokenEmbeddingProvider`; others are left out); on a provider failure
    they keep their order and scores and the reason is returned (logged)."""
    from openclaw_memory.retrieval.late_interaction import late_rerank

    if not isinstance(provider, TokenEmbeddingProvider):
        return None

    merged.sort(key=_hit_order)
    try:
        late_rerank(merged[:top], query, provider, space=provider_key(provider.fingerprint()), weight=weight)
    except Exception as exc:  # a provider failure must not break a search that already has results
        log.warning("late interaction skipped: %s", exc)
        return f"late interaction failed ({type(exc).__name__}: {exc})"
    return None


def _rerank_by_endpoint(merged: list[Candidate], query: str,
                        config: MemoryConfig) -> tuple[list[Candidate], str | None]:
    """``query.rerank.provider = "http"``: the best ``top`` candidates re-ordered by the endpoint
    (:mod:`openclaw_memory.retrieval.rerank`); on any failure they keep their order and the reason is returned."""
    from openclaw_memory.retrieval.rerank import HttpReranker, reorder_head

    rr = config.query.rerank
    merged = sorted(merged, key=lambda c: (-c.score, -c.text_score, -c.vector_score, c.path, c.start_line, c.id))
    head = merged[:rr.top]
    try:
        scores = HttpReranker.from_config(rr).scores(query, [c.text for c in head])
    except OpenClawMemoryError as exc:
        log.warning("reranking skipped: %s", exc)
        return merged, str(exc)
    reorder_head(head, scores)
    return merged, None


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
        return datetime.fromtimestamp(latest, tz=timezone.utc)
    except (OSError, ValueError, OverflowError):
        return None


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
        except (OSError, ValueError, OverflowError):
            return None

    return resolve


# ---- the pipeline --------------------------------------------------------------------------------------


#: The longest period a question may name for its notes to rise (``query.hybrid.note_date_weight``): a month. A
#: longer or open period ("in 2024", "since May") would lift most dated notes over the undated ones that answer.
_LONGEST_PERIOD = 31


@dataclass
class _VectorSide:
    """What the vector side found: the query's embedding it ranked by (None: keyword-only, ``failure`` says why
    when something failed), its candidates with calibrated ``vector_score`` and their raw cosines by chunk id, and,
    when it ranked by the question without the speakers' names, the whole question's embedding and raw cosines."""

    query_vector: np.ndarray | None = None
    candidates: list[Candidate] = field(default_factory=list)
    raw_cosines: dict[str, float] = field(default_factory=dict)
    whole_question_vector: np.ndarray | None = None
    whole_question_cosines: dict[str, float] = field(default_factory=dict)
    failure: str | None = None


@dataclass
class _Merge:
    """The merge's outcome: the search mode, the candidates with ``score`` and ``relevance`` set, the analysis that
    measures query coverage (for the overlapping-hit ranges) and how far above 1 a score may be (the file-coverage
    bonus)."""

    mode: SearchMode
    candidates: list[Candidate]
    ranking: QueryAnalysis
    headroom: float = 0.0


def _query_embedding(provider: EmbeddingProvider | None, query: str, query_vector: np.ndarray | None,
                     query_embedder: Callable[[str], np.ndarray] | None) -> tuple[np.ndarray | None, str | None]:
    """The query's embedding (``query_vector`` when given) and, when there is none to search by, why (None when
    there is no provider either)."""
    reason: str | None = None
    embedding: np.ndarray | None = None
    if query_vector is not None:
        embedding = np.asarray(query_vector, dtype=np.float32)
    elif provider is not None:
        try:
            embed = query_embedder or provider.embed_query
            embedding = np.asarray(embed(query), dtype=np.float32)
        except Exception as exc:
            log.warning("query embedding failed; searching keywords only: %s", exc)
            reason = redact(f"query embedding failed ({type(exc).__name__}: {exc})")
    if embedding is not None and not (embedding.size and np.all(np.isfinite(embedding)) and np.any(embedding)):
        log.warning("the query embedding is empty, all zeros or not finite; searching keywords only")
        reason, embedding = "the query embedding is empty, all zeros or not finite", None
    return embedding, reason


def _vector_side(store: MemoryStore, provider: EmbeddingProvider | None, query: str, *,
                 query_vector: np.ndarray | None, query_embedder: Callable[[str], np.ndarray] | None,
                 hybrid: HybridConfig, limit: int, sources: Sequence[str] | None) -> _VectorSide:
    """The vector side: the ``limit`` chunks nearest the query's embedding, their similarities calibrated; with
    ``drop_speaker_names``, ranked by the question without the names of its notes' speakers."""
    embedding, reason = _query_embedding(provider, query, query_vector, query_embedder)
    side = _VectorSide(failure=reason)
    if embedding is None:
        return side
    similarity_floor = provider.similarity_floor if provider is not None else None
    try:
        vector = store.vector_search(embedding, limit=limit, sources=sources,
                                     model=provider.model if provider is not None else None)
        for c in vector:
            side.raw_cosines[c.id] = c.vector_score
            c.vector_score = calibrate_similarity(c.vector_score, similarity_floor)
    except Exception as exc:
        log.warning("vector search failed; searching keywords only: %s", exc)
        side.failure = f"vector search failed ({type(exc).__name__}: {exc})"
        return side
    side.query_vector, side.candidates = embedding, vector
    if vector and provider is not None and query_vector is None and hybrid.enabled and hybrid.drop_speaker_names:
        _rank_without_speakers(side, store, provider, query, query_embedder=query_embedder, limit=limit,
                               sources=sources)
    return side


def _rank_without_speakers(side: _VectorSide, store: MemoryStore, provider: EmbeddingProvider, query: str, *,
                           query_embedder: Callable[[str], np.ndarray] | None, limit: int,
                           sources: Sequence[str] | None) -> None:
    """In place: a question naming one speaker of the notes' dialogue has the vector side rank by its embedding
    without the names every chunk says (:mod:`openclaw_memory.text.speakers`); the keyword side keeps the whole
    question. On a failure the whole question's vector side stands (logged)."""
    similarity_floor = provider.similarity_floor
    plain = without_speakers(query, speaker_labels(c.text for c in side.candidates))
    if plain is None:
        return
    try:
        plain_vector = np.asarray((query_embedder or provider.embed_query)(plain), dtype=np.float32)
        if plain_vector.size and np.all(np.isfinite(plain_vector)) and np.any(plain_vector):
            rescan = store.vector_search(plain_vector, limit=limit, sources=sources, model=provider.model)
            side.whole_question_cosines, side.raw_cosines = side.raw_cosines, {c.id: c.vector_score for c in rescan}
            for c in rescan:
                c.vector_score = calibrate_similarity(c.vector_score, similarity_floor)
            side.whole_question_vector, side.query_vector, side.candidates = side.query_vector, plain_vector, rescan
    except Exception as exc:  # the whole question's vector side stands
        log.warning("searching without the speakers' names failed; using the whole question: %s", exc)


def _merge_keyword_only(keyword: KeywordCandidates) -> _Merge:
    """Keyword mode: the keyword side's candidates, scored by their keyword score and the needle rescue."""
    merged = list(keyword)
    for c in merged:
        c.score = c.text_score
    apply_keyword_rescue(merged)  # lifts needles only: an exact match already scores its text_score
    for c in merged:
        c.relevance = c.score
    return _Merge("keyword", merged, keyword.ranking)


def _merge_vector_only(store: MemoryStore, provider: EmbeddingProvider | None, side: _VectorSide,
                       hybrid: HybridConfig, analysis: QueryAnalysis) -> _Merge:
    """Vector mode: the vector side's candidates (re-scored by their line units when on), scored by similarity."""
    vector = side.candidates
    if provider is not None and hybrid.unit_lines > 0 and hybrid.unit_weight > 0:
        queried = (side.query_vector, side.raw_cosines)
        rescored = (_unit_rescored(store, provider, vector, queried,  # type: ignore[arg-type]
                                   size=hybrid.unit_lines, weight=hybrid.unit_weight) or [{}])[0]
        for c in vector:
            c.vector_score = rescored.get(c.id, c.vector_score)
        vector.sort(key=lambda c: -c.vector_score)
    merged = list(vector)
    for c in merged:
        c.vector_score = max(0.0, c.vector_score)
        c.score = c.relevance = c.vector_score
    return _Merge("vector", merged, analysis)


def _keyword_hits_similarities(store: MemoryStore, provider: EmbeddingProvider | None, query_vector: np.ndarray,
                               vector: Sequence[Candidate], keyword: Sequence[Candidate], *,
                               units: bool) -> tuple[dict[str, float] | None, dict[str, float]]:
    """The calibrated similarity of each keyword hit the vector side did not find, from its stored vector (None
    when that read fails, logged: those hits then count 0 on the vector side), and, when ``units`` re-score them,
    their raw cosines."""
    in_vector = {c.id for c in vector}
    others = [c for c in keyword if c.id not in in_vector]
    raw_others: dict[str, float] = {}
    filled: dict[str, float] | None = None
    try:
        if units and provider is not None:  # raw cosines: the units blend with them before the calibration
            ids = [c.id for c in others]
            raw_others = store.vector_scores(query_vector, ids, model=provider.model) if others else {}
            filled = {cid: calibrate_similarity(v, provider.similarity_floor) for cid, v in raw_others.items()}
        else:
            filled = stored_similarities(store, query_vector, others,
                                         model=provider.model if provider is not None else None,
                                         similarity_floor=provider.similarity_floor if provider is not None
                                         else None)
    except Exception as exc:  # the merge still works without them (keyword-only hits count 0)
        log.warning("scoring keyword hits by their stored vectors failed: %s", exc)
    return filled, raw_others


def _rescore_by_units(store: MemoryStore, provider: EmbeddingProvider, side: _VectorSide,
                      keyword: Sequence[Candidate], hybrid: HybridConfig, *, raw_others: Mapping[str, float],
                      filled: dict[str, float] | None, whole_raw: Mapping[str, float] | None) -> dict[str, float]:
    """In place: both sides' candidates re-scored by their line units (the vector side re-sorted, ``filled``
    updated), in one read of the cached unit vectors; returns the whole question's unit-blended similarities."""
    vector = side.candidates
    in_vector = {c.id for c in vector}
    unit_scores = _unit_rescored(
        store, provider, [*vector, *(c for c in keyword if c.id not in in_vector)],
        (side.query_vector, {**side.raw_cosines, **raw_others}),  # type: ignore[arg-type]
        *(() if whole_raw is None else ((side.whole_question_vector, whole_raw),)),  # type: ignore[arg-type]
        size=hybrid.unit_lines, weight=hybrid.unit_weight) or []  # []: the store failed (logged), chunk cosines
    rescored = unit_scores[0] if unit_scores else {}
    whole_units = unit_scores[1] if len(unit_scores) > 1 else {}
    for c in vector:
        c.vector_score = rescored.get(c.id, c.vector_score)
    vector.sort(key=lambda c: -c.vector_score)
    if filled is not None:
        filled.update((cid, v) for cid, v in rescored.items() if cid in raw_others)
    return whole_units


def _raise_dated_notes(weighted: Sequence[Candidate], query: str, hybrid: HybridConfig, now: datetime | None) -> None:
    """In place: the vector side knows nothing of dates, so chunks of the note of a date the question says rise,
    and so do the notes of a period it names relative to now ("yesterday", "last week", "in March")."""
    said = dates_said(query) if hybrid.note_date_weight > 0 else []
    periods = [p for p in periods_said(query, now=now) if (p.days or _LONGEST_PERIOD + 1) <= _LONGEST_PERIOD] \
        if hybrid.note_date_weight > 0 else []
    for c in weighted if said or periods else ():
        c.score += hybrid.note_date_weight * max(note_date_share(said, c.path), period_share(periods, c.path))


def _merge_hybrid(store: MemoryStore, provider: EmbeddingProvider | None, query: str, side: _VectorSide,
                  keyword: KeywordCandidates, hybrid: HybridConfig, now: datetime | None) -> _Merge:
    """Hybrid mode: both sides merged by their weights (or by rank fusion), with the file-coverage, keyword-rescue,
    file-repeat and note-date rules; each hit's relevance (what ``min_score`` compares) is the best of its scores
    by these weights, by the whole question (with the speakers' names) and by ``relevance_vector_weight``."""
    vector = side.candidates
    similarity_floor = provider.similarity_floor if provider is not None else None
    vector_weight, text_weight = hybrid.vector_weight, hybrid.text_weight
    headroom = 0.0
    filled: dict[str, float] | None = None
    units = provider is not None and hybrid.unit_lines > 0 and hybrid.unit_weight > 0 and (
        vector_weight > 0 or bool(hybrid.relevance_vector_weight))
    raw_others: dict[str, float] = {}
    if hybrid.score_both_sides and (vector_weight > 0 or bool(hybrid.relevance_vector_weight)):
        filled, raw_others = _keyword_hits_similarities(store, provider, side.query_vector,  # type: ignore[arg-type]
                                                        vector, keyword, units=units)
    # min_score also judges by the whole question (with the speaker's name), which scores higher: dropping the
    # name orders the hits better but lowers every cosine, and must not hide hits that passed min_score before
    whole_raw = None
    if side.whole_question_vector is not None and provider is not None and vector_weight > 0:
        whole_raw = _whole_question_cosines(store, provider, side.whole_question_vector, side.whole_question_cosines,
                                            vector, keyword)
    whole_units: dict[str, float] = {}
    if units:
        whole_units = _rescore_by_units(store, provider, side, keyword, hybrid,  # type: ignore[arg-type]
                                        raw_others=raw_others, filled=filled, whole_raw=whole_raw)
    weighted = merge_weighted(vector, keyword, vector_weight=vector_weight, text_weight=text_weight,
                              vector_scores=filled)
    if vector_weight > 0 and text_weight > 0 and hybrid.merge == "weighted":
        # near-ties go to chunks of files holding the query's words
        apply_file_coverage(weighted, lambda texts: [cov for cov, _ in keyword.ranking.coverage(texts)],
                            weight=hybrid.file_coverage_weight)
        headroom = hybrid.file_coverage_weight
    if text_weight > 0:
        apply_keyword_rescue(weighted)
    relevance = {c.id: c.score for c in weighted}
    if whole_raw is not None:
        whole = {**{cid: calibrate_similarity(v, similarity_floor) for cid, v in whole_raw.items()}, **whole_units}
        _judge(relevance, [replace(c, vector_score=whole.get(c.id, 0.0)) for c in vector], keyword,
               vector_weight=vector_weight, text_weight=text_weight, vector_scores=whole,
               bonus={c.id: c.file_bonus for c in weighted})
    if vector_weight > 0 and text_weight > 0 and hybrid.merge == "weighted":
        apply_file_repeat_penalty(weighted, penalty=hybrid.file_repeat_penalty)  # room for other notes' chunks
        _raise_dated_notes(weighted, query, hybrid, now)
    relevance_weight = hybrid.relevance_vector_weight
    if relevance_weight is not None and relevance_weight != vector_weight:
        # the order's weights are not the relevance's (the fast tier): a hit passes min_score when either
        # weighting scores it high enough, so a lighter vector weight re-orders hits without hiding the
        # vector-only ones, and keyword hits whose weak vectors the order discounts still pass as before
        _judge(relevance, vector, keyword, vector_weight=relevance_weight, text_weight=1.0 - relevance_weight,
               vector_scores=filled)
    if hybrid.merge == "rrf":
        # rank fusion orders the hits; min_score still compares the weighted score (RRF scores only
        # reflect ranks: the 24th vector hit of an unrelated query would score 0.5)
        merged = merge_rrf(vector, keyword, vector_weight=vector_weight, text_weight=text_weight, k=hybrid.rrf_k)
        if text_weight > 0:
            apply_keyword_rescue(merged, rrf_k=hybrid.rrf_k)
    else:
        merged = weighted
    for c in merged:
        c.relevance = relevance[c.id]
    return _Merge("hybrid", merged, keyword.ranking, headroom)


def _reorder(merge: _Merge, query: str, side: _VectorSide, provider: EmbeddingProvider | None,
             config: MemoryConfig, hybrid: HybridConfig, *, workspace: Path | None,
             now: datetime | None) -> tuple[list[Candidate], str | None]:
    """The merged candidates in their final order: reranked (line windows, an HTTP endpoint or late interaction,
    as configured), decayed by age, sorted, diversified by MMR, scores bounded back into 0..1; with the reranker's
    failure, if any."""
    options, merged, mode = config.query, merge.candidates, merge.mode
    query_vector = side.query_vector
    similarity_floor = provider.similarity_floor if provider is not None else None
    rerank_error: str | None = None
    endpoint = options.rerank.enabled and options.rerank.provider == "http"
    rerank = options.rerank.enabled and options.rerank.provider == "windows" and query_vector is not None \
        and provider is not None and merged and (mode == "vector" or (mode == "hybrid" and hybrid.merge == "weighted"))
    if rerank:
        merged, rerank_error = _rerank_by_windows(
            merged, query_vector, provider, config, mode, similarity_floor)  # type: ignore[arg-type]
    elif endpoint and merged:
        merged, rerank_error = _rerank_by_endpoint(merged, query, config)
    late = hybrid.late_interaction
    endpoint_ordered = endpoint and rerank_error is None  # the HTTP reranker ordered the head: its order stands
    if late.enabled and mode == "hybrid" and provider is not None and merged and not endpoint_ordered:
        rerank_error = _late_rerank(merged, query, provider, late.top, late.weight) or rerank_error
    if hybrid.temporal_decay.enabled and merged:
        apply_temporal_decay(
            merged, timestamp_resolver(config, workspace), now=now or datetime.now(timezone.utc),
            half_life_days=hybrid.temporal_decay.half_life_days,
        )
    merged.sort(key=_hit_order)
    if hybrid.mmr.enabled and len(merged) > 1:
        merged = apply_mmr(merged, hybrid.mmr.lambda_)
    if merge.headroom > 0:  # the file-coverage bonus may lift a score over 1: back into 0..1, after ordering
        for c in merged:
            c.score, c.relevance = bound_score(c.score, merge.headroom), bound_score(c.relevance, merge.headroom)
    return merged, rerank_error


def _select_hits(ordered: Sequence[Candidate], merge: _Merge, config: MemoryConfig, *, min_score: float,
                 max_results: int, session_key: str | None,
                 instruction: Callable[[Sequence[Candidate]], Candidate | None] | None = None) -> list[SearchHit]:
    """The hits to return: the ordered candidates whose relevance reaches ``min_score`` (in keyword mode, with
    none passing, any that matched), overlapping ones of a note joined when configured, at most ``max_results``,
    up to two thirds of them the user's own messages of a transcript (``query.user_turns``), and the standing
    instruction ``instruction`` finds for them (when its relevance reaches ``min_score``), with
    snippets and citations, within ``max_injected_chars``."""
    options = config.query
    passing = [c for c in ordered if c.relevance >= min_score]
    if not passing and merge.mode == "keyword":
        # As the original: with no embeddings, the best partial matches beat an empty answer.
        passing = [c for c in ordered if c.score > 0]
    if options.user_turns:
        passing = with_user_turns(passing, max_results)
    if options.merge_overlapping:  # overlapping hits of a note as one, within the lines of the top chunks
        lines_by = merge.ranking
        chosen = fit_ranges(passing, max_results, lambda lines: [cov for cov, _ in lines_by.coverage(lines)])
    else:
        chosen = passing[:max_results]
    extra = instruction(chosen) if instruction is not None else None
    if extra is not None and extra.relevance >= min_score:
        chosen = with_instruction(chosen, extra, max_results)

    cite = citations_enabled(config.citations, session_key)
    found = {c.id: (c.start_line, c.end_line) for c in passing}
    hits: list[SearchHit] = []
    for c in chosen:
        hit = SearchHit(
            path=c.path, start_line=c.start_line, end_line=c.end_line, score=float(c.score),
            snippet=truncate_snippet(shown_text(c.text), options.snippet_max_chars), source=c.source,
            vector_score=float(c.vector_score), text_score=float(c.text_score), chunk_id=c.id, text=c.text,
            id=c.id if found.get(c.id) == (c.start_line, c.end_line) else range_id(c.id, c.start_line, c.end_line),
        )
        hits.append(decorate_citation(hit) if cite else hit)
    return clamp_injected(hits, options.max_injected_chars)


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
    state: SearchState | None = None,
) -> SearchResult:
    """Search the index for ``query`` (spec §5, with the improvements described in :mod:`hybrid`).

    ``query_vector`` skips ``provider.embed_query``; ``query_embedder`` replaces it (e.g. a cache).
    With an ``executor``, the keyword side runs there while the query is embedded and the vector
    side searched (SQLite and numpy release the GIL), so hybrid latency is close to the slower side. ``state`` is
    what the index reports on the result (fallback, sync state); when nothing is returned, ``empty_reason``
    is its ``why_empty()`` (the index knows when it is empty or stale), else ``"no_match"``. An empty
    ``query`` with a ``query_vector`` is a plain nearest-neighbour search (vector mode).
    """
    started = time.perf_counter()
    options, hybrid = config.query, config.query.hybrid
    wanted = max(1, int(max_results if max_results is not None else options.max_results))
    least_relevance = options.min_score if min_score is None else float(min_score)
    text = (query or "").strip()
    reason = keyword_only_reason
    if provider is None and reason is None:
        reason = "no embedding provider"
    context = state or SearchState()

    def result(hits: list[SearchHit], mode: SearchMode, rerank_error: str | None = None) -> SearchResult:
        return SearchResult(
            query=query, hits=hits, mode=mode, provider=provider.id if provider is not None else "none",
            model=provider.model if provider is not None else FTS_ONLY_MODEL, fallback=context.fallback,
            keyword_only_reason=reason if mode == "keyword" else None,
            empty_reason=None if hits else (context.why_empty and context.why_empty()) or "no_match",
            sync_scheduled=context.sync_scheduled, sync_error=context.sync_error,
            rerank_error=rerank_error,
            took_ms=(time.perf_counter() - started) * 1000,
        )

    if not text and query_vector is None:
        return result([], "keyword" if provider is None else ("hybrid" if hybrid.enabled else "vector"))
    if not text:  # a vector alone: nearest neighbours, nothing for the keyword side to match
        hybrid = hybrid.model_copy(update={"enabled": False})

    limit = candidate_limit(wanted, hybrid.candidate_multiplier)
    analysis = analyze_query(text, tokenizer=config.store.fts.tokenizer, stemming=options.stemming)
    search_keywords = partial(keyword_candidates, store, analysis, sources=sources, enough=wanted,
                              window_lines=options.keyword.window_lines, rarity_weights=options.keyword.rarity_weights,
                              note_dates=options.keyword.note_dates, instructions=options.standing_instructions)
    # the keyword side runs in parallel with the vector side when it can run concurrently
    pending: Future[KeywordCandidates] | None = None
    if hybrid.enabled and (provider is not None or query_vector is not None) and executor is not None:
        pending = executor.submit(search_keywords, limit=limit)
    side = _vector_side(store, provider, text, query_vector=query_vector, query_embedder=query_embedder,
                        hybrid=hybrid, limit=limit, sources=sources)
    reason = side.failure or reason

    keyword: KeywordCandidates | None = None
    if side.query_vector is None:
        keyword = search_keywords(limit=min(_MAX_CANDIDATES, 2 * limit), vectors=False)
        merge = _merge_keyword_only(keyword)
    elif not hybrid.enabled:
        merge = _merge_vector_only(store, provider, side, hybrid, analysis)
    else:
        if pending is not None and hybrid.merge == "weighted" and hybrid.file_coverage_weight > 0 \
                and hybrid.vector_weight > 0 and hybrid.text_weight > 0:
            # for the file-coverage rule, while the keyword side runs
            analysis.measure([c.text for c in side.candidates])
        keyword = pending.result() if pending is not None else search_keywords(limit=limit)
        merge = _merge_hybrid(store, provider, text, side, keyword, hybrid, now)
    ordered, rerank_error = _reorder(merge, text, side, provider, config, hybrid, workspace=workspace, now=now)
    lines = (instruction_lines_of(keyword.instruction_chunks, chunk_tokens=config.chunking.tokens)
             if keyword is not None else [])
    instruction = partial(matching_instruction, lines, analysis, provider=provider, query_vector=side.query_vector,
                          vector_weight=hybrid.vector_weight) if lines else None
    hits = _select_hits(ordered, merge, config, min_score=least_relevance, max_results=wanted, session_key=session_key,
                        instruction=instruction)
    return result(hits, merge.mode, rerank_error)
