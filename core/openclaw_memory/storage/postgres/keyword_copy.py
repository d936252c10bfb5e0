"""A PostgreSQL namespace's chunks held by this process in a SQLite file of its own, for keyword search.

A keyword search through the server takes two round trips and ranks the matching rows' tokens in Python. This
copy holds the build's chunks (text and stored vectors) in a
:class:`~openclaw_memory.storage.sqlite.store.SQLiteStore` (FTS5: the same tokens and BM25 as the server's path),
each chunk under its PostgreSQL ``seq`` as rowid, so that ties and "most recently indexed" come out in the same
order. It is tagged with the build and version it holds (``"<build id>:<version>"``, what
:meth:`PostgresStore.generation` returns): a search reads the build's current version and asks the copy only when
it holds that version, so a write from any host is seen by the next search. Otherwise the search runs on the
server while the copy is brought up to date in the background.

An update lists the build's rows (``seq``, ``xmin``, path) and its version in one statement, then reads the rows
of the files that changed since the copy's listing, a batch of files at a time, each in a short statement of its
own: no transaction stays open (one would hold back another host's DDL, such as a rebuild dropping its old HNSW
index), and no connection is held while the copy is written. A file's rows read as listed (the same seqs at the
same ``xmin``) are its rows at the listed version; when rows were added, removed or rewritten meanwhile, the copy
keeps what it read and takes no version (the next search starts another update).

The file lives in a private temporary folder (mode 0700, named after the host) removed on
:meth:`KeywordCopy.close` or at exit. The process holds a lock on a file in it while it lives; a folder of this
host whose lock can be taken was left by a process that was killed, and the next copy made by any process of the
user removes it (and a folder without the lock file after an hour).
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import re
import shutil
import socket
import tempfile
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Any

from openclaw_memory.storage.protocol import StoredChunk
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.types import MemoryFile

try:
    import fcntl
except ImportError:  # Windows: abandoned folders are not looked for
    fcntl = None  # type: ignore[assignment]

__all__ = ["FOLDER_PREFIX", "KeywordCopy", "remove_abandoned_copies"]

log = logging.getLogger(__name__)

#: rows read (and held) at most per statement while bringing a copy up to date, unless one file has more
_ROWS_PER_READ = 2048
_THREAD_NAME = "openclaw-memory-keyword-copy"
#: seconds before an update that failed is tried again
_RETRY_AFTER = 60.0
#: the start of a copy's folder name
FOLDER_PREFIX = "openclaw-memory-keywords-"
#: the file in a copy's folder its process holds a lock on while it lives
_OWNER_LOCK = "owner.lock"
#: seconds after which a folder without its lock file (its process was killed while making it) is removed
_UNLOCKED_AGE = 3600.0

#: by seq: a row's version (``xmin``) and path
Rows = dict[int, tuple[int, str]]


class KeywordCopy:
    """The chunks (with their vectors) of the build that ``build_where`` (over ``namespaces`` aliased ``n``) selects
    in the quoted ``schema``, copied into a SQLite file through the pooled connections ``connection()`` lends (in
    autocommit mode); ``chunk_of_row`` makes a chunk of a row of ``chunk_columns``. ``fts_tokenizer`` and
    ``fts_note_dates`` are the PostgreSQL store's, so both index the same tokens. ``interrupt()`` cancels a read under
    way (on :meth:`close`). Thread-safe: searches use the copy at once (:meth:`searching`); an update writes it
    alone, after the searches using it, and new searches go to the server meanwhile."""

    def __init__(self, connection: Callable[[], AbstractContextManager[Any]], schema: str,
                 build_where: Callable[[], tuple[str, list[Any]]], chunk_columns: str,
                 chunk_of_row: Callable[[Sequence[Any]], StoredChunk], *, fts_tokenizer: str, fts_note_dates: bool,
                 label: str, interrupt: Callable[[], None] | None = None) -> None:
        self._connection = connection
        self._schema = schema
        self._build_where = build_where
        self._chunk_columns = chunk_columns
        self._chunk_of_row = chunk_of_row
        self._fts_tokenizer = fts_tokenizer
        self._fts_note_dates = fts_note_dates
        self._label = label
        self._interrupt = interrupt
        self._store: SQLiteStore | None = None
        self._folder: Path | None = None
        self._owner: IO[bytes] | None = None  # the locked file that says the folder is in use
        self._cleanup: weakref.finalize[Any, Any] | None = None
        #: the build and version the copy holds (None while it is written, or when it holds none)
        self.generation: str | None = None
        self._build: int | None = None  # the build the copy's rows are of
        self._rows: Rows = {}  # the rows the copy holds
        #: searches on the copy (any number at once) and an update writing it (alone) take turns on it
        self._turns = threading.Condition()
        self._searches = 0
        self._writing = False
        self._loading = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._failed: tuple[str, float] | None = None  # the error and time of the last failed update

    # ---- searching ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def searching(self, generation: str) -> Iterator[SQLiteStore | None]:
        """The copy's store for one search when it holds ``generation``; None when it does not, or while an
        update writes it (the search then runs on the server). Searches may use it at once."""
        with self._turns:
            store = self._store if self.generation == generation and not self._writing else None
            if store is not None:
                self._searches += 1
        if store is None:
            yield None
            return
        try:
            yield store
        finally:
            with self._turns:
                self._searches -= 1
                self._turns.notify_all()

    def start_update(self, generation: str | None) -> None:
        """Bring the copy up to ``generation`` (or whatever the build holds by then) in a daemon thread, unless
        it holds it, an update is running, the last one failed less than :data:`_RETRY_AFTER` seconds ago, or the
        copy is closed (None: the version is not known)."""
        with self._loading:
            if self._stop.is_set() or (generation is not None and self.generation == generation) or (
                    self._thread is not None and self._thread.is_alive()):
                return
            if self._failed is not None and time.monotonic() - self._failed[1] < _RETRY_AFTER:
                return  # a copy that cannot be made (a full disk) is not read again after every write
            thread = threading.Thread(target=self._update_logged, name=_THREAD_NAME, daemon=True)
            thread.start()
            self._thread = thread  # once started: wait() may join it

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background update; True when none is running any more."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def state(self, generation: str | None) -> str:
        """``"loading"``, ``"warm (N chunks, X MB on disk)"`` when the copy holds ``generation``, or ``"cold"``
        (with the last update's error)."""
        thread = self._thread
        if thread is not None and thread.is_alive():
            return "loading"
        if generation is not None and self.generation == generation:
            return f"warm ({len(self._rows)} chunks, {self._disk_bytes() / 2**20:.1f} MB on disk)"
        failed = self._failed
        return f"cold (last load failed: {failed[0]})" if failed is not None else "cold"

    def close(self) -> None:
        """Stop an update at its next step, wait up to 2 s for it, and remove the copy's folder. No update starts
        or writes afterwards."""
        with self._loading:
            self._stop.set()
            thread = self._thread
        if thread is not None and self._interrupt is not None and thread.is_alive():
            with contextlib.suppress(Exception):
                self._interrupt()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)
        with self._exclusive():
            self._drop_store()

    def _disk_bytes(self) -> int:
        """The bytes of the copy's files."""
        folder = self._folder
        total = 0
        for file in folder.glob("*") if folder is not None else ():
            with contextlib.suppress(OSError):
                total += file.stat().st_size
        return total

    # ---- updating ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """The copy for an update (or close) alone: no version while it lasts, so new searches go to the
        server; the searches using it, and another writer, are waited for."""
        with self._turns:
            self._turns.wait_for(lambda: not self._writing)  # another writer (an update, close) first
            self._writing = True
            self.generation = None
            self._turns.wait_for(lambda: self._searches == 0)
        try:
            yield
        finally:
            with self._turns:
                self._writing = False
                self._turns.notify_all()

    def _update_logged(self) -> None:
        started = time.monotonic()
        try:
            self._update()
        except _WriteFailed as exc:  # the file (a full disk): tried again a while later, from nothing
            self._failed = (str(exc.__cause__), time.monotonic())
            self._warn(exc.__cause__)
            return
        except Exception as exc:  # noqa: BLE001 - a failed read (the server) only means searches stay on the server
            self._failed = (str(exc), time.monotonic() - _RETRY_AFTER)  # tried again at the next search
            self._warn(exc)
            return
        self._failed = None
        log.debug("keyword copy of %s at %s in %.2fs", self._label, self.generation, time.monotonic() - started)

    def _warn(self, exc: BaseException | None) -> None:
        if not self._stop.is_set():
            log.warning("cannot copy the keyword index of %s (searches keep using PostgreSQL's): %s", self._label, exc)

    def _update(self) -> None:
        """List the build's rows and version, read the files whose rows differ from the copy's, and give the copy
        that version when every row was read as listed."""
        if self._stop.is_set():
            return
        with self._connection() as conn:
            build, version, listed = self._listing(conn)
        if build is None:  # no build: nothing to find, as on the server
            with self._exclusive():
                if not self._stop.is_set():
                    self._open_empty()
                    self._build, self.generation = None, "none:0"
            return
        if build != self._build:
            with self._exclusive():
                if self._stop.is_set():
                    return
                self._open_empty()
                self._build = build
        whole = True
        for paths in _batches(*self._changed_paths(listed)):
            if self._stop.is_set():
                return
            with self._connection() as conn:
                files, chunks, read = self._read_paths(conn, build, paths)
            batch = set(paths)  # read as listed: every row listed for these paths, at the version listed
            whole &= read == {seq: row for seq, row in listed.items() if row[1] in batch}
            with self._exclusive():
                if self._stop.is_set():
                    return
                try:
                    self._write_paths(paths, files, chunks, read)
                except Exception as exc:
                    self._build = None  # what the file holds is not known: read it all again
                    raise _WriteFailed from exc
        if whole:
            with self._exclusive():
                if not self._stop.is_set() and self._build == build:
                    self.generation = f"{build}:{version}"

    def _listing(self, conn: Any) -> tuple[int | None, int, Rows]:
        """In one statement: the build's id and version, and its rows (None when there is no build)."""
        nw, nargs = self._build_where()
        rows = conn.execute(
            f"SELECT n.id, n.version, c.seq, c.xmin::text::bigint, c.path FROM {self._schema}.namespaces n "
            f"LEFT JOIN {self._schema}.chunks c ON c.ns_id = n.id WHERE {nw}", nargs, binary=True).fetchall()
        if not rows:
            return None, 0, {}
        return int(rows[0][0]), int(rows[0][1]), {int(r[2]): (int(r[3]), str(r[4])) for r in rows if r[2] is not None}

    def _changed_paths(self, listed: Rows) -> tuple[list[str], Counter[str]]:
        """The paths whose rows in ``listed`` differ from the copy's (added, rewritten or removed), and how many
        rows each path has in ``listed``."""
        held = self._rows
        changed = {path for seq, (version, path) in listed.items() if held.get(seq) != (version, path)}
        changed |= {path for seq, (_, path) in held.items() if seq not in listed}
        return sorted(changed), Counter(path for _, path in listed.values())

    def _read_paths(self, conn: Any, build: int, paths: Sequence[str]
                    ) -> tuple[dict[str, MemoryFile], dict[str, list[tuple[int, StoredChunk]]], Rows]:
        """The file records, the chunks (by path, with their seqs, in seq order) and the rows of ``paths`` in build
        ``build`` now."""
        s = self._schema
        files = {r[0]: MemoryFile(path=r[0], abs_path="", mtime_ms=float(r[3]), size=int(r[4]), hash=r[2], source=r[1])
                 for r in conn.execute(f"SELECT path, source, hash, mtime, size FROM {s}.files WHERE ns_id = %s "
                                       "AND path = ANY(%s)", (build, list(paths)))}
        chunks: dict[str, list[tuple[int, StoredChunk]]] = {}
        read: Rows = {}
        for r in conn.execute(f"SELECT seq, xmin::text::bigint, {self._chunk_columns} FROM {s}.chunks "
                              "WHERE ns_id = %s AND path = ANY(%s) ORDER BY seq", (build, list(paths)), binary=True):
            chunk = self._chunk_of_row(r[2:])
            chunks.setdefault(chunk.path, []).append((int(r[0]), chunk))
            read[int(r[0])] = (int(r[1]), chunk.path)
        return files, chunks, read

    def _write_paths(self, paths: Sequence[str], files: dict[str, MemoryFile],
                     chunks: dict[str, list[tuple[int, StoredChunk]]], read: Rows) -> None:
        """Write each of ``paths`` into the copy as read (its chunks under their seqs, or nothing: the file was
        removed), then note the rows the copy holds for them (a failed write makes the next update read the whole
        copy again, so they are noted once all are written)."""
        store = self._store
        assert store is not None
        for path in paths:
            rows = chunks.get(path, [])
            if rows:
                store.replace_file(files.get(path) or _file_without_record(path, rows[0][1].source),
                                   [chunk for _, chunk in rows], rowids=[seq for seq, _ in rows])
            else:
                store.delete_file(path)
        batch = set(paths)  # one pass over the held rows per batch, not per file
        for seq in [seq for seq, (_, path) in self._rows.items() if path in batch]:
            del self._rows[seq]
        self._rows.update(read)

    # ---- the folder --------------------------------------------------------------------------

    def _open_empty(self) -> None:
        """Replace the copy's store with an empty one in a new private folder."""
        self._drop_store()
        remove_abandoned_copies()
        folder = Path(tempfile.mkdtemp(prefix=_folder_prefix()))
        owner = None
        try:
            owner = _hold(folder / _OWNER_LOCK)
            store = SQLiteStore(folder / "keywords.sqlite", vector_enabled=False, memory_cache=False,
                                fts_tokenizer=self._fts_tokenizer, fts_note_dates=self._fts_note_dates)
        except BaseException:
            _remove(str(folder), owner)
            raise
        self._folder, self._owner, self._store = folder, owner, store
        self._cleanup = weakref.finalize(self, _remove, str(folder), owner)

    def _drop_store(self) -> None:
        """Close the copy's store and remove its folder."""
        self.generation, self._build, self._rows = None, None, {}
        store, self._store = self._store, None
        if store is not None:
            with contextlib.suppress(Exception):
                store.close()
        if self._cleanup is not None:
            self._cleanup()
        self._folder = self._owner = self._cleanup = None


def remove_abandoned_copies(folder: Path | None = None) -> list[Path]:
    """Remove the copies in ``folder`` (the temporary folder) left by processes that ended without closing their
    store (killed): those whose owner lock can be taken. The folders removed; none on systems without ``fcntl``."""
    if fcntl is None:
        return []
    removed = []
    for found in Path(folder or tempfile.gettempdir()).glob(glob.escape(_folder_prefix()) + "*"):
        with contextlib.suppress(OSError):
            if found.is_symlink() or not found.is_dir() or found.stat().st_uid != os.getuid():
                continue
            if not (found / _OWNER_LOCK).exists():
                if time.time() - found.stat().st_mtime > _UNLOCKED_AGE:  # killed while it was made
                    shutil.rmtree(found)
                    removed.append(found)
                continue
            with open(found / _OWNER_LOCK, "rb") as owner:
                try:
                    fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue  # its process lives (or the file system cannot tell: kept)
                shutil.rmtree(found)
                removed.append(found)
    return removed


def _folder_prefix() -> str:
    """The start of the name of this host's copies' folders (a lock says nothing across hosts sharing a folder)."""
    return FOLDER_PREFIX + re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())[:64] + "-"


def _hold(path: Path) -> IO[bytes] | None:
    """``path`` created and locked for as long as this process keeps it open (None without ``fcntl``). Locked
    under another name first: a sweep never finds it unlocked."""
    if fcntl is None:
        return None
    unnamed = path.with_name(path.name + ".new")
    owner = open(unnamed, "wb")  # noqa: SIM115 - kept open: the lock lasts as long as the file is open
    with contextlib.suppress(OSError):  # a file system without locks (ENOLCK): a sweep cannot lock it either
        fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.replace(unnamed, path)
    return owner


def _remove(folder: str, owner: IO[bytes] | None) -> None:
    """Release the folder's owner lock and remove it."""
    if owner is not None:
        with contextlib.suppress(OSError):
            owner.close()
    shutil.rmtree(folder, ignore_errors=True)


class _WriteFailed(Exception):
    """Writing the copy's file failed (raised from the cause)."""


def _batches(paths: Sequence[str], rows: Counter[str]) -> Iterator[list[str]]:
    """``paths`` in runs of about :data:`_ROWS_PER_READ` ``rows`` (each path's row count) at most."""
    batch: list[str] = []
    held = 0
    for path in paths:
        if batch and held + rows[path] > _ROWS_PER_READ:
            yield batch
            batch, held = [], 0
        batch.append(path)
        held += rows[path]
    if batch:
        yield batch


def _file_without_record(path: str, source: str) -> MemoryFile:
    """A file record for chunks whose file row is missing (the copy only searches them)."""
    return MemoryFile(path=path, abs_path="", mtime_ms=0.0, size=0, hash="", source=source)  # type: ignore[arg-type]
