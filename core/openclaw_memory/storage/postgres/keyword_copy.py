"""A PostgreSQL namespace's keyword index held by this process, in a SQLite file of its own.

A keyword search through the server takes two round trips and ranks the matching rows' tokens in Python. This
copy holds the build's chunks in a :class:`~openclaw_memory.storage.sqlite.store.SQLiteStore` (FTS5: the same
tokens and BM25 as the server's path), each chunk under its PostgreSQL ``seq`` as rowid, so that ties and "most
recently indexed" come out in the same order. It is tagged with the build and version it was read at
(``"<build id>:<version>"``, what :meth:`PostgresStore.generation` returns): a search reads the build's current
version and asks the copy only when it holds that version, so a write from any host is seen by the next search.
Otherwise the search runs on the server while the copy is brought up to date in the background, in one read-only
snapshot that reads again only the files whose rows were added, rewritten or removed since.

The file lives in a private temporary folder (mode 0700, named after the process) removed on
:meth:`KeywordCopy.close` or at exit; the folders of processes that were killed are removed by the next copy made.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from openclaw_memory.storage.protocol import StoredChunk
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.types import MemoryFile

__all__ = ["KeywordCopy"]

log = logging.getLogger(__name__)

#: rows read (and held) at most per statement while bringing a copy up to date, unless one file has more
_ROWS_PER_READ = 2048
_THREAD_NAME = "openclaw-memory-keyword-copy"
#: seconds before an update that failed is tried again
_RETRY_AFTER = 300.0
#: the start of a copy's folder name, followed by the process id
FOLDER_PREFIX = "openclaw-memory-keywords-"


class KeywordCopy:
    """The chunks of the build that ``build_where`` (over ``namespaces`` aliased ``n``) selects in the quoted
    ``schema``, with their vectors, copied into a SQLite file through the read-only snapshots ``snapshot()`` lends (a
    connection in a REPEATABLE READ READ ONLY transaction); ``chunk_of_row`` makes a chunk of a row of
    ``chunk_columns``. ``fts_tokenizer`` and ``fts_note_dates`` are the PostgreSQL store's, so
    both index the same tokens. Thread-safe: searches use the copy at once (:meth:`searching`); an update writes
    it alone, after the searches using it, and new searches go to the server meanwhile. ``interrupt()`` cancels a read under way
    (on :meth:`close`)."""

    def __init__(self, snapshot: Callable[[], AbstractContextManager[Any]], schema: str,
                 build_where: Callable[[], tuple[str, list[Any]]], chunk_columns: str,
                 chunk_of_row: Callable[[Sequence[Any]], StoredChunk], *, fts_tokenizer: str, fts_note_dates: bool,
                 label: str, interrupt: Callable[[], None] | None = None) -> None:
        self._snapshot = snapshot
        self._chunk_columns = chunk_columns
        self._chunk_of_row = chunk_of_row
        self._interrupt = interrupt
        self._schema = schema
        self._build_where = build_where
        self._fts_tokenizer = fts_tokenizer
        self._fts_note_dates = fts_note_dates
        self._label = label
        self._store: SQLiteStore | None = None
        self._folder: Path | None = None
        self._cleanup: weakref.finalize[Any, Any] | None = None
        #: the build and version the copy holds (None while it is written or before a first load)
        self.generation: str | None = None
        #: by seq: the row's version (``xmin``) and path, as the copy holds them
        self._rows: dict[int, tuple[int, str]] = {}
        #: searches on the copy (any number at once) and an update writing it (alone) take turns on it
        self._turns = threading.Condition()
        self._searches = 0
        self._writing = False
        self._loading = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._build: int | None = None  # the build the copy's rows are of
        self._failed: tuple[str, float] | None = None  # the error and time of the last failed update

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

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """The copy for an update (or close) alone: no version while it lasts, so new searches go to the
        server; the searches using it are waited for."""
        with self._turns:
            self._writing = True
            self.generation = None
            self._turns.wait_for(lambda: self._searches == 0)
        try:
            yield
        finally:
            with self._turns:
                self._writing = False

    def start_update(self, generation: str | None) -> None:
        """Bring the copy up to ``generation`` (or whatever the build holds by then) in a daemon thread, unless
        it holds it, an update is running, the last one failed less than :data:`_RETRY_AFTER` seconds ago, or the
        copy is closed (None: the version is not known)."""
        with self._loading:
            if self._stop.is_set() or (generation is not None and self.generation == generation) or (
                    self._thread is not None and self._thread.is_alive()):
                return
            if self._failed is not None and time.monotonic() - self._failed[1] < _RETRY_AFTER:
                return  # tried again a while later: a copy that cannot be made (a full disk) is not read again and again
            self._thread = threading.Thread(target=self._update_logged, name=_THREAD_NAME, daemon=True)
            self._thread.start()

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
        """Stop an update at its next step, wait up to 2 s for it, and remove the copy's file."""
        with self._loading:
            self._stop.set()
            thread = self._thread
        if thread is not None and self._interrupt is not None and thread.is_alive():
            with contextlib.suppress(Exception):
                self._interrupt()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)
        with self._exclusive():
            self._rows, self._build = {}, None
            store, self._store = self._store, None
            if store is not None:
                with contextlib.suppress(Exception):
                    store.close()
            if self._cleanup is not None:
                self._cleanup()

    def _disk_bytes(self) -> int:
        """The bytes of the copy's files."""
        folder = self._folder
        if folder is None:
            return 0
        total = 0
        for file in folder.glob("*"):
            with contextlib.suppress(OSError):
                total += file.stat().st_size
        return total

    # ---- updating ----------------------------------------------------------------------------

    def _update_logged(self) -> None:
        started = time.monotonic()
        try:
            self._update()
        except Exception as exc:  # noqa: BLE001 - a failed update only means searches stay on the server
            if self._stop.is_set():
                return
            self._failed = (str(exc), time.monotonic())
            log.warning("cannot copy the keyword index of %s (searches keep using PostgreSQL's): %s", self._label,
                        exc)
            return
        log.debug("keyword copy of %s at %s in %.2fs", self._label, self.generation, time.monotonic() - started)

    def _update(self) -> None:
        """Bring the copy to the build's current version. A first copy (or one of another build) is read a batch
        of files at a time, each on a connection lent for it alone, so searches get one in between; then one
        snapshot makes the copy exact, reading again the files whose rows were added, rewritten or removed since
        (about :data:`_ROWS_PER_READ` rows at a time). Searches go to the server meanwhile; an update stopped
        half-way leaves the copy at no version, and the next one rewrites the files it had not finished."""
        with self._snapshot() as conn:
            head = self._head(conn)
        if head is not None and head[0] != self._build:
            with self._exclusive():
                self._open_empty()
                self._build = head[0]
            for paths in _batches(*self._paths_and_rows(head[0], self._listed_now(head[0]))):
                if self._stop.is_set():
                    return
                with self._snapshot() as conn, self._exclusive():
                    self._rows.update(self._write_paths(conn, head[0], paths))
        with self._snapshot() as conn:
            head = self._head(conn)
            if head is None:  # no build: nothing to find, as on the server
                with self._exclusive():
                    if self._store is None or self._rows:
                        self._open_empty()
                    self._build, self.generation = None, "none:0"
                return
            build, generation = head[0], f"{head[0]}:{head[1]}"
            listed = self._listed(conn, build)
            with self._exclusive():  # searches go to the server while the copy is written
                if build != self._build:  # replaced again meanwhile: read by the next update
                    return
                for paths in _batches(*self._paths_and_rows(build, listed)):
                    if self._stop.is_set():
                        return
                    self._rows.update(self._write_paths(conn, build, paths))
                self._rows = listed
                self.generation = generation

    def _head(self, conn: Any) -> tuple[int, int] | None:
        """The build's id and version."""
        nw, nargs = self._build_where()
        row = conn.execute(f"SELECT n.id, n.version FROM {self._schema}.namespaces n WHERE {nw}", nargs).fetchone()
        return (int(row[0]), int(row[1])) if row is not None else None

    def _listed(self, conn: Any, build: int) -> dict[int, tuple[int, str]]:
        """By seq, the version (``xmin``) and path of each row of build ``build`` now."""
        return {int(r[0]): (int(r[1]), str(r[2])) for r in conn.execute(
            f"SELECT seq, xmin::text::bigint, path FROM {self._schema}.chunks WHERE ns_id = %s", (build,),
            binary=True)}

    def _listed_now(self, build: int) -> dict[int, tuple[int, str]]:
        with self._snapshot() as conn:
            return self._listed(conn, build)

    def _paths_and_rows(self, build: int, listed: dict[int, tuple[int, str]]) -> tuple[list[str], Counter[str]]:
        """The paths whose rows in ``listed`` differ from the copy's (added, rewritten or removed), and how many
        rows each path has in ``listed``."""
        held = self._rows if self._build == build else {}
        changed = {path for seq, (version, path) in listed.items() if held.get(seq) != (version, path)}
        changed |= {path for seq, (_, path) in held.items() if seq not in listed}
        return sorted(changed), Counter(path for _, path in listed.values())

    def _write_paths(self, conn: Any, build: int, paths: Sequence[str]) -> dict[int, tuple[int, str]]:
        """Write into the copy what build ``build`` holds now for each of ``paths``: the file's chunks under their
        seqs, or nothing (the file was removed); the rows written, as :meth:`_listed` lists them."""
        store = self._store
        assert store is not None
        s = self._schema
        files = {r[0]: MemoryFile(path=r[0], abs_path="", mtime_ms=float(r[3]), size=int(r[4]), hash=r[2], source=r[1])
                 for r in conn.execute(f"SELECT path, source, hash, mtime, size FROM {s}.files WHERE ns_id = %s "
                                       "AND path = ANY(%s)", (build, list(paths)))}
        chunks: dict[str, list[tuple[int, StoredChunk]]] = {}
        written: dict[int, tuple[int, str]] = {}
        for r in conn.execute(f"SELECT seq, xmin::text::bigint, {self._chunk_columns} FROM {s}.chunks "
                              "WHERE ns_id = %s AND path = ANY(%s) ORDER BY seq", (build, list(paths)), binary=True):
            chunk = self._chunk_of_row(r[2:])
            chunks.setdefault(chunk.path, []).append((int(r[0]), chunk))
            written[int(r[0])] = (int(r[1]), chunk.path)
        for path in paths:
            rows = chunks.get(path)
            if rows:
                store.replace_file(files.get(path) or _file_without_record(path, rows[0][1].source),
                                   [chunk for _, chunk in rows], rowids=[seq for seq, _ in rows])
            else:
                store.delete_file(path)
        rewritten = set(paths)
        for seq in [seq for seq, (_, path) in self._rows.items() if path in rewritten and seq not in written]:
            del self._rows[seq]
        return written

    def _open_empty(self) -> None:
        """Replace the copy's store with an empty one in a new private folder."""
        old, self._store = self._store, None
        if old is not None:
            with contextlib.suppress(Exception):
                old.close()
        if self._cleanup is not None:
            self._cleanup()
        remove_abandoned_copies()
        folder = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))
        self._folder = folder
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(folder), True)
        self._store = SQLiteStore(folder / "keywords.sqlite", vector_enabled=False, memory_cache=False,
                                  fts_tokenizer=self._fts_tokenizer, fts_note_dates=self._fts_note_dates)
        self._rows, self._build = {}, None


def remove_abandoned_copies(folder: Path | None = None) -> list[Path]:
    """Remove the copies in ``folder`` (the temporary folder) that processes of this user left when they ended
    without closing their store (killed); the folders removed. Only on POSIX systems, where a process id can be
    probed."""
    if os.name != "posix":
        return []
    removed = []
    for found in Path(folder or tempfile.gettempdir()).glob(FOLDER_PREFIX + "*"):
        pid = found.name[len(FOLDER_PREFIX):].split("-", 1)[0]
        with contextlib.suppress(OSError):
            if pid.isdigit() and found.stat().st_uid == os.getuid() and not _running(int(pid)):
                shutil.rmtree(found, ignore_errors=True)
                removed.append(found)
    return removed


def _running(pid: int) -> bool:
    """Whether a process ``pid`` exists (POSIX)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True


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
    return MemoryFile(path=path, abs_path="", mtime_ms=0.0, size=0, hash="", source=source)
