"""What :meth:`MemoryIndex.status() <openclaw_memory.index.MemoryIndex.status>` reports, and how the
builtin index gathers it: counts, provider, search mode, store paths and degradations."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import MissingDependencyError, ProviderUnavailableError
from openclaw_memory.providers.base import EmbeddingProvider
from openclaw_memory.index.provider_access import ProviderAccess
from openclaw_memory.index.scheduler import SyncScheduler
from openclaw_memory.storage import MemoryStore
from openclaw_memory.indexing.sync import SessionIndexStats, workspace_issues
from openclaw_memory.index.sync_runner import SyncRunner

__all__ = ["IndexStatus", "StatusReader"]


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
    search_mode: str  # "hybrid" | "keyword" | "unavailable" (the provider asked for cannot start: see provider_error)
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
    #: why the embedding provider asked for (``requested_provider``) cannot start, e.g. no API key; searches and
    #: syncs raise ProviderUnavailableError (MissingDependencyError for a package) until it can. None when it
    #: started (or none was asked for).
    provider_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class StatusReader:
    """The builtin index's :class:`IndexStatus`, from its store, provider, scheduler and sync runner."""

    def __init__(self, config: MemoryConfig, workspace: Path, store: MemoryStore, access: ProviderAccess,
                 scheduler: SyncScheduler, runner: SyncRunner, session_stats: SessionIndexStats) -> None:
        self.config = config
        self.workspace = workspace
        self.store = store
        self.access = access
        self.scheduler = scheduler
        self.runner = runner
        self.session_stats = session_stats

    def status(self, deep: bool) -> IndexStatus:
        """The status (``deep`` also checks the store's integrity and probes the provider)."""
        access, guarded = self.access, self.runner.guarded
        provider, provider_error = self.provider_or_error()
        integrity = guarded(self.store.integrity) if deep else None  # first: it may set a damaged file aside
        counts = guarded(self.store.counts)
        info = self.store.info()
        probe = None
        if provider_error is not None:  # known without a model call
            probe = {"ok": False, "error": provider_error}
        elif deep:
            from openclaw_memory.providers.registry import ProviderResolution, probe_provider

            probe = probe_provider(ProviderResolution(provider=provider, requested=access.requested,
                                                      unavailable_reason=access.keyword_only_reason))
        batch = None
        if access.embed_state is not None:
            batch = access.embed_state.to_dict()
        notes = list(info.notes)
        if (changed := self.model_change(provider)) is not None:
            notes.append(changed)
        breaker = access.breaker
        breaker_open = provider is not None and breaker.is_open
        if breaker_open:
            notes.append(breaker.reason())
        if provider_error is not None:
            notes.append(f"embedding provider {access.requested} cannot start: {provider_error}; searches and syncs "
                         "fail until it can (fix that, or choose another provider)")
        last_error = self.scheduler.last_error
        if last_error:
            notes.append(f"last sync failed: {last_error}")
        sessions = self.sessions_status(deep, notes)
        return IndexStatus(
            agent_id=self.config.agent_id,
            workspace=str(self.workspace),
            store_path=info.path,
            backend=info.backend,
            files=sum(v["files"] for v in counts.values()),
            chunks=sum(v["chunks"] for v in counts.values()),
            source_counts=counts,
            dirty=self.is_dirty_now(),
            sources=list(self.config.sources),
            extra_paths=[str(p) for p in self.config.resolved_extra_paths()],
            provider=provider.id if provider else access.requested if provider_error else "none",
            model=provider.model if provider else (self.config.model or "unknown") if provider_error else "fts-only",
            requested_provider=access.requested,
            search_mode="unavailable" if provider_error else "hybrid" if provider and not breaker_open else "keyword",
            keyword_only_reason=(breaker.reason() if breaker_open else None) if provider
            else access.keyword_only_reason,
            fallback=access.fallback.to_dict() if access.fallback else None,
            key_source=access.key_source,
            driver=info.driver,
            sqlite_version=info.sqlite_version,
            fts={"available": info.fts_available, "error": info.fts_error,
                 "tokenizer": self.store.fts_tokenizer_id, "cache": info.keyword_cache},
            vector={"enabled": self.config.store.vector.enabled, "path": info.vector_path,
                    "error": info.vector_error, "dims": info.vector_dims, "cache": info.vector_cache},
            cache=self.cache_status(),
            batch=batch,
            issues=workspace_issues(self.config),
            last_sync=last.to_dict() if (last := self.scheduler.last_report) else None,
            embedding_probe=probe,
            notes=notes,
            sessions=sessions,
            provider_breaker=breaker.to_dict() if provider is not None else None,
            integrity=integrity,
            indexing=live.snapshot() if (live := self.runner.live) is not None else None,
            embedding_upgrade=guarded(access.upgrade.snapshot) if access.upgrade is not None else None,
            server=None if info.server_version is None else {
                "server_version": info.server_version, "pgvector_version": info.pgvector_version,
                "namespace": info.namespace, "size_bytes": info.size_bytes},
            provider_error=provider_error,
        )

    def model_change(self, provider: EmbeddingProvider | None) -> str | None:
        """What is wrong when the index holds the vectors of another model than the one embedding queries now
        (a provider or model change that the next sync rebuilds the index for), else None."""
        query = self.access.tier_provider(provider, query=True)
        if query is None:
            return None
        meta = self.runner.guarded(self.store.read_meta)
        if meta is None or meta.provider == "none" or (meta.provider, meta.model) == (query.id, query.model):
            return None
        return (f"the index holds vectors of {meta.provider}:{meta.model}, not of {query.id}:{query.model} that embeds "
                "queries now: vector search finds nothing until the next sync rebuilds it (run `openclaw-memory index` "
                "or memory.sync())")

    def provider_or_error(self) -> tuple[EmbeddingProvider | None, str | None]:
        """The provider in use (None in keyword-only mode), or None and why the one asked for cannot start."""
        try:
            return self.access.ensure(), None
        except (ProviderUnavailableError, MissingDependencyError) as exc:  # what an explicit provider raises
            return None, str(exc)

    def sessions_status(self, deep: bool, notes: list[str]) -> dict[str, Any] | None:
        """Transcript details for :meth:`status` (None when sessions are off); ``deep`` re-reads
        every transcript to count malformed lines, otherwise counts come from this index's syncs."""
        if not self.config.sessions_enabled():
            return None
        from openclaw_memory.files.sessions import extract_session, list_session_files, session_rel_path

        directory = self.config.resolved_sessions_dir()
        if deep:
            counts: dict[str, int] = {}
            for path in list_session_files(directory):
                try:
                    counts[session_rel_path(path)] = extract_session(path).malformed_lines
                except OSError:
                    continue
            self.session_stats.reset(counts)
        malformed = self.session_stats.malformed()
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

    def is_dirty_now(self) -> bool:
        """``dirty`` for :meth:`status`: before this process synced, whether files changed since
        the stored index was built (a stat check) instead of the unknown-so-dirty start value."""
        scheduler = self.scheduler
        if scheduler.last_report is not None or scheduler.syncing or not scheduler.dirty:
            return scheduler.dirty
        return scheduler.is_empty() or bool(scheduler.changed_files())

    def cache_status(self) -> dict[str, Any]:
        """The embedding cache's entries and cap, the last sync's hit rate and the query cache's stats."""
        last = self.scheduler.last_report
        looked_up = (last.cache_hits + last.embedded) if last else 0
        query_cache = self.access.query_cache
        return {
            "enabled": self.config.cache.enabled,
            "entries": self.runner.guarded(self.store.cache_count),
            "max_entries": self.config.cache.max_entries,
            "last_sync_hit_rate": round(last.cache_hits / looked_up, 3) if last and looked_up else None,
            "query_cache": query_cache.stats() if query_cache is not None else None,
        }
