"""`python -m bench postgres` at its smallest size on the test server, so the harness cannot rot (no timing
assertions: every store and search mode has a row with figures, and the HNSW recall is reported)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_bench_postgres_smallest_run(pg: Any) -> None:
    r = subprocess.run([sys.executable, "-m", "bench", "postgres", "--sizes", "1k", "--queries", "5",
                        "--url", pg.url], capture_output=True, text=True, timeout=580, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = [line.split(" | ") for line in r.stdout.splitlines() if line.startswith("| 1,000 ")]
    assert {(row[1], row[2]) for row in rows} == {(store, mode) for store in (
        "SQLite (sqlite-vec + in-memory matrix)", "PostgreSQL (pgvector, defaults)") for mode in ("keyword", "vector", "hybrid")}
    assert all(float(row[3]) > 0 and float(row[4]) > 0 for row in rows)
    # each PostgreSQL row gives its p50 as a multiple of SQLite's (the figures are printed rounded to 0.1 ms)
    by = {(row[1], row[2]): row for row in rows}
    for mode in ("keyword", "vector", "hybrid"):
        lite = by[("SQLite (sqlite-vec + in-memory matrix)", mode)]
        pg_row = by[("PostgreSQL (pgvector, defaults)", mode)]
        low, high = (float(pg_row[3]) - 0.05) / (float(lite[3]) + 0.05), (float(pg_row[3]) + 0.05) / max(
            float(lite[3]) - 0.05, 1e-9)
        assert lite[5] == "" and low - 0.01 <= float(pg_row[5]) <= high + 0.01, (mode, lite, pg_row)
    assert "PostgreSQL p50 / SQLite p50 (same process, same vectors): keyword " in r.stdout
    # the store's vector path is reported: HNSW from hnsw_min_rows (the default store at 1k), else exact
    assert "HNSW recall@10 vs exact" in r.stdout and "; pgvector hnsw" in r.stdout
