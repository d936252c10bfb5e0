"""Running QMD: one process per command, or a warm ``qmd mcp`` session (MCP over stdio).

Every QMD process runs in a process group of its own, registered in a :class:`QmdProcesses` while it
runs: closing the backend kills them (a ``qmd embed`` in the background included), and so do the backend's
garbage collection and the interpreter's exit for any still running.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import tempfile
import threading
import weakref
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

from openclaw_memory.errors import QmdError

__all__ = ["McpSession", "QmdProcesses", "run_qmd"]

log = logging.getLogger(__name__)

MAX_OUTPUT_CHARS = 200_000
_MCP_PROTOCOL = "2025-06-18"


def _kill(proc: subprocess.Popen[Any]) -> None:
    """Kill the process and anything it started (it runs in its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except OSError:
            pass


class QmdProcesses:
    """The QMD processes one backend (``owner``) has running; :meth:`kill_all` ends them and their children.

    They are also ended when ``owner`` is garbage-collected and when the interpreter exits (QMD runs in
    sessions of its own, so nothing else would stop a ``qmd embed`` left running)."""

    def __init__(self, owner: object) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[Any]] = set()
        self._closed = False
        weakref.finalize(owner, self.kill_all)  # called at the owner's collection, or at exit while it lives

    def add(self, proc: subprocess.Popen[Any]) -> None:
        """Track ``proc`` until :meth:`discard`; killed at once when this set is already closed."""
        with self._lock:
            if not self._closed:
                self._running.add(proc)
                return
        _kill(proc)

    def discard(self, proc: subprocess.Popen[Any]) -> None:
        with self._lock:
            self._running.discard(proc)

    @property
    def pids(self) -> list[int]:
        """The process ids of the QMD processes running now."""
        with self._lock:
            return [p.pid for p in self._running if p.poll() is None]

    def kill_all(self) -> None:
        """Kill every tracked process group; processes started later are killed as they start."""
        with self._lock:
            self._closed = True
            running, self._running = self._running, set()
        for proc in running:
            if proc.poll() is None:
                _kill(proc)


_INSTALL_ADVICE = ("Install QMD (npm install @tobilu/qmd with Node 24, or `make qmd` in this repository), set "
                   "memory.qmd.command to it, or set memory.backend to 'builtin'.")
# what `env`, a shell or a wrapper script exits with when the command it runs cannot be found (127) or run (126)
_LAUNCHER_NOT_FOUND = (126, 127)


def _not_found(argv: list[str], exc: OSError) -> QmdError:
    return QmdError(f"QMD command not found or not executable: {argv[0]!r} ({exc.strerror or exc}). {_INSTALL_ADVICE}")


def run_qmd(argv: list[str], args: list[str], *, cwd: Path, env: dict[str, str], timeout_ms: int,
            processes: QmdProcesses | None = None, timeout_key: str = "memory.qmd timeouts") -> str:
    """Run ``argv + args`` and return its stdout; raise QmdError on a missing command, a timeout
    (naming ``timeout_key``), a crash (signal) or a non-zero exit (with the end of stderr). The process
    is tracked in ``processes`` while it runs."""
    what = f"qmd {args[0]}" if args else "qmd"
    try:
        proc = subprocess.Popen([*argv, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise _not_found(argv, exc) from None
    if processes is not None:
        processes.add(proc)
    try:
        out_b, err_b = proc.communicate(timeout=timeout_ms / 1000)
    except subprocess.TimeoutExpired:
        _kill(proc)
        proc.communicate()
        raise QmdError(f"{what} timed out after {timeout_ms} ms ({timeout_key}); "
                       "QMD may be downloading models it cannot reach, or the index is locked") from None
    finally:
        if processes is not None:
            processes.discard(proc)
    out = out_b.decode("utf-8", "replace")[:MAX_OUTPUT_CHARS]
    err = err_b.decode("utf-8", "replace")[-2000:]
    if proc.returncode < 0:
        raise QmdError(f"{what} crashed (signal {-proc.returncode}); stderr: {err.strip()[-300:]!r}")
    if proc.returncode in _LAUNCHER_NOT_FOUND:  # `env HF_TOKEN=… qmd` without qmd: env ran, qmd did not
        raise QmdError(f"QMD command not found or not executable ({what} exited {proc.returncode}): "
                       f"{(err.strip() or out.strip())[-300:]!r}. {_INSTALL_ADVICE}")
    if proc.returncode != 0:
        raise QmdError(f"{what} failed (exit {proc.returncode}): {(err.strip() or out.strip())[-300:]!r}")
    return out


class McpSession:
    """A warm ``qmd mcp`` process spoken to over stdio (newline-delimited JSON-RPC 2.0).

    Thread-safe: calls from several threads are matched to their answers by id. Any failure
    (start-up, EOF, timeout, a JSON-RPC error) raises QmdError; the session is then dead.
    """

    def __init__(self, argv: list[str], *, cwd: Path, env: dict[str, str], timeout_ms: int,
                 processes: QmdProcesses | None = None) -> None:
        self._processes = processes
        self._lock = threading.Lock()
        self._pending: dict[int, Future[dict[str, Any]]] = {}
        self._next_id = 0
        self._dead: str | None = None
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the process)
        try:
            self._proc = subprocess.Popen([*argv, "mcp"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=self._stderr, start_new_session=True)
        except OSError as exc:
            self._stderr.close()
            raise _not_found(argv, exc) from None
        if processes is not None:
            processes.add(self._proc)
        self._reader = threading.Thread(target=self._read, name="openclaw-memory-qmd-mcp", daemon=True)
        self._reader.start()
        try:
            init = self.request("initialize", {"protocolVersion": _MCP_PROTOCOL, "capabilities": {},
                                               "clientInfo": {"name": "openclaw-memory", "version": "1"}},
                                timeout_ms)
            self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        except QmdError:
            self.close()
            raise
        self.server_version = str((init.get("serverInfo") or {}).get("version") or "")

    @property
    def alive(self) -> bool:
        return self._dead is None and self._proc.poll() is None

    def _stderr_tail(self) -> str:
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 400))
            return self._stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # a stray log line; MCP frames are whole JSON lines
            if not isinstance(msg, dict) or "id" not in msg:
                continue
            with self._lock:
                fut = self._pending.pop(msg["id"], None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
        self._fail(f"qmd mcp exited (code {self._proc.poll()}); stderr: {self._stderr_tail()[-300:]!r}")

    def _fail(self, reason: str) -> None:
        with self._lock:
            self._dead = self._dead or reason
            pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(QmdError(reason))

    def _send(self, msg: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write((json.dumps(msg) + "\n").encode())
            self._proc.stdin.flush()
        except (OSError, ValueError) as exc:
            self._fail(f"qmd mcp is gone: {exc}")
            raise QmdError(self._dead or str(exc)) from None

    def request(self, method: str, params: dict[str, Any], timeout_ms: int) -> dict[str, Any]:
        """Send one request and wait for its result (QmdError on error, EOF or timeout)."""
        with self._lock:
            if self._dead is not None:
                raise QmdError(self._dead)
            self._next_id += 1
            rid = self._next_id
            fut: Future[dict[str, Any]] = Future()
            self._pending[rid] = fut
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        try:
            msg = fut.result(timeout=timeout_ms / 1000)
        except FutureTimeout:
            reason = f"qmd mcp {method} timed out after {timeout_ms} ms"
            self._fail(reason)
            self.close(grace_s=0)  # it hangs: no point waiting for it to exit
            raise QmdError(reason + "; QMD may be loading models it cannot download") from None
        if "error" in msg:
            err = msg["error"] if isinstance(msg["error"], dict) else {"message": msg["error"]}
            raise QmdError(f"qmd mcp {method} failed: {err.get('message')}")
        result = msg.get("result")
        if not isinstance(result, dict):
            raise QmdError(f"qmd mcp {method} returned no result object: {str(msg)[:200]!r}")
        return result

    def call_tool(self, name: str, arguments: dict[str, Any], timeout_ms: int) -> dict[str, Any]:
        """``tools/call``: the tool's ``structuredContent`` (QmdError when the tool reports an error)."""
        result = self.request("tools/call", {"name": name, "arguments": arguments}, timeout_ms)
        if result.get("isError"):
            text = " ".join(c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict))
            raise QmdError(f"qmd mcp tool {name} failed: {text.strip()[:300]}")
        content = result.get("structuredContent")
        if not isinstance(content, dict):
            raise QmdError(f"qmd mcp tool {name} returned no structured content")
        return content

    def close(self, *, grace_s: float = 2.0) -> None:
        """End the session (closes stdin, then kills the process group if it lingers ``grace_s``)."""
        self._fail(self._dead or "qmd mcp session closed")
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            _kill(self._proc)
            self._proc.wait()
        if self._processes is not None:
            self._processes.discard(self._proc)
        self._stderr.close()
