"""The fallback manager on each QMD fault: missing binary, timeout, non-JSON, crash, exit code,
a hung MCP daemon; and what is not a fault ("No results found")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.backends.qmd_results import parse_items, split_snippet
from openclaw_memory.errors import QmdError
from openclaw_memory.agent.tools import memory_search


@pytest.fixture
def faulty(memory_ws: Path, tmp_path: Path) -> Callable[..., MemoryIndex]:
    made: list[MemoryIndex] = []

    def make(command: str, **qmd: object) -> MemoryIndex:
        mem = MemoryIndex(workspace=memory_ws, state_dir=tmp_path / f"state{len(made)}", provider=None,
                          watch=False, backend="qmd", qmd={"command": command, **qmd})
        made.append(mem)
        return mem

    yield make
    for mem in made:
        mem.close()


@pytest.mark.parametrize(("behaviour", "reason"), [
    ("sleep", "qmd search timed out after"),  # what the daemon's start left of the 400 ms
    ("garbage", "qmd did not print a JSON array"),
    ("crash", "qmd search crashed (signal 11)"),
    ("fail", "qmd search failed (exit 3): 'Error: database is locked'"),
])
def test_a_qmd_fault_switches_this_index_to_builtin(
    faulty: Callable[..., MemoryIndex], fake_qmd: Callable[[str], str], behaviour: str, reason: str,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = tmp_path / "calls.log"
    monkeypatch.setenv("FAKE_QMD_LOG", str(calls))
    # only the hanging search may time out (a loaded machine can take 400 ms to start Python)
    mem = faulty(fake_qmd(behaviour), limits={"timeoutMs": 400 if behaviour == "sleep" else 30_000})
    result = mem.search("pgbouncer connection pooling", min_score=0.0)
    assert result.fallback is not None and result.fallback.from_provider == "qmd"
    assert result.fallback.reason.startswith(reason)
    assert result.provider == "none" and result.hits[0].path == "memory/2026-01-02.md"
    # from now on builtin answers at once (QMD is not asked again), and status says so
    assert mem.search("green tea", min_score=0.0).hits[0].path == "MEMORY.md"
    assert calls.read_text().split().count("search") == 1
    st = mem.status()
    assert st.backend == "builtin" and st.fallback == {"from": "qmd", "reason": result.fallback.reason}


def test_missing_binary_falls_back_with_a_clear_reason(faulty: Callable[..., MemoryIndex], tmp_path: Path) -> None:
    mem = faulty(str(tmp_path / "no-such-qmd"))
    payload = memory_search(mem, "pgbouncer")
    assert payload["fallback"]["from"] == "qmd"
    assert "QMD command not found" in payload["fallback"]["reason"]
    assert payload["results"][0]["path"] == "memory/2026-01-02.md"


def test_a_hung_mcp_daemon_times_out_and_falls_back(
    faulty: Callable[..., MemoryIndex], fake_qmd: Callable[[str], str]
) -> None:
    mem = faulty(fake_qmd("mcp-hang"), limits={"timeoutMs": 400})
    result = mem.search("pgbouncer", min_score=0.0)
    assert result.fallback is not None and "qmd mcp tools/call timed out after" in result.fallback.reason


def test_no_results_is_an_empty_answer_not_a_fault(
    faulty: Callable[..., MemoryIndex], fake_qmd: Callable[[str], str]
) -> None:
    mem = faulty(fake_qmd("noresults"))
    result = mem.search("pgbouncer")
    assert result.fallback is None and result.hits == [] and result.empty_reason == "no_match"
    assert mem.status().backend_info["daemon"]["error"]  # the stand-in has no `qmd mcp`: per-process mode


def test_the_fallback_does_not_touch_the_memory_files(
    faulty: Callable[..., MemoryIndex], fake_qmd: Callable[[str], str], memory_ws: Path
) -> None:
    before = {p: p.read_bytes() for p in memory_ws.rglob("*.md")}
    faulty(fake_qmd("garbage")).search("pgbouncer")
    assert {p: p.read_bytes() for p in memory_ws.rglob("*.md")} == before


def test_parse_items_reads_qmd_json_and_rejects_the_rest() -> None:
    out = ('Searching…\n[{"docid": "#1e00ca", "score": 0.82, "file": "qmd://memory-dir-main/a [b].md",'
           ' "line": 3, "title": "t", "snippet": "@@ -2,4 @@ (1 before, 0 after)\\n\\nx ] y\\n"}]\ntrailer')
    (item,) = parse_items(out)
    assert (item.collection, item.file, item.score, item.line, item.docid) == (
        "memory-dir-main", "a [b].md", 0.82, 3, "#1e00ca")
    assert split_snippet(item.snippet) == ("\nx ] y\n", 2, 4)
    assert parse_items("No results found.") == []
    assert parse_items("", "No results found for query") == []
    with pytest.raises(QmdError, match="did not print a JSON array"):
        parse_items('{"error": "boom"}')
    with pytest.raises(QmdError, match="printed nothing"):
        parse_items("", "Segmentation fault")


def test_mcp_snippets_lose_their_line_numbers() -> None:
    text, start, count = split_snippet("3: @@ -2,3 @@ (1 before, 0 after)\n4: \n5: 10: not a number prefix\n6: ",
                                       numbered=True)
    assert (text, start, count) == ("\n10: not a number prefix\n", 2, 3)
