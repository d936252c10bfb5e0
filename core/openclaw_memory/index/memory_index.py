"""MemoryIndex: one agent's memory — sync, search, get and status, with async twins.

    >>> from openclaw_memory import MemoryIndex
    >>> with MemoryIndex(workspace="~/notes") as memory:       # doctest: +SKIP
    ...     for hit in memory.search("what did we decide about the API?").hits:
    ...         print(hit.citation, hit.score)

The index is derived data: delete it and the next sync rebuilds it from the Markdown files.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from openclaw_memory.files import discovery
from openclaw_memory.files.append import local_now, now_datetime
from openclaw_memory.retrieval import evaluation
from openclaw_memory.backends.base import SearchBackend
from openclaw_memory.config import MemoryConfig
from openclaw_memory.retrieval.recall_signals import record_recalls
from openclaw_memory.errors import ConfigError, IndexClosedError, MemoryArgumentError, MemoryArgumentTypeError
from openclaw_memory.retrieval.evaluation import EvalQuestion, ModeReport
from openclaw_memory.index.freshness import Freshness
from openclaw_memory.index.status import IndexStatus, StatusReader
from openclaw_memory.index.provider_access import AUTO, ProviderAccess
from openclaw_memory.providers.base import EmbeddingProvider
from openclaw_memory.index.scheduler import SyncScheduler
from openclaw_memory.storage.sqlite.store import SQLiteStore, recorded_workspace
from openclaw_memory.storage import MemoryStore, StoredChunk
from openclaw_memory.indexing.sync import Progress, SessionIndexStats
from openclaw_memory.index.sync_runner import SyncRunner
from openclaw_memory.text.time_ranges import DayRange, day_range
from openclaw_memory.index.search_options import (
    SEARCH_SOURCES,
    BuiltinSearch,
    SearchTuning,
    as_found_tuning,
    check_search_arguments,
    evaluate_modes,
    filtered,
    indexed_sources,
    search_tuning,
)
from openclaw_memory.types import (
    EmptyReason,
    MemoryText,
    SearchHit,
    SearchMode,
    SearchResult,
    SearchState,
    SyncReport,
)

__all__ = ["IndexStatus", "MemoryIndex", "check_memory_index"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")
_AUTO: Any = AUTO  # the default of ``provider``; the name pickles of earlier versions refer to


class MemoryIndex:
    """Index and search one agent's Markdown memory.

    ``config`` is a :class:`MemoryConfig`, a dict (snake_case or camelCase) or None; keyword
    arguments override it (``MemoryIndex(workspace="~/notes", provider="openai")``).
    ``provider`` is a provider name (``"openai"``, ``"local"``, …, as in the config), an
    :class:`EmbeddingProvider` instance, or None for keyword-only (an instance or None
    takes precedence over the configured one); ``storage`` replaces the SQLite store with
    another :class:`~openclaw_memory.storage.MemoryStore` backend. With ``sync.watch`` (default on) a file
    watcher starts on the first search; ``watch=True`` starts it now, ``watch=False`` never (the
    ``sync.interval_minutes`` timer, when set, then starts right away on its own).
    The workspace must be an existing folder (ConfigError otherwise: a mistyped path is not an empty
    memory); ``create=True`` creates it, e.g. for a new agent. The index is one file per agent and
    workspace by default; an index that holds another workspace's memory is refused (ConfigError).
    Thread-safe; close it (or use ``with``). Closing closes the provider the index created from its
    configuration; a provider instance passed in is the caller's (several indexes may share one) and stays open.
    """

    def __init__(
        self,
        config: MemoryConfig | dict[str, Any] | None = None,
        *,
        provider: EmbeddingProvider | str | None = _AUTO,
        storage: MemoryStore | None = None,
        watch: bool | None = None,
        create: bool = False,
        **overrides: Any,
    ) -> None:
        _check_flag("watch", watch, optional=True)
        _check_flag("create", create)
        if isinstance(provider, str):  # MemoryIndex(provider="openai") is the config key
            overrides["provider"], provider = provider, _AUTO
        if provider is not _AUTO and provider is not None and not isinstance(provider, EmbeddingProvider):
            raise ConfigError(f"provider: {type(provider).__name__} does not implement the EmbeddingProvider protocol "
                              "(openclaw_memory.providers.base); subclass BaseEmbeddingProvider or add the missing "
                              "members")
        self.config = MemoryConfig.load(config, **overrides)
        self.workspace = self.config.resolved_workspace()
        _check_workspace(self.workspace, create=create)
        if self.config.multimodal.enabled:
            log.warning("multimodal.enabled: images and audio are not indexed by openclaw-memory (Markdown only); "
                        "OpenClaw's Gemini multimodal index has no counterpart here")
        custom_storage = storage is not None
        if storage is None and self.config.store.url is not None:  # PostgreSQL (the `postgres` extra)
            from openclaw_memory.storage.postgres import PostgresStore

            cfg = self.config.store
            storage = PostgresStore(cfg.url.get_secret_value(), namespace=self.config.resolved_store_namespace(),
                                    schema=cfg.pg_schema, fts_tokenizer=cfg.fts.tokenizer,
                                    fts_note_dates=cfg.fts.note_dates,
                                    vector_enabled=cfg.vector.enabled, memory_cache=cfg.vector.memory_cache,
                                    workspace=str(self.workspace),
                                    hnsw_min_rows=cfg.pg_hnsw_min_rows, exact=cfg.pg_exact_search,
                                    ef_search=cfg.pg_ef_search, pool_size=cfg.pool.max_size,
                                    pool_timeout=cfg.pool.timeout, prepared_statements=cfg.pool.prepared_statements)
        if storage is None:
            cfg = self.config.store
            storage = SQLiteStore(
                _sqlite_path(self.config, self.workspace),
                workspace=str(self.workspace),
                vector_enabled=cfg.vector.enabled,
                extension_path=cfg.vector.extension_path,
                fts_tokenizer=cfg.fts.tokenizer,
                memory_cache=cfg.vector.memory_cache,
                fts_note_dates=cfg.fts.note_dates,
            )
        self.store: MemoryStore = storage
        self._explicit_provider = provider
        self._session_stats = SessionIndexStats()
        # the sync worker, its queue and the sync state (dirty, last report and failure, closed)
        self._scheduler = SyncScheduler(lambda request: self._runner.run(request), self.store, self.config)
        self._close_lock = threading.Lock()  # the first close() releases; a later one waits for ``_released``
        self._closing = False
        self._released = threading.Event()
        # the provider (resolved on first use), its fallback, breaker, query embedder and tiers
        self._access = ProviderAccess(self.config, self.store, provider, cancel=self._scheduler.cancel_event)
        # runs the syncs (recovery, fallback, the tiers' upgrade) and guards the reads
        self._runner = SyncRunner(self.store, self.config, self._access, self._scheduler, self._session_stats,
                                  sync=self.sync, background=watch is not False)
        self._status = StatusReader(self.config, self.workspace, self.store, self._access, self._scheduler,
                                    self._runner, self._session_stats)
        # runs the keyword side of a hybrid search while the query is embedded
        self._search_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="openclaw-memory-search")
        # the watcher, interval timer and other sync triggers; the watcher (sync.watch) starts on
        # the first search, or right away with watch=True
        self._freshness = Freshness(self._scheduler, self.store, self.config,
                                    sync=lambda reason: self.sync(reason=reason), auto_start=watch is None)
        self._watch_arg = watch
        self._custom_storage = custom_storage and not isinstance(storage, SQLiteStore)
        if self.config.backend == "qmd":
            pass  # QMD keeps its own index fresh; the builtin one is built and watched only after a fallback
        elif watch:
            self.start_watching()
        elif watch is False and self.config.sync.interval_minutes > 0:
            self.start_watching(files=False)  # no file watcher, but the configured timer runs
        # ---- backend selection seam (memory.backend) ----
        self._backend: SearchBackend | None = None
        if self.config.backend == "qmd":
            from openclaw_memory.backends import qmd_with_fallback

            self._backend = qmd_with_fallback(self.config, builtin=lambda: BuiltinSearch(
                search=self._search_builtin, get=self._get_builtin, scheduler=self._scheduler,
                provider=lambda: self.provider))
        # ---- end of backend selection seam ----

    # ---- provider -------------------------------------------------------------------------------

    @property
    def provider(self) -> EmbeddingProvider | None:
        """The embedding provider in use (resolved on first use), or None in keyword-only mode."""
        return self._access.ensure()

    @property
    def query_provider(self) -> EmbeddingProvider | None:
        """The provider whose model the live index holds, which embeds queries compared with its vectors:
        :attr:`provider`, or while the bundled model's fast first index is live, its fast tier
        (``local.first_index``, :mod:`openclaw_memory.indexing.two_tier`)."""
        return self._access.tier_provider(self._access.ensure(), query=True)

    # ---- sync -------------------------------------------------------------------------------------

    def upgrade_embeddings(self, progress: Progress | None = None, *, swap: bool = True) -> SyncReport | None:
        """Finish the bundled model's fast first index now (``local.first_index = "fast"``): embed
        every chunk in full (``progress(done, total, "upgrade")`` as chunks are embedded), then sync
        to swap the full index in. Returns that sync's report, or None when there is nothing to
        upgrade (no tiers, or the live index is already full) or with ``swap=False``, which leaves
        the full vectors in the cache for the next sync to swap in. A running background upgrade is
        joined, not repeated."""
        self._check_open()
        self._access.ensure()
        upgrade = self._access.upgrade
        if upgrade is None or not upgrade.run(progress) or not swap:
            return None
        return self.sync(reason="embedding upgrade")

    def sync(self, *, force: bool = False, reason: str = "manual", progress: Progress | None = None,
             lock_timeout: float = 600.0) -> SyncReport:
        """Bring the index up to date (a full atomic rebuild when forced or when settings changed).

        A call while another sync of this index is running waits for it and for one more sync
        that runs after it (which sees what changed while the first one ran); calls made while
        that one is still queued share it. ``force`` always queues its own forced sync. A sync of
        another process is waited for up to ``lock_timeout`` seconds, then IndexLockedError is
        raised (the index stays searchable as it was meanwhile).
        """
        self._check_open()
        _check_flag("force", force, error=MemoryArgumentError)
        _check_sync_arguments(progress, lock_timeout)
        if self._backend is not None:
            return self._backend.sync(force=force, reason=reason)
        self._access.breaker.trial()  # asked for explicitly: try the provider even during the breaker's cool-down
        fut = self._scheduler.submit(force=force, reason=reason, progress=progress, lock_timeout=lock_timeout)
        return fut.result()

    async def async_sync(
        self, *, force: bool = False, reason: str = "manual", progress: Progress | None = None
    ) -> SyncReport:
        """Async twin of :meth:`sync` (runs in the sync worker thread; the event loop is not blocked). Cancelling
        the caller stops its wait, not the sync (other callers and triggers may wait for the same one)."""
        self._check_open()
        _check_flag("force", force, error=MemoryArgumentError)
        _check_sync_arguments(progress)
        if self._backend is not None:
            return await asyncio.to_thread(self.sync, force=force, reason=reason, progress=progress)
        # shielded: a cancelled caller stops waiting, and the sync it may share with others still runs
        return await asyncio.shield(asyncio.wrap_future(self._scheduler.submit(force=force, reason=reason,
                                                                                 progress=progress)))

    def sync_in_background(self, reason: str = "background") -> Future[SyncReport]:
        """Schedule a sync without waiting (joins one that is queued and not started yet; after
        one that is running, another runs). Errors are logged, not raised; IndexClosedError once closed."""
        self._check_open()
        return self._scheduler.sync_in_background(reason)

    @property
    def scheduler(self) -> SyncScheduler:
        """This index's sync scheduler: its worker, queued syncs and sync state (dirty flag, last
        report and failure). :meth:`sync` and the background triggers go through it."""
        return self._scheduler

    @property
    def syncing(self) -> bool:
        """True while a sync is running."""
        return self._scheduler.syncing

    @property
    def dirty(self) -> bool:
        """True when files may have changed since the last sync."""
        return self._scheduler.dirty

    def mark_dirty(self) -> None:
        """Tell the index that files changed (the watcher calls this)."""
        self._scheduler.mark_dirty()

    # ---- watching ----------------------------------------------------------------------------------

    def start_watching(self, *, files: bool = True) -> None:
        """Keep the index fresh in the background until :meth:`close`.

        Starts the file watcher (unless ``files`` is False): changes to the memory files mark the
        index dirty and cause one background sync per burst, after ``sync.watch_debounce_ms`` of
        quiet; with sessions enabled, a transcript that grew past the ``sync.sessions``
        thresholds (or appeared, shrank or vanished) does too. Also starts the
        ``sync.interval_minutes`` timer when set. Idempotent and thread-safe.
        """
        self._freshness.start(files=files)

    @property
    def watching(self) -> bool:
        """True while a file watcher keeps this index fresh."""
        return self._freshness.watching

    def watch_forever(self, on_sync: Callable[[SyncReport], None] | None = None) -> None:
        """Watch in the foreground, syncing after each burst of relevant changes, until Ctrl-C
        (KeyboardInterrupt propagates) or :meth:`close` from another thread.

        ``on_sync`` receives each sync's report. A failing sync is logged and watching goes on.
        A background watcher started earlier is replaced by this one.
        """
        self._freshness.watch_forever(on_sync)

    # ---- sessions -----------------------------------------------------------------------------------

    def transcript_path(self, session_id: str) -> Path:
        """The JSONL transcript file for ``session_id`` in the sessions directory (id made
        filesystem-safe). Append to it with :class:`~openclaw_memory.files.sessions.TranscriptWriter`;
        it is indexed when ``sources`` includes ``"sessions"``."""
        from openclaw_memory.files.sessions import transcript_file_name

        return self.config.resolved_sessions_dir() / transcript_file_name(session_id)

    def after_compaction(
        self, session_id: str | None = None, *, transcript: str | os.PathLike[str] | None = None
    ) -> Future[SyncReport] | None:
        """Index a session's transcript right after its history was compacted (spec §6.1, the
        ``post-compaction`` trigger), so what the compaction summarised away stays searchable.

        Runs only when ``sources`` includes ``"sessions"`` and ``sync.sessions.post_compaction_force``
        is true (the default); otherwise, and with ``compaction.post_index_sync = "off"``, it does
        nothing and returns None without touching the disk. The sync is targeted and forced: it
        re-reads just that transcript, however little it grew since it was last indexed (the
        ``sync.sessions.delta_bytes`` / ``delta_messages`` thresholds are bypassed); memory files
        are not scanned and nothing is pruned. Which transcript:

        * ``transcript``: a path to it (relative paths are taken in the sessions directory; it must
          be a ``*.jsonl`` transcript directly in that directory, else MemoryArgumentError, a ValueError);
        * else ``session_id``: :meth:`transcript_path` of that id;
        * else every transcript whose size or modification time differs from the index.

        ``compaction.post_index_sync`` says when: ``"async"`` (default) schedules it in the
        background and returns its pending Future (failures are logged, not raised);
        ``"await"`` waits for it and returns the finished Future (``.result()`` is its
        :class:`SyncReport`; an indexing failure raises IndexingError). Returns None when nothing
        was scheduled: disabled, or no such transcript file. Targeted syncs requested while one
        is queued are merged into it; one requested while another sync runs starts after it.
        When the index needs a full rebuild anyway (none yet, settings changed) that runs instead.
        """
        return self._freshness.after_compaction(session_id, transcript=transcript)

    async def async_after_compaction(
        self, session_id: str | None = None, *, transcript: str | os.PathLike[str] | None = None
    ) -> Future[SyncReport] | None:
        """Async twin of :meth:`after_compaction` (in ``"await"`` mode the event loop is not
        blocked while the transcript is indexed)."""
        return await self._freshness.async_after_compaction(session_id, transcript=transcript)

    # ---- search -------------------------------------------------------------------------------------

    def has_index(self) -> bool:
        """True when the index holds something to search (another process may be updating it)."""
        self._check_open()
        return not self._read(self.store.is_empty)

    def ensure_fresh(self, *, session_key: str | None = None) -> bool:
        """What every search does first: start the watcher (``sync.watch``) on first use, build an
        empty index (waiting for it), notice hand edits, and schedule a background sync when files
        changed. Returns True when a sync is scheduled or running. Adapters that query the store
        directly call this before they do."""
        return self._freshness.ensure_fresh(session_key=session_key)

    def changed_files(self) -> list[str]:
        """Workspace-relative paths of memory files added, changed or removed since the last sync,
        by size and modification time (a cheap stat, no reads); ``[]`` when the index is up to date.
        Session transcripts are not checked."""
        self._check_open()
        return self._scheduler.changed_files()

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        session_key: str | None = None,
        sources: Sequence[str] | None = None,
        query_vector: Sequence[float] | np.ndarray | None = None,
        mode: SearchMode | None = None,
        vector_weight: float | None = None,
        mmr: bool | float | None = None,
        where: Callable[[SearchHit], bool] | None = None,
        collapse: Callable[[SearchHit], Hashable] | None = None,
        after: str | date | datetime | None = None,
        before: str | date | datetime | None = None,
        now: datetime | date | None = None,
    ) -> SearchResult:
        """Hybrid search over the memory. Never silent: an empty result says why (``empty_reason``).

        With ``backend = "qmd"`` QMD answers; after its first failure this index's builtin search
        does, and ``fallback`` says ``{"from": "qmd", "reason": ...}``.

        The remaining options tune one search (the builtin search answers when any but ``where`` and
        ``collapse`` is given):

        * ``query_vector``: the query's embedding, used instead of embedding ``query`` (it must come
          from this index's provider); with an empty ``query`` the search is plain nearest neighbours.
        * ``mode``: ``"hybrid"`` (vectors and keywords), ``"vector"`` (vectors only; the fast tier's hybrid
          merge while the bundled model's fast first index is live, see :mod:`openclaw_memory.indexing.two_tier`) or
          ``"keyword"`` (no embeddings); default as configured (``query.hybrid.enabled``).
        * ``vector_weight``: the vector side's weight in a hybrid merge (0..1; keywords get the rest).
        * ``mmr``: maximal marginal relevance off (False), on (True) or on with this lambda (0..1);
          default as configured.
        * ``where``: only hits for which it returns True; the search looks further down the ranking
          (up to 200 candidates per side) until ``max_results`` hits pass or nothing is left.
        * ``collapse``: a key per hit (e.g. the document a chunk belongs to); hits with the same key
          count once, and only the best-ranked of them is returned. With ``where`` and ``collapse``
          alone, QMD (``backend = "qmd"``) still answers. Either returns the indexed chunks as found
          (``query.merge_overlapping`` does not apply), as a vector store's query must.

        * ``after`` / ``before``: only notes dated on or after ``after`` and before ``before`` (a date, an ISO date,
          or words such as ``"last week"``, ``"March 2024"`` or ``"3 days ago"``, read relative to ``now``; a period
          stands for its first day); a dated note's day is its name's (``memory/YYYY-MM-DD.md``); undated files
          (``MEMORY.md``, topic notes) always pass. Like ``where``, it returns the chunks as found.
        * ``now``: the reference time of relative dates, in ``after``/``before`` and in the question ("what did
          we decide last week?" lifts last week's notes), a datetime or a date (its midnight); default: the
          current time in the configured ``timezone`` (the zone today's daily note is named in), else the system's.

        Bad values raise MemoryArgumentError (see :func:`~openclaw_memory.index.search_options.check_search_arguments`).
        """
        self._check_open()
        check_search_arguments(query, max_results=max_results, min_score=min_score, sources=sources)
        _check_sources_indexed(sources, self.config)
        if session_key is not None and not isinstance(session_key, str):
            raise MemoryArgumentError(f"session_key must be a string (the conversation's key) or None, got "
                                      f"{type(session_key).__name__} ({session_key!r:.60})")
        now = now_datetime(now) or (local_now(self.config.timezone) if self.config.timezone else None)
        period = day_range(after, before, now=now)
        if period is not None:
            where = _within(period, where)
        tuning = search_tuning(self.config, self._access.ensure, query_vector=query_vector, mode=mode,
                               vector_weight=vector_weight, mmr=mmr, where=where, collapse=collapse)
        if self._backend is not None and (tuning is None or tuning.filter_only):
            backend = self._backend

            def run(n: int | None) -> SearchResult:  # filtered: the chunks as found, should the builtin answer
                return backend.search(query, max_results=n, min_score=min_score, session_key=session_key,
                                      sources=sources, as_found=tuning is not None)

            return record_recalls(self.config, run(max_results) if tuning is None
                                  else filtered(run, tuning, max_results, lambda: None))
        return record_recalls(self.config, self._search_builtin(
            query, max_results=max_results, min_score=min_score, session_key=session_key, sources=sources,
            tuning=tuning, now=now))

    def _search_builtin(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        session_key: str | None = None,
        sources: Sequence[str] | None = None,
        tuning: SearchTuning | None = None,
        as_found: bool = False,
        now: datetime | None = None,
    ) -> SearchResult:
        self._check_open()
        if as_found and tuning is None:  # a filtered search served for the QMD backend
            tuning = as_found_tuning(self.config)
        if (not query or not query.strip()) and (tuning is None or tuning.query_vector is None):
            return SearchResult(query=query, hits=[], mode="keyword", provider="none", model="fts-only",
                                empty_reason="no_match")
        scheduled = self._read(lambda: self.ensure_fresh(session_key=session_key))
        provider = self.query_provider  # after a sync that may have swapped the tiers
        scheduler, sync_error = self._scheduler, self._scheduler.last_error

        def why_empty() -> EmptyReason | None:
            if scheduler.syncing:
                return "stale"
            if sync_error is not None:
                return "sync_failed"
            return "empty_index" if scheduler.is_empty() else None

        state = SearchState(fallback=self._access.fallback, sync_scheduled=scheduled, sync_error=sync_error,
                            why_empty=why_empty)
        return self._read(lambda: self._run_search_pipeline(
            query, provider, max_results=max_results, min_score=min_score, sources=sources,
            session_key=session_key, tuning=tuning, state=state, now=now))

    # ---- what adapters build on: tuned searches, the indexed chunks and files ----------------------

    def _run_search_pipeline(
        self, query: str, provider: EmbeddingProvider | None, *, max_results: int | None, min_score: float | None,
        sources: Sequence[str] | None, session_key: str | None, tuning: SearchTuning | None,
        state: SearchState | None = None, now: datetime | None = None,
    ) -> SearchResult:
        """One builtin search: the configured one, or a tuned one (see :meth:`search`) that looks
        further down the ranking until enough hits pass ``where`` and ``collapse``."""
        from openclaw_memory.retrieval.pipeline import run_search

        config = self._access.search_config(provider, tuning.settings if tuning is not None else None)
        reason, qv = self._access.keyword_only_reason, None
        if tuning is not None:
            qv = tuning.query_vector
            if tuning.keyword_only:
                provider, reason = None, "keyword mode requested"

        def run(n: int | None) -> SearchResult:
            return run_search(
                self.store, config, query, provider=provider, max_results=n, min_score=min_score,
                sources=sources, session_key=session_key, keyword_only_reason=reason, workspace=self.workspace,
                query_embedder=self._access.query_embedder(provider), executor=self._search_pool, query_vector=qv,
                state=state, now=now,
            )

        if tuning is None or (tuning.where is None and tuning.collapse is None):
            return run(max_results)
        return filtered(run, tuning, max_results, lambda: sum(v.get("chunks", 0) for v in self.store.counts().values()))

    def iter_chunks(self, source: str | None = None) -> Iterator[StoredChunk]:
        """Every indexed chunk (only ``source``'s, ``"memory"`` or ``"sessions"``, when given) with its
        text, location and vector, in index order. Reads the index as it is (no sync)."""
        self._check_open()
        _check_source(source)
        yield from self.store.iter_chunks(source)

    def indexed_files(self, source: str | None = None) -> list[str]:
        """Workspace-relative paths of the indexed files (only ``source``'s when given), sorted.
        Reads the index as it is (no sync)."""
        self._check_open()
        _check_source(source)
        return sorted(self._read(lambda: self.store.file_records(source)))

    # ---- end of what adapters build on ------------------------------------------------------------

    def evaluate(
        self,
        questions: str | Path | Sequence[EvalQuestion],
        *,
        ks: Sequence[int] = (1, 3, 6, 10),
        modes: Sequence[str] = ("hybrid",),
        min_score: float = 0.0,
        sync: bool = True,
    ) -> dict[str, ModeReport]:
        """Recall@k, hit@k, MRR and lines@k of this memory on labelled questions.

        ``questions`` is a JSON Lines file or a list of :class:`~openclaw_memory.retrieval.evaluation.EvalQuestion`
        (format and metrics: :mod:`openclaw_memory.retrieval.evaluation`). ``modes`` picks the configurations
        compared on the same index: ``"hybrid"`` (this index's search as configured), ``"keyword"``
        (no embeddings) and ``"vector"`` (embeddings only). ``min_score`` defaults to 0 so that each
        search returns k results. Returns ``{mode: ModeReport}``; the index is synced first unless
        ``sync=False``.
        """
        self._check_open()
        qs = evaluation.load_questions(questions) if isinstance(questions, (str, Path)) else list(questions)
        unknown = [m for m in modes if m not in ("hybrid", "keyword", "vector")]
        if unknown or not modes:
            raise ConfigError(f"unknown evaluation mode(s) {unknown}: use hybrid, keyword or vector")
        if sync:
            self.sync()
        return evaluate_modes(qs, store=self.store, config=self.config, workspace=self.workspace, access=self._access,
                              ks=ks, modes=modes, min_score=min_score)

    async def asearch(self, query: str, **kwargs: Any) -> SearchResult:
        """Async twin of :meth:`search`."""
        return await asyncio.to_thread(self.search, query, **kwargs)

    # ---- get ------------------------------------------------------------------------------------------

    def get(self, path: str | os.PathLike[str], from_line: int | None = None, lines: int | None = None) -> MemoryText:
        """Read lines of a memory file (MEMORY.md, memory.md, memory/**/*.md or an extra path).

        Raises MemoryPathError for anything else. A missing allowed file returns empty text with
        ``exists=False`` (what OpenClaw's ``memory_get`` tool answers; the CLI makes it an error).
        """
        self._check_open()
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if self._backend is not None:  # QMD paths (``qmd/<collection>/…``) are read by the backend
            return self._backend.get(path, from_line, lines)
        return self._get_builtin(path, from_line, lines)

    def _get_builtin(self, path: str, from_line: int | None, lines: int | None) -> MemoryText:
        rel, text, start, end, exists = discovery.get_lines(self.workspace, self.config.resolved_extra_paths(),
                                                            path, from_line, lines)
        return MemoryText(path=rel, text=text, start_line=start, end_line=end, exists=exists)

    async def aget(self, path: str, from_line: int | None = None, lines: int | None = None) -> MemoryText:
        """Async twin of :meth:`get`."""
        return await asyncio.to_thread(self.get, path, from_line, lines)

    # ---- status ---------------------------------------------------------------------------------------

    def status(self, *, deep: bool = False) -> IndexStatus:
        """Counts, provider, search mode, vector/FTS paths and anything degraded (``deep`` probes the provider).

        With ``backend = "qmd"``: ``backend_info`` has QMD's version, collections, last update and
        vector availability, or after a fallback ``{"disabled": true, "reason": ...}``.
        """
        st = self._status_builtin(deep)
        if self._backend is None:
            return st
        bs = self._backend.status()
        return replace(st, backend=bs.backend, provider=bs.provider, model=bs.model, search_mode=bs.search_mode,
                       files=st.files if bs.files is None else bs.files,
                       chunks=st.chunks if bs.chunks is None else bs.chunks,
                       source_counts=st.source_counts if bs.backend == "builtin" else {},  # the builtin index's
                       fallback=bs.fallback or st.fallback, backend_info=bs.details,
                       keyword_only_reason=st.keyword_only_reason if bs.backend == "builtin" else None)

    def _status_builtin(self, deep: bool) -> IndexStatus:
        self._check_open()
        return self._while_open(lambda: self._status.status(deep))

    # ---- lifecycle ------------------------------------------------------------------------------------

    def _check_open(self) -> None:
        self._scheduler.check_open()

    def _read(self, call: Callable[[], _T]) -> _T:
        """``call()``, a read of the store, through the runner's damage recovery and :meth:`_while_open`."""
        return self._while_open(lambda: self._runner.guarded(call))

    def _while_open(self, call: Callable[[], _T]) -> _T:
        """``call()``; when :meth:`close` ran meanwhile (from another thread), what failed because of it (the store,
        the search threads gone) is IndexClosedError, as a call made after closing gets."""
        try:
            return call()
        except IndexClosedError:
            raise
        except Exception as exc:
            if not self._scheduler.closed:
                raise
            raise IndexClosedError("this MemoryIndex was closed while the call ran; create a new one") from exc

    def close(self) -> None:
        """Stop the watcher and timers, stop a running sync at its next file or in its wait for another process's
        sync (a rebuild in progress is discarded; the index stays as it was), and close the store and the provider
        the index created (one passed in is left open for its owner). A second call does nothing. Called from a
        sync's ``progress`` callback, it returns at once and finishes once that sync has stopped (it raises
        SyncCancelled). A call while another thread closes the index returns once it is closed (from the sync's
        progress callback: at once)."""
        with self._close_lock:
            first, self._closing = not self._closing, True
        if not first:
            if not self._scheduler.in_worker():  # that sync's own callback would wait for itself
                self._released.wait()
            return
        self._scheduler.cancel()  # closed: a running sync stops at its next file
        if self._scheduler.in_worker():  # from that sync's own progress callback: the rest waits for it to stop
            threading.Thread(target=self._release, name="openclaw-memory-close", daemon=True).start()
            return
        self._release()

    def _release(self) -> None:
        """The rest of :meth:`close`: stop the triggers, wait for the running sync and the upgrade, close the store
        and the provider the index created; then let any other close() return."""
        try:
            self._release_parts()
        finally:
            self._released.set()

    def _release_parts(self) -> None:
        if self._backend is not None:
            self._backend.close()
        self._freshness.stop()
        self._scheduler.shutdown()
        self._search_pool.shutdown(wait=True)
        self._runner.join_upgrade()  # it stops after the model call in progress (a few chunks)
        self.store.close()
        self._access.close()

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MemoryIndex:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Async twin of :meth:`close` (in a worker thread: waiting for a running sync to stop does not block the
        event loop)."""
        await asyncio.to_thread(self.close)

    def __repr__(self) -> str:
        return f"MemoryIndex(workspace={str(self.workspace)!r}, agent_id={self.config.agent_id!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle the configuration (and an explicitly given provider), not the open index: the
        unpickled copy opens the same files and store anew (the index is derived data), so
        objects holding a MemoryIndex (retrievers, tools) can be pickled. The copy is a new
        index that its holder closes."""
        if self._custom_storage:
            raise TypeError("a MemoryIndex with a custom storage backend cannot be pickled; pickle its config instead")
        return (_reopen, (self.config, self._explicit_provider, self._watch_arg))


def check_memory_index(memory: object, *, config: bool = False) -> None:
    """MemoryArgumentTypeError when ``memory`` is not a :class:`MemoryIndex` (nor, with ``config``, a
    :class:`~openclaw_memory.config.MemoryConfig`): the check every adapter entry point makes at once, before a
    framework's validation would wrap it."""
    if isinstance(memory, MemoryIndex) or (config and isinstance(memory, MemoryConfig)):
        return
    wanted = "an openclaw_memory.MemoryIndex" + (" or MemoryConfig" if config else "")
    raise MemoryArgumentTypeError(f"memory must be {wanted}, not {type(memory).__name__} (open one with "
                                  "MemoryIndex(workspace=...))")


def _check_sources_indexed(sources: Sequence[str] | None, config: MemoryConfig) -> None:
    """MemoryArgumentError when ``sources`` names only sources this index does not hold (``sessions`` while the
    configuration's ``sources`` leaves transcripts out, and QMD does not index exported ones): that search could only
    ever come back empty."""
    held = indexed_sources(config)
    if sources is None or not sources or any(source in held for source in sources):
        return
    raise MemoryArgumentError(f"sources={list(sources)!r}: this index holds only {config.sources!r}; add 'sessions' "
                              "to the configuration's sources to index session transcripts")


def _within(period: DayRange, where: Callable[[SearchHit], bool] | None) -> Callable[[SearchHit], bool]:
    """``where`` narrowed to the hits whose note lies in ``period`` (undated notes always do)."""
    return lambda hit: period.holds_note(hit.path) and (where is None or where(hit))


def _check_flag(name: str, value: object, *, optional: bool = False,
                error: type[ConfigError | MemoryArgumentError] = ConfigError) -> None:
    """``error`` unless ``value`` is True or False (or None when ``optional``): ``create="no"`` is no flag."""
    if isinstance(value, bool) or (optional and value is None):
        return
    allowed = "True, False or None" if optional else "True or False"
    raise error(f"{name} must be {allowed}, not {type(value).__name__} ({value!r:.60})")


def _check_sync_arguments(progress: object, lock_timeout: object = 0.0) -> None:
    """MemoryArgumentError for a ``progress`` that is not callable (or None) or a ``lock_timeout`` that is not a number
    of seconds >= 0: found in the sync worker, either failed the sync and showed as every search's ``sync_error``."""
    if progress is not None and not callable(progress):
        raise MemoryArgumentError(f"progress must be a function progress(done, total, label) or None, not "
                                  f"{type(progress).__name__} ({progress!r:.60})")
    if isinstance(lock_timeout, bool) or not isinstance(lock_timeout, (int, float)) or not lock_timeout >= 0:
        raise MemoryArgumentError(f"lock_timeout must be a number of seconds >= 0 (how long to wait for another "
                                  f"process's sync), not {lock_timeout!r:.60}")


def _check_source(source: object) -> None:
    """MemoryArgumentError unless ``source`` is None, ``"memory"`` or ``"sessions"`` (a typo would list nothing)."""
    if source is not None and source not in SEARCH_SOURCES:
        raise MemoryArgumentError(f"source must be {' or '.join(map(repr, SEARCH_SOURCES))} (None for both), "
                                  f"got {source!r:.60}")


def _check_workspace(workspace: Path, *, create: bool) -> None:
    """Refuse a workspace that is not an existing folder (ConfigError), or create it with ``create``."""
    if workspace.is_dir():
        return
    if workspace.exists():
        raise ConfigError(f"workspace: {workspace} is not a folder; point workspace (-w) at the folder holding "
                          "MEMORY.md and memory/")
    if not create:
        raise ConfigError(f"workspace: {workspace} does not exist; check the path (-w), or pass create=True "
                          "(CLI: --create) to start an empty memory there")
    try:
        workspace.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"workspace: {workspace} cannot be created ({exc})") from exc


def _sqlite_path(config: MemoryConfig, workspace: Path) -> Path:
    """The index file: ``store.path`` when set, else the workspace's own default file, or the shared
    default file of earlier versions while it holds this workspace's index (or no workspace's yet)."""
    path = config.resolved_store_path()
    if path.is_dir():  # the store's own error would say to delete it
        raise ConfigError(f"store.path: {path} is a folder; give the index file's path, e.g. "
                          f"{path / (config.agent_id + '.sqlite')}")
    if config.store.path or path.exists():
        return path
    legacy = config.legacy_store_path()
    if legacy.is_file() and recorded_workspace(legacy) in (None, str(workspace)):
        return legacy
    return path


def _reopen(config: MemoryConfig, provider: Any, watch: bool | None) -> MemoryIndex:
    """Unpickle a :class:`MemoryIndex` (see ``MemoryIndex.__reduce__``); a given provider was unpickled with it, so
    this index holds the only reference to that copy and closes it."""
    index = MemoryIndex(config, provider=provider, watch=watch)
    index._access.owns_explicit = True
    return index
