"""The CLI, driven through click's CliRunner: one-line errors, JSON output, batch queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from openclaw_memory.cli import main

NOTES = {
    "MEMORY.md": "# Memory\n\n- Priya runs the deployment pipeline.\n- Coffee order: 美式咖啡.\n",
    "memory/2026-11-20.md": "# 2026-11-20\n\n- Root cause was commit a828e60 racing the watcher.\n",
}


@pytest.fixture
def ws(write) -> Path:
    return write(NOTES)


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def base(ws: Path, tmp_path: Path) -> list[str]:
    return ["--workspace", str(ws), "--store", str(tmp_path / "cli.sqlite"), "--provider", "none"]


def test_index_then_status_json(ws, tmp_path):
    res = run(*base(ws, tmp_path), "index")
    assert res.exit_code == 0, res.output
    assert "2 files scanned, 2 indexed" in res.output
    assert "keyword-only" in res.output  # never silently degraded
    res = run(*base(ws, tmp_path), "status", "--json")
    st = json.loads(res.output)
    assert st["files"] == 2 and st["search_mode"] == "keyword" and st["provider"] == "none"
    assert st["fts"]["available"] and st["vector"]["path"] in {"sqlite-vec", "numpy"}
    res = run(*base(ws, tmp_path), "index")
    assert "0 indexed, 2 unchanged" in res.output


def test_status_text_names_driver_and_vector_path(ws, tmp_path):
    res = run(*base(ws, tmp_path), "status")
    assert res.exit_code == 0
    assert "Store:" in res.output and "driver" in res.output and "Vector:" in res.output
    assert "Search mode: keyword" in res.output


def test_search_human_and_json(ws, tmp_path):
    res = run(*base(ws, tmp_path), "search", "a828e60")
    assert res.exit_code == 0
    assert "memory/2026-11-20.md#L1-L4" in res.output and "a828e60" in res.output
    res = run(*base(ws, tmp_path), "search", "咖啡", "--json")
    payload = json.loads(res.output)
    assert payload["mode"] == "keyword" and payload["results"][0]["path"] == "MEMORY.md"
    res = run(*base(ws, tmp_path), "search", "zebra xylophone")
    assert "No matches" in res.output


def test_search_queries_file_prints_one_json_line_per_query(ws, tmp_path):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text('{"id": "q1", "query": "deployment pipeline"}\nwho owns deployments\n\n', encoding="utf-8")
    res = run(*base(ws, tmp_path), "search", "--queries", str(qfile))
    lines = [json.loads(line) for line in res.output.splitlines()]
    assert [row["id"] for row in lines] == ["q1", "2"]
    assert lines[0]["results"][0]["path"] == "MEMORY.md"
    res = run(*base(ws, tmp_path), "search", "--queries", "-", input="a828e60\n")
    assert json.loads(res.output)["results"][0]["path"] == "memory/2026-11-20.md"


def test_get_reads_lines_and_refuses_other_paths(ws, tmp_path):
    res = run(*base(ws, tmp_path), "get", "MEMORY.md", "--from", "3", "--lines", "1")
    assert res.output == "- Priya runs the deployment pipeline.\n"
    res = run(*base(ws, tmp_path), "get", "../etc/passwd")
    assert res.exit_code == 1
    assert res.output.startswith("Error: ") and len(res.output.strip().splitlines()) == 1
    assert "Traceback" not in res.output


def test_user_mistakes_are_one_line_errors(ws, tmp_path):
    bad = tmp_path / "openclaw.json"
    bad.write_text('{agents: {defaults: {memorySearch: {query: {minScore: 5}}}}}', encoding="utf-8")
    res = run("--workspace", str(ws), "--config", str(bad), "status")
    assert res.exit_code == 1 and "query.minScore" in res.output and "Traceback" not in res.output
    res = run(*base(ws, tmp_path), "search")
    assert res.exit_code == 2 and "give a QUERY" in res.output


def test_config_file_is_used_unchanged(ws, tmp_path):
    cfg = tmp_path / "openclaw.json"
    cfg.write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws), "memorySearch": {
        "provider": "none", "store": {"path": str(tmp_path / "{agentId}.sqlite")}}}}}), encoding="utf-8")
    res = run("--config", str(cfg), "--agent", "ops", "index")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "ops.sqlite").exists()


def _first_hit(output: str, query: str) -> str:
    block = output.split(f'$ openclaw-memory search "{query}"', 1)[1]
    return next(line for line in block.splitlines() if line[:1].isdigit())


@pytest.mark.local_model
def test_demo_runs_on_the_embedded_default(tmp_path):
    res = run("demo")
    assert res.exit_code == 0, res.output
    assert "with local (" in res.output and "vector path: sqlite-vec" in res.output
    assert "memory/2026-11-20.md#L1-L7" in _first_hit(res.output, "a828e60")
    assert "MEMORY.md#L1-L16" in _first_hit(res.output, "咖啡")
    assert "MEMORY.md#L1-L16" in _first_hit(res.output, "what database did we choose for the index?")
