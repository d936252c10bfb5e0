"""The QMD sidecar backend (``memory.backend = "qmd"``, spec §9.2–9.3).

QMD (``@tobilu/qmd``) indexes the memory files in its own SQLite index, one collection per
root: ``memory-root-<agent>`` (``MEMORY.md``), ``memory-dir-<agent>`` (``memory/**/*.md``), one per
extra path, ``memory.qmd.paths`` and ``qmd.extra_collections`` entry and, optionally, ``sessions-<agent>`` over Markdown exports of the transcripts. Each
agent gets its own QMD config and cache under ``<state_dir>/agents/<agent>/qmd/``. Searches go
to a warm ``qmd mcp`` session when QMD has one (``memory.qmd.daemon``), else to one
``qmd <mode> --json`` process per query; hits come back as the builtin's
:class:`~openclaw_memory.types.SearchHit`. Every failure raises
:class:`~openclaw_memory.errors.QmdError` (:class:`~openclaw_memory.backends.fallback.FallbackBackend`
turns it into a switch to the builtin index).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from openclaw_memory.files import discovery
from openclaw_memory.backends.base import BackendStatus
from openclaw_memory.backends.qmd_exports import SessionExports, export_header
from openclaw_memory.backends.qmd_failure import FailureMemory
from openclaw_memory.backends.qmd_models import command_env, missing_models
from openclaw_memory.backends.qmd_process import McpSession, QmdProcesses, run_qmd
from openclaw_memory.backends.qmd_results import (ChunkSpans, FileMap, QmdCollection, QmdItem, map_item, parse_items,
                                                  to_items)
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import MemoryPathError, QmdError
from openclaw_memory.redaction import redact
from openclaw_memory.text.citations import chat_type, citations_enabled, decorate_citation
from openclaw_memory.retrieval.ranking import clamp_injected
from openclaw_memory.types import MemoryText, SearchHit, SearchMode, SearchResult, SyncReport

__all__ = ["QmdBackend", "embed_backoff_s", "plan_collections", "qmd_home", "qmd_paths"]

log = logging.getLogger(__name__)

_RESULT_MODE: dict[str, SearchMode] = {"search": "keyword", "vsearch": "vector", "query": "hybrid"}
# Before a search, the memory files are compared with the last update's snapshot (stat only) at
# most this often (and never while the update debounce holds: an update could not run anyway).
_SCAN_INTERVAL_S = 2.0
# How long a search waits for an update that is running (as the original does), then searches anyway.
_PENDING_WAIT_S = 0.5
_INDEXED = re.compile(r"Indexed:\s*(\d+) new,\s*(\d+) updated,\s*(\d+) unchanged,\s*(\d+) removed")
# `qmd update` ends with this line when documents lack vectors (QMD 2.x; counted as `qmd status`'s "Pending")
_NEED_VECTORS = re.compile(r"\((\d+) unique hashes? needs? vectors\)")
# `qmd embed` loads QMD's embedding model: one at a time in this process and across the processes sharing a
# state dir (`<state>/qmd/embed.lock`, every agent's index); after n failures in a row the next is tried
# 60 s·2^(n-1) later, at most an hour (spec §9.3).
_EMBED_LOCKS: dict[str, threading.Lock] = {}
_EMBED_LOCKS_GUARD = threading.Lock()
_EMBED_BACKOFF_S, _EMBED_BACKOFF_MAX_S = 60.0, 3600.0
# A QMD failure is remembered this long in the state dir: processes started meanwhile (each CLI call) fall back
# to the builtin index at once instead of paying QMD's timeout again.
FAILURE_HOLD_S = 300.0
def embed_backoff_s(failures: int) -> float:
    """Seconds to wait before the next ``qmd embed`` after ``failures`` failed ones in a row (0 after none)."""
    return 0.0 if failures <= 0 else min(_EMBED_BACKOFF_S * 2 ** min(failures - 1, 16), _EMBED_BACKOFF_MAX_S)


def _process_embed_lock(lock_file: Path) -> threading.Lock:
    with _EMBED_LOCKS_GUARD:
        return _EMBED_LOCKS.setdefault(str(lock_file), threading.Lock())


def vectors_pending(update_output: str) -> int:
    """How many documents ``qmd update`` reported as needing vectors (``qmd embed``); 0 when it reported none."""
    m = _NEED_VECTORS.search(update_output)
    return int(m.group(1)) if m else 0


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-") or "x"


#: The longest query handed to QMD: one command-line argument holds at most 128 KiB on Linux (4 bytes a character
#: at worst); a longer query (a pasted log) is cut there on both paths, so the daemon and the CLI answer alike.
MAX_QUERY_CHARS = 30_000


def _one_line(query: str) -> str:
    """``query`` on one line (QMD reads several lines as a structured query document), at most
    :data:`MAX_QUERY_CHARS` long, without NUL characters (a command-line argument cannot hold one)."""
    return " ".join(query.replace("\x00", " ").split())[:MAX_QUERY_CHARS].rstrip()


def _closed_quotes(query: str) -> str:
    """``query`` with an unclosed double quote closed at its end, as ``qmd search`` reads it: the ``qmd mcp``
    session rejects such a lex query, and that error would switch the index to the builtin one."""
    return query + '"' if query.count('"') % 2 else query


#: a word starting with "-" where QMD 2.x reads a negation (``-v``, ``-"dry run"``), which it refuses in a vec query
_NEGATION_WORD = re.compile(r'(?<![^\s\ufeff])(-[A-Za-z0-9_"]\S*)')


def _vec_text(query: str) -> str:
    """``query`` as a ``qmd mcp`` vec sub-query takes it: each word starting with "-" (``-v flag``) in backticks,
    as code is written (the session refuses a vec query with such a word as a negation, and that error would
    switch the index to the builtin one; ``qmd vsearch`` embeds the query as it is)."""
    return _NEGATION_WORD.sub(r"`\1`", query)


def _lex_text(query: str) -> str:
    """``query`` (one line) as a QMD lex query searches for it: a word starting with "-" (``--force``, ``-v``) outside
    a quoted phrase is that word, not QMD's negation of it (which would leave the note about ``--force`` out of
    the results); a plain word is quoted (``"v"``: that word, not every word starting with v)."""
    words, quoted = [], False
    for word in query.split(" "):
        if not quoted and word.startswith("-"):
            word = word.lstrip("-")
            word = f'"{word}"' if re.fullmatch(r"\w+", word) else word
        words.append(word)
        quoted ^= word.count('"') % 2 == 1
    return " ".join(words)


def plan_collections(config: MemoryConfig) -> list[QmdCollection]:
    """The QMD collections for this agent (spec §9.2), names scoped per agent and made unique."""
    cfg, ws, agent = config.qmd, config.resolved_workspace(), _slug(config.agent_id)
    out: list[QmdCollection] = []
    taken: set[str] = set()
    seen: set[tuple[str, str]] = set()

    def add(name: str, root: Path, pattern: str, source: str = "memory") -> None:
        key = (str(root), pattern)
        if key in seen:
            return
        seen.add(key)
        unique, n = name, 2
        while unique in taken:
            unique, n = f"{name}-{n}", n + 1
        taken.add(unique)
        out.append(QmdCollection(unique, root, pattern, source))  # type: ignore[arg-type]

    if cfg.include_default_memory:
        add(f"memory-root-{agent}", ws, "MEMORY.md")
        add(f"memory-dir-{agent}", ws / "memory", "**/*.md")
    extras: list[tuple[Path, str | None, str]] = [(p, None, "**/*.md") for p in config.resolved_extra_paths()]
    extras += [(path, entry.name, entry.pattern)
               for path, entry in zip(qmd_paths(config), [*cfg.paths, *cfg.extra_collections])]
    for i, (path, name, pattern) in enumerate(extras, start=1):
        path = Path(os.path.normpath(path))
        if path.suffix == ".md" and not path.is_dir():
            path, pattern = path.parent, path.name
        inside = path == ws or ws in path.parents
        coll = _slug(name) if name and not inside else f"{_slug(name or f'custom-{i}')}-{agent}"
        add(coll, path, pattern)
    if cfg.sessions.enabled:
        add(f"sessions-{agent}", qmd_home(config) / "sessions" if not cfg.sessions.export_dir
            else Path(cfg.sessions.export_dir).expanduser(), "*.md", "sessions")
    return out


def qmd_paths(config: MemoryConfig) -> list[Path]:
    """The folders (or files) of ``memory.qmd.paths`` then ``qmd.extra_collections``
    (``memorySearch.qmd.extraCollections``), absolute (relative ones are in the workspace)."""
    ws = config.resolved_workspace()
    out = []
    for entry in [*config.qmd.paths, *config.qmd.extra_collections]:
        p = Path(entry.path).expanduser()
        out.append(Path(os.path.normpath(p if p.is_absolute() else ws / p)))
    return out


def qmd_home(config: MemoryConfig) -> Path:
    """``<state_dir>/agents/<agent>/qmd``: this agent's QMD config, cache and index."""
    return config.resolved_state_dir() / "agents" / config.agent_id / "qmd"


def _call_if_alive(method: weakref.WeakMethod[Any]) -> None:
    """Call the weakly held ``method`` unless its object is gone."""
    bound = method()
    if bound is not None:
        bound()


def _iso(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds") if ts else None


class QmdBackend:
    """Search through QMD; see the module docstring. Thread-safe; close it."""

    name = "qmd"

    def __init__(self, config: MemoryConfig) -> None:
        self.config = config
        self.cfg = config.qmd
        self.workspace = config.resolved_workspace()
        self.argv = shlex.split(self.cfg.command)
        self.collections = plan_collections(config)
        self._by_name = {c.name: c for c in self.collections}
        # memory_get reads the workspace's memory files, the extra paths and the qmd.paths folders in the
        # workspace, or the workspace itself (those outside it are read as qmd/<collection>/<file>)
        self._read_roots = [*config.resolved_extra_paths(),
                            *(p for p in qmd_paths(config) if p == self.workspace or self.workspace in p.parents)]
        home = qmd_home(config)
        xdg_config, xdg_cache = home / "xdg-config", home / "xdg-cache"
        self.index_path = xdg_cache / "qmd" / "index.sqlite"
        self._state_file = home / "collections.json"
        self._last_update_file = home / "last-update"  # when any process last ran `qmd update` here
        self.env = {**os.environ, "XDG_CONFIG_HOME": str(xdg_config), "QMD_CONFIG_DIR": str(xdg_config / "qmd"),
                    "XDG_CACHE_HOME": str(xdg_cache), "NO_COLOR": "1"}
        self._qmd_env = command_env(self.argv, self.env)  # with the command's `env NAME=value` words: QMD's own
        self._home = home
        self._lock = threading.RLock()  # readiness, the daemon
        # One `qmd update` at a time: in this process (forced requests wait and then run, others
        # are covered by the running one), and across processes sharing this index (a file lock).
        self._update_lock = threading.Lock()
        self._update_flock = FileLock(str(home / "update.lock"))
        self._embed_flock = FileLock(str(config.resolved_state_dir() / "qmd" / "embed.lock"))
        self._embed_failures = 0  # failed `qmd embed` runs in a row
        self._embed_retry_at = 0.0  # time.time() before which no `qmd embed` runs (backoff)
        self._update_error: str | None = None  # the last background update's failure
        self._timer: threading.Timer | None = None  # the next interval update
        self._scanned_at = 0.0  # time.monotonic() of the last stat scan
        self._files = FileMap()  # QMD's (normalised) paths -> real files, cleared by each update
        self._spans = ChunkSpans(config.chunking.tokens, config.chunking.overlap)  # hits widened to builtin chunks
        self._ready = False
        self._registered: dict[str, dict[str, str]] = {}
        self._last_update: float | None = None
        self._last_embed: float | None = None
        self._snapshot: dict[str, tuple[int, int]] | None = None
        self._session: McpSession | None = None
        self._daemon_error: str | None = None
        self._version: str | None = None
        self._version_error: str | None = None  # why `qmd --version` failed (a missing command, a timeout)
        self._added_output = ""  # what `qmd collection add` indexed, for the next update's report
        self._boot_report: SyncReport | None = None  # the awaited boot update's report, for the first sync()
        self._vectors_seen = False  # QMD's index had vectors at a search (no need to look again)
        self._exports: SessionExports | None = None  # the transcripts' exports (memory.qmd.sessions)
        self._processes = QmdProcesses(self)  # killed on close(), at exit, and when this backend is garbage-collected
        # a failure is remembered for these settings only: the command as it runs (the dump redacts it) and the rest
        self._failures = FailureMemory(home / "failure.json", FAILURE_HOLD_S,
                                       settings=self.cfg.command + "\n" + self.cfg.model_dump_json())
        self._recalled = False  # the remembered failure was looked at (at the first search or sync)
        self._closed = False

    # ---- running qmd ----------------------------------------------------------------------------

    def run(self, *args: str, timeout_ms: int | None = None, timeout_key: str = "memory.qmd timeouts") -> str:
        """Run ``qmd <args>`` in the workspace with this agent's environment; stdout. Without
        ``timeout_ms``: a quick command, bounded by :attr:`quick_timeout_ms`."""
        if timeout_ms is None:
            timeout_ms, timeout_key = self.quick_timeout_ms, "memory.qmd.limits.timeoutMs"
        return run_qmd(self.argv, list(args), cwd=self.workspace, env=self.env, timeout_ms=timeout_ms,
                       processes=self._processes, timeout_key=timeout_key)

    @property
    def quick_timeout_ms(self) -> int:
        """How long a command that only reads may take (version, collection list):
        the search timeout, or ``commandTimeoutMs`` when that is shorter."""
        return min(self.cfg.limits.timeout_ms, self.cfg.update.command_timeout_ms)

    def version(self) -> str | None:
        """``qmd --version`` (e.g. ``qmd 2.8.3 (facd35e)``), cached; None when QMD does not run
        (``status()``'s ``command_error`` says why)."""
        if self._version is None:
            try:
                self._version = self.run("--version").strip().splitlines()[0]
                self._version_error = None
            except QmdError as exc:
                self._version_error = str(exc)
                return None
            except IndexError:
                self._version_error = redact(f"`{self.cfg.command} --version` printed nothing")
                return None
        return self._version

    def _models_dir(self) -> Path:
        return Path(self.env["XDG_CACHE_HOME"]) / "qmd" / "models"

    def _require_models(self) -> None:
        """QmdError when QMD would have to download a model the search mode needs: it would try for minutes,
        and forever where its model hub is unreachable."""
        missing = missing_models(self.cfg.search_mode, self._qmd_env, self._models_dir())
        if missing:
            raise QmdError(
                f"QMD's model{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                f"{'are' if len(missing) > 1 else 'is'} not downloaded ({self._models_dir()}); searchMode "
                f"{self.cfg.search_mode!r} needs {'them' if len(missing) > 1 else 'it'}. Run `qmd pull` once where "
                "huggingface.co is reachable (into ~/.cache/qmd/models, shared by every agent), or use searchMode "
                "'search'")

    def _require_vectors(self) -> None:
        """For the vector modes: QmdError when QMD's index holds documents but no vectors (QMD would
        answer nothing, with only a warning on stderr)."""
        if self._vectors_seen:
            return
        counts = self._index_counts()
        if counts["documents"] > 0 and counts["vectors"] == 0:
            raise QmdError(f"QMD's index has {counts['documents']} documents and no vectors; searchMode "
                           f"{self.cfg.search_mode!r} needs them (`qmd embed` has not run or failed"
                           f"{': ' + self._update_error if self._update_error else ''})")
        self._vectors_seen = counts["vectors"] > 0

    def _prepare_dirs(self) -> None:
        for key in ("XDG_CONFIG_HOME", "QMD_CONFIG_DIR", "XDG_CACHE_HOME"):
            Path(self.env[key]).mkdir(parents=True, exist_ok=True)
        shared = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "qmd" / "models"
        link = self._models_dir()
        if shared.is_dir() and link.is_dir() and not link.is_symlink() and not any(link.iterdir()):
            link.rmdir()  # left empty by a download that failed: use the shared models instead
        if shared.is_dir() and not link.exists() and not link.is_symlink():
            link.parent.mkdir(parents=True, exist_ok=True)
            try:
                link.symlink_to(shared, target_is_directory=True)  # models are shared, indexes are not
            except OSError:
                pass

    # ---- collections and updates ------------------------------------------------------------------

    def _listed_collections(self) -> set[str]:
        out = self.run("collection", "list", "--json")
        try:
            rows = json.loads(out)
            return {str(r.get("name")) for r in rows if isinstance(r, dict)} if isinstance(rows, list) else set()
        except ValueError:  # 2.x prints text: "<name> (qmd://<name>/)"
            return set(re.findall(r"^(\S+) \(qmd://", out, flags=re.MULTILINE))

    def _sync_collections(self) -> None:
        """Add missing collections, re-add rebound ones (root or glob changed); roots that do not
        exist yet are added once they appear."""
        if not self._registered and self._state_file.is_file():
            try:
                self._registered = json.loads(self._state_file.read_text(encoding="utf-8"))
            except ValueError:
                self._registered = {}
        listed = self._listed_collections()
        changed = False
        for coll in self.collections:
            if not coll.root.is_dir():
                continue
            want = {"root": str(coll.root), "pattern": coll.pattern}
            if coll.name in listed and self._registered.get(coll.name) == want:
                continue
            if coll.name in listed:
                self.run("collection", "remove", coll.name)
            # adding a collection indexes its files: the next update's report counts them
            self._added_output += self.run("collection", "add", str(coll.root), "--name", coll.name, "--glob",
                                           coll.pattern, timeout_ms=self.cfg.update.update_timeout_ms,
                                           timeout_key="memory.qmd.update.updateTimeoutMs")
            self._registered[coll.name] = want
            changed = True
        if changed:
            self._state_file.write_text(json.dumps(self._registered, indent=1), encoding="utf-8")

    def _export_sessions(self) -> None:
        coll = next((c for c in self.collections if c.source == "sessions"), None)
        if coll is None:
            return
        from openclaw_memory.files.sessions import extract_session, list_session_files

        if self._exports is None:
            self._exports = SessionExports(coll.root, self._home / "session-exports.json",
                                           private=not self.cfg.sessions.export_dir)
        keep_days = self.cfg.sessions.retention_days
        exports: dict[str, str] = {}
        for path in list_session_files(self.config.resolved_sessions_dir()):
            try:
                if keep_days and time.time() - path.stat().st_mtime > keep_days * 86400:
                    continue
                doc = extract_session(path)
            except OSError:
                continue
            exports[f"{path.stem}.md"] = f"{export_header(path.stem)}\n{doc.content}\n"
        self._exports.write(exports)

    def _stat_snapshot(self) -> dict[str, tuple[int, int]]:
        """(mtime, size) of every file QMD indexes: each collection's glob under its root, the
        ``memory.qmd.paths`` ones included (sessions are exported by each update instead)."""
        snap: dict[str, tuple[int, int]] = {}
        for coll in self.collections:
            if coll.source == "sessions" or not coll.root.is_dir():
                continue
            for path in coll.root.glob(coll.pattern):
                try:
                    st = path.stat()
                except OSError:
                    continue
                if not path.is_dir():
                    snap[str(path)] = (st.st_mtime_ns, st.st_size)
        return snap

    def _ensure_ready(self) -> None:
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            if self._closed:
                raise QmdError("the QMD backend is closed")
            # an update of this index completed in an earlier run (and the index is still there)
            earlier = self._persisted_last_update() if self.index_path.is_file() else None
            self._prepare_dirs()
            self._export_sessions()
            self._sync_collections()
            if self.cfg.update.on_boot:
                if self.cfg.update.wait_for_boot_sync or earlier is None:
                    # nothing to search yet: this first update is awaited
                    self._boot_report = self._update(force=True)
                else:  # the index from an earlier run answers now; the boot update runs beside it
                    self._last_update = earlier
                    self._snapshot, self._scanned_at = self._stat_snapshot(), time.monotonic()  # it covers these
                    self._start_background(force=True)
            elif earlier is not None:  # no boot update: the earlier index answers, changed files update on search
                self._last_update = earlier
            self._ready = True

    def _debounced(self, last: float | None) -> bool:
        return last is not None and (time.time() - last) * 1000 < self.cfg.update.debounce_ms

    def _update(self, *, force: bool, if_changed: bool = False, wait: bool = True) -> SyncReport | None:
        """``qmd update``, then ``qmd embed`` when the search mode needs vectors and they are
        missing or old. Unless ``force``: skipped within ``debounceMs`` of the last update (by any
        process on this index), and, with ``if_changed``, when the files are as the last update
        saw them. Never two at once: a forced request waits for a running update, then runs; any
        other waits (``wait``) or returns None at once, and is then covered by the running one."""
        if not self._update_lock.acquire(blocking=force or wait):
            return None
        try:
            if self._closed:
                raise QmdError("the QMD backend is closed")
            if not force and self._debounced(self._last_update):
                return None
            try:
                self._update_flock.acquire(timeout=self.cfg.update.update_timeout_ms / 1000)
            except Timeout:
                raise QmdError(f"another process kept QMD's update lock ({self._update_flock.lock_file}) for "
                               f"{self.cfg.update.update_timeout_ms} ms (memory.qmd.update.updateTimeoutMs)") from None
            try:
                if not force and self._debounced(self._persisted_last_update()):
                    return None  # another process just updated this index
                return self._run_update(if_changed=if_changed and not force)
            finally:
                self._update_flock.release()
        finally:
            self._update_lock.release()

    def _run_update(self, *, if_changed: bool) -> SyncReport | None:
        started = time.perf_counter()
        snapshot = self._stat_snapshot()
        self._scanned_at = time.monotonic()
        if if_changed and snapshot == self._snapshot:
            return None
        self._export_sessions()
        self._sync_collections()
        out = self.run("update", timeout_ms=self.cfg.update.update_timeout_ms,
                       timeout_key="memory.qmd.update.updateTimeoutMs")
        added, self._added_output = self._added_output, ""
        self._last_update, self._snapshot = time.time(), snapshot
        self._files.clear()  # QMD may know other files now
        self._last_update_file.write_text(str(self._last_update), encoding="utf-8")
        self._arm_timer()
        report = SyncReport(reason="qmd update", files_scanned=len(snapshot))
        for new, updated, unchanged, removed in _INDEXED.findall(added + out):
            report.files_indexed += int(new) + int(updated)
            report.files_unchanged += int(unchanged)
            report.files_deleted += int(removed)
        # files a `collection add` just indexed are "unchanged" to the update after it
        report.files_unchanged = max(0, report.files_unchanged - sum(
            int(new) + int(updated) for new, updated, _, _ in _INDEXED.findall(added)))
        if self.cfg.search_mode != "search":
            self._embed_if_due(out)
        report.took_ms = (time.perf_counter() - started) * 1000
        return report

    def _arm_timer(self) -> None:
        """Schedule the next interval update (``update.interval`` after this one; 0 = never)."""
        interval = self.cfg.update.interval_ms()
        if interval <= 0 or self._closed:
            return
        if self._timer is not None:
            self._timer.cancel()
        # the timer holds the backend weakly: a backend dropped without close() is collected, ending its processes
        self._timer = threading.Timer(interval / 1000, _call_if_alive, [weakref.WeakMethod(self._background_update)])
        self._timer.daemon = True
        self._timer.start()

    def _start_background(self, *, force: bool = False) -> None:
        threading.Thread(target=self._background_update, kwargs={"force": force},
                         name="openclaw-memory-qmd-update", daemon=True).start()

    def _background_update(self, *, force: bool = False) -> None:
        """An update off the search path (boot, interval); its failure is logged and shown in status."""
        if self._closed:
            return
        try:
            self._update(force=force, wait=False)
            self._update_error = None
        except (QmdError, OSError) as exc:
            if self._closed:
                return  # its process was killed by close()
            self._update_error = str(exc)
            log.warning("background qmd update failed: %s", exc)
            self._arm_timer()  # try again after the next interval

    def _embed_if_due(self, update_output: str) -> None:
        """After ``qmd update`` (vector modes): ``qmd embed`` when ``embedInterval`` has passed and the update
        reported documents without vectors. No ``qmd status`` process: the update's own output says what is
        pending, and QMD's index file what the embed left."""
        due = self._last_embed is None or (time.time() - self._last_embed) * 1000 >= self.cfg.update.embed_interval_ms()
        if not due:
            return
        if vectors_pending(update_output):
            if time.time() < self._embed_retry_at:
                log.info("qmd embed failed %d time(s) in a row; next try in %.0f s", self._embed_failures,
                         self._embed_retry_at - time.time())
                return
            try:
                self._embed()
            except QmdError:
                self._embed_failures += 1
                self._embed_retry_at = time.time() + embed_backoff_s(self._embed_failures)
                raise
            self._embed_failures, self._embed_retry_at = 0, 0.0
        self._last_embed = time.time()

    def _embed(self) -> None:
        """``qmd embed``, holding the process-wide and the state dir's embed lock (waits for another
        agent's or process's embed, at most ``embedTimeoutMs``); QmdError when it fails or leaves no vectors."""
        self._require_models()
        timeout_s = self.cfg.update.embed_timeout_ms / 1000
        started = time.monotonic()
        in_process = _process_embed_lock(Path(self._embed_flock.lock_file))
        if not in_process.acquire(timeout=timeout_s):
            raise QmdError(f"another QMD index of this process kept embedding for {timeout_s:.0f} s "
                           "(memory.qmd.update.embedTimeoutMs)")
        try:
            Path(self._embed_flock.lock_file).parent.mkdir(parents=True, exist_ok=True)
            try:
                self._embed_flock.acquire(timeout=max(0.0, timeout_s - (time.monotonic() - started)))
            except Timeout:
                raise QmdError(f"another process kept QMD's embed lock ({self._embed_flock.lock_file}) for "
                               f"{timeout_s:.0f} s (memory.qmd.update.embedTimeoutMs)") from None
            try:
                self.run("embed", timeout_ms=self.cfg.update.embed_timeout_ms,
                         timeout_key="memory.qmd.update.embedTimeoutMs")
            except QmdError as exc:
                raise QmdError(f"{exc} — searchMode {self.cfg.search_mode!r} needs the vectors `qmd embed` "
                               "makes; run `qmd embed` to see why it fails, or use searchMode 'search'") from None
            finally:
                self._embed_flock.release()
        finally:
            in_process.release()
        counts = self._index_counts()
        if counts["documents"] > 0 and counts["vectors"] == 0:
            raise QmdError(f"the QMD index has 0 vectors; searchMode {self.cfg.search_mode!r} needs embeddings "
                           "(`qmd embed`)")

    def _maybe_update(self, deadline: float) -> None:
        """Before a search (spec §9.3). An update that is running (the boot update beside an index
        from an earlier run, an interval update) is waited for 500 ms at most. Memory files changed
        since the last update (``sync.on_search``): the update runs and the search waits for it until
        ``deadline`` (``time.monotonic()``; then it goes on in the background), unless the debounce holds.
        Files are compared (stat only) at most every 2 s, and not while the debounce holds. An index
        merely older than ``update.interval`` is updated in the background (as the original's interval
        timer does): the search does not wait."""
        if self._update_lock.locked():  # an update runs (boot, interval): wait for it 500 ms at most
            if self._update_lock.acquire(timeout=max(0.0, min(_PENDING_WAIT_S, deadline - time.monotonic()))):
                self._update_lock.release()
            return
        if self._last_update is None:  # never updated here (onBoot off): QMD may know nothing yet
            self._update(force=False)
            return
        if self._debounced(self._last_update):
            return
        scan_every = min(_SCAN_INTERVAL_S, self.cfg.update.debounce_ms / 1000)
        if self.config.sync.on_search and time.monotonic() - self._scanned_at >= scan_every:
            self._scanned_at = time.monotonic()
            if self._stat_snapshot() != self._snapshot:  # changed: wait for a running update, then update
                self._update_until(deadline)
                return
        interval = self.cfg.update.interval_ms()
        if interval > 0 and (time.time() - self._last_update) * 1000 >= interval:
            self._start_background()

    def _update_until(self, deadline: float) -> None:
        """An update of changed files that a search waits for until ``deadline``; raises its failure when it
        ended by then, else it goes on in the background (its failure is then logged and shown in status)."""
        failed: list[Exception] = []
        waited = threading.Event()

        def update() -> None:
            try:
                self._update(force=False, if_changed=True)
            except (QmdError, OSError) as exc:
                failed.append(exc)
                if waited.is_set() and not self._closed:
                    self._update_error = str(exc)
                    log.warning("qmd update failed: %s", exc)

        worker = threading.Thread(target=update, name="openclaw-memory-qmd-update", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        waited.set()
        if worker.is_alive():
            log.info("qmd update still runs after the search timeout; searching the index as it was")
        elif failed:
            raise failed[0]

    def _persisted_last_update(self) -> float | None:
        try:
            return float(self._last_update_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    # ---- search -----------------------------------------------------------------------------------

    def allows(self, session_key: str | None) -> bool:
        """Whether ``memory.qmd.scope`` lets this session search (first matching rule wins)."""
        kind = chat_type(session_key)
        for rule in self.cfg.scope.rules:
            m = rule.match
            if m.chat_type is not None and m.chat_type != kind:
                continue
            if m.key_prefix is not None and not (session_key or "").startswith(m.key_prefix):
                continue
            return rule.action == "allow"
        return self.cfg.scope.default == "allow"

    def _daemon(self, deadline: float) -> McpSession | None:
        """The warm ``qmd mcp`` session, started by ``deadline`` (``time.monotonic()``) at the latest."""
        if not self.cfg.daemon or self._daemon_error is not None:
            return None
        with self._lock:
            if self._session is not None and self._session.alive:
                return self._session
            if self._closed:
                raise QmdError("the QMD backend is closed")
            try:
                self._session = McpSession(self.argv, cwd=self.workspace, env=self.env,
                                           timeout_ms=max(1, int((deadline - time.monotonic()) * 1000)),
                                           processes=self._processes)
            except QmdError as exc:  # an older QMD without `qmd mcp`: one process per query
                self._daemon_error = str(exc)
                log.info("qmd mcp unavailable (%s); running one qmd process per query", exc)
                return None
            return self._session

    def _query(self, query: str, limit: int, deadline: float) -> tuple[list[QmdItem], bool]:
        names = [c.name for c in self.collections if c.name in self._registered]
        if not names:
            return [], False
        mode = self.cfg.search_mode
        if mode != "search":  # without them QMD would hang downloading a model, or answer nothing
            self._require_models()
            self._require_vectors()
        session = self._daemon(deadline)
        timeout = int((deadline - time.monotonic()) * 1000)  # what the update and the daemon's start left
        if timeout <= 0:
            why = f": {self._daemon_error}" if self._daemon_error else ""
            raise QmdError(f"qmd search timed out: QMD took the whole search timeout ({self.cfg.limits.timeout_ms} "
                           f"ms, memory.qmd.limits.timeoutMs) before the query{why}")
        if session is not None:
            args: dict[str, Any] = {"collections": names, "limit": limit, "minScore": 0}
            if mode == "query":
                args.update(query=query, rerank=True)
            else:
                lex = mode == "search"
                search = {"type": "lex" if lex else "vec",
                          "query": _closed_quotes(_lex_text(query)) if lex else _vec_text(query)}
                args.update(searches=[search], rerank=False)
            try:
                content = session.call_tool("query", args, timeout)
            except QmdError:
                with self._lock:
                    session.close()
                    self._session = None
                raise
            rows = content.get("results")
            if not isinstance(rows, list):
                raise QmdError(f"qmd mcp query returned no results list: {str(content)[:200]!r}")
            return to_items(rows), True
        cmd = [mode, "--json", "-n", str(limit)]
        for name in names:
            cmd += ["-c", name]
        cmd += ["--", _lex_text(query) if mode == "search" else query]  # a query starting with "-" is not an option
        return parse_items(self.run(*cmd, timeout_ms=timeout, timeout_key="memory.qmd.limits.timeoutMs")), False

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        session_key: str | None = None,
        sources: Sequence[str] | None = None,
        as_found: bool = False,
    ) -> SearchResult:
        """Search through QMD (spec §9.3); raises QmdError on any QMD failure (and on one remembered from
        another process, see :data:`FAILURE_HOLD_S`). QMD's hits are never folded together, so ``as_found``
        changes nothing here."""
        with self._remembering_failures():
            return self._search(query, max_results=max_results, min_score=min_score, session_key=session_key,
                                sources=sources)

    @contextmanager
    def _remembering_failures(self) -> Iterator[None]:
        """At this backend's first call, raise a failure remembered by an earlier process; remember a new
        failure; forget it on success."""
        held = None
        if not self._recalled:
            self._recalled = True
            held = self._failures.recall()
        if held is not None:
            ago = time.time() - held.at
            raise QmdError(f"{held.reason} (remembered from {ago:.0f} s ago; QMD is tried again "
                           f"{FAILURE_HOLD_S - ago:.0f} s from now, or after deleting {self._failures.path})")
        try:
            yield
        except QmdError as exc:
            if not self._closed:
                self._failures.remember(str(exc))
            raise
        if self._failures.path.exists():
            self._failures.forget()

    def _search(self, query: str, *, max_results: int | None, min_score: float | None, session_key: str | None,
                sources: Sequence[str] | None) -> SearchResult:
        started = time.perf_counter()
        mode = _RESULT_MODE[self.cfg.search_mode]

        def result(hits: list[SearchHit], empty: str | None = "no_match") -> SearchResult:
            return SearchResult(query=query, hits=hits, mode=mode, provider="qmd", model="qmd",
                                empty_reason=None if hits else empty, took_ms=(time.perf_counter() - started) * 1000)

        if not query or not query.strip():
            return result([])
        if not self.allows(session_key):
            return result([], "scope_denied")
        self._ensure_ready()
        # from here on the search waits for QMD at most limits.timeoutMs: an update of changed files (half of it
        # at most), the daemon's start and the query share it
        now, timeout_s = time.monotonic(), self.cfg.limits.timeout_ms / 1000
        deadline = now + timeout_s
        self._maybe_update(now + timeout_s / 2)
        limits = self.cfg.limits
        limit = max(1, min(limits.max_results, max_results or limits.max_results))
        # one line: QMD reads a multi-line query as a structured query document (and its MCP tool rejects one)
        items, numbered = self._query(_one_line(query), limit, deadline)
        floor = 0.0 if min_score is None else float(min_score)
        best: dict[tuple[str, int], SearchHit] = {}
        for item in items:
            hit = map_item(item, self._by_name, self.workspace, numbered=numbered,
                           max_snippet_chars=limits.max_snippet_chars, files=self._files, spans=self._spans)
            if hit is None or hit.score < floor or (sources is not None and hit.source not in sources):
                continue
            key = (hit.path, hit.start_line)
            if key not in best or hit.score > best[key].score:
                best[key] = hit
        hits = sorted(best.values(), key=lambda h: (-h.score, h.path, h.start_line))[:limit]
        if citations_enabled(self.config.citations, session_key):
            hits = [decorate_citation(h) for h in hits]
        budget = min(limits.max_injected_chars, self.config.query.max_injected_chars or limits.max_injected_chars)
        return result(clamp_injected(hits, budget))

    # ---- get ----------------------------------------------------------------------------------------

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> MemoryText:
        """``memory_get``: workspace paths follow the usual rules; ``qmd/<collection>/<rel>``
        (a hit outside the workspace) is read inside that collection's root."""
        norm = path.strip().replace("\\", "/") if isinstance(path, str) else path
        if isinstance(norm, str) and norm.startswith("qmd/"):
            _, name, rel = (norm.split("/", 2) + [""])[:3]
            coll = self._by_name.get(name)
            if coll is None or not rel:
                raise MemoryPathError(f"{path!r}: no QMD collection {name!r} (known: {', '.join(self._by_name)})")
            cand = Path(os.path.normpath(coll.root / rel))
            if cand != coll.root and coll.root not in cand.parents:
                raise MemoryPathError(f"{path!r}: qmd path escapes collection {name!r}")
            _, text, start, end, exists = discovery.get_lines(self.workspace, [coll.root], str(cand), from_line,
                                                              lines)
            return MemoryText(path=f"qmd/{name}/{cand.relative_to(coll.root).as_posix()}", text=text, exists=exists,
                              start_line=start, end_line=end)
        rel_path, text, start, end, exists = discovery.get_lines(self.workspace, self._read_roots, path, from_line,
                                                                 lines)
        return MemoryText(path=rel_path, exists=exists, text=text, start_line=start, end_line=end)

    # ---- sync, status, close --------------------------------------------------------------------------

    def sync(self, *, force: bool = False, reason: str = "manual") -> SyncReport:
        """Run ``qmd update`` now (and ``qmd embed`` for the vector modes when due). The first sync of a
        process reports what the boot update (awaited for a new index) indexed rather than update again."""
        with self._remembering_failures():
            first = not self._ready
            self._ensure_ready()
            with self._lock:
                boot, self._boot_report = self._boot_report, None
            report = (boot if first else None) or self._update(force=True) or SyncReport(reason=reason)
        report.reason = reason
        return report

    def _registered_now(self) -> dict[str, dict[str, str]]:
        """The collections registered with QMD, as this process or the state file knows them."""
        if self._registered or not self._state_file.is_file():
            return self._registered
        try:
            found = json.loads(self._state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def _index_counts(self) -> dict[str, int]:
        """The documents and vectors ``qmd status`` counts (active documents, embedded chunks), read
        from QMD's own index file: read-only SQL, no qmd process. QmdError when it cannot be read."""
        if not self.index_path.is_file():
            raise QmdError(f"no QMD index yet at {self.index_path} (the first search or sync builds it)")
        try:
            con = sqlite3.connect(f"{self.index_path.as_uri()}?mode=ro", uri=True, timeout=1.0)
            try:
                docs = con.execute("SELECT count(*) FROM documents WHERE active = 1").fetchone()[0]
                vectors = con.execute("SELECT count(*) FROM content_vectors").fetchone()[0]
            finally:
                con.close()
        except sqlite3.Error as exc:
            raise QmdError(f"could not read QMD's index {self.index_path}: {exc}") from None
        return {"documents": int(docs), "vectors": int(vectors)}

    def status(self) -> BackendStatus:
        """Version, collections, last update, documents and whether vectors are available.

        Read-only and cheap: it never updates QMD's index nor registers collections, and reads the
        counts from QMD's index file; the only process it may start is one ``qmd --version``
        (cached) per backend."""
        registered = self._registered_now()
        held = self._failures.recall()
        version = None if held is not None else self.version()  # a remembered failure: no process at all
        details: dict[str, Any] = {
            "command": redact(self.cfg.command),  # it may carry a credential (env HF_TOKEN=… qmd)
            "version": version,
            "command_error": None if version is not None or held is not None else self._version_error,
            "failure": None if held is None else {"reason": held.reason, "at": _iso(held.at),
                                                  "retry_at": _iso(held.at + FAILURE_HOLD_S)},
            "search_mode": self.cfg.search_mode,
            "index_path": str(self.index_path),
            "collections": [{"name": c.name, "path": str(c.root), "pattern": c.pattern,
                             "registered": c.name in registered, "folder_exists": c.root.is_dir()}
                            for c in self.collections],
            "last_update_at": _iso(self._last_update or self._persisted_last_update()),
            "last_update_error": self._update_error,
            "daemon": {"enabled": self.cfg.daemon,
                       "running": self._session is not None and self._session.alive,
                       "error": self._daemon_error},
        }
        # QMD's own counts, never the builtin index's: documents (what BM25 searches), and its embedded chunks
        files = chunks = 0
        try:
            counts = self._index_counts()
            files = counts["documents"]
            vectors = counts["vectors"]
            chunks = vectors or files
            details["vectors"] = {"available": vectors > 0, "count": vectors,
                                  "error": None if vectors else "QMD index has 0 vectors (run `qmd embed`)"}
        except QmdError as exc:
            details["error"] = str(exc)
            details["vectors"] = {"available": False, "count": None, "error": str(exc)}
        fallback = None if held is None else {"from": "qmd", "reason": held.reason}  # what the next search does
        return BackendStatus(backend="qmd", provider="qmd", model="qmd", search_mode=self.cfg.search_mode,
                             files=files, chunks=chunks, fallback=fallback, details=details)

    def close(self) -> None:
        """Stop the warm ``qmd mcp`` session and kill every QMD process still running (an update or
        ``qmd embed`` in the background); idempotent."""
        self._closed = True
        self._processes.kill_all()  # first: a background update holding the lock dies now
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._session is not None:
                self._session.close(grace_s=0)
                self._session = None
