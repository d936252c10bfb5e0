"""The binary pre-filter of large in-memory vector copies: approximate candidates, exact scores, filters kept."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from openclaw_memory.storage.sqlite import vector_cache as vector_cache_module
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage.sqlite.vector_cache import BinaryCodes, VectorMatrix, exact_scores
from openclaw_memory.storage import StoredChunk
from openclaw_memory.types import MemoryFile

DIMS = 48


def _clustered(n: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, n // 20), DIMS)).astype(np.float32)
    v = centres[rng.integers(0, len(centres), size=n)] + 0.5 * rng.standard_normal((n, DIMS)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _store(tmp_path: Path, vectors: np.ndarray, per_file: int = 50) -> SQLiteStore:
    st = SQLiteStore(tmp_path / "p.sqlite", vector_enabled=False)  # numpy: the matrix is the only vector path
    for f, at in enumerate(range(0, len(vectors), per_file)):
        rel = f"memory/f{f}.md"
        source = "memory" if f % 2 else "sessions"
        chunks = [StoredChunk(id=f"{rel}:{i}", path=rel, source=source, start_line=i + 1, end_line=i + 1,
                              hash=hashlib.sha256(f"{rel}{i}".encode()).hexdigest(), model="fake", text=f"chunk {i}",
                              embedding=v) for i, v in enumerate(vectors[at : at + per_file])]
        st.replace_file(MemoryFile(path=rel, abs_path=rel, mtime_ms=0.0, size=1, hash=rel, source=source),  # type: ignore[arg-type]
                        chunks)
    return st


@pytest.fixture()
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector_cache_module, "BINARY_PREFILTER_ROWS", 500)
    monkeypatch.setattr(vector_cache_module, "BINARY_MIN_CANDIDATES", 200)


def test_large_copies_prefilter_and_keep_exact_scores_and_recall(tmp_path: Path, small_threshold: None) -> None:
    vectors = _clustered(2000)
    st = _store(tmp_path, vectors)
    try:
        rng = np.random.default_rng(9)
        recall = []
        for i in rng.choice(len(vectors), size=20, replace=False):
            q = vectors[i] + 0.2 * rng.standard_normal(DIMS).astype(np.float32)
            q /= np.linalg.norm(q)
            got = st.vector_search(q, limit=10)
            assert len(got) == 10
            exact = exact_scores(vectors, q.astype(np.float32))
            truth = {f"memory/f{j // 50}.md:{j % 50}" for j in np.argsort(-exact, kind="stable")[:10]}
            recall.append(len({c.id for c in got} & truth) / 10)
            by_id = {f"memory/f{j // 50}.md:{j % 50}": exact[j] for j in range(len(vectors))}
            for c in got:  # every returned score is the exact cosine, and the order is by it
                assert c.vector_score == pytest.approx(by_id[c.id], abs=1e-6)
            assert [c.vector_score for c in got] == sorted((c.vector_score for c in got), reverse=True)
        assert np.mean(recall) >= 0.9
        matrix = st._vector_cache.get(st.generation())
        assert matrix is not None and matrix.codes is not None  # the pre-filter path served these searches
    finally:
        st.close()


def test_prefilter_respects_source_filters(tmp_path: Path, small_threshold: None) -> None:
    vectors = _clustered(1500)
    st = _store(tmp_path, vectors)
    try:
        q = vectors[3]
        got = st.vector_search(q, limit=8, sources=["memory"])
        assert len(got) == 8 and all(c.source == "memory" for c in got)
    finally:
        st.close()


def test_small_copies_have_no_codes(tmp_path: Path) -> None:
    st = _store(tmp_path, _clustered(300))
    try:
        st.vector_search(_clustered(1, seed=5)[0], limit=3)
        matrix = st._vector_cache.get(st.generation())
        assert matrix is not None and matrix.codes is None
    finally:
        st.close()


def test_codes_rank_by_hamming_distance() -> None:
    unit = _clustered(400)
    codes = BinaryCodes.of(unit)
    assert codes.words.shape == (1, 400) and codes.words.dtype == np.uint64  # 48 bits in one word per row
    picked = codes.nearest(unit[7], 5, None)
    assert 7 in picked and len(picked) >= 5  # a row's own code is at distance 0
    keep = np.zeros(400, dtype=bool)
    keep[200:] = True
    assert set(codes.nearest(unit[7], 5, keep)) <= set(range(200, 400))


def test_empty_matrix_search_is_empty() -> None:
    assert VectorMatrix.empty("g").search(np.ones(DIMS, dtype=np.float32), 3) == []


def test_the_exact_scan_of_a_large_copy_returns_the_exact_top_with_ties_and_filters() -> None:
    """Below the pre-filter's threshold the scan keeps the exact top k, as a full sort would (the partition
    is bounded by the best score of each block of rows: duplicates, filtered rows and a short tail included)."""
    rng = np.random.default_rng(4)
    n = 40_000 + 37  # a tail shorter than a block
    unit = _clustered(n, seed=5)
    unit[1000:1400] = unit[7]  # 400 equal rows: ties across many blocks
    sources = np.where(np.arange(n) % 3 == 0, 1, 0).astype(np.int32)
    matrix = VectorMatrix("g", unit, [f"c{i}" for i in range(n)], np.arange(n, dtype=np.int64), sources,
                          ("memory", "sessions"), np.zeros(n, dtype=np.int32), ("fake",))
    for q, limit, src in [(unit[7], 24, None), (unit[7], 450, None), (unit[n - 1], 6, None), (unit[12], 30, ["sessions"]),
                          (rng.standard_normal(DIMS).astype(np.float32), 40, None)]:
        exact = exact_scores(unit, q / np.linalg.norm(q))
        allowed = np.ones(n, dtype=bool) if src is None else sources == 1
        order = [j for j in np.lexsort((np.arange(n), -exact)) if allowed[j]][:limit]
        got = matrix.search(q, limit, src)
        assert [cid for cid, _ in got] == [f"c{j}" for j in order]
        assert [s for _, s in got] == [float(exact[j]) for j in order]
