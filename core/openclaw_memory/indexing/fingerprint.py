"""Pure: the index fingerprint (provider key, scope hash) and when it forces a full rebuild."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from openclaw_memory.text.chunker import CHUNKER_VERSION
from openclaw_memory.storage import IndexMeta

__all__ = ["FTS_ONLY_MODEL", "NO_PROVIDER_KEY", "expected_meta", "rebuild_reason", "scope_hash"]

NO_PROVIDER_KEY = hashlib.sha256(b'{"provider":"none","model":"fts-only"}').hexdigest()
#: The model that search results, status and fingerprints name in keyword-only mode (no embeddings).
FTS_ONLY_MODEL = "fts-only"


def scope_hash(extra_paths: Sequence[Path]) -> str:
    """sha256 of the sorted, resolved extra paths (forward slashes)."""
    paths = sorted(str(p).replace("\\", "/") for p in extra_paths)
    return hashlib.sha256(json.dumps({"extraPaths": paths}, separators=(",", ":")).encode()).hexdigest()


def expected_meta(
    *,
    provider_id: str | None,
    model: str | None,
    provider_key: str | None,
    sources: Sequence[str],
    extra_paths: Sequence[Path],
    chunk_tokens: int,
    chunk_overlap: int,
    fts_tokenizer: str,
    vector_dims: int | None = None,
    chunker: int = CHUNKER_VERSION,
    line_units: int = 0,
) -> IndexMeta:
    """The meta record an index built with these settings carries."""
    return IndexMeta(
        model=model or FTS_ONLY_MODEL,
        provider=provider_id or "none",
        provider_key=provider_key or NO_PROVIDER_KEY,
        sources=tuple(sorted(set(sources))),
        scope_hash=scope_hash(extra_paths),
        chunk_tokens=chunk_tokens,
        chunk_overlap=chunk_overlap,
        fts_tokenizer=fts_tokenizer,
        vector_dims=vector_dims,
        chunker=chunker,
        line_units=line_units,
    )


def rebuild_reason(current: IndexMeta | None, expected: IndexMeta) -> str | None:
    """Why the index must be rebuilt from scratch, or None when an incremental sync is enough."""
    if current is None:
        return "no index yet"
    checks = (
        ("provider", current.provider, expected.provider),
        ("model", current.model, expected.model),
        ("provider settings (base URL, headers, dimensions)", current.provider_key, expected.provider_key),
        ("sources", current.sources, expected.sources),
        ("extra paths", current.scope_hash, expected.scope_hash),
        ("chunk tokens", current.chunk_tokens, expected.chunk_tokens),
        ("chunk overlap", current.chunk_overlap, expected.chunk_overlap),
        ("chunking rules (library upgrade)", current.chunker, expected.chunker),
        ("keyword index (tokenizer or layout)", current.fts_tokenizer, expected.fts_tokenizer),
        ("line units (query.hybrid.unit_lines)", current.line_units, expected.line_units),
    )
    for what, old, new in checks:
        if old != new:
            return f"{what} changed ({old!r} -> {new!r})"
    if expected.vector_dims is not None and current.vector_dims not in (None, expected.vector_dims):
        return f"vector dimensions changed ({current.vector_dims} -> {expected.vector_dims})"
    return None
