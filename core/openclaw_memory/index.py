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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from openclaw_memory import discovery, evaluation
from openclaw_memory.append import register_append_lock
from openclaw_memory.backends.base import BackendStatus, SearchBackend
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import (
    ConfigError,
    IndexingError,
    IndexLockedError,
    MemoryArgumentError,
    OpenClawMemoryError,
    ProviderError,
)
from openclaw_memory.evaluation import EvalQuestion, ModeReport
from openclaw_memory.freshness import Freshness
from openclaw_memory.progress import SyncProgress
from openclaw_memory.providers.base import EmbeddingProvider
from openclaw_memory.providers.breaker import CircuitBreaker
from openclaw_memory.scheduler import SyncRequest, SyncScheduler
from openclaw_memory.sqlite.store import SQLiteStore
from openclaw_memory.storage import MemoryStore, StoredChunk
from openclaw_memory.sync import Progress, SessionIndexStats, SyncPlan, run_sync, workspace_issues
from openclaw_memory.types import (
    EmptyReason,
    FallbackInfo,
    MemoryText,
    SearchHit,
    SearchMode,
    SearchResult,
    SearchState,
    SyncReport,
)

if TYPE_CHECKING:
    from openclaw_memory.providers.batch import BatchState

if TYPE_CHECKING:
    from openclaw_memory.tiering import EmbeddingUpgrade

__all__ = ["IndexStatus", "MemoryIndex"]

log = logging.getLogger(__name__)

class _Auto:
    """The "provider from the configuration" default (a singleton that survives pickling)."""

    def __reduce__(self) -> str:
        return "_AUTO"

    def __repr__(self) -> str:
        return "<configured provider>"


_AUTO: Any = _Auto()
_T = TypeVar("_T")
# how long a read (search, status) that must rebuild a damaged index waits for another process's sync
_READ_PATH_LOCK_TIMEOUT_S = 0.5


@dataclass
class IndexStatus:
    """What ``status()`` reports: counts, provider, search mode, store paths and degradations."""

    agent_id: str
    workspace: str
    store_path: str
    backend: str
    files: int
    chunks: int
    source_counts: dict[str, dict[str, int]]
    dirty: bool
    sources: list[str]
    extra_paths: list[str]
    provider: str
    model: str
    requested_provider: str
    search_mode: str  # "hybrid" | "keyword"
    keyword_only_reason: str | None
    fallback: dict[str, str] | None
    key_source: str | None
    driver: str
    sqlite_version: str
    fts: dict[str, Any]
    vector: dict[str, Any]
    cache: dict[str, Any]
    batch: dict[str, Any] | None
    issues: list[str]
    last_sync: dict[str, Any] | None
    embedding_probe: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    sessions: dict[str, Any] | None = None  # transcripts: dir, thresholds, malformed lines (when enabled)
    backend_info: dict[str, Any] | None = None  # memory.backend = "qmd": version, collections, vectors, …
    #: server backends (PostgreSQL): server_version, pgvector_version, namespace, size_bytes
    server: dict[str, Any] | None = None
    #: the provider's circuit breaker: open, consecutive_failures, threshold, cooldown_s, last_error
    provider_breaker: dict[str, Any] | None = None
    #: ``deep`` only: quick_check, chunk/keyword/vector row counts, orphan rows and ``problems``
    integrity: dict[str, Any] | None = None
    # while a sync runs in this process: files done/total, chunks embedded so far, ETA (SyncProgress.snapshot)
    indexing: dict[str, Any] | None = None
    #: the bundled model's two tiers (local.first_index = "fast"): live tier, upgrade state and progress
    #: (EmbeddingUpgrade.snapshot); None without tiers
    embedding_upgrade: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class MemoryIndex:
    """Index and search one agent's Markdown memory.

    ``config`` is a :class:`MemoryConfig`, a dict (snake_case or camelCase) or None; keyword
    arguments override it (``MemoryIndex(workspace="~/notes", provider="openai")``).
    ``provider`` is a provider name (``"openai"``, ``"local"``, …, as in the config), an
    :class:`EmbeddingProvider` instance, or None for keyword-only; an instance or None
    which takes precedence over the configured one; ``storage`` replaces the SQLite store with
    another :class:`~openclaw_memory.storage.MemoryStore` backend. With ``sync.watch`` (default on) a file
    watcher starts on the first search; ``watch=True`` starts it now, ``watch=False`` never (the
    ``sync.interval_minutes`` timer, when set, then starts right away on its own).
    Thread-safe; close it (or use ``with``).
    """

    def __init__(
        self,
        config: MemoryConfig | dict[str, Any] | None = None,
        *,
        provider: EmbeddingProvider | str | None = _AUTO,
        storage: MemoryStore | None = None,
        watch: bool | None = None,
        **overrides: Any,
    ) -> None:
        if isinstance(provider, str):  # MemoryIndex(provider="openai") is the config key
            overrides["provider"], provider = provider, _AUTO
        if provider is not _AUTO and provider is not None and not isinstance(provider, EmbeddingProvider):
            raise ConfigError(f"provider: {type(provider).__name__} does not implement the EmbeddingProvider protocol "
                              "(openclaw_memory.providers.base); subclass BaseEmbeddingProvider or add the missing "
                              "members")
        self.config = MemoryConfig.load(config, **overrides)
        self.workspace = self.config.resolved_workspace()
        custom_storage = storage is not None
        self._release_appends: Callable[[], None] | None = None
        if storage is None and self.config.store.url is not None:  # PostgreSQL (the `postgres` extra)
            from openclaw_memory.postgres import PostgresStore

            cfg = self.config.store
            storage = PostgresStore(cfg.url.get_secret_value(), namespace=self.config.resolved_store_namespace(),
                                    schema=cfg.pg_schema, fts_tokenizer=cfg.fts.tokenizer,
                                    fts_note_dates=cfg.fts.note_dates,
                                    vector_enabled=cfg.vector.enabled, workspace=str(self.workspace),
                                    hnsw_min_rows=cfg.pg_hnsw_min_rows, exact=cfg.pg_exact_search,
                                    ef_search=cfg.pg_ef_search)
            # appends into this workspace (flush, daily notes, adapters) serialise through the database
            self._release_appends = register_append_lock(self.workspace, storage.append_lock)
        if storage is None:
            cfg = self.config.store
            storage = SQLiteStore(
                self.config.resolved_store_path(),
                vector_enabled=cfg.vector.enabled,
                extension_path=cfg.vector.extension_path,
                fts_tokenizer=cfg.fts.tokenizer,
                memory_cache=cfg.vector.memory_cache,
                fts_note_dates=cfg.fts.note_dates,
            )
        self.store: MemoryStore = storage
        self._explicit_provider = provider
        self._provider: EmbeddingProvider | None = None
        self._provider_ready = False
        self._requested = self.config.provider if provider is _AUTO else (provider.id if provider else "none")
        self._fallback: FallbackInfo | None = None
        self._keyword_only_reason: str | None = None
        self._key_source: str | None = None
        self._provider_lock = threading.Lock()
        # the sync worker, its queue and the sync state (dirty, last report and failure, closed)
        self._scheduler = SyncScheduler(self._run_sync, self.store, self.config)
        # runs the keyword side of a hybrid search while the query is embedded
        self._search_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="openclaw-memory-search")
        self._embed_state: BatchState | None = None
        self._query_cache: Any = None
        self._live: SyncProgress | None = None  # the running sync's counters, for status()
        self._upgrade: EmbeddingUpgrade | None = None  # the bundled model's fast first index and its upgrade
        self._upgrade_thread: threading.Thread | None = None
        # the watcher, interval timer and other sync triggers; the watcher (sync.watch) starts on
        # the first search, or right away with watch=True
        self._freshness = Freshness(self._scheduler, self.store, self.config,
                                    sync=lambda reason: self.sync(reason=reason), auto_start=watch is None)
        self._watch_arg = watch
        self._custom_storage = custom_storage and not isinstance(storage, SQLiteStore)
        self._session_stats = SessionIndexStats()
        limits = self.config.provider_limits
        self._breaker = CircuitBreaker(limits.breaker_failures, limits.breaker_cooldown_seconds)
        # query embeddings running at once, counting ones a search stopped waiting for
        self._query_slots = threading.BoundedSemaphore(2)
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

            self._backend = qmd_with_fallback(self.config, builtin=lambda: _BuiltinSearch(self))
        # ---- end of backend selection seam ----

    # ---- provider -------------------------------------------------------------------------------

    def _ensure_provider(self) -> EmbeddingProvider | None:
        if self._provider_ready:
            return self._provider
        with self._provider_lock:
            if self._provider_ready:
                return self._provider
            if self._explicit_provider is not _AUTO:
                self._provider = self._explicit_provider
                if self._provider is None:
                    self._keyword_only_reason = "no embedding provider given (keyword-only mode)"
            else:
                from openclaw_memory.providers.registry import resolve_provider

                res = resolve_provider(self.config)
                self._provider = res.provider
                self._fallback = res.fallback
                self._keyword_only_reason = res.unavailable_reason if res.provider is None else None
                self._key_source = res.key_source
                from openclaw_memory.tiering import first_index_upgrade

                self._upgrade = first_index_upgrade(self.config, res.provider, self.store, cancel=self._scheduler.cancel_event)
            self._provider_ready = True
            return self._provider

    @property
    def provider(self) -> EmbeddingProvider | None:
        """The embedding provider in use (resolved on first use), or None in keyword-only mode."""
        return self._ensure_provider()

    @property
    def query_provider(self) -> EmbeddingProvider | None:
        """The provider whose model the live index holds, which embeds queries compared with its vectors:
        :attr:`provider`, or while the bundled model's fast first index is live, its fast tier
        (``local.first_index``, :mod:`openclaw_memory.tiering`)."""
        return self._tier_provider(self._ensure_provider(), query=True)

    def _query_embedder(self, provider: EmbeddingProvider | None) -> Any:
        """Query embeddings through an LRU cache, so a repeated query costs no model call."""
        if provider is None:
            return None
        if self._upgrade is not None and provider is self._upgrade.fast:
            provider = self._upgrade.full  # the fast tier's queries are the full model's: one cache for both tiers
        from openclaw_memory.providers.batching import CachedQueryEmbedder

        from openclaw_memory.providers._util import call_with_timeout

        cached = self._query_cache
        if cached is None or cached.provider is not provider:
            cached = self._query_cache = CachedQueryEmbedder(provider, guard=False)  # embed() below bounds each call
        limits = self.config.provider_limits
        breaker, slots, embed_query, lookup = self._breaker, self._query_slots, cached.embed_query, cached.lookup

        def embed(text: str) -> np.ndarray:
            text = text[: limits.query_max_chars]  # the keyword side searches the whole query
            hit = lookup(text)
            if hit is not None:
                return hit
            if not breaker.allow():
                raise ProviderError(breaker.reason())
            try:
                vec = call_with_timeout(lambda: embed_query(text), limits.query_timeout_seconds,
                                        what="query embedding", slots=slots)
            except Exception as exc:
                breaker.record_failure(exc)
                raise
            breaker.record_success()
            return vec

        return embed

    def _embed_documents(self, provider: EmbeddingProvider, texts: list[str]) -> list[np.ndarray]:
        from openclaw_memory.providers.batch import embed_for_index
        from openclaw_memory.providers.batching import RetryPolicy

        if not self._breaker.allow():
            raise ProviderError(self._breaker.reason())
        limits = self.config.provider_limits
        retry = RetryPolicy(retries=limits.retries, max_retry_after=limits.max_retry_after_seconds)
        try:
            vectors = embed_for_index(provider, texts, self.config, self._batch_state(), retry=retry)
        except Exception as exc:
            self._breaker.record_failure(exc)
            raise
        self._breaker.record_success()
        live = self._live
        if live is not None:
            live.add_embedded(len(vectors))
        return vectors

    def _batch_state(self) -> BatchState:
        if self._embed_state is None:
            from openclaw_memory.providers.batch import BatchState

            self._embed_state = BatchState.from_config(self.config)
        return self._embed_state

    def _tier_provider(self, provider: EmbeddingProvider | None, *, query: bool) -> EmbeddingProvider | None:
        """With the bundled model's two tiers: the provider a sync writes with, or (``query``) the one
        whose model the live index names; ``provider`` itself otherwise (or after a fallback)."""
        upgrade = self._upgrade
        if upgrade is None or provider is not upgrade.full:
            return provider
        return upgrade.query_provider() if query else upgrade.sync_provider()

    def _search_config(self, provider: EmbeddingProvider | None) -> MemoryConfig:
        """The settings a search with ``provider`` runs with (the fast tier has its own vector weight)."""
        return self._upgrade.search_config(provider, self.config) if self._upgrade is not None else self.config

    def _plan(self) -> SyncPlan:
        provider = self._tier_provider(self._ensure_provider(), query=False)
        return SyncPlan(
            config=self.config,
            provider=provider,
            embed=self._embed_documents,
            fts_tokenizer_id=self.store.fts_tokenizer_id,
            session_stats=self._session_stats,
            cancel=self._scheduler.cancel_event,
            cache_floor=self._upgrade.cache_floor() if self._upgrade is not None else 0,
            # the fast tier embeds heads to be quick: its line units would cost more than its chunks
            line_units=self._upgrade is None or provider is not self._upgrade.fast,
        )

    # ---- sync -------------------------------------------------------------------------------------

    def _run_sync(self, request: SyncRequest) -> SyncReport:
        """Run one sync for the scheduler (in its worker thread): a damaged index is set aside and
        rebuilt, an embedding failure switches to the fallback provider (once); both keep the
        request's lock_timeout."""
        reason, lock_timeout = request.reason, request.lock_timeout
        self._live = SyncProgress(reason)
        caller_progress = request.progress

        def tracked(done: int, total: int, label: str) -> None:
            if (live := self._live) is not None:
                live.files(done, total)
            if caller_progress is not None:
                caller_progress(done, total, label)

        try:
            try:
                report = run_sync(self.store, self._plan(), force=request.force, reason=reason, progress=tracked,
                                  session_files=request.session_files, lock_timeout=lock_timeout)
            except Exception as exc:
                if self._recover_from_damage(exc) is None:
                    raise
                self._live = SyncProgress(f"{reason} (damaged index rebuilt)")
                report = run_sync(self.store, self._plan(), force=True, reason=f"{reason} (damaged index rebuilt)",
                                  progress=tracked, lock_timeout=lock_timeout)
        except IndexingError as exc:
            if not self._activate_fallback(exc):
                raise
            self._live = SyncProgress(f"{reason} (fallback)")
            report = run_sync(self.store, self._plan(), force=True, reason=f"{reason} (fallback)",
                              progress=tracked, lock_timeout=lock_timeout)
        finally:
            self._live = None
        self._start_upgrade()
        return report

    def _start_upgrade(self) -> None:
        """After a sync that left fast vectors live: embed the full vectors in a background thread,
        then sync once more to swap them in. Only for an index that runs in the background anyway
        (not ``watch=False``, which :meth:`upgrade_embeddings` serves)."""
        upgrade = self._upgrade
        if upgrade is None or self._watch_arg is False or self._scheduler.closed:
            return
        with self._provider_lock:
            if self._upgrade_thread is not None and self._upgrade_thread.is_alive():
                return
            if not upgrade.needs_upgrade():
                return

            def work() -> None:
                try:
                    if upgrade.run() and not self._scheduler.closed:
                        self.sync_in_background("embedding upgrade")
                except Exception as exc:  # recorded in status()["embedding_upgrade"]["error"]
                    log.log(logging.DEBUG if self._scheduler.closed else logging.WARNING, "embedding upgrade failed: %s", exc)

            self._upgrade_thread = threading.Thread(target=work, name="openclaw-memory-upgrade", daemon=True)
            self._upgrade_thread.start()

    def upgrade_embeddings(self, progress: Progress | None = None, *, swap: bool = True) -> SyncReport | None:
        """Finish the bundled model's fast first index now (``local.first_index = "fast"``): embed
        every chunk in full (``progress(done, total, "upgrade")`` as chunks are embedded), then sync
        to swap the full index in. Returns that sync's report, or None when there is nothing to
        upgrade (no tiers, or the live index is already full) or with ``swap=False``, which leaves
        the full vectors in the cache for the next sync to swap in. A running background upgrade is
        joined, not repeated."""
        self._check_open()
        self._ensure_provider()
        upgrade = self._upgrade
        if upgrade is None or not upgrade.run(progress) or not swap:
            return None
        return self.sync(reason="embedding upgrade")

    def _recover_from_damage(self, exc: BaseException) -> str | None:
        """When ``exc`` (or the driver error behind it) says the index file is damaged, let the store
        set it aside and start empty; return what was done (None: not damage)."""
        cause = exc.__cause__ if isinstance(exc, OpenClawMemoryError) else exc
        if cause is None:
            return None
        note = self.store.recover_from_damage(cause)
        if note is not None:
            self._scheduler.mark_dirty()
        return note

    def _guarded(self, fn: Callable[[], _T]) -> _T:
        """Run a read of the store; a damaged index file is set aside, rebuilt from the Markdown and
        the read retried once; any other error propagates (the store's own are StoreError)."""
        try:
            return fn()
        except Exception as exc:
            if self._recover_from_damage(exc) is None:
                raise  # the store raises StoreError for its own failures
        try:  # a search or status must not wait behind another process's sync: its rebuild serves
            self.sync(force=True, reason="damaged index", lock_timeout=_READ_PATH_LOCK_TIMEOUT_S)
        except (IndexingError, IndexLockedError) as exc:
            log.warning("rebuilding the damaged index failed: %s", exc)
        return fn()


    def _activate_fallback(self, exc: Exception) -> bool:
        """Switch to the configured fallback provider after an embedding failure (one hop)."""
        if self._explicit_provider is not _AUTO or self._fallback is not None:
            return False
        if self.config.fallback in ("none", self.config.provider) or not isinstance(exc.__cause__, ProviderError):
            return False
        from openclaw_memory.providers.registry import create_fallback

        primary = self._provider.id if self._provider else self.config.provider
        try:
            fb = create_fallback(self.config, exc.__cause__, primary=primary)
        except Exception as fb_exc:
            log.warning("fallback provider %s failed to start: %s", self.config.fallback, fb_exc)
            return False
        with self._provider_lock:
            self._provider = fb
            self._fallback = FallbackInfo(from_provider=primary, reason=str(exc.__cause__))
        self._breaker.reset()  # the primary's failures say nothing about the fallback
        log.warning("embedding provider %s failed (%s); switched to fallback %s", primary, exc.__cause__, fb.id)
        return True

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
        if self._backend is not None:
            return self._backend.sync(force=force, reason=reason)
        self._breaker.trial()  # asked for explicitly: try the provider even during the breaker's cool-down
        fut = self._scheduler.submit(force=force, reason=reason, progress=progress, lock_timeout=lock_timeout)
        return fut.result()

    async def async_sync(
        self, *, force: bool = False, reason: str = "manual", progress: Progress | None = None
    ) -> SyncReport:
        """Async twin of :meth:`sync` (runs in the sync worker thread; the event loop is not blocked)."""
        self._check_open()
        if self._backend is not None:
            return await asyncio.to_thread(self.sync, force=force, reason=reason, progress=progress)
        return await asyncio.wrap_future(self._scheduler.submit(force=force, reason=reason, progress=progress))

    def sync_in_background(self, reason: str = "background") -> Future[SyncReport]:
        """Schedule a sync without waiting (joins one that is queued and not started yet; after
        one that is running, another runs). Errors are logged, not raised."""
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
        filesystem-safe). Append to it with :class:`~openclaw_memory.sessions.TranscriptWriter`;
        it is indexed when ``sources`` includes ``"sessions"``."""
        from openclaw_memory.sessions import transcript_file_name

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
          be a ``*.jsonl`` transcript directly in that directory, else ValueError);
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

    def _sessions_status(self, deep: bool, notes: list[str]) -> dict[str, Any] | None:
        """Transcript details for :meth:`status` (None when sessions are off); ``deep`` re-reads
        every transcript to count malformed lines, otherwise counts come from this index's syncs."""
        if not self.config.sessions_enabled():
            return None
        from openclaw_memory.sessions import extract_session, list_session_files, session_rel_path

        directory = self.config.resolved_sessions_dir()
        if deep:
            counts: dict[str, int] = {}
            for path in list_session_files(directory):
                try:
                    counts[session_rel_path(path)] = extract_session(path).malformed_lines
                except OSError:
                    continue
            self._session_stats.reset(counts)
        malformed = self._session_stats.malformed()
        total = sum(malformed.values())
        if total:
            names = ", ".join(f"{p} ({n})" for p, n in malformed.items())
            notes.append(f"sessions: skipped {total} malformed JSON line(s): {names}")
        limits = self.config.sync.sessions
        return {
            "dir": str(directory),
            "dir_exists": directory.is_dir(),
            "delta_bytes": limits.delta_bytes,
            "delta_messages": limits.delta_messages,
            "malformed_lines": malformed,
            "malformed_total": total,
        }

    # ---- search -------------------------------------------------------------------------------------

    def has_index(self) -> bool:
        """True when the index holds something to search (another process may be updating it)."""
        self._check_open()
        return not self._guarded(self.store.is_empty)

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
    ) -> SearchResult:
        """Hybrid search over the memory. Never silent: an empty result says why (``empty_reason``).

        With ``backend = "qmd"`` QMD answers; after its first failure this index's builtin search
        does, and ``fallback`` says ``{"from": "qmd", "reason": ...}``.

        The remaining options tune one search (the builtin search answers when any but ``where`` and
        ``collapse`` is given):

        * ``query_vector``: the query's embedding, used instead of embedding ``query`` (it must come
          from this index's provider); with an empty ``query`` the search is plain nearest neighbours.
        * ``mode``: ``"hybrid"`` (vectors and keywords), ``"vector"`` (vectors only) or ``"keyword"``
          (no embeddings); default as configured (``query.hybrid.enabled``).
        * ``vector_weight``: the vector side's weight in a hybrid merge (0..1; keywords get the rest).
        * ``mmr``: maximal marginal relevance off (False), on (True) or on with this lambda (0..1);
          default as configured.
        * ``where``: only hits for which it returns True; the search looks further down the ranking
          (up to 200 candidates per side) until ``max_results`` hits pass or nothing is left.
        * ``collapse``: a key per hit (e.g. the document a chunk belongs to); hits with the same key
          count once, and only the best-ranked of them is returned. With ``where`` and ``collapse``
          alone, QMD (``backend = "qmd"``) still answers.

        Bad values raise MemoryArgumentError.
        """
        self._check_open()
        tuning = self._search_tuning(query_vector=query_vector, mode=mode, vector_weight=vector_weight, mmr=mmr,
                                     where=where, collapse=collapse)
        if self._backend is not None and (tuning is None or tuning.filter_only):
            backend = self._backend

            def run(n: int | None) -> SearchResult:
                return backend.search(query, max_results=n, min_score=min_score, session_key=session_key,
                                      sources=sources)

            return run(max_results) if tuning is None else self._filtered(run, tuning, max_results, lambda: None)
        return self._search_builtin(query, max_results=max_results, min_score=min_score,
                                    session_key=session_key, sources=sources, tuning=tuning)

    def _search_builtin(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        session_key: str | None = None,
        sources: Sequence[str] | None = None,
        tuning: _SearchTuning | None = None,
    ) -> SearchResult:
        self._check_open()
        if (not query or not query.strip()) and (tuning is None or tuning.query_vector is None):
            return SearchResult(query=query, hits=[], mode="keyword", provider="none", model="fts-only",
                                empty_reason="no_match")
        scheduled = self._guarded(lambda: self.ensure_fresh(session_key=session_key))
        provider = self.query_provider  # after a sync that may have swapped the tiers
        scheduler, sync_error = self._scheduler, self._scheduler.last_error

        def why_empty() -> EmptyReason | None:
            if scheduler.syncing:
                return "stale"
            if sync_error is not None:
                return "sync_failed"
            return "empty_index" if scheduler.is_empty() else None

        state = SearchState(fallback=self._fallback, sync_scheduled=scheduled, sync_error=sync_error,
                            why_empty=why_empty)
        return self._guarded(lambda: self._run_search_pipeline(
            query, provider, max_results=max_results, min_score=min_score, sources=sources,
            session_key=session_key, tuning=tuning, state=state))

    # ---- what adapters build on: tuned searches, the indexed chunks and files ----------------------

    def _search_tuning(
        self, *, query_vector: Sequence[float] | np.ndarray | None, mode: SearchMode | None,
        vector_weight: float | None, mmr: bool | float | None, where: Callable[[SearchHit], bool] | None,
        collapse: Callable[[SearchHit], Hashable] | None,
    ) -> _SearchTuning | None:
        """The options of :meth:`search` checked and turned into a configuration (None: none given)."""
        if (query_vector is None and mode is None and vector_weight is None and mmr is None and where is None
                and collapse is None):
            return None
        if mode not in (None, "hybrid", "vector", "keyword"):
            raise MemoryArgumentError(f"unknown search mode {mode!r}: use 'hybrid', 'vector' or 'keyword'")
        hybrid: dict[str, Any] = {}
        if mode is not None:
            hybrid["enabled"] = mode != "vector"
        if vector_weight is not None:
            if isinstance(vector_weight, bool) or not 0.0 <= float(vector_weight) <= 1.0:
                raise MemoryArgumentError(
                    f"vector_weight must be between 0 (keywords only) and 1 (vectors only), got {vector_weight}")
            hybrid["vector_weight"], hybrid["text_weight"] = float(vector_weight), 1.0 - float(vector_weight)
        if mmr is not None:
            hybrid["mmr"] = {"enabled": mmr is not False}
            if not isinstance(mmr, bool):
                if not 0.0 <= float(mmr) <= 1.0:
                    raise MemoryArgumentError(f"the MMR lambda must be between 0 and 1, got {mmr}")
                hybrid["mmr"]["lambda_"] = float(mmr)
        vector: np.ndarray | None = None
        if query_vector is not None:
            if mode == "keyword":
                raise MemoryArgumentError("a keyword search takes no query_vector")
            provider = self._ensure_provider()
            if provider is None:
                raise MemoryArgumentError(
                    "this memory index has no embedding provider (keyword-only), so it holds no vectors to "
                    "compare query_vector with; search without it or open the index with a provider")
            from openclaw_memory.providers.base import normalize_vectors

            dims = provider.dims
            raw = np.asarray(query_vector, dtype=np.float32)
            if dims is not None and raw.shape != (dims,):
                raise MemoryArgumentError(
                    f"query_vector has shape {raw.shape} but this index stores {dims}-dimensional vectors from "
                    f"{provider.id}:{provider.model}; embed the query with the same model")
            try:
                vector = normalize_vectors([raw.tolist()], expected_dims=dims, who="query_vector")[0]
            except OpenClawMemoryError as exc:
                raise MemoryArgumentError(str(exc)) from None
        config = MemoryConfig.load(self.config, query={"hybrid": hybrid}) if hybrid else self.config
        return _SearchTuning(config=config, keyword_only=mode == "keyword", query_vector=vector, where=where,
                             collapse=collapse,
                             filter_only=not hybrid and vector is None and mode != "keyword")

    def _run_search_pipeline(
        self, query: str, provider: EmbeddingProvider | None, *, max_results: int | None, min_score: float | None,
        sources: Sequence[str] | None, session_key: str | None, tuning: _SearchTuning | None,
        state: SearchState | None = None,
    ) -> SearchResult:
        """One builtin search: the configured one, or a tuned one (see :meth:`search`) that looks
        further down the ranking until enough hits pass ``where`` and ``collapse``."""
        from openclaw_memory.search import run_search

        config, reason, qv = self._search_config(provider), self._keyword_only_reason, None
        if tuning is not None:
            config, qv = tuning.config, tuning.query_vector
            if tuning.keyword_only:
                provider, reason = None, "keyword mode requested"

        def run(n: int | None) -> SearchResult:
            return run_search(
                self.store, config, query, provider=provider, max_results=n, min_score=min_score,
                sources=sources, session_key=session_key, keyword_only_reason=reason, workspace=self.workspace,
                query_embedder=self._query_embedder(provider), executor=self._search_pool, query_vector=qv,
                state=state,
            )

        if tuning is None or (tuning.where is None and tuning.collapse is None):
            return run(max_results)
        return self._filtered(run, tuning, max_results,
                              lambda: sum(v.get("chunks", 0) for v in self.store.counts().values()))

    def _filtered(self, run: Callable[[int | None], SearchResult], tuning: _SearchTuning, max_results: int | None,
                  size: Callable[[], int | None]) -> SearchResult:
        """``run`` with ``max_results`` growing fourfold until ``max_results`` hits pass ``tuning.where``
        and ``tuning.collapse``, the search returns fewer than asked for, or ``total`` (the index's size,
        when known; counted only when a first search falls short) is reached."""
        where, collapse = tuning.where, tuning.collapse
        want = max(1, int(max_results if max_results is not None else tuning.config.query.max_results))
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

    def iter_chunks(self, source: str | None = None) -> Iterator[StoredChunk]:
        """Every indexed chunk (only ``source``'s, ``"memory"`` or ``"sessions"``, when given) with its
        text, location and vector, in index order. Reads the index as it is (no sync)."""
        self._check_open()
        yield from self.store.iter_chunks(source)

    def indexed_files(self, source: str | None = None) -> list[str]:
        """Workspace-relative paths of the indexed files (only ``source``'s when given), sorted.
        Reads the index as it is (no sync)."""
        self._check_open()
        return sorted(self._guarded(lambda: self.store.file_records(source)))

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

        ``questions`` is a JSON Lines file or a list of :class:`~openclaw_memory.evaluation.EvalQuestion`
        (format and metrics: :mod:`openclaw_memory.evaluation`). ``modes`` picks the configurations
        compared on the same index: ``"hybrid"`` (this index's search as configured), ``"keyword"``
        (no embeddings) and ``"vector"`` (embeddings only). ``min_score`` defaults to 0 so that each
        search returns k results. Returns ``{mode: ModeReport}``; the index is synced first unless
        ``sync=False``.
        """
        from openclaw_memory.search import run_search

        self._check_open()
        qs = evaluation.load_questions(questions) if isinstance(questions, (str, Path)) else list(questions)
        unknown = [m for m in modes if m not in ("hybrid", "keyword", "vector")]
        if unknown or not modes:
            raise ConfigError(f"unknown evaluation mode(s) {unknown}: use hybrid, keyword or vector")
        if sync:
            self.sync()
        provider = self.query_provider
        if provider is None and "vector" in modes:
            raise ConfigError("vector-only evaluation needs an embedding provider (this index is keyword-only)")
        configs = {
            "hybrid": (self._search_config(provider), provider),
            "keyword": (self.config, None),
            "vector": (MemoryConfig.load(self.config, query={"hybrid": {"enabled": False}}), provider),
        }

        def searcher(mode: str) -> evaluation.SearchFn:
            config, prov = configs[mode]

            def search(question: str, k: int) -> list[SearchHit]:
                return run_search(self.store, config, question, provider=prov, max_results=k, min_score=min_score,
                                  keyword_only_reason=self._keyword_only_reason, workspace=self.workspace,
                                  query_embedder=self._query_embedder(prov)).hits

            return search

        return evaluation.evaluate(qs, {m: searcher(m) for m in modes}, ks=ks)

    async def asearch(self, query: str, **kwargs: Any) -> SearchResult:
        """Async twin of :meth:`search`."""
        return await asyncio.to_thread(self.search, query, **kwargs)

    # ---- get ------------------------------------------------------------------------------------------

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> MemoryText:
        """Read lines of a memory file (MEMORY.md, memory.md, memory/**/*.md or an extra path).

        Raises MemoryPathError for anything else. A missing allowed file returns empty text with
        ``exists=False`` (what OpenClaw's ``memory_get`` tool answers; the CLI makes it an error).
        """
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
                       fallback=bs.fallback or st.fallback, backend_info=bs.details,
                       keyword_only_reason=st.keyword_only_reason if bs.backend == "builtin" else None)

    def _status_builtin(self, deep: bool) -> IndexStatus:
        self._check_open()
        provider = self._ensure_provider()
        integrity = self._guarded(self.store.integrity) if deep else None  # first: it may set a damaged file aside
        counts = self._guarded(self.store.counts)
        info = self.store.info()
        probe = None
        if deep:
            from openclaw_memory.providers.registry import ProviderResolution, probe_provider

            probe = probe_provider(ProviderResolution(provider=provider, requested=self._requested,
                                                      unavailable_reason=self._keyword_only_reason))
        batch = None
        if self._embed_state is not None:
            batch = self._embed_state.to_dict()
        notes = list(info.notes)
        breaker_open = provider is not None and self._breaker.is_open
        if breaker_open:
            notes.append(self._breaker.reason())
        last_error = self._scheduler.last_error
        if last_error:
            notes.append(f"last sync failed: {last_error}")
        sessions = self._sessions_status(deep, notes)
        return IndexStatus(
            agent_id=self.config.agent_id,
            workspace=str(self.workspace),
            store_path=info.path,
            backend=info.backend,
            files=sum(v["files"] for v in counts.values()),
            chunks=sum(v["chunks"] for v in counts.values()),
            source_counts=counts,
            dirty=self._is_dirty_now(),
            sources=list(self.config.sources),
            extra_paths=[str(p) for p in self.config.resolved_extra_paths()],
            provider=provider.id if provider else "none",
            model=provider.model if provider else "fts-only",
            requested_provider=self._requested,
            search_mode="hybrid" if provider and not breaker_open else "keyword",
            keyword_only_reason=(self._breaker.reason() if breaker_open else None) if provider
            else self._keyword_only_reason,
            fallback=self._fallback.to_dict() if self._fallback else None,
            key_source=self._key_source,
            driver=info.driver,
            sqlite_version=info.sqlite_version,
            fts={"available": info.fts_available, "error": info.fts_error,
                 "tokenizer": self.store.fts_tokenizer_id},
            vector={"enabled": self.config.store.vector.enabled, "path": info.vector_path,
                    "error": info.vector_error, "dims": info.vector_dims, "cache": info.vector_cache},
            cache=self._cache_status(),
            batch=batch,
            issues=workspace_issues(self.config),
            last_sync=last.to_dict() if (last := self._scheduler.last_report) else None,
            embedding_probe=probe,
            notes=notes,
            sessions=sessions,
            provider_breaker=self._breaker.to_dict() if provider is not None else None,
            integrity=integrity,
            indexing=live.snapshot() if (live := self._live) is not None else None,
            embedding_upgrade=self._guarded(self._upgrade.snapshot) if self._upgrade is not None else None,
            server=None if info.server_version is None else {
                "server_version": info.server_version, "pgvector_version": info.pgvector_version,
                "namespace": info.namespace, "size_bytes": info.size_bytes},
        )

    def _is_dirty_now(self) -> bool:
        """``dirty`` for :meth:`status`: before this process synced, whether files changed since
        the stored index was built (a stat check) instead of the unknown-so-dirty start value."""
        scheduler = self._scheduler
        if scheduler.last_report is not None or scheduler.syncing or not scheduler.dirty:
            return scheduler.dirty
        return scheduler.is_empty() or bool(scheduler.changed_files())

    def _cache_status(self) -> dict[str, Any]:
        last = self._scheduler.last_report
        looked_up = (last.cache_hits + last.embedded) if last else 0
        return {
            "enabled": self.config.cache.enabled,
            "entries": self._guarded(self.store.cache_count),
            "max_entries": self.config.cache.max_entries,
            "last_sync_hit_rate": round(last.cache_hits / looked_up, 3) if last and looked_up else None,
            "query_cache": self._query_cache.stats() if self._query_cache is not None else None,
        }

    # ---- lifecycle ------------------------------------------------------------------------------------

    def _check_open(self) -> None:
        self._scheduler.check_open()

    def close(self) -> None:
        """Stop the watcher and timers, stop a running sync at its next file (a rebuild in progress
        is discarded; the index stays as it was), and close the store."""
        if self._scheduler.closed:
            return
        self._scheduler.cancel()  # closed: a running sync stops at its next file
        if self._backend is not None:
            self._backend.close()
        self._freshness.stop()
        self._scheduler.shutdown()
        self._search_pool.shutdown(wait=True)
        if (upgrading := self._upgrade_thread) is not None:
            upgrading.join()  # it stops after the model call in progress (a few chunks)
        if self._release_appends is not None:
            self._release_appends()
        self.store.close()
        if self._provider is not None:
            self._provider.close()

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MemoryIndex:
        return self

    async def __aexit__(self, *exc: object) -> None:
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


def _reopen(config: MemoryConfig, provider: Any, watch: bool | None) -> MemoryIndex:
    """Unpickle a :class:`MemoryIndex` (see ``MemoryIndex.__reduce__``)."""
    return MemoryIndex(config, provider=provider, watch=watch)


class _BuiltinSearch:
    """This index's own SQLite search as a :class:`SearchBackend`: what ``backend = "qmd"`` falls back to."""

    name = "builtin"

    def __init__(self, index: MemoryIndex) -> None:
        self._index = index

    def search(self, query: str, *, max_results: int | None = None, min_score: float | None = None,
               session_key: str | None = None, sources: Sequence[str] | None = None) -> SearchResult:
        return self._index._search_builtin(query, max_results=max_results, min_score=min_score,
                                           session_key=session_key, sources=sources)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> MemoryText:
        return self._index._get_builtin(path, from_line, lines)

    def sync(self, *, force: bool = False, reason: str = "manual") -> SyncReport:
        return self._index.scheduler.submit(force=force, reason=reason).result()

    def status(self) -> BackendStatus:
        provider = self._index.provider
        return BackendStatus(backend="builtin", provider=provider.id if provider else "none",
                             model=provider.model if provider else "fts-only",
                             search_mode="hybrid" if provider else "keyword")

    def close(self) -> None:
        """Nothing: the store belongs to the MemoryIndex, which closes it."""


@dataclass(frozen=True)
class _SearchTuning:
    """One search's options (see :meth:`MemoryIndex.search`), checked: the configuration they make,
    whether embeddings are left out, the normalised query vector and the hit filter."""

    config: MemoryConfig
    keyword_only: bool
    query_vector: np.ndarray | None
    where: Callable[[SearchHit], bool] | None
    collapse: Callable[[SearchHit], Hashable] | None
    filter_only: bool  # nothing but ``where`` and ``collapse``: a search backend (QMD) can still answer
