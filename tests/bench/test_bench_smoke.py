"""`make bench` at its smallest size, with the systems this venv has, so the harness cannot rot.

No timing assertions: only that every table is produced, this library's rows carry figures, and a
system that cannot run here is reported with the reason instead of being dropped.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSTEMS = ["openclaw-memory", "openclaw-memory-keyword", "openclaw-memory-pg", "openclaw-memory-qmd", "langchain", "llamaindex", "chroma", "lancedb", "bm25s", "openclaw-npm"]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_bench_compare_smallest_run(tmp_path: Path) -> None:
    out = tmp_path / "results" / "latest.md"
    cmd = [sys.executable, "-m", "bench", "compare", "--sizes", "1k", "--systems", ",".join(SYSTEMS),
           "--queries", "5", "--small-queries", "5", "--quality-embedder", "fake", "--index-notes", "12",
           "--index-model", "none",
           "--sync-files", "40", "--prefilter-sizes", "2k", "--npm-dir", str(tmp_path / "no-npm"), "--timeout", "300", "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=880, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    for heading in ("## Search latency", "## First index", "## Sync", "exact scan against the binary pre-filter"):
        assert heading in text
    assert text in r.stdout  # the same tables are printed

    search = {row["system"]: row for row in data["search"]}
    assert set(search) == set(SYSTEMS)  # every system has a row, run or explained
    mine = search["openclaw-memory"]
    assert mine["chunks"] == 1000
    for mode in ("keyword", "vector", "hybrid"):
        assert mine["modes"][mode]["p50_ms"] > 0 and mine["modes"][mode]["empty"] == 0
    assert mine["modes"]["vector"]["recall_vs_exact"] == 1.0  # exact below the pre-filter threshold
    assert mine["peak_rss_mb"] > 0
    first = {row["system"]: row for row in data["index"]}["openclaw-memory"]
    assert first["chunks"] == data["index_chunks"] > 0  # the sync's own count of the chunks it wrote
    for name, row in search.items():
        if "modes" not in row:
            assert row.get("unavailable") or row.get("error"), row
            assert (row.get("unavailable") or row["error"]) in text  # the reason is in the table
    assert "not installed" in search["openclaw-npm"]["unavailable"]
    # this library's other configurations run here (the test extra has the PostgreSQL server, `make test` QMD)
    kw = search["openclaw-memory-keyword"]
    assert kw["modes"]["keyword"]["p50_ms"] > 0 and kw["modes"]["keyword"]["empty"] == 0
    assert "missing" in kw["modes"]["vector"] and "missing" in kw["modes"]["hybrid"]
    pg = search["openclaw-memory-pg"]
    for mode in ("keyword", "vector", "hybrid"):
        assert pg["modes"][mode]["p50_ms"] > 0 and pg["modes"][mode]["empty"] == 0, pg
    assert "PostgreSQL server" in pg["note"]  # its memory, beside the worker's
    qmd = search["openclaw-memory-qmd"]
    if "modes" in qmd:
        assert qmd["modes"]["keyword"]["p50_ms"] > 0 and qmd["modes"]["keyword"]["empty"] == 0, qmd
    else:  # QMD comes from `make qmd` (part of `make test`); a bare venv says so in the row
        assert "not installed" in (qmd.get("error") or qmd.get("unavailable") or ""), qmd  # QMD or its Node

    index = {row["system"]: row for row in data["index"]}
    assert index["openclaw-memory"]["pipeline_s"] > 0
    sync = data["sync"][0]
    assert sync["system"] == "openclaw-memory" and sync["files"] == 40
    assert sync["force_calls"] == 0  # a forced rebuild embeds nothing: the cache is warm
    assert sync["edit_embedded"] >= 1

    pre = data["prefilter"][0]
    assert pre["chunks"] == 2000 and pre["recall@6_near"] == 1.0  # below the threshold: exact on both paths

    if data.get("quality_error"):
        assert "Not measured" in text
    else:
        quality = [row for row in data["quality"] if row["system"] == "openclaw-memory"]
        assert {row["mode"] for row in quality} == {"keyword", "vector", "hybrid"}
        for row in quality:
            assert 0 < row["recall"] <= 1 and 0 < row["hit"] <= 1 and row["lines"] > 0
        by = {(row["system"], row["mode"]): row for row in data["quality"]}
        assert 0 < by[("openclaw-memory-pg", "keyword")]["recall"] <= 1
        # keyword-only is the default configuration's keyword search: the same results
        assert by[("openclaw-memory-keyword", "keyword")]["recall"] == by[("openclaw-memory", "keyword")]["recall"]
