"""The QMD backend against the real QMD 2.8.3: search mode end to end, paths, lines, citations,
memory_get, freshness, scope, clamp and status; vsearch/query failing for real → the fallback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import MemoryPathError
from openclaw_memory.agent.tools import memory_get, memory_search


pytestmark = pytest.mark.slow  # each index starts QMD (node) a few times: about 2-5 s per test


@pytest.mark.parametrize("daemon", [True, False], ids=["mcp-daemon", "process-per-query"])
def test_search_mode_maps_hits_to_workspace_paths_lines_and_citations(
    qmd_index: Callable[..., MemoryIndex], memory_ws: Path, daemon: bool
) -> None:
    mem = qmd_index(daemon=daemon)
    result = mem.search("database migration Postgres")

    assert (result.provider, result.model, result.mode, result.fallback) == ("qmd", "qmd", "keyword", None)
    top = result.hits[0]
    assert top.path == "memory/2026-01-02.md"
    lines = (memory_ws / top.path).read_text().splitlines()
    assert 1 <= top.start_line <= 3 <= top.end_line <= len(lines)  # line 3 is the matching line
    assert "database migration to Postgres" in top.snippet
    assert "@@" not in top.snippet and not top.snippet.startswith("3:")  # QMD's hunk header / line numbers gone
    assert top.citation == f"memory/2026-01-02.md#L{top.start_line}-L{top.end_line}"
    assert top.snippet.endswith(f"Source: {top.citation}")
    # the cited lines are what memory_get returns for that range
    got = mem.get(top.path, top.start_line, top.end_line - top.start_line + 1)
    assert "database migration to Postgres" in got.text

    root = mem.search("green tea").hits
    assert [h.path for h in root][:1] == ["MEMORY.md"]
    assert mem.search("pgbouncer", session_key="agent:main:telegram:group:7").empty_reason == "scope_denied"
    dashed = mem.search("--pgbouncer pooling")  # not taken for a QMD option, nor for QMD's "without pgbouncer"
    assert dashed.fallback is None and [h.path for h in dashed.hits] == ["memory/2026-01-02.md"]


def test_the_tool_payload_is_the_same_shape_as_builtin(qmd_index: Callable[..., MemoryIndex]) -> None:
    payload = memory_search(qmd_index(), "quarterly invoice exporter")
    assert payload["provider"] == "qmd" and "fallback" not in payload
    assert payload["results"][0]["path"] == "memory/projects/zephyr.md"
    assert payload["results"][0]["citation"].startswith("memory/projects/zephyr.md#L")


def test_hand_edits_are_found_after_the_debounce(qmd_index: Callable[..., MemoryIndex], memory_ws: Path) -> None:
    mem = qmd_index()
    assert mem.search("xylophone").hits == []
    (memory_ws / "memory" / "2026-01-05.md").write_text("# 2026-01-05\n\nBought a xylophone for the office.\n")
    hits = mem.search("xylophone").hits
    assert [h.path for h in hits] == ["memory/2026-01-05.md"]


def test_extra_collection_outside_the_workspace_and_its_path_rules(
    qmd_index: Callable[..., MemoryIndex], tmp_path: Path
) -> None:
    notes = tmp_path / "team-notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "sub" / "Runbook Alpha.md").write_text("# Runbook\n\nRotate the hyperdrive keys monthly.\n")
    (tmp_path / "secret.md").write_text("do not read\n")
    mem = qmd_index(paths=[{"path": str(notes), "name": "team"}])

    hit = mem.search("hyperdrive keys").hits[0]
    assert hit.path == "qmd/team/sub/Runbook Alpha.md"  # the real file name, not QMD's normalised one
    assert mem.get(hit.path).text.startswith("# Runbook")
    assert memory_get(mem, hit.path, 3, 1)["text"] == "Rotate the hyperdrive keys monthly."
    with pytest.raises(MemoryPathError, match="escapes collection"):
        mem.get("qmd/team/../secret.md")
    with pytest.raises(MemoryPathError):
        mem.get("qmd/nosuch/x.md")
    with pytest.raises(MemoryPathError):
        mem.get("../secret.md")


def test_injected_chars_clamp_and_max_results(qmd_index: Callable[..., MemoryIndex]) -> None:
    full = qmd_index(citations="off").search("quarterly invoice exporter").hits[0].snippet
    clamped = qmd_index(state="clamped", citations="off", limits={"maxInjectedChars": 30}).search(
        "quarterly invoice exporter").hits
    assert len(full) > 30 and len(clamped) == 1
    assert len(clamped[0].snippet) <= 30 and full.startswith(clamped[0].snippet)
    capped = qmd_index(state="capped", limits={"maxResults": 1})
    assert len(capped.search("the", max_results=5).hits) == 1  # min(limits.maxResults, max_results)


def test_status_reports_qmd(qmd_index: Callable[..., MemoryIndex]) -> None:
    mem = qmd_index()
    mem.sync()
    st = mem.status()
    assert (st.backend, st.provider, st.search_mode, st.fallback) == ("qmd", "qmd", "search", None)
    assert st.files == 3
    info = st.backend_info
    assert info is not None and "2.8.3" in info["version"]
    assert {c["name"] for c in info["collections"]} == {"memory-root-main", "memory-dir-main"}
    assert info["last_update_at"] is not None
    assert info["vectors"] == {"available": False, "count": 0, "error": "QMD index has 0 vectors (run `qmd embed`)"}
    assert Path(info["index_path"]).is_file()  # per-agent XDG cache under the state dir
    assert "/agents/main/qmd/xdg-cache/" in info["index_path"]


@pytest.mark.parametrize("mode", ["vsearch", "query"])
def test_vector_modes_fail_for_real_and_fall_back_to_builtin(
    qmd_index: Callable[..., MemoryIndex], mode: str
) -> None:
    # QMD's models are not downloaded (its hub is unreachable here; QMD would try for minutes): the first
    # search switches this index to the builtin one.
    mem = qmd_index(searchMode=mode, update={"debounceMs": 0, "embedTimeoutMs": 2500})
    result = mem.search("pgbouncer connection pooling", min_score=0.0)
    assert result.fallback is not None and result.fallback.from_provider == "qmd"
    assert "embeddinggemma-300M-Q8_0.gguf" in result.fallback.reason and "not downloaded" in result.fallback.reason
    assert result.hits[0].path == "memory/2026-01-02.md"  # served by the builtin index, built lazily
    assert memory_search(mem, "pgbouncer")["fallback"]["from"] == "qmd"
    st = mem.status()
    assert st.backend == "builtin" and st.fallback == {"from": "qmd", "reason": result.fallback.reason}
    assert st.backend_info == {"disabled": True, "reason": result.fallback.reason}

    # a later index is free to retry QMD
    again = qmd_index(state="state-2")
    assert again.search("pgbouncer").fallback is None


def test_session_transcripts_are_exported_and_searchable(qmd_index: Callable[..., MemoryIndex]) -> None:
    from openclaw_memory.files.sessions import TranscriptWriter

    mem = qmd_index(sessions={"enabled": True})
    TranscriptWriter(mem.transcript_path("s-42")).append_messages(
        [("user", "Remember the launch codeword is marmalade."), ("assistant", "Noted: marmalade.")])
    hit = mem.search("marmalade codeword").hits[0]
    assert (hit.path, hit.source) == ("qmd/sessions-main/s-42.md", "sessions")
    assert "User: Remember the launch codeword is marmalade." in mem.get(hit.path).text
    assert mem.search("marmalade", sources=["memory"]).hits == []


def test_real_qmd_update_reports_the_documents_without_vectors(memory_ws: Path, qmd_command: str,
                                                               tmp_path: Path) -> None:
    """What the backend decides `qmd embed` from (instead of a `qmd status` process): the last line of the
    real QMD's `qmd update`."""
    from openclaw_memory.backends.qmd import QmdBackend, vectors_pending
    from openclaw_memory.config import MemoryConfig

    config = MemoryConfig.load(None, workspace=memory_ws, state_dir=tmp_path / "state", backend="qmd",
                               qmd={"command": qmd_command})
    backend = QmdBackend(config)
    try:
        backend.sync()  # registers the collections and runs the first update (searchMode "search": no embed)
        assert vectors_pending(backend.run("update")) == 3  # the three memory files, none embedded
    finally:
        backend.close()
