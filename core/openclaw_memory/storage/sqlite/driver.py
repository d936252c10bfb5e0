"""The one place that picks a SQLite driver and loads sqlite-vec.

Order: the stdlib ``sqlite3`` when it can load extensions, then ``sqlean`` (``sqlean.py``), then
``pysqlite3``; the first one where ``sqlite-vec`` loads wins. When none can load it, the stdlib
driver is used and vectors are searched with numpy. :class:`DriverChoice` records what was tried
and why, so ``status()`` can say exactly why anything is degraded.
"""

from __future__ import annotations

import importlib
import logging
import time
import sqlite3 as _stdlib_sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["DriverChoice", "choose_driver", "connect", "connect_read_only", "fts5_available"]

log = logging.getLogger(__name__)

_CANDIDATES: tuple[tuple[str, str], ...] = (
    ("sqlite3", "sqlite3"),
    ("sqlean", "sqlean"),
    ("pysqlite3", "pysqlite3.dbapi2"),
)


@dataclass
class DriverChoice:
    """The chosen DB-API module and whether sqlite-vec loads through it."""

    name: str
    module: ModuleType
    vec_loaded: bool
    vec_version: str | None = None
    vec_error: str | None = None
    tried: list[str] = field(default_factory=list)

    @property
    def sqlite_version(self) -> str:
        return str(self.module.sqlite_version)


def _load_vec(conn: Any, extension_path: str | None) -> str:
    """Load sqlite-vec into ``conn``; return its version or raise."""
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError("this SQLite driver was built without extension loading (enable_load_extension missing)")
    conn.enable_load_extension(True)
    try:
        if extension_path:
            conn.load_extension(str(Path(extension_path).expanduser()))
        else:
            import sqlite_vec

            sqlite_vec.load(conn)
    finally:
        try:
            conn.enable_load_extension(False)
        except Exception:  # pragma: no cover - driver-specific
            pass
    return str(conn.execute("select vec_version()").fetchone()[0])


def choose_driver(*, vector_enabled: bool = True, extension_path: str | None = None) -> DriverChoice:
    """Find the first driver that loads sqlite-vec (or the stdlib when vectors are disabled)."""
    if not vector_enabled:
        return DriverChoice("sqlite3", _stdlib_sqlite3, False, vec_error="disabled in config (store.vector.enabled=false)")
    if extension_path is None:
        try:
            importlib.import_module("sqlite_vec")
        except ImportError:
            return DriverChoice(
                "sqlite3",
                _stdlib_sqlite3,
                False,
                vec_error="the sqlite-vec package is not installed (pip install 'openclaw-memory[vec]')",
            )
    tried: list[str] = []
    for name, module_name in _CANDIDATES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            tried.append(f"{name}: not installed")
            continue
        try:
            conn = module.connect(":memory:")
        except Exception as exc:  # pragma: no cover - broken driver build
            tried.append(f"{name}: cannot open a database ({exc})")
            continue
        try:
            version = _load_vec(conn, extension_path)
        except Exception as exc:
            tried.append(f"{name}: {exc}")
            continue
        finally:
            conn.close()
        return DriverChoice(name, module, True, vec_version=version, tried=tried)
    reason = "sqlite-vec could not be loaded by any SQLite driver (" + "; ".join(tried) + ")"
    log.warning("%s; vector search falls back to numpy", reason)
    return DriverChoice("sqlite3", _stdlib_sqlite3, False, vec_error=reason, tried=tried)


def _set_wal(conn: Any, module: Any, timeout_s: float) -> None:
    """``PRAGMA journal_mode = WAL``, retried: SQLite reports "database is locked" at once, without its
    busy handler, when another connection opens or converts the same new file at that moment."""
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except module.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def connect(choice: DriverChoice, path: Path, *, extension_path: str | None = None, busy_timeout_ms: int = 5000) -> Any:
    """Open ``path`` with the chosen driver: WAL, busy timeout, sqlite-vec loaded when available."""
    conn = choice.module.connect(str(path), check_same_thread=False, isolation_level=None, timeout=busy_timeout_ms / 1000)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    _set_wal(conn, choice.module, busy_timeout_ms / 1000)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = OFF")
    if choice.vec_loaded:
        _load_vec(conn, extension_path)
    return conn


def connect_read_only(choice: DriverChoice, path: Path, *, extension_path: str | None = None) -> Any:
    """Open an existing index that cannot be written here (read-only directory, file or mount), read-only;
    sqlite-vec loaded when available. A WAL index whose ``-shm`` file cannot be created is opened
    ``immutable`` (as it is on disk)."""
    module = choice.module
    uri = Path(path).resolve().as_uri()
    try:
        conn = module.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except module.Error:
        conn = module.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False, isolation_level=None)
    if choice.vec_loaded:
        _load_vec(conn, extension_path)
    return conn


def fts5_available(conn: Any) -> tuple[bool, str | None]:
    """Whether FTS5 works on this connection, and the error when it does not."""
    try:
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.__fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE IF EXISTS temp.__fts5_probe")
        return True, None
    except Exception as exc:
        return False, f"FTS5 is not available in SQLite {getattr(conn, 'sqlite_version', '')}: {exc}"
