"""QMD fails fast (issue 31, items 17–21): missing models or vectors switch to the builtin index, every QMD call
is bounded by the configured timeout and a failure is remembered across processes, QMD processes do not outlive
the index, status and the CLI say what is wrong, and sync and status report QMD's real counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from openclaw_memory import MemoryIndex
from openclaw_memory.cli import main
from tests.helpers.waiting import wait_for as _wait_for


@pytest.fixture
def qmd_pids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], list[int]]:
    """``qmd_pids(command)``: the process ids of the stand-in QMD's runs of ``command`` so far."""
    pids = tmp_path / "qmd-pids"
    monkeypatch.setenv("FAKE_QMD_PIDS", str(pids))
    return lambda cmd: [int(pid) for line in (pids.read_text().splitlines() if pids.exists() else [])
                        for name, pid in [line.split()] if name == cmd]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended (its parent has not reaped it yet)


# ---- item 17: missing models or vectors switch to the builtin index ---------------------------------------------


@pytest.mark.parametrize("mode", ["vsearch", "query"])
def test_a_vector_mode_on_an_existing_index_without_models_falls_back(
    indexes: Callable[..., MemoryIndex], qmd_command: str, mode: str
) -> None:
    # a QMD index from an earlier run (BM25 only: there are no models here, QMD's hub is unreachable)
    indexes(qmd_command, searchMode="search").sync()
    mem = indexes(qmd_command, searchMode=mode, update={"embedTimeoutMs": 60_000}, limits={"timeoutMs": 30_000})
    started = time.monotonic()
    result = mem.search("pgbouncer connection pooling", min_score=0.0)
    took = time.monotonic() - started
    assert result.fallback is not None and result.fallback.from_provider == "qmd"
    assert "not downloaded" in result.fallback.reason and "qmd pull" in result.fallback.reason
    assert result.hits[0].path == "memory/2026-01-02.md"  # the builtin index answered
    assert took < 20  # not the embed timeout, nor QMD's attempts to download the model


def test_vsearch_on_an_index_without_vectors_falls_back(
    indexes: Callable[..., MemoryIndex], qmd_command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the model is "there" (QMD_EMBED_MODEL names a file), but QMD's index holds no vectors: `qmd vsearch`
    # answers [] with a warning on stderr
    model = tmp_path / "not-a-model.gguf"
    model.write_bytes(b"not a GGUF file")
    monkeypatch.setenv("QMD_EMBED_MODEL", str(model))
    indexes(qmd_command, searchMode="search").sync()
    mem = indexes(qmd_command, searchMode="vsearch", daemon=False, update={"embedTimeoutMs": 3_000},
                  limits={"timeoutMs": 30_000})
    result = mem.search("pgbouncer connection pooling", min_score=0.0)
    assert result.fallback is not None and "no vectors" in result.fallback.reason
    assert result.hits[0].path == "memory/2026-01-02.md"


# ---- item 18: every QMD call bounded, a failure remembered across processes -------------------------------------


@pytest.mark.parametrize("behaviour", ["hang", "start-hang"])
def test_a_hanging_qmd_costs_a_search_its_timeout_not_the_command_timeouts(
    indexes: Callable[..., MemoryIndex], fake_qmd: Callable[[str], str], behaviour: str
) -> None:
    # "hang": QMD hangs on every command; "start-hang": on `qmd mcp` (the daemon's start) and on searches.
    # The command timeouts stay at their defaults (30 s, 120 s): a search waits for QMD about its own 1.5 s.
    mem = indexes(fake_qmd(behaviour), limits={"timeoutMs": 1_500})
    started = time.monotonic()
    result = mem.search("pgbouncer connection pooling", min_score=0.0)
    took = time.monotonic() - started
    assert result.fallback is not None and "timed out" in result.fallback.reason
    assert result.hits[0].path == "memory/2026-01-02.md"
    assert took < 1.5 + 4  # the search timeout, plus building the builtin index and starting the stand-in


def test_a_search_waits_for_a_hanging_update_of_changed_files_no_longer_than_its_timeout(
    indexes: Callable[..., MemoryIndex], fake_qmd: Callable[[str], str], memory_ws: Path, update_seconds: Path,
) -> None:
    mem = indexes(fake_qmd("noresults"), daemon=False, update={"debounceMs": 0}, limits={"timeoutMs": 1_500})
    assert mem.search("pgbouncer").fallback is None  # the first update (quick)
    update_seconds.write_text("30")  # from now on `qmd update` hangs (updateTimeoutMs stays 120 s)
    (memory_ws / "memory" / "2026-01-03.md").write_text("# 2026-01-03\n\nA new note.\n", encoding="utf-8")
    time.sleep(2.1)  # past the 2 s between two looks at the files
    started = time.monotonic()
    result = mem.search("pgbouncer")
    assert time.monotonic() - started < 1.5 + 2
    assert result.fallback is None  # QMD answered from its index as it was; the update goes on in the background


def test_status_waits_for_a_hanging_qmd_no_longer_than_the_search_timeout(
    indexes: Callable[..., MemoryIndex], fake_qmd: Callable[[str], str]
) -> None:
    mem = indexes(fake_qmd("hang"), limits={"timeoutMs": 1_000})
    started = time.monotonic()
    info = mem.status().backend_info
    assert time.monotonic() - started < 1 + 3
    assert "qmd --version timed out after 1000 ms" in info["command_error"]


def test_a_failure_is_remembered_across_processes_for_a_while(
    indexes: Callable[..., MemoryIndex], fake_qmd: Callable[[str], str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = tmp_path / "calls.log"
    monkeypatch.setenv("FAKE_QMD_LOG", str(calls))
    first = indexes(fake_qmd("hang"), limits={"timeoutMs": 2_500}).search("pgbouncer", min_score=0.0)
    assert first.fallback is not None
    ran = calls.read_text()
    # a later index on this state dir (another process: each CLI call) falls back at once, starting no QMD
    later = indexes(fake_qmd("hang"), limits={"timeoutMs": 2_500})
    started = time.monotonic()
    result = later.search("pgbouncer", min_score=0.0)
    assert time.monotonic() - started < 1.5  # not the 2.5 s timeout
    assert result.fallback is not None and result.fallback.reason.startswith(first.fallback.reason)
    assert "remembered from" in result.fallback.reason
    assert result.hits[0].path == "memory/2026-01-02.md"
    assert calls.read_text() == ran
    st = indexes(fake_qmd("hang"), limits={"timeoutMs": 2_500}).status()
    assert st.backend_info["failure"]["reason"] == first.fallback.reason
    assert calls.read_text() == ran  # status starts no `qmd --version` either
    # another state dir knows nothing of it; once the failure is forgotten, QMD is tried again
    assert indexes(fake_qmd("noresults"), state="other").search("pgbouncer").fallback is None
    (tmp_path / "state" / "agents" / "main" / "qmd" / "failure.json").unlink()
    assert indexes(fake_qmd("noresults")).search("pgbouncer").fallback is None


def test_the_cli_pays_a_hanging_qmd_once(
    memory_ws: Path, fake_qmd: Callable[[str], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path / "cli-state"))
    cfg_file = tmp_path / "openclaw.json"
    cfg_file.write_text(json.dumps({
        "agents": {"defaults": {"workspace": str(memory_ws), "memorySearch": {"provider": "none"}}},
        "memory": {"backend": "qmd", "qmd": {"command": fake_qmd("hang"), "limits": {"timeoutMs": 2_500}}},
    }))
    took = []
    for _ in range(2):
        started = time.monotonic()
        out = CliRunner().invoke(main, ["--config", str(cfg_file), "search", "pgbouncer"],
                                 catch_exceptions=False).output
        took.append(time.monotonic() - started)
        assert "memory/2026-01-02.md" in out
        assert "Note: qmd failed, so the builtin index answered: " in out  # on stdout, not only a log line
    assert 2.5 <= took[0] < 2.5 + 5 and took[1] < 1.5  # the second call does not wait for QMD
    out = CliRunner().invoke(main, ["--config", str(cfg_file), "index"], catch_exceptions=False).output
    assert "Note: fell back from qmd: qmd collection timed out after 2500 ms" in out


# ---- item 19: no QMD process outlives its index -------------------------------------------------------------------


def test_close_kills_a_running_qmd_embed(
    indexes: Callable[..., MemoryIndex], fake_qmd: Callable[[str], str], qmd_model: Path,
    qmd_pids: Callable[[str], list[int]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_QMD_NEED_VECTORS", "2")
    monkeypatch.setenv("FAKE_QMD_EMBED_SECONDS", "60")
    mem = indexes(fake_qmd("noresults"), searchMode="vsearch", daemon=False, update={"debounceMs": 0})
    syncing = threading.Thread(target=lambda: pytest.raises(Exception, mem.sync), daemon=True)
    syncing.start()
    _wait_for(lambda: bool(qmd_pids("embed")))
    (pid,) = qmd_pids("embed")
    assert _alive(pid)
    started = time.monotonic()
    mem.close()
    assert time.monotonic() - started < 5  # it does not wait for the embed either
    _wait_for(lambda: not _alive(pid), timeout=5)
    syncing.join(timeout=5)
    assert not syncing.is_alive()


_EXITS_WHILE_EMBEDDING = textwrap.dedent('''
    import sys, time
    from pathlib import Path
    from openclaw_memory import MemoryIndex
    ws, state, command, pids = sys.argv[1:5]
    mem = MemoryIndex(workspace=ws, state_dir=state, provider=None, watch=False, backend="qmd",
                      qmd={"command": command, "searchMode": "vsearch", "daemon": False,
                           "update": {"debounceMs": 0, "waitForBootSync": False}})
    import threading
    threading.Thread(target=mem.sync, daemon=True).start()
    while "embed" not in (Path(pids).read_text() if Path(pids).exists() else ""):
        time.sleep(0.05)
    # exits without close()
''')


def test_the_interpreter_exit_kills_a_running_qmd_embed(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str], qmd_model: Path,
    qmd_pids: Callable[[str], list[int]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_QMD_NEED_VECTORS", "2")
    monkeypatch.setenv("FAKE_QMD_EMBED_SECONDS", "60")
    proc = subprocess.run([sys.executable, "-c", _EXITS_WHILE_EMBEDDING, str(memory_ws), str(tmp_path / "state"),
                           fake_qmd("noresults"), os.environ["FAKE_QMD_PIDS"]],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    (pid,) = qmd_pids("embed")
    try:
        _wait_for(lambda: not _alive(pid), timeout=5)
    finally:
        if _alive(pid):
            os.kill(pid, 9)


# ---- item 20: a missing QMD command is named, and the CLI shows a fallback -----------------------------------------


def test_status_names_a_missing_qmd_command(
    memory_ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path / "cli-state"))
    cfg_file = tmp_path / "openclaw.json"
    cfg_file.write_text(json.dumps({
        "agents": {"defaults": {"workspace": str(memory_ws), "memorySearch": {"provider": "none"}}},
        "memory": {"backend": "qmd", "qmd": {"command": str(tmp_path / "no-such-qmd")}},
    }))
    data = json.loads(CliRunner().invoke(main, ["--config", str(cfg_file), "status", "--json"]).output)
    assert "QMD command not found" in data["backend_info"]["command_error"]
    assert all(c["folder_exists"] for c in data["backend_info"]["collections"])
    out = CliRunner().invoke(main, ["--config", str(cfg_file), "status"], catch_exceptions=False).output
    assert f"does not run: QMD command not found or not executable: '{tmp_path / 'no-such-qmd'}'" in out
    assert "folder missing" not in out and "version unknown" not in out


# ---- item 21: QMD's real counts ---------------------------------------------------------------------------------


def test_the_first_sync_of_a_new_qmd_index_reports_what_it_indexed(
    indexes: Callable[..., MemoryIndex], qmd_command: str
) -> None:
    mem = indexes(qmd_command, limits={"timeoutMs": 30_000})
    first = mem.sync()
    assert (first.files_indexed, first.files_unchanged, first.files_scanned) == (3, 0, 3)
    again = mem.sync()
    assert (again.files_indexed, again.files_unchanged) == (0, 3)


def test_status_counts_are_qmd_s_own_never_the_builtin_index_s(
    indexes: Callable[..., MemoryIndex], qmd_command: str, memory_ws: Path, tmp_path: Path
) -> None:
    # the builtin index of this state dir holds several chunks per file (an earlier builtin run)
    (memory_ws / "memory" / "long.md").write_text(
        "# Long\n\n" + "\n\n".join(f"Paragraph {i}: " + "words " * 120 for i in range(8)), encoding="utf-8")
    with MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False) as builtin:
        builtin.sync()
        assert builtin.status().chunks > builtin.status().files
    mem = indexes(qmd_command, limits={"timeoutMs": 30_000})
    st = mem.status()  # no QMD index yet
    assert (st.files, st.chunks) == (0, 0)
    mem.search("pgbouncer")
    st = mem.status()
    assert (st.files, st.chunks) == (4, 4)  # QMD's documents (it has no vectors, so no chunks of its own)
    assert st.source_counts == {}  # the builtin index's per-source counts are not shown as QMD's
