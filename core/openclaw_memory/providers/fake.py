"""A deterministic, offline embedder for unit tests: hashed bag of words and character trigrams.

Texts that share words get similar vectors, so ranking tests are meaningful, but there is no
real semantics: the demo and notebooks use the real local default instead.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbedKind

__all__ = ["FakeEmbeddingProvider"]

_WORD = re.compile(r"[\w]+", re.UNICODE)


class FakeEmbeddingProvider(BaseEmbeddingProvider):
    """Deterministic hashing embedder. ``calls`` counts embed calls, ``texts_embedded`` inputs."""

    id = "fake"

    def __init__(self, *, model: str = "fake-hash", dims: int = 64, synonyms: dict[str, str] | None = None) -> None:
        super().__init__(model=model, dims=dims, max_input_tokens=8192)
        self.calls = 0
        self.texts_embedded = 0
        self.fail_with: Exception | None = None
        self.synonyms = {k.lower(): v.lower() for k, v in (synonyms or {}).items()}

    def fingerprint(self) -> dict[str, Any]:
        return {"provider": self.id, "model": self.model, "dims": self._dims}

    def _vector(self, text: str) -> np.ndarray:
        dims = self._dims or 64
        vec = np.zeros(dims, dtype=np.float32)
        words = [self.synonyms.get(w, w) for w in _WORD.findall(text.lower())]
        for w in words:
            h = hashlib.blake2b(w.encode(), digest_size=8).digest()
            vec[int.from_bytes(h[:4], "little") % dims] += 1.0 if h[4] & 1 else -1.0
        if not words:
            vec[0] = 1.0
        if not np.any(vec):
            vec[1] = 1.0
        return vec

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        if self.fail_with is not None:
            raise self.fail_with
        self.calls += 1
        self.texts_embedded += len(texts)
        return [self._vector(t) for t in texts]
