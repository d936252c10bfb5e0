"""Searches beside the configured one: one search's options (:meth:`MemoryIndex.search
<openclaw_memory.index.MemoryIndex.search>`'s ``mode``, ``vector_weight``, ``mmr``, ``query_vector``,
``where``, ``collapse``), the evaluation's modes, and the builtin search as the QMD backend's fallback."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_memory.retrieval import evaluation
from openclaw_memory.backends.base import BackendStatus
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import ConfigError, MemoryArgumentError, OpenClawMemoryError
from openclaw_memory.retrieval.evaluation import EvalQuestion, ModeReport
from openclaw_memory.index.provider_access import ProviderAccess
from openclaw_memory.providers.base import EmbeddingProvider
from openclaw_memory.index.scheduler import SyncScheduler
from openclaw_memory.storage import MemoryStore
from openclaw_memory.types import MemoryText, SearchHit, SearchMode, SearchResult, SyncReport

__all__ = [
    "SEARCH_SOURCES",
    "BuiltinSearch",
    "SearchTuning",
    "as_found_tuning",
    "check_search_arguments",
    "evaluate_modes",
    "filtered",
    "indexed_sources",
    "search_tuning",
]

#: The sources a search may be restricted to.
SEARCH_SOURCES = ("memory", "sessions")


@dataclass(frozen=True)
class SearchTuning:
    """One search's options (see :meth:`MemoryIndex.search`), checked: the ``query`` settings they change,
    whether embeddings are left out, the normalised query vector and the hit filter."""

    query: dict[str, Any]  # the ``query`` settings the options change (applied by :meth:`settings`)
    max_results: int  # the configured number of hits (``query.max_results``; no option changes it)
    keyword_only: bool
    query_vector: np.ndarray | None
    where: Callable[[SearchHit], bool] | None
    collapse: Callable[[SearchHit], Hashable] | None
    filter_only: bool  # nothing but ``where`` and ``collapse``: a search backend (QMD) can still answer

    def settings(self, base: MemoryConfig) -> MemoryConfig:
        """The settings the tuned search runs with: ``base``, the settings the search would run with untuned
        (the fast tier's own weights while the bundled model's fast first index is live), with the options'
        changes on top."""
        return MemoryConfig.load(base, query=self.query) if self.query else base


def check_search_arguments(query: Any = "", *, max_results: Any = None, min_score: Any = None,
                           sources: Any = None, max_results_name: str = "max_results") -> None:
    """Raise MemoryArgumentError (naming the argument and what is allowed) unless ``query`` is a string,
    ``max_results`` None or a whole number >= 1, ``min_score`` None or a number in 0..1 and ``sources``
    None or a list of ``"memory"`` / ``"sessions"``. Every search (the index's, the retrievers', the tools')
    checks its arguments with it; ``max_results_name`` is what the caller calls ``max_results`` (``k``, ...)."""
    if not isinstance(query, str):
        raise MemoryArgumentError(f"query must be a string, got {type(query).__name__} ({query!r:.60})")
    if max_results is not None and (isinstance(max_results, bool) or not isinstance(max_results, numbers.Integral)
                                    or max_results < 1):
        raise MemoryArgumentError(f"{max_results_name} must be a positive integer (at least 1; None for the "
                                  f"configured query.max_results), got {max_results!r}")
    if min_score is not None and (isinstance(min_score, bool) or not isinstance(min_score, numbers.Real)
                                  or not math.isfinite(min_score) or not 0.0 <= min_score <= 1.0):
        raise MemoryArgumentError(f"min_score must be between 0 and 1 (a number; None for the configured "
                                  f"query.min_score), got {min_score!r}")
    if sources is not None:
        if isinstance(sources, (str, bytes)) or not isinstance(sources, Sequence):
            raise MemoryArgumentError(f"sources must be a list of source names ({', '.join(SEARCH_SOURCES)}), "
                                      f"got {sources!r}")
        unknown = [s for s in sources if s not in SEARCH_SOURCES]
        if unknown:
            raise MemoryArgumentError(f"unknown source(s) {unknown!r} in sources: use {' or '.join(SEARCH_SOURCES)}")


def indexed_sources(config: MemoryConfig) -> frozenset[str]:
    """The sources an index built from ``config`` holds: its ``sources``, plus ``"sessions"`` when the QMD
    backend indexes exported transcripts (``memory.qmd.sessions.enabled``)."""
    exported = config.backend == "qmd" and config.qmd.sessions.enabled
    return frozenset([*config.sources, *(["sessions"] if exported else [])])


def search_tuning(
    config: MemoryConfig, provider: Callable[[], EmbeddingProvider | None], *,
    query_vector: Sequence[float] | np.ndarray | None, mode: SearchMode | None,
    vector_weight: float | None, mmr: bool | float | None, where: Callable[[SearchHit], bool] | None,
    collapse: Callable[[SearchHit], Hashable] | None,
) -> SearchTuning | None:
    """The options of :meth:`MemoryIndex.search` checked and turned into a configuration (None: none given);
    ``provider()`` is the index's provider (asked only for a ``query_vector``)."""
    if (query_vector is None and mode is None and vector_weight is None and mmr is None and where is None
            and collapse is None):
        return None
    if mode not in (None, "hybrid", "vector", "keyword"):
        raise MemoryArgumentError(f"unknown search mode {mode!r}: use 'hybrid', 'vector' or 'keyword'")
    for name, function in (("where", where), ("collapse", collapse)):
        if function is not None and not callable(function):
            raise MemoryArgumentError(f"{name} must be a function of a hit (lambda hit: ...), got "
                                      f"{type(function).__name__} ({function!r:.60})")
    hybrid: dict[str, Any] = {}
    if mode is not None:
        hybrid["enabled"] = mode != "vector"
    if vector_weight is not None:
        weight = _fraction(vector_weight, "vector_weight must be between 0 (keywords only) and 1 (vectors only)")
        hybrid["vector_weight"], hybrid["text_weight"] = weight, 1.0 - weight
    if mmr is not None:
        hybrid["mmr"] = {"enabled": mmr is not False}
        if not isinstance(mmr, bool):
            hybrid["mmr"]["lambda_"] = _fraction(mmr, "the MMR lambda must be between 0 and 1 (or mmr=True / False)")
    vector: np.ndarray | None = None
    if query_vector is not None:
        if mode == "keyword":
            raise MemoryArgumentError("a keyword search takes no query_vector")
        resolved = provider()
        if resolved is None:
            raise MemoryArgumentError(
                "this memory index has no embedding provider (keyword-only), so it holds no vectors to "
                "compare query_vector with; search without it or open the index with a provider")
        from openclaw_memory.providers.base import normalize_vectors

        dims = resolved.dims
        raw = np.asarray(query_vector, dtype=np.float32)
        if dims is not None and raw.shape != (dims,):
            raise MemoryArgumentError(
                f"query_vector has shape {raw.shape} but this index stores {dims}-dimensional vectors from "
                f"{resolved.id}:{resolved.model}; embed the query with the same model")
        try:
            vector = normalize_vectors([raw.tolist()], expected_dims=dims, who="query_vector")[0]
        except OpenClawMemoryError as exc:
            raise MemoryArgumentError(str(exc)) from None
    query: dict[str, Any] = {"hybrid": hybrid} if hybrid else {}
    if where is not None or collapse is not None:
        query.update(_AS_FOUND)
    return SearchTuning(query=query, max_results=config.query.max_results, keyword_only=mode == "keyword",
                        query_vector=vector, where=where, collapse=collapse,
                        filter_only=not hybrid and vector is None and mode != "keyword")


def _fraction(value: Any, what: str) -> float:
    """``value`` as a number in 0..1; MemoryArgumentError saying ``what`` (and what was given) otherwise."""
    if not isinstance(value, bool) and isinstance(value, (numbers.Real, str)):
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if 0.0 <= number <= 1.0:
            return number
    raise MemoryArgumentError(f"{what}, got {value!r:.60}")


#: A filtered search returns the indexed chunks as they are (what a vector store's ``get_nodes`` returns for the
#: same ids), ranked as before the filter: merging hits would spend the line budget on hits ``where`` drops and
#: return fewer hits than asked, which :func:`filtered` reads as "nothing more to find"; a standing instruction's
#: one-line hit is no indexed chunk either, and the places kept for the user's messages are a reordering.
_AS_FOUND: dict[str, Any] = {"merge_overlapping": False, "standing_instructions": False, "user_turns": False}


def as_found_tuning(config: MemoryConfig) -> SearchTuning:
    """The tuning of a search that returns the indexed chunks as found (``query.merge_overlapping`` off): what
    the builtin search answers with when it serves a filtered search as the QMD backend's fallback
    (:meth:`BuiltinSearch.search`'s ``as_found``)."""
    return SearchTuning(query=dict(_AS_FOUND), max_results=config.query.max_results, keyword_only=False,
                        query_vector=None, where=None, collapse=None, filter_only=True)


def filtered(run: Callable[[int | None], SearchResult], tuning: SearchTuning, max_results: int | None,
             size: Callable[[], int | None]) -> SearchResult:
    """``run`` with ``max_results`` growing fourfold until ``max_results`` hits pass ``tuning.where``
    and ``tuning.collapse``, the search returns fewer than asked for, or ``total`` (the index's size,
    when known; counted only when a first search falls short) is reached."""
    where, collapse = tuning.where, tuning.collapse
    want = max(1, int(max_results if max_results is not None else tuning.max_results))
    n = want
    total: int | None = None
    counted = False
    while True:
        result = run(n)
        kept: list[SearchHit] = []
        keys: set[Hashable] = set()
        for h in result.hits:
            if where is not None and not where(h):
                continue
            if collapse is not None:
                key = collapse(h)
                if key in keys:
                    continue
                keys.add(key)
            kept.append(h)
        if len(kept) >= want or len(result.hits) < n:
            break
        if not counted:
            total, counted = size(), True
        if total is not None and n >= total:
            break
        n = n * 4 if total is None else min(total, n * 4)
    return replace(result, hits=kept[:want],
                   empty_reason=result.empty_reason if kept or not result.hits else "no_match")


def evaluate_modes(questions: Sequence[EvalQuestion], *, store: MemoryStore, config: MemoryConfig, workspace: Path,
                   access: ProviderAccess, ks: Sequence[int], modes: Sequence[str],
                   min_score: float) -> dict[str, ModeReport]:
    """:meth:`MemoryIndex.evaluate` on a synced index: each of ``modes`` searched the way it is configured."""
    from openclaw_memory.retrieval.pipeline import run_search

    provider = access.tier_provider(access.ensure(), query=True)
    if provider is None and "vector" in modes:
        raise ConfigError("vector-only evaluation needs an embedding provider (this index is keyword-only)")
    configs = {
        "hybrid": (access.search_config(provider), provider),
        "keyword": (config, None),
        "vector": (MemoryConfig.load(config, query={"hybrid": {"enabled": False}}), provider),
    }

    def searcher(mode: str) -> evaluation.SearchFn:
        mode_config, prov = configs[mode]

        def search(question: str, k: int) -> list[SearchHit]:
            return run_search(store, mode_config, question, provider=prov, max_results=k, min_score=min_score,
                              keyword_only_reason=access.keyword_only_reason, workspace=workspace,
                              query_embedder=access.query_embedder(prov)).hits

        return search

    return evaluation.evaluate(questions, {m: searcher(m) for m in modes}, ks=ks)


class BuiltinSearch:
    """An index's own search as a :class:`~openclaw_memory.backends.base.SearchBackend`: what
    ``backend = "qmd"`` falls back to. It searches, reads and syncs through the functions it is given."""

    name = "builtin"

    def __init__(self, *, search: Callable[..., SearchResult], get: Callable[[str, int | None, int | None], MemoryText],
                 scheduler: SyncScheduler, provider: Callable[[], EmbeddingProvider | None]) -> None:
        self._search = search
        self._get = get
        self._scheduler = scheduler
        self._provider = provider

    def search(self, query: str, *, max_results: int | None = None, min_score: float | None = None,
               session_key: str | None = None, sources: Sequence[str] | None = None,
               as_found: bool = False) -> SearchResult:
        return self._search(query, max_results=max_results, min_score=min_score, session_key=session_key,
                            sources=sources, as_found=as_found)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> MemoryText:
        return self._get(path, from_line, lines)

    def sync(self, *, force: bool = False, reason: str = "manual") -> SyncReport:
        return self._scheduler.submit(force=force, reason=reason).result()

    def status(self) -> BackendStatus:
        provider = self._provider()
        return BackendStatus(backend="builtin", provider=provider.id if provider else "none",
                             model=provider.model if provider else "fts-only",
                             search_mode="hybrid" if provider else "keyword")

    def close(self) -> None:
        """Nothing: the store belongs to the MemoryIndex, which closes it."""
