"""SQLiteStore: the embedded index (FTS5 for keywords, sqlite-vec or numpy for vectors).

Tables mirror the original: ``meta``, ``files``, ``chunks``, ``embedding_cache``, the FTS5
table ``chunks_fts`` and the vec0 table ``chunks_vec``. Vectors are stored as float32 BLOBs in
``chunks.embedding`` (the source of truth); ``chunks_vec`` is an index over them, so the numpy
path always works, even on a driver that cannot load sqlite-vec. ``chunks_vec`` (its layout, its
migration, its upkeep on writes and its KNN search) lives in :mod:`openclaw_memory.storage.sqlite.vec_index`;
the in-memory numpy copy of the vectors and its background loader in
:mod:`openclaw_memory.storage.sqlite.vector_cache`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
from filelock import FileLock, Timeout

from openclaw_memory.text.chunker import indexed_text
from openclaw_memory.errors import ConfigError, StoreError
from openclaw_memory.text.note_dates import NOTE_DATES_IN_KEYWORD_INDEX, note_date_words
from openclaw_memory.storage.lock_wait import wait_for_lock
from openclaw_memory.storage.sqlite.driver import (
    DriverChoice,
    choose_driver,
    connect,
    connect_read_only,
    fts5_available,
)
from openclaw_memory.storage.sqlite.rows import CHUNK_COLUMNS, chunk_from_row, chunk_rows, pack_vector, unpack_vector
from openclaw_memory.storage.sqlite.vec_index import VecIndex
from openclaw_memory.storage.sqlite.vector_cache import VectorCache, VectorMatrix, stored_scores, unit_rows
from openclaw_memory.storage import META_KEY, CacheKeys, FileRecord, IndexMeta, StoreInfo, StoredChunk
from openclaw_memory.text.preparation import FTS_PORTER_TOKENIZER, FTS_TOKENIZER, FTS_TOKENIZER_ID, segment_for_fts
from openclaw_memory.types import Candidate, MemoryFile

__all__ = ["SQLiteStore", "recorded_workspace"]

log = logging.getLogger(__name__)

_GENERATION_KEY = "generation"
#: Words of SQLite's messages for a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB, a damaged FTS5/vec0 table).
_DAMAGE_MARKERS = ("malformed", "not a database", "file is encrypted", "corrupt")
_SIDE_FILES = ("-wal", "-shm")
#: index files up to this size get a full ``PRAGMA quick_check`` when opened (about 0.3 s at 32 MB here)
_FULL_CHECK_BYTES = 32 * 1024 * 1024
#: The full check is skipped when the file (and its WAL) is exactly as it was at the last check that
#: passed: same device, inode, size and mtime, recorded in ``<index>.checked``. A file modified less
#: than this long before the check is not recorded (a write within the mtime's granularity could
#: leave the mtime unchanged), so it is checked again at the next open.
_CHECKED_SUFFIX = ".checked"
_TRUST_AFTER_NS = 2_000_000_000
#: meta key present (value "chunks") when every chunks_fts row has the rowid of the chunk it indexes;
#: indexes built before that join through the FTS row's id column and are rebuilt by the next sync.
_FTS_ROWIDS_KEY = "fts_rowids"
#: meta key naming the workspace (its resolved absolute path) whose memory the index holds
_WORKSPACE_KEY = "workspace"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
  path TEXT PRIMARY KEY, source TEXT NOT NULL DEFAULT 'memory',
  hash TEXT NOT NULL, mtime INTEGER NOT NULL, size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
  id TEXT PRIMARY KEY, path TEXT NOT NULL, source TEXT NOT NULL DEFAULT 'memory',
  start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL,
  model TEXT NOT NULL, text TEXT NOT NULL, embedding BLOB, updated_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS idx_chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS idx_chunks_source ON chunks(source);
CREATE TABLE IF NOT EXISTS embedding_cache (
  provider TEXT NOT NULL, model TEXT NOT NULL, provider_key TEXT NOT NULL, hash TEXT NOT NULL,
  embedding BLOB NOT NULL, dims INTEGER, updated_at INTEGER NOT NULL,
  PRIMARY KEY (provider, model, provider_key, hash));
CREATE INDEX IF NOT EXISTS idx_embedding_cache_updated_at ON embedding_cache(updated_at);
"""


_F = TypeVar("_F", bound=Callable[..., Any])


def _store_errors(doing: str) -> Callable[[_F], _F]:
    """Make a public method raise StoreError (the driver's error as its cause) instead of the
    driver's own exception classes, which differ between sqlite3, sqlean and pysqlite3."""

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
            with self._translated(doing):
                return fn(self, *args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def _now_ms() -> int:
    return int(time.time() * 1000)


def _generation_at(db: Any, inode: int | None) -> str:
    """The index generation as read through ``db`` (inside its transaction, if one is open)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (_GENERATION_KEY,)).fetchone()
    return f"{inode}:{row[0] if row else 0}"


def _bump_generation(db: Any) -> None:
    """Advance the index generation (inside the caller's write transaction)."""
    db.execute(
        "INSERT INTO meta(key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET "
        "value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
        (_GENERATION_KEY,),
    )


def _may_be_index_file(path: Path) -> bool:
    """Whether a file that SQLite cannot read may still be an index this library made (see _quarantine)."""
    if path.suffix.lower() in (".sqlite", ".sqlite3", ".db"):
        return True
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return not head or head == b"SQLite format 3\x00"


def recorded_workspace(path: str | os.PathLike[str]) -> str | None:
    """The workspace an existing index file records as its own (see ``SQLiteStore(workspace=...)``), read
    without writing; None when the file has none (an index of an earlier version) or cannot be read."""
    try:
        peek = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            row = peek.execute("SELECT value FROM meta WHERE key = ?", (_WORKSPACE_KEY,)).fetchone()
        finally:
            peek.close()
    except (sqlite3.Error, ValueError):
        return None
    return str(row[0]) if row else None


class SQLiteStore:
    """The embedded :class:`~openclaw_memory.storage.MemoryStore` on one SQLite file.

    Thread-safe (one connection guarded by a lock). ``vector_enabled=False`` forces the numpy
    vector path; ``fts_tokenizer`` is ``"unicode61"`` (with CJK/Thai segmentation), ``"porter"`` (the same
    plus English stemming) or ``"trigram"``. ``fts_note_dates`` (``store.fts.note_dates``): the keyword index
    also holds a dated note's date as words with each of its chunks (``memory/2023-10-13.md`` →
    "13 October 2023"; not with a ``trigram`` tokenizer), so a query that names the day finds that day's chunks.
    ``memory_cache`` (with sqlite-vec loaded): vector searches run on an in-memory numpy copy of the
    vectors once it is loaded for the current index generation; until then they use vec0 while the
    copy loads in a background thread. ``memory_cache=False`` always uses vec0 (numpy only where vec0
    cannot answer: a ``limit`` above 2048, or no usable ``chunks_vec`` of the query's dimension).
    Every path returns the same chunks in the same order with the same scores.
    ``workspace`` (the workspace's resolved path) is recorded in the index on first open; opening an index
    recorded for another workspace raises ConfigError, as two workspaces sharing one index file would
    overwrite each other's index (an index without a record, from an earlier version, is claimed).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        vector_enabled: bool = True,
        extension_path: str | None = None,
        fts_tokenizer: str = "unicode61",
        driver: DriverChoice | None = None,
        memory_cache: bool = True,
        fts_note_dates: bool = NOTE_DATES_IN_KEYWORD_INDEX,
        workspace: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.workspace = workspace
        self.fts_note_dates = fts_note_dates and fts_tokenizer != "trigram"
        self.vector_enabled = vector_enabled
        self.memory_cache = memory_cache
        self.extension_path = extension_path
        self.fts_tokenizer = fts_tokenizer
        self._driver = driver or choose_driver(vector_enabled=vector_enabled, extension_path=extension_path)
        self._lock = threading.RLock()
        self._file_lock = FileLock(str(self.path) + ".lock")
        self._vector_cache = VectorCache(self.path, self._driver.module, _generation_at)
        self._vec = VecIndex(self.path, self._driver.vec_loaded, _bump_generation)
        self._conn: Any = None
        self._inode: int | None = None
        self.read_only = False
        self._read_only_reason: str | None = None
        self.recovered: str | None = None  # what was done when the file was found damaged (for status)
        self._identity_at_open: list[int] | None = None  # the file as found, for _quick_check
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                with self._text_damage():
                    self._identity_at_open = self._file_identity()
                    self._open()
                    self._quick_check()
            except self._driver.module.DatabaseError as exc:
                if not self.is_damage(exc):
                    raise
                self._quarantine(str(exc))
        except (StoreError, ConfigError):
            self._close_failed_open()
            raise
        except Exception as exc:
            self._close_failed_open()  # the file stays open otherwise (an unmount of it is then busy)
            raise StoreError(f"cannot open the memory index at {self.path}: {exc}. "
                             "Check that the directory is writable, or delete the file to rebuild it.") from exc

    # ---- connection -------------------------------------------------------------------------

    def _close_failed_open(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()

    def _open(self) -> None:
        self._refuse_foreign_index()
        self.read_only = False
        try:
            self._conn = connect(self._driver, self.path, extension_path=self.extension_path)
            self._conn.executescript(_SCHEMA)
            # its first writes (the workspace record) too: a read-only file in a writable directory opens and
            # reads its schema, and only a write says it is read-only
            self._finish_open()
        except self._driver.module.OperationalError as exc:
            if not self._can_read_only(exc):
                raise
            self._open_read_only(exc)

    def _can_read_only(self, exc: BaseException) -> bool:
        """Whether a failed open is a permission problem with an existing index (read it as it is)."""
        if not self.path.is_file():
            return False
        text = str(exc).lower()
        return "readonly" in text or "read-only" in text or not os.access(self.path.parent, os.W_OK) \
            or not os.access(self.path, os.W_OK)

    def _open_read_only(self, why: BaseException) -> None:
        """Open an index that cannot be written here (read-only directory, file or mount): searches work,
        syncs fail with a clear error."""
        with contextlib.suppress(Exception):
            if self._conn is not None:
                self._conn.close()
        self._conn = connect_read_only(self._driver, self.path, extension_path=self.extension_path)
        self.read_only = True
        self._read_only_reason = f"the index at {self.path} cannot be written ({why}); it is searched as it is"
        log.warning("%s", self._read_only_reason)
        self._finish_open()

    def _finish_open(self) -> None:
        self._fts_ok, self._fts_error = fts5_available(self._conn)
        self._fts_aligned = False
        #: the last whole-index "recent" search with a prefix phrase: (key, generation, rows); see keyword_search
        self._recent_memo: tuple[tuple[str, tuple[str, ...], int], str, list[Any]] | None = None
        if self._fts_ok:
            tok = {"trigram": "trigram case_sensitive 0", "porter": FTS_PORTER_TOKENIZER}.get(self.fts_tokenizer,
                                                                                            FTS_TOKENIZER)
            new = self._conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_fts'").fetchone() is None
            self._conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, id UNINDEXED, path UNINDEXED, "
                f"source UNINDEXED, model UNINDEXED, start_line UNINDEXED, end_line UNINDEXED, tokenize='{tok}')"
            )
            if new:  # this table's rows share their rowid with the chunk they index
                self._conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (_FTS_ROWIDS_KEY, "chunks"))
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (_FTS_ROWIDS_KEY,)).fetchone()
            self._fts_aligned = row is not None and row[0] == "chunks"
        self._vec.open(self._conn)
        self._inode = self.path.stat().st_ino
        self._vector_cache.drop()
        self._claim_workspace()

    def _claim_workspace(self) -> None:
        """Record ``workspace`` as the one this index holds, or refuse another one (ConfigError)."""
        if self.workspace is None:
            return
        if not self.read_only:
            self._conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (_WORKSPACE_KEY, self.workspace))
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (_WORKSPACE_KEY,)).fetchone()
        if row is not None and row[0] != self.workspace:
            raise ConfigError(
                f"the index {self.path} holds the memory of the workspace {row[0]!r}, not of {self.workspace!r}: "
                "two workspaces in one index would overwrite each other's. Give this workspace its own "
                "store.path (or --store), or leave store.path unset (one index per workspace by default); if the "
                "workspace moved, delete the index file (the next sync rebuilds it from the Markdown)"
            )

    def _file_identity(self) -> list[int] | None:
        """Device, inode, size and mtime of the index file and of its WAL (``-1`` when absent); None
        when the file does not exist."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        try:
            wal = os.stat(str(self.path) + "-wal")
            wal_id = [wal.st_size, wal.st_mtime_ns]
        except OSError:
            wal_id = [-1, -1]
        return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, *wal_id]

    def _checked_file(self) -> Path:
        return self.path.with_name(self.path.name + _CHECKED_SUFFIX)

    def _already_checked(self, identity: list[int] | None) -> bool:
        """Whether a full check already passed on the file exactly as it is now."""
        if identity is None:
            return False
        try:
            return json.loads(self._checked_file().read_text(encoding="utf-8")) == identity
        except (OSError, ValueError):
            return False

    def _remember_checked(self, identity: list[int] | None) -> None:
        if identity is None or time.time_ns() - max(identity[3], identity[5]) < _TRUST_AFTER_NS:
            return  # too fresh to trust its mtime (or no file): check again next time
        target = self._checked_file()
        tmp = target.with_name(f"{target.name}.{uuid.uuid4().hex}.tmp")
        try:
            tmp.write_text(json.dumps(identity), encoding="utf-8")
            os.replace(tmp, target)
        except OSError:  # a read-only directory: the check just runs at every open
            with contextlib.suppress(OSError):
                tmp.unlink()

    def _quick_check(self) -> None:
        """``PRAGMA quick_check`` of the open file; only of its small tables when the file is above
        ``_FULL_CHECK_BYTES`` or unchanged since a full check passed (as :meth:`_file_identity` saw it
        just before the open). Damage elsewhere surfaces as a driver error on read, handled the same
        way. A damaged file raises the driver's DatabaseError."""
        identity = self._identity_at_open
        try:
            full = self.path.stat().st_size <= _FULL_CHECK_BYTES
        except OSError:
            full = True
        full = full and not self._already_checked(identity)
        rows = self._conn.execute("PRAGMA quick_check").fetchall() if full else [
            r for t in ("meta", "files") for r in self._conn.execute(f"PRAGMA quick_check({t})").fetchall()
            if tuple(r) != ("ok",)] or [("ok",)]
        if [tuple(r) for r in rows] != [("ok",)]:
            detail = "; ".join(str(r[0]) for r in rows[:3])
            raise self._driver.module.DatabaseError(f"database disk image is malformed (quick_check: {detail})")
        if full and not self.read_only:
            self._remember_checked(identity)

    def is_damage(self, exc: BaseException) -> bool:
        """Whether ``exc``, or an error in its ``__cause__`` chain (a StoreError translated from the
        driver's, an IndexingError over that), is a driver error saying the index file is damaged."""
        return self._damage_in(exc) is not None

    def _damage_in(self, exc: BaseException) -> BaseException | None:
        """The driver error in ``exc``'s ``__cause__`` chain that says the file is damaged, or None."""
        seen: set[int] = set()
        err: BaseException | None = exc
        while err is not None and id(err) not in seen:
            seen.add(id(err))
            if isinstance(err, self._driver.module.DatabaseError) and any(
                    m in str(err).lower() for m in _DAMAGE_MARKERS):
                return err
            err = err.__cause__
        return None

    def _quarantine(self, why: str) -> str:
        """Move the damaged index file (and its WAL) aside and open a new, empty index in its place.

        Only a file that is an index: one with SQLite's header, or named like one (``.sqlite``,
        ``.sqlite3``, ``.db``: its header may be what is damaged). Anything else (a store path that
        points at someone's notes) is left alone: StoreError."""
        if not _may_be_index_file(self.path):
            raise StoreError(f"{self.path} is not a SQLite database and not named like an index (.sqlite); it was "
                             "left untouched. Point store.path at an index file (default: "
                             "<state dir>/memory/<agent>.openclaw-memory.sqlite)")
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None
            aside = f"{self.path}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
            try:
                os.replace(self.path, aside)
            except FileNotFoundError:
                pass
            for suffix in _SIDE_FILES:
                with contextlib.suppress(OSError):
                    os.replace(str(self.path) + suffix, aside + suffix)
            with contextlib.suppress(OSError):
                self._checked_file().unlink()  # it described the damaged file
            self._open()
            self.recovered = (f"the index file was damaged ({why}); it was moved aside to {aside} "
                              "and a new index is built from the Markdown files")
            log.warning("%s", self.recovered)
            return self.recovered

    def recover_from_damage(self, exc: BaseException) -> str | None:
        """If ``exc`` says the file is damaged, move it aside, start an empty index and return what was
        done; otherwise None (the error was something else). StoreError when it cannot be moved aside."""
        damage = self._damage_in(exc)
        if damage is None:
            return None
        try:
            return self._quarantine(str(damage))
        except (OSError, self._driver.module.Error) as err:
            raise StoreError(f"the memory index at {self.path} is damaged ({damage}) and could not be replaced "
                             f"({err}); delete the file to rebuild it from the Markdown") from err

    def _refuse_foreign_index(self) -> None:
        """Never touch OpenClaw's (TypeScript) own index, whose ``chunks.embedding`` is JSON TEXT.

        Peeks read-only before opening, so not even the journal mode of such a file changes.
        """
        if not self.path.exists():
            return
        try:
            peek = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                cols = peek.execute("PRAGMA table_info(chunks)").fetchall()
            finally:
                peek.close()
        except (sqlite3.Error, UnicodeDecodeError):
            return  # unreadable here: the real open reports the problem
        if any(c[1] == "embedding" and str(c[2]).upper() == "TEXT" for c in cols):
            raise StoreError(
                f"{self.path} is an index written by OpenClaw itself (different schema); this library keeps "
                "its own index beside it. Set store.path (or --store) to another file, e.g. "
                f"{self.path.with_suffix('')}.openclaw-memory.sqlite"
            )

    def _db(self) -> Any:
        """The connection, reopened if another process swapped in a rebuilt index file."""
        if self._conn is None:
            raise StoreError(f"the memory index at {self.path} is closed")
        try:
            inode = self.path.stat().st_ino
        except FileNotFoundError:
            inode = None
        if inode is not None and inode != self._inode:
            log.info("index file %s was replaced by a rebuild; reopening", self.path)
            with contextlib.suppress(Exception):
                self._conn.close()
            self._open()
        return self._conn

    @contextlib.contextmanager
    def _tx(self) -> Iterator[Any]:
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                if db.in_transaction:  # an error such as SQLITE_FULL may have rolled it back already
                    db.execute("ROLLBACK")
                raise
            else:
                _bump_generation(db)
                db.execute("COMMIT")

    @contextlib.contextmanager
    def _text_damage(self) -> Iterator[None]:
        """Text the driver cannot decode as UTF-8 (this library writes only UTF-8: a damaged byte, e.g. in a
        name in ``sqlite_master``) becomes the driver's DatabaseError for a malformed file, i.e. damage."""
        try:
            yield
        except UnicodeDecodeError as exc:
            raise self._driver.module.DatabaseError(
                f"database disk image is malformed (text that is not UTF-8: {exc})") from exc

    @contextlib.contextmanager
    def _translated(self, doing: str) -> Iterator[None]:
        """Driver errors and OS errors inside become StoreError (nested uses translate once); so does text
        that is not UTF-8 (see :meth:`_text_damage`)."""
        try:
            with self._text_damage():
                yield
        except (self._driver.module.Error, OSError) as exc:
            raise StoreError(f"{doing} the memory index at {self.path} failed: {exc}") from exc

    def _fts_text(self, text: str, path: str | None = None) -> str:
        """What the keyword index holds for a chunk of ``path``: its text without record markers (segmented), plus
        the note's date as words with ``fts_note_dates`` (only searched: results return the chunk's own text)."""
        text = indexed_text(text)  # a record's markers are not keyword-indexed
        if self.fts_tokenizer == "trigram":
            return text
        dated = note_date_words(path) if self.fts_note_dates and path else None
        return segment_for_fts(text) + ("\n" + dated if dated else "")

    # ---- meta -------------------------------------------------------------------------------

    @_store_errors("reading")
    def read_meta(self) -> IndexMeta | None:
        with self._lock:
            row = self._db().execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
        if not row:
            return None
        try:
            return IndexMeta.from_json(json.loads(row[0]))
        except (ValueError, TypeError):
            return None

    @_store_errors("writing")
    def write_meta(self, meta: IndexMeta) -> None:
        value = json.dumps(meta.to_json(), separators=(",", ":"))
        with self._tx() as db:
            db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (META_KEY, value),
            )

    @_store_errors("reading")
    def generation(self) -> str:
        """Changes whenever any write commits (from any process)."""
        with self._lock:
            db = self._db()
            return _generation_at(db, self._inode)

    # ---- files and chunks ----------------------------------------------------------------------

    @_store_errors("reading")
    def file_records(self, source: str | None = None) -> dict[str, FileRecord]:
        sql = "SELECT path, source, hash, mtime, size FROM files"
        args: tuple[Any, ...] = ()
        if source:
            sql += " WHERE source = ?"
            args = (source,)
        with self._lock:
            rows = self._db().execute(sql, args).fetchall()
        return {r[0]: FileRecord(r[0], r[1], r[2], float(r[3]), int(r[4])) for r in rows}

    def _delete_rows(self, db: Any, path: str, source: str | None, vec: bool) -> None:
        where, args = ("path = ? AND source = ?", (path, source)) if source else ("path = ?", (path,))
        ids = [r[0] for r in db.execute(f"SELECT id FROM chunks WHERE {where}", args).fetchall()]
        if vec and ids:
            self._vec.delete(db, ids)
        if self._fts_ok and self._fts_aligned:
            db.execute(f"DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE {where})", args)
        elif self._fts_ok:
            db.execute(f"DELETE FROM chunks_fts WHERE {where}", args)  # scans every FTS row
        db.execute(f"DELETE FROM chunks WHERE {where}", args)

    @_store_errors("writing")
    def replace_file(self, file: MemoryFile, chunks: Sequence[StoredChunk], *,
                     rowids: Sequence[int] | None = None) -> None:
        """Store ``file``'s ``chunks`` in place of what it held. ``rowids``: the rowid each chunk takes (a copy of
        another store keeps that store's order of indexing: ties and "most recent" come out alike)."""
        now = _now_ms()
        with self._tx() as db:
            dims = next((int(c.embedding.size) for c in chunks if c.embedding is not None and c.embedding.size),
                        None)
            vec_dims = self._vec.for_write(db, dims)
            self._delete_rows(db, file.path, None, vec_dims is not None)
            blobs = [pack_vector(c.embedding) if c.embedding is not None else None for c in chunks]
            if vec_dims is not None:  # before the chunks are stored: it looks up which ids move from another file
                self._vec.write(db, chunks, blobs, vec_dims)
            for at, (c, emb) in enumerate(zip(chunks, blobs)):
                if self._fts_ok and self._fts_aligned:  # the same id under another path: drop its FTS row too
                    db.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE id = ?)", (c.id,))
                cur = db.execute(
                    "INSERT OR REPLACE INTO chunks(rowid, id, path, source, start_line, end_line, hash, model, text, "
                    "embedding, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (None if rowids is None else int(rowids[at]), c.id, c.path, c.source, c.start_line, c.end_line,
                     c.hash, c.model, c.text, emb, now),
                )
                if self._fts_ok:
                    db.execute(
                        "INSERT INTO chunks_fts(rowid, text, id, path, source, model, start_line, end_line) "
                        "VALUES (?,?,?,?,?,?,?,?)",
                        (cur.lastrowid if self._fts_aligned else None, self._fts_text(c.text, c.path), c.id, c.path,
                         c.source, c.model, c.start_line, c.end_line),
                    )
            db.execute(
                "INSERT INTO files(path, source, hash, mtime, size) VALUES (?,?,?,?,?) ON CONFLICT(path) DO UPDATE "
                "SET source = excluded.source, hash = excluded.hash, mtime = excluded.mtime, size = excluded.size",
                (file.path, file.source, file.hash, file.mtime_ms, file.size),
            )

    @_store_errors("writing")
    def touch_file(self, file: MemoryFile) -> None:
        with self._lock:
            self._db().execute(
                "UPDATE files SET mtime = ?, size = ? WHERE path = ?", (file.mtime_ms, file.size, file.path)
            )

    @_store_errors("writing")
    def delete_file(self, path: str, source: str | None = None) -> None:
        with self._tx() as db:
            self._delete_rows(db, path, source, self._vec.for_write(db, None) is not None)
            if source:
                db.execute("DELETE FROM files WHERE path = ? AND source = ?", (path, source))
            else:
                db.execute("DELETE FROM files WHERE path = ?", (path,))

    def iter_chunks(self, source: str | None = None) -> Iterator[StoredChunk]:
        for r in self._chunk_rows(source):
            yield chunk_from_row(r)

    @_store_errors("reading")
    def _chunk_rows(self, source: str | None) -> list[Any]:
        sql = f"SELECT {CHUNK_COLUMNS} FROM chunks"
        args: tuple[Any, ...] = ()
        if source:
            sql += " WHERE source = ?"
            args = (source,)
        sql += " ORDER BY path, start_line, id"
        with self._lock:
            return list(self._db().execute(sql, args).fetchall())

    @_store_errors("reading")
    def get_chunks(self, ids: Sequence[str]) -> list[StoredChunk]:
        out: dict[str, StoredChunk] = {}
        with self._lock:
            db = self._db()
            for r in chunk_rows(db, CHUNK_COLUMNS, ids):
                out[r[0]] = chunk_from_row(r)
        return [out[i] for i in ids if i in out]

    @_store_errors("reading")
    def is_empty(self) -> bool:
        with self._lock:
            return self._db().execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is None

    @_store_errors("reading")
    def counts(self) -> dict[str, dict[str, int]]:
        with self._lock:
            rows = self._db().execute(
                "SELECT source, 'files', COUNT(*) FROM files GROUP BY source UNION ALL "
                "SELECT source, 'chunks', COUNT(*) FROM chunks GROUP BY source"
            ).fetchall()
        out: dict[str, dict[str, int]] = {}
        for source, kind, n in rows:
            out.setdefault(source, {"files": 0, "chunks": 0})[kind] = int(n)
        return out

    # ---- search -------------------------------------------------------------------------------

    @staticmethod
    def _source_clause(sources: Sequence[str] | None, col: str = "c.source") -> tuple[str, list[Any]]:
        if not sources:
            return "", []
        return f" AND {col} IN ({','.join('?' * len(sources))})", list(sources)

    @_store_errors("searching")
    def keyword_search(
        self, match: str, *, limit: int, sources: Sequence[str] | None = None, like_terms: Sequence[str] = (),
        window: int | None = None, order: Literal["rank", "recent"] = "rank", newest: int | None = None,
        vectors: bool = True,  # the vectors are read apart (vector_scores, the in-memory matrix)
    ) -> list[tuple[Candidate, float]]:
        if not self._fts_ok or (not match and not like_terms):
            return []
        like_sql = "".join(" AND c.text LIKE ? ESCAPE '\\'" for _ in like_terms)
        like_args = ["%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for t in like_terms]
        # A prefix phrase ("paint"*) makes FTS5 read its whole posting lists whatever the rowid range, so a
        # newest-chunks search costs what the whole-index search costs, which a caller runs next when the
        # newest chunks hold too few matches: run the whole-index one, cut the newest rows from it and keep
        # it (with the generation it was read at) for that next call. Same rows, same order.
        memo_key = ((match, tuple(sources or ()), int(limit))
                    if order == "recent" and "*" in match and not like_terms else None)
        window_newest = None
        if memo_key is not None:
            memo = self._recent_memo
            if newest is None and memo is not None and memo[0] == memo_key and memo[1] == self.generation():
                return self._keyword_candidates(memo[2])
            window_newest, newest = newest, None
        if match:
            # Rank inside FTS5, so only the best rows are joined with chunks. The source filter reads the
            # FTS row's own copy of the column; LIKE terms (never combined with a MATCH today) filter after.
            src_sql, src_args = self._source_clause(sources, "source")
            if newest is not None:  # FTS5 seeks its posting lists to this rowid range
                src_sql += f" AND rowid >= {self._newest_floor()}"
                src_args.append(max(0, int(newest) - 1))
            if order == "recent":  # no BM25 at all: the most recently indexed matches, rank 0
                inner = (f"SELECT rowid AS rid, 0.0 AS r FROM chunks_fts WHERE chunks_fts MATCH ?{src_sql} "
                         "ORDER BY rowid DESC LIMIT ?")
                inner_args = [match, *src_args, int(limit) * (4 if like_sql else 1)]
            elif window is not None:  # BM25 for the `window` most recently indexed matches only
                inner = ("SELECT rid, r FROM (SELECT rowid AS rid, bm25(chunks_fts) AS r FROM chunks_fts "
                         f"WHERE chunks_fts MATCH ?{src_sql} ORDER BY rowid DESC LIMIT ?) ORDER BY r, rid DESC LIMIT ?")
                inner_args = [match, *src_args, max(int(window), int(limit)), int(limit) * (4 if like_sql else 1)]
            else:
                # equal ranks: the most recently indexed first, as everywhere (a bare ORDER BY rank cuts a tie
                # at the oldest rows)
                inner = (f"SELECT rowid AS rid, rank AS r FROM chunks_fts WHERE chunks_fts MATCH ?{src_sql} "
                         "ORDER BY rank, rowid DESC LIMIT ?")
                inner_args = [match, *src_args, int(limit) * (4 if like_sql else 1)]
            join = ("JOIN chunks c ON c.rowid = f.rid" if self._fts_aligned
                    else "JOIN chunks_fts x ON x.rowid = f.rid JOIN chunks c ON c.id = x.id")
            extra, extra_args = "", []
            if memo_key is not None:  # the rowid, the newest chunks' floor and the generation, from one snapshot
                extra = (f", f.rid, {self._newest_floor()}, (SELECT value FROM meta WHERE key = ?)")
                extra_args = [max(0, int(window_newest or 1) - 1), _GENERATION_KEY]
            sql = (
                f"SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, f.r{extra} FROM "
                f"({inner}) f {join} "
                f"WHERE 1=1{like_sql} ORDER BY f.r, f.rid DESC LIMIT ?"
            )
            args = [*extra_args, *inner_args, *like_args, int(limit)]
        else:
            src_sql, src_args = self._source_clause(sources)
            sql = (
                "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, 0.0 AS rank FROM chunks c "
                f"WHERE 1=1{src_sql}{like_sql} ORDER BY c.rowid DESC LIMIT ?"
            )
            args = [*src_args, *like_args, int(limit)]
        try:
            with self._lock:
                rows = self._db().execute(sql, args).fetchall()
        except self._driver.module.OperationalError as exc:
            self._fts_failure(match, exc)
            return []
        if memo_key is not None:
            if rows:
                self._recent_memo = (memo_key, f"{self._inode}:{rows[0][9] if rows[0][9] is not None else 0}", rows)
            if window_newest is not None:
                rows = [r for r in rows if r[7] >= r[8]]
        return self._keyword_candidates(rows)

    def _newest_floor(self) -> str:
        """SQL for the rowid of the n-th most recently indexed chunk (n - 1 its one parameter; 0 when there are
        fewer): the newest n chunks are those from it, wherever rewritten files left gaps in the rowids."""
        table = "chunks" if self._fts_aligned else "chunks_fts"
        return f"coalesce((SELECT rowid FROM {table} ORDER BY rowid DESC LIMIT 1 OFFSET ?), 0)"

    @staticmethod
    def _keyword_candidates(rows: Sequence[Sequence[Any]]) -> list[tuple[Candidate, float]]:
        """Fresh candidates (callers set their scores) from keyword rows, best first."""
        out = []
        for rank_pos, r in enumerate(rows, start=1):
            cand = Candidate(id=r[0], path=r[1], source=r[2], start_line=int(r[3]), end_line=int(r[4]), text=r[5],
                             text_rank=rank_pos)
            out.append((cand, float(r[6])))
        return out

    #: calls are in-process (no round trips): a search asks for just what it needs next
    round_trips = False

    def search_generation(self) -> str:
        return self.generation()

    def keyword_search_many(self, queries: Sequence[Mapping[str, Any]]) -> list[list[tuple[Candidate, float]]]:
        return [self.keyword_search(**q) for q in queries]

    @_store_errors("searching")
    def count_matches(self, match: str, *, cap: int) -> int:
        if not self._fts_ok or not match or cap <= 0:
            return 0
        try:
            with self._lock:
                row = self._db().execute(
                    "SELECT count(*) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
                    (match, int(cap)),
                ).fetchone()
        except self._driver.module.OperationalError as exc:
            self._fts_failure(match, exc)
            return 0
        return int(row[0])

    @_store_errors("searching")
    def count_matches_many(self, matches: Sequence[str], *, cap: int) -> list[int]:
        asked = [i for i, m in enumerate(matches) if m] if self._fts_ok and cap > 0 else []
        out = [0] * len(matches)
        if not asked:
            return out
        one = "(SELECT count(*) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?))"
        try:
            with self._lock:
                row = self._db().execute("SELECT " + ", ".join([one] * len(asked)),
                                         [a for i in asked for a in (matches[i], int(cap))]).fetchone()
        except self._driver.module.OperationalError:  # one of them is rejected: count each on its own
            for i in asked:
                out[i] = self.count_matches(matches[i], cap=cap)
            return out
        for i, n in zip(asked, row):
            out[i] = int(n)
        return out

    @_store_errors("searching")
    def match_sets_many(self, matches: Sequence[str], *, cap: int) -> list[tuple[int, frozenset[object] | None]]:
        asked = [i for i, m in enumerate(matches) if m] if self._fts_ok and cap > 0 else []
        out: list[tuple[int, frozenset[object] | None]] = [(0, frozenset())] * len(matches)
        if not asked:
            return out
        # the rowids read for the capped count, as text (NULL: the cap was reached; '': no match)
        one = ("(SELECT CASE WHEN count(*) < ? THEN coalesce(group_concat(rowid), '') END "
               "FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?))")
        try:
            with self._lock:
                row = self._db().execute("SELECT " + ", ".join([one] * len(asked)),
                                         [a for i in asked for a in (int(cap), matches[i], int(cap))]).fetchone()
        except self._driver.module.OperationalError:  # one of them is rejected: counts only, each on its own
            for i in asked:
                out[i] = (self.count_matches(matches[i], cap=cap), None)
            return out
        for i, ids in zip(asked, row):
            if ids is None:
                out[i] = (int(cap), None)
            else:
                keys = frozenset(ids.split(",")) if ids else frozenset()
                out[i] = (len(keys), keys)
        return out

    def _fts_failure(self, match: str, exc: Exception) -> None:
        """An FTS5 syntax rejection means no rows (logged); anything else is a database failure."""
        if not any(m in str(exc).lower() for m in ("fts5", "syntax", "unterminated string")):
            raise StoreError(f"keyword search failed on {self.path}: {exc}") from exc
        log.warning("keyword query %r rejected by FTS5: %s", match, exc)  # search goes on without it

    @_store_errors("searching")
    def vector_search(
        self, query: np.ndarray, *, limit: int, sources: Sequence[str] | None = None, model: str | None = None
    ) -> list[Candidate]:
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if limit <= 0 or q.size == 0:
            return []
        _, valid, zero = unit_rows(q.reshape(1, -1))
        if not valid[0] or zero[0]:
            return []  # a zero or non-finite query has no direction: nothing is similar to it
        if self._vec0_serves(q.size, limit):
            if not self.memory_cache:
                return self._vec0_search(q, limit, sources, model)
            warm = self._vector_cache.get(self.generation(), q.size)
            if warm is not None:
                return self._numpy_search(q, limit, sources, model, warm)
            hits = self._vec0_search(q, limit, sources, model)
            self._vector_cache.start_loading(q.size, self.generation)  # after the scan, which it would slow down
            return hits
        return self._numpy_search(q, limit, sources, model)

    @_store_errors("searching")
    def vector_scores(self, query: np.ndarray, ids: Sequence[str], *, model: str | None = None) -> dict[str, float]:
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if not ids or q.size == 0:
            return {}
        if not self._driver.vec_loaded:  # the numpy path: the in-memory copy is the vector index
            return self._matrix(q.size).scores_of(q, ids, model)
        warm = self._vector_cache.get(self.generation(), q.size) if self.memory_cache else None
        if warm is not None:  # no row reads: the copy holds the same unit vectors
            return warm.scores_of(q, ids, model)
        return stored_scores(q, self.get_chunks(ids), model)

    def _vec0_serves(self, dims: int, limit: int) -> bool:
        """Whether chunks_vec can answer a search for ``limit`` vectors of ``dims`` dimensions."""
        if not self._vec.can_search(limit):
            return False
        if self._vec.dims != dims:  # created, rebuilt or recreated by another process since this one looked?
            with self._lock:
                self._vec.refresh(self._db())
        return self._vec.dims == dims

    def _vec0_search(self, query: np.ndarray, limit: int, sources: Sequence[str] | None,
                     model: str | None) -> list[Candidate]:
        """The top ``limit`` chunks for ``query`` by :meth:`VecIndex.search`; numpy's when vec0 fails."""
        try:
            with self._lock:
                ranked = self._vec.search(self._db(), query, limit, sources, model)
        except self._driver.module.OperationalError as exc:  # e.g. chunks_vec recreated by another process
            log.warning("sqlite-vec search failed on %s (%s); searching with numpy", self.path, exc)
            self._vec.dims = None
            return self._numpy_search(query, limit, sources, model)
        if ranked is None:  # chunks_vec misses chunks written without sqlite-vec; rebuilt by the next write
            self._vec.dims = None
            return self._numpy_search(query, limit, sources, model)
        return [self._cand(c, score, rank) for rank, (score, _, c) in enumerate(ranked, start=1)]

    def _cand(self, c: StoredChunk, score: float, rank: int) -> Candidate:
        return Candidate(id=c.id, path=c.path, source=c.source, start_line=c.start_line,  # type: ignore[arg-type]
                         end_line=c.end_line, text=c.text, vector_score=score, vector_rank=rank, embedding=c.embedding)

    # ---- in-memory vectors (numpy) -------------------------------------------------------------

    def _matrix(self, dims: int) -> VectorMatrix:
        """The in-memory vectors of ``dims`` dimensions for the current generation, (re)loaded
        synchronously when stale."""
        cached = self._vector_cache.get(self.generation(), dims)
        if cached is not None:
            return cached
        with self._lock:
            return self._vector_cache.load(self._db(), self._inode, dims)

    def _numpy_search(self, q: np.ndarray, limit: int, sources: Sequence[str] | None, model: str | None,
                      cached: VectorMatrix | None = None) -> list[Candidate]:
        matrix = cached if cached is not None else self._matrix(q.size)
        hits = matrix.search(q, limit, sources, model)
        if not hits:
            return []
        by_id = {c.id: c for c in self.get_chunks([vid for vid, _ in hits])}
        out: list[Candidate] = []
        for vid, score in hits:
            c = by_id.get(vid)
            if c is not None:
                out.append(self._cand(c, score, len(out) + 1))
        return out

    def wait_vector_cache(self, timeout: float | None = None) -> bool:
        """Wait for a background load of the in-memory vectors (mainly for tests and benchmarks);
        True when none is running any more."""
        return self._vector_cache.wait(timeout)

    def _vector_cache_state(self) -> str:
        """``"off"``, ``"loading"``, ``"warm (N vectors, X MB)"`` or ``"cold"`` (with the last load error)."""
        if self._driver.vec_loaded and not self.memory_cache:
            return "off"
        return self._vector_cache.state(self._generation_or_none)

    def _generation_or_none(self) -> str | None:
        try:
            return self.generation()
        except (StoreError, self._driver.module.Error):
            return None

    # ---- embedding cache ------------------------------------------------------------------------

    @_store_errors("reading")
    def cache_get(self, provider: str, model: str, provider_key: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        unique = list(dict.fromkeys(hashes))
        out: dict[str, np.ndarray] = {}
        with self._lock:
            db = self._db()
            for i in range(0, len(unique), 400):
                part = unique[i : i + 400]
                marks = ",".join("?" * len(part))
                for h, blob in db.execute(
                    f"SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? AND provider_key = ? "
                    f"AND hash IN ({marks})",
                    [provider, model, provider_key, *part],
                ):
                    vec = unpack_vector(blob)
                    if vec is not None and vec.size:
                        out[h] = vec
        return out

    @_store_errors("writing")
    def cache_put(self, provider: str, model: str, provider_key: str, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = _now_ms()
        with self._tx() as db:
            db.executemany(
                "INSERT INTO embedding_cache(provider, model, provider_key, hash, embedding, dims, updated_at) "
                "VALUES (?,?,?,?,?,?,?) ON CONFLICT(provider, model, provider_key, hash) DO UPDATE SET "
                "embedding = excluded.embedding, dims = excluded.dims, updated_at = excluded.updated_at",
                [(provider, model, provider_key, h, pack_vector(v), int(v.size), now) for h, v in items.items()],
            )

    @_store_errors("writing")
    def cache_prune(self, max_entries: int, *, keep: CacheKeys | None = None) -> int:
        with self._tx() as db:
            total = int(db.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0])
            excess = total - int(max_entries)
            if excess <= 0:
                return 0
            if not keep:
                db.execute(
                    "DELETE FROM embedding_cache WHERE rowid IN (SELECT rowid FROM embedding_cache "
                    "ORDER BY updated_at ASC, rowid ASC LIMIT ?)",
                    (excess,),
                )
                return excess
            db.execute("CREATE TEMP TABLE IF NOT EXISTS cache_keep(provider TEXT, model TEXT, provider_key TEXT, "
                       "hash TEXT, PRIMARY KEY (provider, model, provider_key, hash)) WITHOUT ROWID")
            db.execute("DELETE FROM temp.cache_keep")
            db.executemany("INSERT OR IGNORE INTO temp.cache_keep VALUES (?,?,?,?)",
                           ((*name, h) for name, hashes in keep.items() for h in hashes))
            cur = db.execute(
                "DELETE FROM embedding_cache WHERE rowid IN (SELECT e.rowid FROM embedding_cache e WHERE NOT EXISTS "
                "(SELECT 1 FROM temp.cache_keep k WHERE k.provider = e.provider AND k.model = e.model "
                "AND k.provider_key = e.provider_key AND k.hash = e.hash) ORDER BY e.updated_at ASC, e.rowid ASC "
                "LIMIT ?)",
                (excess,),
            )
            db.execute("DELETE FROM temp.cache_keep")
            return int(cur.rowcount)

    @_store_errors("reading")
    def cache_count(self) -> int:
        with self._lock:
            return int(self._db().execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0])

    # ---- lifecycle -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def sync_lock(self, timeout: float = 600.0, *, cancel: threading.Event | None = None) -> Iterator[None]:
        if self.read_only:
            raise StoreError(f"{self._read_only_reason}; it cannot be updated until it is writable again")
        try:
            self._acquire_file_lock(timeout, cancel)
        except OSError as exc:
            raise StoreError(f"the index at {self.path} cannot be written here ({exc}); searches use it as it is") \
                from exc
        try:
            self.cleanup_stale_temp_files()  # a rebuild that was killed left its temporary index
            yield
        finally:
            self._file_lock.release()

    def _acquire_file_lock(self, timeout: float, cancel: threading.Event | None) -> None:
        """Take the sync lock file, waiting at most ``timeout`` seconds (IndexLockedError) and stopping as soon as
        ``cancel`` is set (SyncCancelled)."""
        def try_lock() -> bool:
            try:
                self._file_lock.acquire(timeout=0)
            except Timeout:  # before OSError: filelock's Timeout is a TimeoutError
                return False
            return True

        wait_for_lock(try_lock, timeout, cancel,
                      busy=f"another process has been indexing {self.path} for more than {timeout:g}s; "
                           "wait for it to finish or stop it",
                      cancelled=f"sync cancelled while waiting for another process's sync of {self.path}; "
                                "the index is as it was")

    @contextlib.contextmanager
    def rebuild(self, *, swap_warnings: list[str] | None = None) -> Iterator[SQLiteStore]:
        """See :meth:`MemoryStore.rebuild`; the old index's files are tidied after the swap best effort (nothing to
        add to ``swap_warnings``)."""
        tmp = self.path.with_name(f"{self.path.name}.tmp-{uuid.uuid4().hex[:12]}")
        new = SQLiteStore(tmp, vector_enabled=self.vector_enabled, extension_path=self.extension_path,
                          fts_tokenizer=self.fts_tokenizer, driver=self._driver, memory_cache=self.memory_cache,
                          fts_note_dates=self.fts_note_dates, workspace=self.workspace)
        try:
            with self._lock, self._translated("seeding a rebuild of"):
                new._seed_cache_from(self.path)
            yield new
            with self._translated("finishing a rebuild of"):
                new._finish_for_swap()
        except BaseException:
            new.close()
            for suffix in ("", "-wal", "-shm", ".lock"):
                with contextlib.suppress(OSError):
                    os.unlink(str(tmp) + suffix)
            raise
        with self._lock, self._translated("replacing"):
            self._swap_in(tmp)

    def _seed_cache_from(self, old_path: Path) -> None:
        db = self._conn
        db.execute("ATTACH DATABASE ? AS old", (str(old_path),))
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT OR REPLACE INTO main.embedding_cache SELECT * FROM old.embedding_cache")
            db.execute("COMMIT")
        finally:
            db.execute("DETACH DATABASE old")

    def _finish_for_swap(self) -> None:
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.execute("PRAGMA journal_mode = DELETE")
            self._conn.close()
            self._conn = None

    def _swap_in(self, tmp: Path) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.close()
            self._conn = None
        stale = f"{self.path}.old-{uuid.uuid4().hex[:8]}"
        moved: list[str] = []
        try:
            for suffix in ("-wal", "-shm"):
                if os.path.exists(str(self.path) + suffix):
                    os.replace(str(self.path) + suffix, stale + suffix)
                    moved.append(suffix)
            os.replace(tmp, self.path)  # atomic: readers see the old or the new index, never neither
        except OSError:
            for suffix in moved:  # the old index stays exactly as it was
                with contextlib.suppress(OSError):
                    os.replace(stale + suffix, str(self.path) + suffix)
            for suffix in ("", "-wal", "-shm", ".lock"):
                with contextlib.suppress(OSError):
                    os.unlink(str(tmp) + suffix)
            raise
        finally:
            self._open()
        for suffix in moved:
            with contextlib.suppress(OSError):
                os.unlink(stale + suffix)
        with contextlib.suppress(OSError):
            os.unlink(str(tmp) + ".lock")

    def cleanup_stale_temp_files(self) -> list[str]:
        """Delete leftovers of rebuilds that were killed (call while holding ``sync_lock``)."""
        removed = []
        for p in self.path.parent.glob(f"{self.path.name}.tmp-*"):
            with contextlib.suppress(OSError):
                p.unlink()
                removed.append(str(p))
        return removed

    @_store_errors("reading")
    def info(self) -> StoreInfo:
        notes = [self._vec.note] if self._vec.note else []
        if self.recovered:
            notes.append(self.recovered)
        if self.read_only and self._read_only_reason:
            notes.append(self._read_only_reason)
        if self._driver.name != "sqlite3":
            notes.append(f"stdlib sqlite3 cannot load extensions here; using {self._driver.name}")
        vector_path = "sqlite-vec" if self._driver.vec_loaded else ("disabled" if not self.vector_enabled else "numpy")
        return StoreInfo(
            backend="sqlite",
            path=str(self.path),
            driver=self._driver.name,
            sqlite_version=self._driver.sqlite_version,
            fts_available=self._fts_ok,
            fts_error=self._fts_error,
            vector_path=vector_path if self.vector_enabled else "numpy",
            vector_error=self._driver.vec_error,
            vector_dims=self._vec.dims,
            vector_cache=self._vector_cache_state(),
            notes=notes,
        )

    @_store_errors("checking")
    def integrity(self) -> dict[str, Any]:
        """A deep check for ``status --deep``: ``PRAGMA quick_check`` (a damaged file raises the driver's
        DatabaseError), row counts of chunks, keyword rows and vector rows, rows that point at nothing,
        and ``problems`` (empty when consistent)."""
        with self._lock:
            db = self._db()
            one = lambda sql: int(db.execute(sql).fetchone()[0])  # noqa: E731
            quick = [str(r[0]) for r in db.execute("PRAGMA quick_check").fetchall()]
            if quick != ["ok"]:  # damaged: the caller's recovery sets the file aside (see recover_from_damage)
                raise self._driver.module.DatabaseError(
                    f"database disk image is malformed (quick_check: {'; '.join(quick[:3])})")
            out: dict[str, Any] = {
                "quick_check": "ok" if quick == ["ok"] else "; ".join(quick[:5]),
                "files": one("SELECT count(*) FROM files"),
                "chunks": one("SELECT count(*) FROM chunks"),
                "chunks_without_file": one("SELECT count(*) FROM chunks WHERE path NOT IN (SELECT path FROM files)"),
                "chunks_with_vector": one("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL"),
            }
            if self._fts_ok:
                out["fts_rows"] = one("SELECT count(*) FROM chunks_fts")
                if self._fts_aligned:
                    out["fts_without_chunk"] = one(
                        "SELECT count(*) FROM chunks_fts WHERE rowid NOT IN (SELECT rowid FROM chunks)")
                    out["chunks_without_fts"] = one(
                        "SELECT count(*) FROM chunks WHERE rowid NOT IN (SELECT rowid FROM chunks_fts)")
            dims = self._vec.dims if self._driver.vec_loaded else None
            if dims:
                out["vector_rows"] = one("SELECT count(*) FROM chunks_vec")
                ids = {r[0] for r in db.execute("SELECT id FROM chunks_vec")}
                want = {r[0] for r in db.execute(
                    "SELECT id FROM chunks WHERE length(embedding) = ? AND embedding != zeroblob(?)", (dims * 4, dims * 4))}
                out["vectors_without_chunk"] = len(ids - {r[0] for r in db.execute("SELECT id FROM chunks")})
                out["chunks_missing_vector_row"] = len(want - ids)
        problems = [] if out["quick_check"] == "ok" else [f"quick_check: {out['quick_check']}"]
        for key in ("chunks_without_file", "fts_without_chunk", "chunks_without_fts", "vectors_without_chunk",
                    "chunks_missing_vector_row"):
            if out.get(key):
                problems.append(f"{key.replace('_', ' ')}: {out[key]}")
        if "fts_rows" in out and out["fts_rows"] != out["chunks"]:
            problems.append(f"keyword rows ({out['fts_rows']}) differ from chunks ({out['chunks']})")
        out["problems"] = problems
        return out

    @property
    def fts_tokenizer_id(self) -> str:
        """The keyword-index identity recorded in the fingerprint: tokenizer, text preparation and row
        layout (``+rowid``: FTS rows share their chunk's rowid) and contents (``+dates``: ``fts_note_dates``),
        so an index of another layout or contents is rebuilt (from the embedding cache: nothing is re-embedded)."""
        # trigram indexes no segmented text; "+rec": without the record markers (chunker.indexed_text)
        base = {"trigram": "trigram+rec", "porter": FTS_TOKENIZER_ID + "+porter"}.get(self.fts_tokenizer,
                                                                                      FTS_TOKENIZER_ID)
        return base + "+rowid" + ("+dates" if self.fts_note_dates else "")

    def close(self) -> None:
        self._vector_cache.close()  # stops a background load promptly and frees the in-memory vectors
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r}, driver={self._driver.name!r})"
