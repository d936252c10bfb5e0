"""Embeddings of passages a search embeds itself (line windows to rerank, standing instructions), kept between
searches of this process: the same passages come back search after search."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from openclaw_memory.providers.base import EmbeddingProvider, provider_key
from openclaw_memory.providers.lru import LruCache

__all__ = ["passage_vectors"]

#: At most this many embeddings are kept (least recently used dropped first), by vector space and text.
MAX_PASSAGES = 50_000
_CACHE: LruCache[tuple[str, str], np.ndarray] = LruCache(MAX_PASSAGES)


def passage_vectors(provider: EmbeddingProvider, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """The embedding of each of ``texts`` as a passage by ``provider``'s model: kept ones, and the others embedded
    now in one call (the provider's errors propagate). They are kept per vector space (the provider's fingerprint:
    one model asked for another vector size is another space)."""
    space = provider_key(provider.fingerprint())
    found: dict[str, np.ndarray] = {}
    for text in texts:
        if (vector := _CACHE.get((space, text))) is not None:
            found[text] = vector
    missing = [text for text in dict.fromkeys(texts) if text not in found]
    if missing:
        fresh = [np.asarray(vector, dtype=np.float32) for vector in provider.embed_documents(missing)]
        found.update(zip(missing, fresh, strict=True))
        for text, vector in zip(missing, fresh, strict=True):
            _CACHE.put((space, text), vector)
    return found
