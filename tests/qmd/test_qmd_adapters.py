"""Adapters and the CLI work unchanged on the QMD backend and after its fallback; openclaw.json
``memory.backend`` / ``memory.qmd`` load with the original defaults."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from langchain_core.documents import Document
from openclaw_memory import MemoryConfig, MemoryIndex
from openclaw_memory.cli import main

from langchain_openclaw_memory import OpenClawMemoryRetriever as LCRetriever
from llama_index_openclaw_memory import OpenClawMemoryRetriever as LIRetriever

pytestmark = pytest.mark.slow


def _lc(mem: MemoryIndex, query: str) -> list[Document]:
    return LCRetriever(memory=mem, k=2).invoke(query)


@pytest.mark.parametrize("broken", [False, True], ids=["qmd", "after-fallback"])
def test_langchain_and_llamaindex_retrievers_on_the_qmd_backend(
    qmd_index: Callable[..., MemoryIndex], fake_qmd: Callable[[str], str], broken: bool
) -> None:
    mem = qmd_index(command=fake_qmd("garbage")) if broken else qmd_index()
    docs = _lc(mem, "quarterly invoice exporter")
    assert docs[0].metadata["path"] == "memory/projects/zephyr.md"
    assert "invoice exporter" in docs[0].page_content
    assert docs[0].metadata["citation"].startswith("memory/projects/zephyr.md#L")

    nodes = LIRetriever(mem, max_results=2).retrieve("pgbouncer connection pooling")
    assert nodes[0].node.metadata["path"] == "memory/2026-01-02.md"
    assert "pgbouncer" in nodes[0].node.get_content()
    result = mem.search("pgbouncer")
    assert (result.fallback is not None) == broken
    assert result.provider == ("none" if broken else "qmd")


def test_openclaw_json_selects_qmd_with_the_original_defaults(tmp_path: Path) -> None:
    cfg_file = tmp_path / "openclaw.json"
    cfg_file.write_text(json.dumps({
        "agents": {"defaults": {"workspace": str(tmp_path / "ws")}},
        "memory": {"backend": "qmd", "qmd": {"searchMode": "query", "limits": {"maxResults": 3},
                                            "paths": [{"path": "~/notes", "name": "notes"}]}},
    }))
    cfg = MemoryConfig.from_openclaw_file(cfg_file)
    q = cfg.qmd
    assert cfg.backend == "qmd" and q.search_mode == "query" and q.limits.max_results == 3
    assert (q.command, q.include_default_memory, q.daemon) == ("qmd", True, True)
    assert (q.update.interval, q.update.debounce_ms, q.update.on_boot, q.update.embed_interval) == ("5m", 15000, True, "60m")
    assert (q.update.command_timeout_ms, q.update.update_timeout_ms, q.update.embed_timeout_ms) == (30000, 120000, 120000)
    assert (q.limits.max_snippet_chars, q.limits.max_injected_chars, q.limits.timeout_ms) == (700, 4000, 4000)
    assert q.scope.default == "deny" and [r.match.chat_type for r in q.scope.rules] == ["direct", "channel"]
    assert MemoryConfig().backend == "builtin"


def test_cli_status_shows_the_qmd_backend(memory_ws: Path, qmd_command: str, tmp_path: Path) -> None:
    cfg_file = tmp_path / "openclaw.json"
    cfg_file.write_text(json.dumps({
        "agents": {"defaults": {"workspace": str(memory_ws), "memorySearch": {"provider": "none"}}},
        "memory": {"backend": "qmd", "qmd": {"command": qmd_command}},
    }))
    out = CliRunner().invoke(main, ["--config", str(cfg_file), "status"], catch_exceptions=False).output
    assert "Backend: qmd (qmd 2.8.3" in out
    assert f"QMD collection: memory-dir-main = {memory_ws / 'memory'} (**/*.md)" in out
    # status is read-only (issue 17: it ran the boot `qmd update`): a fresh state has no QMD index yet
    assert "QMD last update: never" in out and "QMD vectors: unavailable (no QMD index yet" in out
    CliRunner().invoke(main, ["--config", str(cfg_file), "index"], catch_exceptions=False)
    out = CliRunner().invoke(main, ["--config", str(cfg_file), "status"], catch_exceptions=False).output
    assert "QMD last update: 20" in out
    assert "QMD vectors: unavailable (QMD index has 0 vectors" in out
    data = json.loads(CliRunner().invoke(main, ["--config", str(cfg_file), "status", "--json"]).output)
    assert data["backend"] == "qmd" and data["backend_info"]["vectors"]["available"] is False
