"""Indexing: incremental sync, fingerprint rebuilds, the embedding cache, crashes and concurrency."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.storage.sqlite.driver import choose_driver, connect
from openclaw_memory.storage.sqlite.store import SQLiteStore

BASE = {
    "MEMORY.md": "# Memory\n\n- The user prefers tea over coffee.\n- Deploys happen on Fridays.\n",
    "memory/2026-01-16.md": "# 2026-01-16\n\n- Met Priya about the migration plan.\n",
    "memory/projects/api.md": "# API\n\nThe API uses cursor pagination.\n",
}


def _snapshot(ws: Path) -> dict[str, str]:
    return {str(p.relative_to(ws)): hashlib.sha256(p.read_bytes()).hexdigest() for p in ws.rglob("*") if p.is_file()}


def _rows(idx: MemoryIndex) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in idx.store.iter_chunks():
        out[c.path] = out.get(c.path, 0) + 1
    return out


def test_first_sync_indexes_every_memory_file(write, make_index, fake_provider):
    write(BASE | {"notes.md": "not a memory file", "memory/readme.txt": "not markdown"})
    idx = make_index(fake_provider)
    report = idx.sync()
    assert report.full_rebuild and report.rebuild_reason == "no index yet"
    assert set(_rows(idx)) == set(BASE)
    st = idx.status()
    assert st.files == 3 and st.chunks == 3 and not st.dirty


def test_unchanged_files_cost_nothing(write, make_index, fake_provider):
    write(BASE)
    idx = make_index(fake_provider)
    idx.sync()
    calls = fake_provider.calls
    report = idx.sync()
    assert not report.full_rebuild
    assert report.files_unchanged == 3 and report.files_indexed == 0
    assert fake_provider.calls == calls


def test_touch_without_content_change_does_not_reembed(write, make_index, fake_provider, workspace):
    write(BASE)
    idx = make_index(fake_provider)
    idx.sync()
    calls = fake_provider.calls
    path = workspace / "MEMORY.md"
    os.utime(path, (time.time() + 100, time.time() + 100))
    report = idx.sync()
    assert report.files_indexed == 0 and fake_provider.calls == calls


def test_change_replaces_only_that_files_rows(write, make_index, fake_provider, workspace):
    write(BASE)
    idx = make_index(fake_provider)
    idx.sync()
    before = {c.id for c in idx.store.iter_chunks() if c.path != "MEMORY.md"}
    (workspace / "MEMORY.md").write_text("# Memory\n\n- The user now prefers coffee.\n", encoding="utf-8")
    report = idx.sync()
    assert report.files_indexed == 1 and report.files_unchanged == 2
    after = list(idx.store.iter_chunks())
    assert {c.id for c in after if c.path != "MEMORY.md"} == before
    texts = [c.text for c in after if c.path == "MEMORY.md"]
    assert texts == ["# Memory\n\n- The user now prefers coffee."]  # the final newline adds no line


def test_delete_and_rename_remove_old_rows(write, make_index, fake_provider, workspace):
    write(BASE)
    idx = make_index(fake_provider)
    idx.sync()
    (workspace / "memory/2026-01-16.md").unlink()
    (workspace / "memory/projects/api.md").rename(workspace / "memory/projects/http-api.md")
    report = idx.sync()
    assert report.files_deleted == 2
    assert set(_rows(idx)) == {"MEMORY.md", "memory/projects/http-api.md"}
    assert not idx.store.keyword_search('"Priya"', limit=5)
    assert idx.store.file_records().keys() == {"MEMORY.md", "memory/projects/http-api.md"}


def test_indexing_never_modifies_markdown(write, make_index, fake_provider, workspace):
    write(BASE | {"memory/bad.md": b"caf\xe9 latin-1 text\n"})
    before = _snapshot(workspace)
    idx = make_index(fake_provider)
    idx.sync()
    idx.sync(force=True)
    assert _snapshot(workspace) == before


def test_non_utf8_is_indexed_with_replacement_and_binary_is_skipped(write, make_index, fake_provider):
    write({"MEMORY.md": "ok\n", "memory/latin1.md": b"caf\xe9 au lait\n", "memory/blob.md": b"\x00\x01\x02PNG\x00"})
    idx = make_index(fake_provider)
    report = idx.sync()
    texts = {c.path: c.text for c in idx.store.iter_chunks()}
    assert texts["memory/latin1.md"] == "caf\ufffd au lait"  # the final newline adds no line
    assert "memory/blob.md" not in texts
    assert report.files_skipped == ["memory/blob.md"]
    assert any("blob.md" in w for w in report.warnings)


def test_fingerprint_change_rebuilds(write, make_index, fake_provider, tmp_path):
    write(BASE)
    idx = make_index(fake_provider)
    idx.sync()
    idx.close()
    idx2 = make_index(fake_provider, chunking={"tokens": 50, "overlap": 10})
    report = idx2.sync()
    assert report.full_rebuild and "chunk tokens" in (report.rebuild_reason or "")
    idx2.close()
    other_model = FakeEmbeddingProvider(model="fake-other")
    idx3 = make_index(other_model, chunking={"tokens": 50, "overlap": 10})
    report = idx3.sync()
    assert report.full_rebuild and "model" in (report.rebuild_reason or "")
    assert {c.model for c in idx3.store.iter_chunks()} == {"fake-other"}


def test_an_index_cut_by_older_chunking_rules_is_rebuilt_from_the_cache(write, make_index, fake_provider):
    """An index built before the chunking rules changed (its meta has no ``chunker`` version) is
    rebuilt once, so its chunks and citations follow the current rules; unchanged chunk texts cost
    no embedding call."""
    from dataclasses import replace

    write(BASE)
    idx = make_index(fake_provider)
    idx.sync()
    idx.store.write_meta(replace(idx.store.read_meta(), chunker=1))  # what an older version wrote
    idx.close()
    idx2 = make_index(fake_provider)
    calls = fake_provider.calls
    report = idx2.sync()
    assert report.full_rebuild and "chunking rules" in (report.rebuild_reason or "")
    assert report.embedded == 0 and fake_provider.calls == calls
    assert not idx2.sync().full_rebuild  # and only once


def test_extra_paths_change_rebuilds_and_indexes_them(write, make_index, fake_provider, tmp_path):
    write(BASE)
    team = tmp_path / "team-docs"
    team.mkdir()
    (team / "runbook.md").write_text("# Runbook\nRestart the worker with care.\n", encoding="utf-8")
    idx = make_index(fake_provider)
    idx.sync()
    idx.close()
    idx2 = make_index(fake_provider, extra_paths=[str(team)])
    report = idx2.sync()
    assert report.full_rebuild and "extra paths" in (report.rebuild_reason or "")
    assert "../team-docs/runbook.md" in _rows(idx2)


def test_forced_reindex_reembeds_nothing(write, make_index, fake_provider):
    write(BASE)
    idx = make_index(fake_provider)
    idx.sync()
    assert fake_provider.texts_embedded == 3
    calls = fake_provider.calls
    report = idx.sync(force=True)
    assert report.full_rebuild and report.cache_hits == 3 and report.embedded == 0
    assert fake_provider.calls == calls
    assert idx.status().cache["entries"] == 3


def test_cache_max_entries_prunes_oldest(write, make_index, fake_provider, workspace):
    write(BASE)
    idx = make_index(fake_provider, cache={"max_entries": 2})
    idx.sync()
    (workspace / "memory/new.md").write_text("brand new note\n", encoding="utf-8")
    idx.sync()
    idx.sync(force=True)
    assert idx.store.cache_count() == 2


def test_keyword_only_mode_indexes_without_vectors(write, make_index):
    write(BASE)
    idx = make_index(None)
    idx.sync()
    chunks = list(idx.store.iter_chunks())
    assert chunks and all(c.embedding is None and c.model == "fts-only" for c in chunks)
    st = idx.status()
    assert st.search_mode == "keyword" and st.provider == "none"


def test_sqlite_vec_path_is_active_here(make_index, write, fake_provider):
    """On this machine the stdlib sqlite3 cannot load extensions; the suite must still run sqlite-vec."""
    write(BASE)
    idx = make_index(fake_provider)
    idx.sync()
    st = idx.status()
    assert st.vector["path"] == "sqlite-vec", st.vector
    assert st.vector["dims"] == 64
    assert st.fts["available"]
    assert st.driver in {"sqlite3", "sqlean", "pysqlite3"}


def test_numpy_path_when_vectors_disabled(make_index, write, fake_provider):
    write(BASE)
    idx = make_index(fake_provider, store={"vector": {"enabled": False}})
    idx.sync()
    st = idx.status()
    assert st.vector["path"] == "numpy" and "disabled" in st.vector["error"]
    hits = idx.store.vector_search(fake_provider.embed_query("cursor pagination API"), limit=1)
    assert hits[0].path == "memory/projects/api.md"


def test_failed_rebuild_keeps_previous_index(write, make_index, workspace):
    write(BASE)
    good = FakeEmbeddingProvider()
    idx = make_index(good)
    idx.sync()
    idx.close()
    broken = FakeEmbeddingProvider(model="fake-v2")
    from openclaw_memory.errors import IndexingError, ProviderError

    broken.fail_with = ProviderError("boom")
    idx2 = make_index(broken)
    with pytest.raises(IndexingError, match="previous index is unchanged"):
        idx2.sync()
    assert set(_rows(idx2)) == set(BASE)
    assert {c.model for c in idx2.store.iter_chunks()} == {"fake-hash"}
    assert not list(workspace.parent.glob("*.tmp-*"))


_CRASH_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from openclaw_memory import MemoryIndex
    from openclaw_memory.providers.fake import FakeEmbeddingProvider

    class Slow(FakeEmbeddingProvider):
        def _embed(self, texts, kind):
            print("EMBEDDING", flush=True)
            time.sleep(60)
            return super()._embed(texts, kind)

    idx = MemoryIndex(workspace=sys.argv[1], store={"path": sys.argv[2]}, provider=Slow(model="slow"), watch=False)
    idx.sync()
    """
)


def test_kill_9_during_rebuild_leaves_old_index_searchable(write, make_index, workspace, tmp_path):
    write(BASE)
    store_path = tmp_path / "index.sqlite"
    idx = make_index(FakeEmbeddingProvider())
    idx.sync()
    idx.close()
    proc = subprocess.Popen(
        [sys.executable, "-c", _CRASH_SCRIPT, str(workspace), str(store_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "EMBEDDING" in line, proc.stderr.read() if proc.stderr else ""
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    store = SQLiteStore(store_path)
    try:
        assert store.read_meta() is not None and store.read_meta().model == "fake-hash"
        assert {c.path for c in store.iter_chunks()} == set(BASE)
        assert store.keyword_search('"pagination"', limit=3)
    finally:
        store.close()
    # the next sync cleans up the temp file and rebuilds normally
    idx2 = make_index(FakeEmbeddingProvider(model="slow-but-fine"))
    idx2.sync()
    assert not list(tmp_path.glob("index.sqlite.tmp-*"))
    assert {c.model for c in idx2.store.iter_chunks()} == {"slow-but-fine"}


_CONCURRENT_SCRIPT = textwrap.dedent(
    """
    import sys
    from openclaw_memory import MemoryIndex
    from openclaw_memory.providers.fake import FakeEmbeddingProvider
    idx = MemoryIndex(workspace=sys.argv[1], store={"path": sys.argv[2]}, provider=FakeEmbeddingProvider(), watch=False)
    for _ in range(3):
        idx.sync(force=sys.argv[3] == "force")
    idx.close()
    print("OK")
    """
)


@pytest.mark.parametrize("mode", ["force", "incremental"])
def test_two_processes_indexing_the_same_store(write, workspace, tmp_path, mode):
    files = {f"memory/note-{i:03d}.md": f"# Note {i}\n\nItem number {i} about topic {i % 7}.\n" for i in range(60)}
    write(files)
    store_path = tmp_path / "shared.sqlite"
    procs = [
        subprocess.Popen([sys.executable, "-c", _CONCURRENT_SCRIPT, str(workspace), str(store_path), mode],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and "OK" in out, err
    store = SQLiteStore(store_path)
    try:
        chunks = list(store.iter_chunks())
        assert len(chunks) == len({c.id for c in chunks}) == 60
        assert set(store.file_records()) == set(files)
        assert len(store.keyword_search('"topic"', limit=100)) == 60
    finally:
        store.close()


def test_connections_opened_at_the_same_moment_on_a_new_file_all_open(tmp_path):
    # Switching a new file to WAL fails with "database is locked" (no busy handler) while another
    # connection does the same: two agents starting together made one of them fail to open the index.
    # Without a retry about one round in three failed here.
    choice = choose_driver(vector_enabled=True)
    for rep in range(30):
        path = tmp_path / f"new-{rep}.sqlite"
        barrier = threading.Barrier(6)
        errors: list[BaseException] = []

        def open_store() -> None:
            barrier.wait()
            try:
                conn = connect(choice, path)
                conn.execute("CREATE TABLE IF NOT EXISTS t(x)")
                conn.close()
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)

        threads = [threading.Thread(target=open_store) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors[0]


def test_provider_can_be_given_by_name(write, make_index):
    write(BASE)
    idx = make_index("none")
    assert idx.config.provider == "none" and idx.provider is None
    assert idx.status().requested_provider == "none"


def test_unchanged_files_are_not_read_again(write, make_index, fake_provider, monkeypatch):
    write(BASE)
    idx = make_index(fake_provider)
    idx.sync()
    from openclaw_memory.files import discovery

    reads: list[str] = []
    real = discovery.build_file_entry
    monkeypatch.setattr(discovery, "build_file_entry", lambda p, ws, *a: reads.append(p.name) or real(p, ws, *a))
    report = idx.sync()
    assert reads == [] and report.files_unchanged == 3


def test_an_unreadable_file_is_skipped_not_fatal(write, make_index, fake_provider, monkeypatch):
    write(BASE)
    from openclaw_memory.files import discovery

    real = discovery.build_file_entry

    def deny(path, ws, *a):
        if path.name == "api.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, ws, *a)

    monkeypatch.setattr(discovery, "build_file_entry", deny)
    idx = make_index(fake_provider)
    report = idx.sync()
    assert report.files_skipped == ["memory/projects/api.md"] and "Permission denied" in report.warnings[0]
    assert set(_rows(idx)) == {"MEMORY.md", "memory/2026-01-16.md"}


def test_failed_swap_keeps_the_old_index_usable(write, make_index, fake_provider, monkeypatch, tmp_path):
    write(BASE)
    idx = make_index(fake_provider)
    idx.sync()
    import openclaw_memory.storage.sqlite.store as store_mod

    real_replace = os.replace

    def fail_on_swap(src, dst):
        if ".tmp-" in str(src) and str(dst).endswith("index.sqlite"):
            raise PermissionError(13, "file in use", str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(store_mod.os, "replace", fail_on_swap)
    from openclaw_memory.errors import IndexingError

    with pytest.raises(IndexingError):
        idx.sync(force=True)
    assert set(_rows(idx)) == set(BASE)
    assert idx.store.keyword_search('"pagination"', limit=3)
    assert not list(tmp_path.glob("index.sqlite.tmp-*"))


def test_openclaws_own_index_is_never_taken_over(tmp_path):
    import sqlite3

    path = tmp_path / "main.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE chunks (id TEXT PRIMARY KEY, path TEXT NOT NULL, embedding TEXT NOT NULL)")
    con.execute("INSERT INTO chunks VALUES ('x', 'MEMORY.md', '[]')")
    con.commit()
    con.close()
    before = path.read_bytes()
    from openclaw_memory.errors import StoreError

    with pytest.raises(StoreError, match="written by OpenClaw itself"):
        SQLiteStore(path)
    assert path.read_bytes() == before


def test_close_stops_a_running_sync(write, workspace, tmp_path):
    write({f"memory/n{i:03d}.md": f"note {i}\n" for i in range(120)})
    from openclaw_memory.indexing.sync import EMBED_GROUP_CHUNKS

    embedded: list[int] = []
    entered = threading.Event()
    cancelled: list[threading.Event] = []

    class Slow(FakeEmbeddingProvider):
        def _embed(self, texts, kind):  # a local model's time grows with the texts of a call
            embedded.append(len(texts))
            entered.set()
            assert cancelled[0].wait(30)  # close() comes while this call runs, however loaded the machine
            time.sleep(0.05 * len(texts))
            return super()._embed(texts, kind)

    idx = MemoryIndex(workspace=workspace, store={"path": str(tmp_path / "s.sqlite")}, provider=Slow(), watch=False)
    cancelled.append(idx.scheduler.cancel_event)
    fut = idx.sync_in_background("test")
    assert entered.wait(30)  # the sync is embedding its first group of files
    idx.close()
    assert fut.done()
    # close waited for the model call in progress only, not for the ~6 s of calls the whole sync would make
    assert sum(embedded) <= EMBED_GROUP_CHUNKS < 120
    store = SQLiteStore(tmp_path / "s.sqlite")
    try:
        assert store.read_meta() is None and not list(store.iter_chunks())  # the first rebuild was discarded
    finally:
        store.close()


def test_deep_status_probes_the_provider(make_index, fake_provider):
    probe = make_index(fake_provider).status(deep=True).embedding_probe
    assert probe["ok"] and probe["provider"] == "fake" and probe["dims"] == 64
    fake_provider.fail_with = RuntimeError("endpoint down")
    probe = make_index(fake_provider).status(deep=True).embedding_probe
    assert not probe["ok"] and "endpoint down" in probe["error"]
    probe = make_index(None).status(deep=True).embedding_probe
    assert not probe["ok"] and probe["provider"] == "none" and "keyword-only" in probe["error"]


def test_files_embedded_in_groups_are_committed_and_cached_before_a_later_group_fails(write, make_index, workspace):
    """Sync embeds the chunks of several files per provider call; when a later call fails, the files of the
    earlier calls are already committed and their vectors cached: the next sync embeds only the rest."""
    from openclaw_memory.errors import IndexingError, ProviderError
    from openclaw_memory.indexing.sync import EMBED_GROUP_CHUNKS

    write({"memory/base.md": "# Base\n\n- the index exists\n"})

    class FailsOnSecondCall(FakeEmbeddingProvider):
        broken = False
        document_calls = 0

        def _embed(self, texts, kind):
            if kind == "document":
                self.document_calls += 1
                if self.broken and self.document_calls == 2:
                    raise ProviderError("model crashed")
            return super()._embed(texts, kind)

    provider = FailsOnSecondCall(dims=32)
    idx = make_index(provider)
    idx.sync()
    n = 2 * EMBED_GROUP_CHUNKS  # one chunk per file: two provider calls
    write({f"memory/n{i:03d}.md": f"# Note {i}\n\n- supplier {i} sent invoice {i * 7}\n" for i in range(n)})
    provider.broken, provider.document_calls = True, 0
    with pytest.raises(IndexingError):
        idx.sync()
    assert provider.document_calls == 2
    committed = {c.path for c in idx.store.iter_chunks()}
    assert {f"memory/n{i:03d}.md" for i in range(EMBED_GROUP_CHUNKS)} <= committed  # the first group
    assert all(c.embedding is not None for c in idx.store.iter_chunks())
    report = idx.sync()
    assert report.embedded == EMBED_GROUP_CHUNKS and report.files_indexed == EMBED_GROUP_CHUNKS
    assert len({c.path for c in idx.store.iter_chunks()}) == n + 1
