"""The PostgreSQL store's copy of a namespace's keyword index in a SQLite file of this process
(``store.vector.memoryCache``): a search it answers is the server's answer and costs one round trip, a write from
any host is seen by the next search, and closing the store removes the copy."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from openclaw_memory.config import MemoryConfig
from openclaw_memory.retrieval.pipeline import run_search
from openclaw_memory.storage import StoredChunk
from openclaw_memory.storage.postgres import PostgresStore, keyword_copy
from openclaw_memory.types import MemoryFile

MakeStore = Callable[..., PostgresStore]
WORDS = ["heron", "canal", "lantern", "orchard", "ferry", "compass", "violet", "granite", "painting", "painted"]
#: MATCH expressions as the keyword side builds them: words, phrases, prefixes, AND/OR/NOT
MATCHES = ['"heron"', '"heron" AND "canal"', '"heron" OR "violet"', '"paint"*', '"lantern orchard"',
           '"ferry" NOT "compass"', '("heron" AND "canal") OR ("granite" AND "violet")', '"nothing"']
#: searches through the whole keyword side (counts, the expressions it tries, the winners)
SEARCHES = ["heron canal lantern", "orchard ferry compass violet", "painting granite", "2026-03-04 heron",
            "what about the lantern"]


def _file(path: str) -> MemoryFile:
    return MemoryFile(path=path, abs_path="/nowhere/" + path, mtime_ms=1000.0, size=10, hash="h-" + path)


def _note(store: PostgresStore, path: str, texts: list[str], source: str = "memory") -> None:
    store.replace_file(_file(path), [StoredChunk(
        id=f"{path}#{i}", path=path, source=source, start_line=i * 2 + 1, end_line=i * 2 + 2, hash=f"{path}{i}{t}",
        model="m", text=t) for i, t in enumerate(texts)])


def _fill(store: PostgresStore) -> None:
    """Dated notes, a session and a curated file of words from :data:`WORDS`, some chunks alike (ties)."""
    rng = np.random.default_rng(7)
    for f in range(8):
        path = f"memory/2026-03-0{f + 1}.md" if f < 6 else "MEMORY.md" if f == 6 else "sessions/s.jsonl"
        texts = [" ".join(rng.choice(WORDS, size=5)) for _ in range(12)] + ["heron canal", "heron canal"]
        _note(store, path, texts, source="sessions" if f == 7 else "memory")


def _rows(found: list[tuple[Any, float]]) -> list[tuple[Any, ...]]:
    return [(c.id, c.path, c.source, c.start_line, c.end_line, c.text, c.text_rank, round(score, 9))
            for c, score in found]


def _warm(store: PostgresStore) -> None:
    store.keyword_search('"heron"', limit=1)  # starts the copy
    assert store.wait_keyword_cache(timeout=30)
    assert store.info().keyword_cache.startswith("warm (")


class _RoundTrips:
    """Statements this process sends to PostgreSQL (each outside a pipeline is a round trip)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[str] = []
        execute = psycopg.Connection.execute

        def counting(conn: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
            self.sent.append(str(query))
            return execute(conn, query, params, **kwargs)

        monkeypatch.setattr(psycopg.Connection, "execute", counting)


@pytest.mark.parametrize("tokenizer", ["unicode61", "porter"])
def test_a_warm_copy_answers_as_the_server_does_in_one_round_trip(
        make_pg_store: MakeStore, monkeypatch: pytest.MonkeyPatch, tokenizer: str) -> None:
    server = make_pg_store(fts_tokenizer=tokenizer)
    _fill(server)
    copied = make_pg_store(server.namespace, fts_tokenizer=tokenizer, memory_cache=True)
    _warm(copied)
    sent = _RoundTrips(monkeypatch)
    cases: list[dict[str, Any]] = [{"match": m, "limit": 6} for m in MATCHES] + [
        {"match": '"heron"', "limit": 4, "window": 10}, {"match": '"heron"', "limit": 5, "order": "recent"},
        {"match": '"heron"', "limit": 6, "newest": 20}, {"match": '"heron"', "limit": 6, "sources": ["sessions"]},
        {"match": "", "limit": 3, "like_terms": ["heron can"]}, {"match": '"heron"', "limit": 3, "like_terms": ["al"]}]
    for case in cases:
        sent.sent.clear()
        assert _rows(copied.keyword_search(**case)) == _rows(server.keyword_search(**case)), case
        assert sum(1 for sql in sent.sent if "namespaces" in sql) >= 1
    sent.sent.clear()
    def sized(sets: list[tuple[int, frozenset[object] | None]]) -> list[tuple[int, int | None]]:
        return [(n, None if keys is None else len(keys)) for n, keys in sets]  # keys: opaque to the caller

    assert sized(copied.match_sets_many(MATCHES, cap=40)) == sized(server.match_sets_many(MATCHES, cap=40))
    assert copied.count_matches_many(MATCHES, cap=5) == server.count_matches_many(MATCHES, cap=5)
    cfg = MemoryConfig()
    run_search(copied, cfg, SEARCHES[0], provider=None)  # the chunk counts, read once per version
    for q in SEARCHES:
        expected = run_search(server, cfg, q, provider=None)
        sent.sent.clear()
        got = run_search(copied, cfg, q, provider=None)
        assert [(h.path, h.start_line, round(h.score, 9)) for h in got.hits] == \
            [(h.path, h.start_line, round(h.score, 9)) for h in expected.hits], q
        # the version check of each call only: no count, phrase or rank statement reached the server
        assert sent.sent and all(sql.startswith("SELECT n.id, n.version FROM") for sql in sent.sent), (q, sent.sent)


def test_a_write_from_another_host_is_seen_by_the_next_search(make_pg_store: MakeStore) -> None:
    writer = make_pg_store()
    _note(writer, "memory/a.md", ["the heron by the canal", "a lantern"])
    reader = make_pg_store(writer.namespace, memory_cache=True)
    _warm(reader)
    _note(writer, "memory/b.md", ["a heron on the roof"])  # another host's write
    assert {c.path for c, _ in reader.keyword_search('"heron"', limit=6)} == {"memory/a.md", "memory/b.md"}
    assert reader.wait_keyword_cache(timeout=30)  # brought up to date meanwhile
    assert reader.info().keyword_cache.startswith("warm (3 chunks, ")
    writer.delete_file("memory/a.md")
    _note(writer, "memory/b.md", ["no bird here"])
    assert reader.keyword_search('"heron"', limit=6) == []
    assert reader.wait_keyword_cache(timeout=30)
    assert reader.info().keyword_cache.startswith("warm (1 chunks, ")
    assert reader.keyword_search('"heron"', limit=6) == []
    assert [c.text for c, _ in reader.keyword_search('"bird"', limit=6)] == ["no bird here"]


def test_a_rebuild_s_swap_is_seen_by_the_next_search(make_pg_store: MakeStore) -> None:
    writer = make_pg_store()
    _note(writer, "memory/a.md", ["the heron by the canal"])
    reader = make_pg_store(writer.namespace, memory_cache=True)
    _warm(reader)
    with writer.rebuild() as new:
        _note(new, "memory/c.md", ["a heron in the new build"])
    assert [c.path for c, _ in reader.keyword_search('"heron"', limit=6)] == ["memory/c.md"]
    assert reader.wait_keyword_cache(timeout=30)
    assert [c.path for c, _ in reader.keyword_search('"heron"', limit=6)] == ["memory/c.md"]
    assert reader.info().keyword_cache.startswith("warm (1 chunks, ")


def test_the_copy_is_private_and_closing_the_store_removes_it(make_pg_store: MakeStore) -> None:
    store = make_pg_store(memory_cache=True)
    _note(store, "memory/a.md", ["the heron by the canal"])
    _warm(store)
    folder = store._keyword_copy._folder  # type: ignore[union-attr]
    assert folder is not None and folder.is_dir()
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700  # memory text: readable by this user only
    store.close()
    assert not Path(folder).exists()


def test_without_the_memory_cache_there_is_no_copy(make_pg_store: MakeStore) -> None:
    store = make_pg_store(memory_cache=False)
    _note(store, "memory/a.md", ["the heron by the canal"])
    assert [c.path for c, _ in store.keyword_search('"heron"', limit=6)] == ["memory/a.md"]
    assert store.wait_keyword_cache(timeout=1) and store.info().keyword_cache == "off"


@pytest.mark.skipif(os.name != "posix", reason="abandoned copies are found by their owner's lock (fcntl)")
def test_a_killed_process_s_copy_is_removed_by_the_next_copy(make_pg_store: MakeStore, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A process killed before closing its store (SIGKILL: no clean-up runs) leaves its copy of the memory text in
    the temporary folder; the next copy made by any process of the user removes it, and leaves the copies of
    processes still running (their owner lock is held), whatever their process ids look like from here."""
    import signal
    import subprocess
    import sys
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    holder = ("import sys, tempfile, time; from pathlib import Path; "
              "from openclaw_memory.storage.postgres import keyword_copy as k; "
              "f = Path(tempfile.mkdtemp(prefix=k._folder_prefix(), dir=sys.argv[1])); "
              "o = k._hold(f / k._OWNER_LOCK); (f / 'keywords.sqlite').write_text('memory text'); "
              "print(f, flush=True); time.sleep(60)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    killed, running = (subprocess.Popen([sys.executable, "-c", holder, str(tmp_path)], stdout=subprocess.PIPE,
                                        text=True, env=env) for _ in range(2))
    try:
        abandoned = Path(killed.stdout.readline().strip())  # type: ignore[union-attr]
        alive = Path(running.stdout.readline().strip())  # type: ignore[union-attr]
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        store = make_pg_store(memory_cache=True)
        _note(store, "memory/a.md", ["the heron by the canal"])
        _warm(store)
        assert not abandoned.exists() and alive.is_dir()
        assert store._keyword_copy._folder.parent == tmp_path  # type: ignore[union-attr]
    finally:
        running.kill()
        running.wait(timeout=30)


def test_status_shows_the_keyword_copy(make_pg_index: Callable[..., Any], write: Callable[[dict[str, str]], Path]
                                       ) -> None:
    write({"MEMORY.md": "# Notes\n\nThe heron nests by the canal.\n"})
    idx = make_pg_index()
    idx.sync()
    assert idx.search("heron").hits
    assert idx.store.wait_keyword_cache(timeout=30)  # type: ignore[attr-defined]
    assert idx.status().fts["cache"].startswith("warm (1 chunks, ")
    assert [h.path for h in idx.search("heron").hits] == ["MEMORY.md"]


def test_with_both_copies_warm_a_vector_search_reads_only_the_version(make_pg_store: MakeStore,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The vectors' copy picks the hits and the keyword copy holds their rows (text and stored vector): the same
    candidates as the server's, for one round trip reading the namespace's version."""
    rng = np.random.default_rng(3)
    server = make_pg_store()
    for f in range(4):
        path = f"memory/v{f}.md"
        server.replace_file(_file(path), [StoredChunk(
            id=f"{path}#{i}", path=path, source="sessions" if f == 3 else "memory", start_line=i + 1, end_line=i + 1,
            hash=f"{path}{i}", model="other" if f == 2 else "m", text=f"note {f}-{i} heron",
            embedding=rng.standard_normal(16).astype(np.float32)) for i in range(10)])
    copied = make_pg_store(server.namespace, memory_cache=True)
    query = rng.standard_normal(16).astype(np.float32)
    copied.vector_search(query, limit=1)
    _warm(copied)
    assert copied.wait_vector_cache(timeout=30)
    sent = _RoundTrips(monkeypatch)
    for options in ({}, {"sources": ["sessions"]}, {"model": "m"}):
        sent.sent.clear()
        got = copied.vector_search(query, limit=6, **options)
        assert len(sent.sent) == 1 and sent.sent[0].startswith("SELECT n.id, n.version FROM"), sent.sent
        expected = server.vector_search(query, limit=6, **options)
        assert [(c.id, c.text, c.vector_rank, round(c.vector_score, 9), tuple(c.embedding)) for c in got] == \
            [(c.id, c.text, c.vector_rank, round(c.vector_score, 9), tuple(c.embedding)) for c in expected] != []


def test_writes_while_the_copy_is_read_are_caught_up(make_pg_store: MakeStore, monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    """A copy is read a batch of files at a time, each in a statement of its own: a file rewritten, one removed and
    one added meanwhile leave it at no version (it never answers with rows of two versions), and the update the next
    search starts catches up."""
    writer = make_pg_store()
    for name in "abc":
        _note(writer, f"memory/{name}.md", [f"the heron of {name}", f"a canal of {name}"])
    reader = make_pg_store(writer.namespace, memory_cache=True)
    read_paths = keyword_copy.KeywordCopy._read_paths
    calls: list[int] = []

    def writing_meanwhile(self: Any, conn: Any, build: int, paths: Any) -> Any:
        read = read_paths(self, conn, build, paths)
        if not calls:  # after the first batch is read: another host writes
            _note(writer, "memory/a.md", ["the heron moved"])
            writer.delete_file("memory/b.md")
            _note(writer, "memory/d.md", ["a new heron"])
        calls.append(len(paths))
        return read

    monkeypatch.setattr(keyword_copy, "_ROWS_PER_READ", 2)  # one file a batch
    monkeypatch.setattr(keyword_copy.KeywordCopy, "_read_paths", writing_meanwhile)
    reader.keyword_search('"heron"', limit=1)
    assert reader.wait_keyword_cache(timeout=30)
    assert reader._keyword_copy.generation is None  # type: ignore[union-attr]
    expected = _rows(writer.keyword_search('"heron"', limit=10))
    assert {row[1] for row in expected} == {"memory/a.md", "memory/c.md", "memory/d.md"}
    assert _rows(reader.keyword_search('"heron"', limit=10)) == expected  # the server's answer meanwhile
    assert reader.wait_keyword_cache(timeout=30)
    assert reader._keyword_copy.generation == writer.generation()  # type: ignore[union-attr]
    assert _rows(reader.keyword_search('"heron"', limit=10)) == expected
    assert reader.info().keyword_cache.startswith("warm (4 chunks, ")


def test_searches_from_several_threads_use_the_copy_at_once(make_pg_store: MakeStore,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A hybrid search runs its keyword side and its vector side in two threads: both are answered by the copy
    (before, the second of two searches at once went to the server)."""
    import threading

    store = make_pg_store(memory_cache=True)
    _fill(store)
    _warm(store)
    inside = threading.Barrier(2, timeout=10)
    searching = keyword_copy.KeywordCopy.searching

    @contextlib.contextmanager
    def meeting(self: Any, generation: str) -> Any:
        with searching(self, generation) as found:
            inside.wait()  # both threads inside at once
            yield found

    monkeypatch.setattr(keyword_copy.KeywordCopy, "searching", meeting)
    sent = _RoundTrips(monkeypatch)
    results: list[Any] = []
    threads = [threading.Thread(target=lambda: results.append(store.keyword_search('"heron"', limit=3)))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert len(results) == 2 and results[0] and _rows(results[0]) == _rows(results[1])
    assert all(sql.startswith("SELECT n.id, n.version FROM") for sql in sent.sent), sent.sent  # no server search


def _failing_on(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """The copy's SQLite write of ``path`` fails (a full disk)."""
    from openclaw_memory.storage.sqlite.store import SQLiteStore

    real = SQLiteStore.replace_file

    def failing(self: Any, file: MemoryFile, chunks: Any, **kwargs: Any) -> None:
        if file.path == path:
            raise OSError("disk full")
        real(self, file, chunks, **kwargs)

    monkeypatch.setattr(SQLiteStore, "replace_file", failing)


def test_an_update_that_fails_half_way_leaves_nothing_stale(make_pg_store: MakeStore,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """An update writes q.md, then fails on r.md of the same batch; q.md is then removed on the server. The next
    update reads the copy again from nothing, so the copy, once current, does not find q.md (before, q.md was in the
    file but not in what the copy knew it held, and no later update looked at it again)."""
    writer = make_pg_store()
    _note(writer, "memory/a.md", ["the heron by the canal"])
    reader = make_pg_store(writer.namespace, memory_cache=True)
    _warm(reader)
    monkeypatch.setattr(keyword_copy, "_RETRY_AFTER", 0.0)
    _note(writer, "memory/q.md", ["a quokka on the quay"])  # q and r: one batch
    _note(writer, "memory/r.md", ["a raven"])
    with monkeypatch.context() as failing:
        _failing_on(failing, "memory/r.md")
        assert reader.keyword_search('"quokka"', limit=5)  # the server's answer; the update fails on r
        assert reader.wait_keyword_cache(timeout=30)
        assert reader.info().keyword_cache == "cold (last load failed: disk full)"
    writer.delete_file("memory/q.md")
    assert reader.keyword_search('"quokka"', limit=5) == []
    assert reader.wait_keyword_cache(timeout=30)
    assert reader.info().keyword_cache.startswith("warm (")  # and the failure is forgotten
    assert reader.keyword_search('"quokka"', limit=5) == []
    assert [c.path for c, _ in reader.keyword_search('"raven"', limit=5)] == ["memory/r.md"]


def test_a_close_during_an_update_leaves_no_copy_behind(make_pg_store: MakeStore, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """close() while an update is between two statements (nothing for the cancel to stop): the update, once it
    goes on, writes nothing and makes no new folder."""
    import tempfile
    import threading

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    store = make_pg_store(memory_cache=True)
    _note(store, "memory/a.md", ["the heron by the canal"])
    go_on, inside = threading.Event(), threading.Event()
    read_paths = keyword_copy.KeywordCopy._read_paths

    def held(self: Any, conn: Any, build: int, paths: Any) -> Any:
        inside.set()
        go_on.wait(timeout=30)
        return read_paths(self, conn, build, paths)

    monkeypatch.setattr(keyword_copy.KeywordCopy, "_read_paths", held)
    store.keyword_search('"heron"', limit=1)
    assert inside.wait(timeout=30)
    store.close()  # waits 2 s for the update, which is held
    go_on.set()
    assert store.wait_keyword_cache(timeout=30)
    assert list(tmp_path.glob(keyword_copy.FOLDER_PREFIX + "*")) == []
    assert store.info().keyword_cache == "cold"


def test_an_update_keeps_no_transaction_open_while_it_writes_the_copy(make_pg_store: MakeStore, pg: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """While the copy is written (seconds for a large namespace) no connection of this process holds a transaction
    open on the server: one would hold back another host's DDL on the chunks table (a rebuild dropping its old HNSW
    index), and every statement on that table queued behind it (before, the update's snapshot stayed open)."""
    store = make_pg_store(memory_cache=True)
    for name in "abc":
        _note(store, f"memory/{name}.md", [f"the heron of {name}"])
    open_transactions: list[int] = []
    write_paths = keyword_copy.KeywordCopy._write_paths

    def noting(self: Any, *args: Any) -> None:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            open_transactions.append(conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> "
                "pg_backend_pid() AND application_name = 'openclaw-memory' AND xact_start IS NOT NULL").fetchone()[0])
        write_paths(self, *args)

    monkeypatch.setattr(keyword_copy, "_ROWS_PER_READ", 1)
    monkeypatch.setattr(keyword_copy.KeywordCopy, "_write_paths", noting)
    _warm(store)
    assert open_transactions == [0, 0, 0]


#: MATCH strings the server's translation reads as words and FTS5 rejects as syntax or reads as operators
RAW_MATCHES = ["heron.canal", "don't", "c++", "3.14", "alice@example.com", "heron,canal", "#heron", "heron's",
               "NEAR(heron canal)", "text:heron", "^heron", "{text}:heron"]


def test_a_match_fts5_reads_otherwise_is_answered_by_the_server(make_pg_store: MakeStore) -> None:
    """Bare words with punctuation and FTS5's own operators (which the keyword side never builds: it quotes every
    phrase) are answered as the server reads them, copy or not (before, the copy found nothing for ``heron.canal``
    and found hits for ``NEAR(...)`` where the server found none)."""
    server = make_pg_store()
    _note(server, "memory/a.md", ["the heron.canal note", "don't panic", "c++ code", "pi is 3.14",
                                  "mail alice@example.com", "heron,canal", "#heron tag", "the heron's nest",
                                  "near the heron canal", "text about a heron"])
    copied = make_pg_store(server.namespace, memory_cache=True)
    _warm(copied)

    def sized(sets: list[tuple[int, frozenset[object] | None]]) -> list[tuple[int, int | None]]:
        return [(n, None if keys is None else len(keys)) for n, keys in sets]

    for match in RAW_MATCHES:
        assert _rows(copied.keyword_search(match, limit=5)) == _rows(server.keyword_search(match, limit=5)), match
        assert copied.count_matches_many([match], cap=9) == server.count_matches_many([match], cap=9), match
        assert sized(copied.match_sets_many([match], cap=9)) == sized(server.match_sets_many([match], cap=9)), match
    assert copied.info().keyword_cache.startswith("warm (")


def test_a_close_while_an_update_makes_the_copy_waits_for_it(make_pg_store: MakeStore, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """An update making the copy's folder for longer than close() waits for its thread (a slow sweep of the
    temporary folder): close() waits for that step, and nothing is left afterwards (before, the update made its
    folder and opened its file after close() had dropped the copy)."""
    import tempfile
    import threading
    import time

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    store = make_pg_store(memory_cache=True)
    _note(store, "memory/a.md", ["the heron by the canal"])
    inside = threading.Event()
    sweep = keyword_copy.remove_abandoned_copies

    def slow_sweep(folder: Path | None = None) -> list[Path]:
        inside.set()
        time.sleep(3)  # longer than close()'s 2 s wait for the thread
        return sweep(folder)

    monkeypatch.setattr(keyword_copy, "remove_abandoned_copies", slow_sweep)
    store.keyword_search('"heron"', limit=1)
    assert inside.wait(timeout=10)
    store.close()
    assert store.wait_keyword_cache(timeout=30)
    assert list(tmp_path.glob(keyword_copy.FOLDER_PREFIX + "*")) == []
    assert store._keyword_copy._store is None  # type: ignore[union-attr]


def test_a_temporary_folder_without_locks_still_gets_a_copy_and_leaves_no_folder(
        make_pg_store: MakeStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a file system without file locks (NFS without a lock daemon: ENOLCK) the copy is made all the same and
    removed at close (before, every try left a folder and the copy stayed cold)."""
    import errno
    import tempfile

    class NoLocks:
        LOCK_EX, LOCK_NB = 2, 4

        @staticmethod
        def flock(fd: Any, operation: int) -> None:
            raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(keyword_copy, "fcntl", NoLocks)
    store = make_pg_store(memory_cache=True)
    _note(store, "memory/a.md", ["the heron by the canal"])
    _warm(store)
    assert len(list(tmp_path.glob(keyword_copy.FOLDER_PREFIX + "*"))) == 1
    store.close()
    assert list(tmp_path.glob(keyword_copy.FOLDER_PREFIX + "*")) == []


def test_a_failed_read_from_the_server_keeps_what_the_copy_holds(make_pg_store: MakeStore,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A listing cut off (a dropped connection, a failover) is tried again at the next search, which reads only the
    file that changed (before, any failure made the next update read the whole namespace again, 60 s later)."""
    from openclaw_memory.errors import StoreError

    writer = make_pg_store()
    for i in range(20):
        _note(writer, f"memory/n{i:02d}.md", [f"heron {i}"])
    reader = make_pg_store(writer.namespace, memory_cache=True)
    _warm(reader)
    listing = keyword_copy.KeywordCopy._listing
    failed: list[int] = []

    def cut_off_once(self: Any, conn: Any) -> Any:
        if not failed:
            failed.append(1)
            raise StoreError("server closed the connection unexpectedly")
        return listing(self, conn)

    monkeypatch.setattr(keyword_copy.KeywordCopy, "_listing", cut_off_once)
    _note(writer, "memory/n00.md", ["heron changed"])
    reader.keyword_search('"heron"', limit=1)
    assert reader.wait_keyword_cache(timeout=30) and failed
    read_paths = keyword_copy.KeywordCopy._read_paths
    read: list[str] = []

    def counting(self: Any, conn: Any, build: int, paths: Any) -> Any:
        read.extend(paths)
        return read_paths(self, conn, build, paths)

    monkeypatch.setattr(keyword_copy.KeywordCopy, "_read_paths", counting)
    reader.keyword_search('"heron"', limit=1)
    assert reader.wait_keyword_cache(timeout=30)
    assert reader.info().keyword_cache.startswith("warm (20 chunks, ")
    assert read == ["memory/n00.md"]


def test_waiting_for_an_update_as_it_starts(make_pg_store: MakeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """wait_keyword_cache() from another thread while an update's thread is being started returns once it ends
    (before, it could join the thread before it started: RuntimeError)."""
    import threading
    import time

    class SlowStart(threading.Thread):
        def start(self) -> None:
            time.sleep(0.5)
            super().start()

    store = make_pg_store(memory_cache=True)
    _note(store, "memory/a.md", ["the heron by the canal"])
    monkeypatch.setattr(keyword_copy.threading, "Thread", SlowStart)
    searcher = threading.Thread(target=lambda: store.keyword_search('"heron"', limit=1))
    searcher.start()
    time.sleep(0.2)  # the searcher is starting the update's thread
    try:
        assert store.wait_keyword_cache(timeout=5)
    finally:
        searcher.join(timeout=10)
