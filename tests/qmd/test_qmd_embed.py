"""`qmd embed` (spec §9.3): one at a time in a process and across the processes sharing a state dir
(`<state>/qmd/embed.lock`, every agent's index), and failures back off 60 s·2^(n-1) up to an hour.
The stand-in QMD logs each command (`embed` when one starts, `embed-end` when it ends)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.backends import qmd as qmd_module
from openclaw_memory.backends.qmd import QmdBackend, embed_backoff_s
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import QmdError


@pytest.fixture
def embed_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, qmd_model: Path) -> Callable[[], list[str]]:
    """The stand-in's `embed` / `embed-end` lines so far; each embed takes 0.6 s and 2 documents need vectors."""
    log = tmp_path / "qmd-calls.log"
    monkeypatch.setenv("FAKE_QMD_LOG", str(log))
    monkeypatch.setenv("FAKE_QMD_NEED_VECTORS", "2")
    monkeypatch.setenv("FAKE_QMD_EMBED_SECONDS", "0.6")
    return lambda: [c for c in (log.read_text().split() if log.exists() else []) if c.startswith("embed")]


def _settings(command: str) -> dict[str, object]:
    return {"command": command, "searchMode": "vsearch", "daemon": False, "update": {"debounceMs": 0}}


_WORKER = textwrap.dedent('''
    import json, sys, time
    from pathlib import Path
    from openclaw_memory import MemoryIndex
    ws, state, agent, settings, go = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), Path(sys.argv[5])
    mem = MemoryIndex(workspace=ws, state_dir=state, agent_id=agent, provider=None, watch=False,
                      backend="qmd", qmd=settings)
    (go.parent / f"ready-{agent}").touch()
    while not go.exists():
        time.sleep(0.01)
    mem.sync()  # the boot update, then `qmd embed` (documents without vectors)
    mem.close()
''')


@pytest.mark.slow  # three Python processes
def test_processes_sharing_a_state_dir_never_embed_at_once(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str], embed_log: Callable[[], list[str]]
) -> None:
    import json

    # different agents: each has its own QMD index and update lock; only the state dir's embed lock is shared
    go = tmp_path / "go"
    agents = ["alpha", "beta", "gamma"]
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(memory_ws), str(tmp_path / "state"), agent,
                               json.dumps(_settings(fake_qmd("noresults"))), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for agent in agents]
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"ready-{a}").exists() for a in agents):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), \
            [p.communicate()[0] for p in procs if p.poll() is not None]
        time.sleep(0.02)
    go.touch()  # all start their sync together
    for p in procs:
        out, _ = p.communicate(timeout=60)
        assert p.returncode == 0, out.decode()
    assert embed_log() == ["embed", "embed-end"] * 3  # one at a time, never overlapping
    assert (tmp_path / "state" / "qmd" / "embed.lock").exists()


def test_indexes_of_one_process_never_embed_at_once(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str], embed_log: Callable[[], list[str]],
    sync_concurrently: Callable[[Sequence[MemoryIndex]], list[BaseException]],
) -> None:
    mems = [MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", agent_id=agent, provider=None,
                        watch=False, backend="qmd", qmd=_settings(fake_qmd("noresults"))) for agent in ("a", "b")]
    try:
        errors = sync_concurrently(mems)
    finally:
        for mem in mems:
            mem.close()
    assert errors == []
    assert embed_log() == ["embed", "embed-end"] * 2


def test_embed_backoff_doubles_from_a_minute_up_to_an_hour() -> None:
    assert [embed_backoff_s(n) for n in range(0, 9)] == [0, 60, 120, 240, 480, 960, 1920, 3600, 3600]
    assert embed_backoff_s(100) == 3600


def test_a_failed_embed_is_retried_only_after_the_backoff(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str], embed_log: Callable[[], list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fail = tmp_path / "embed-fail"
    fail.write_text("1")
    monkeypatch.setenv("FAKE_QMD_EMBED_FAIL", str(fail))
    monkeypatch.setenv("FAKE_QMD_EMBED_SECONDS", "0")
    skew = [0.0]  # seconds added to the backend's clock
    clock = types.SimpleNamespace(time=lambda: time.time() + skew[0], monotonic=time.monotonic,
                                  perf_counter=time.perf_counter, sleep=time.sleep)
    monkeypatch.setattr(qmd_module, "time", clock)
    backend = QmdBackend(MemoryConfig(workspace=memory_ws, state_dir=tmp_path / "state",
                                      qmd=_settings(fake_qmd("noresults"))))
    try:
        with pytest.raises(QmdError, match="embedding model"):
            backend.sync()  # the first embed fails
        assert embed_log() == ["embed"]
        backend.sync()  # within a minute: no embed, no error
        skew[0] = 61
        with pytest.raises(QmdError):
            backend.sync()  # after a minute: tried again, fails again
        assert embed_log() == ["embed", "embed"]
        skew[0] = 61 + 100
        backend.sync()  # the second failure backs off two minutes
        assert embed_log() == ["embed", "embed"]
        skew[0] = 61 + 121
        fail.write_text("0")
        backend.sync()  # tried again: it works
        assert embed_log() == ["embed", "embed", "embed", "embed-end"]
        assert backend.status().details["vectors"]["available"] is True
    finally:
        backend.close()
