"""Build a SQLite store from documents with a fake embedder, and read hit ids, for ranking tests."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.storage import StoredChunk
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.types import MemoryFile, SearchResult


Docs = Mapping[str, Sequence[str]]


def build_store(path: Path, docs: Docs, provider: FakeEmbeddingProvider | None, *, vector_enabled: bool = True,
                source: str = "memory", vectors: Mapping[str, np.ndarray] | None = None,
                store: SQLiteStore | None = None) -> SQLiteStore:
    """Index ``{path: [chunk text, ...]}``, chunk i on line i+1; ``vectors`` overrides by chunk id."""
    st = store or SQLiteStore(path, vector_enabled=vector_enabled)
    for rel, chunks in docs.items():
        embs = provider.embed_documents(list(chunks)) if provider else [None] * len(chunks)
        stored = []
        for i, (text, emb) in enumerate(zip(chunks, embs)):
            cid = f"{rel}:{i}"
            if vectors and cid in vectors:
                emb = vectors[cid]
            stored.append(StoredChunk(id=cid, path=rel, source=source, start_line=i + 1, end_line=i + 1,
                                      hash=hashlib.sha256(text.encode()).hexdigest(),
                                      model=provider.model if provider else "fts-only", text=text, embedding=emb))
        f = MemoryFile(path=rel, abs_path=str(path.parent / rel), mtime_ms=0.0, size=1,
                       hash=hashlib.sha256("".join(chunks).encode()).hexdigest(), source=source)  # type: ignore[arg-type]
        st.replace_file(f, stored)
    return st


def ids(result: SearchResult) -> list[str]:
    return [h.chunk_id for h in result.hits]


FILLER = [
    "Lunch options near the office include ramen, tacos and a salad bar.",
    "The team offsite is planned for the second week of June in Lisbon.",
    "Ann prefers async standups written in the team channel.",
    "Quarterly planning covers hiring, roadmap and the budget review.",
    "Remember to water the plants on the balcony every other day.",
    "The design review for the mobile app onboarding flow went well.",
    "Bob is on parental leave until the end of the month.",
    "We use pnpm workspaces for the monorepo and turbo for caching.",
]


def away_from(provider: FakeEmbeddingProvider, texts: Sequence[str]) -> np.ndarray:
    """A unit query vector with negative cosine to every text: the vector side finds nothing useful."""
    m = np.stack(provider.embed_documents(list(texts)))
    v = -m.mean(axis=0)
    return (v / np.linalg.norm(v)).astype(np.float32)

