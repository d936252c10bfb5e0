"""The module paths of 0.1.0 keep working for one release after the move into stage folders (issue 33, item 4):
each old path imports the module at its new path (the same object), and warns naming the new path.

This is the one file of the repository that imports the old paths (tests/core/test_import_graph.py checks it).
"""

from __future__ import annotations

import importlib
import pickle
import re
import sys
import warnings

import pytest

import openclaw_memory
from openclaw_memory._moved import MOVED_MODULES
from openclaw_memory.index.provider_access import AUTO

#: Every module of 0.1.0 that moved, and where it is now.
OLD_TO_NEW = {
    "append": "files.append", "bootstrap": "agent.bootstrap", "chunker": "text.chunker",
    "citations": "text.citations", "discovery": "files.discovery", "evaluation": "retrieval.evaluation",
    "fingerprint": "indexing.fingerprint", "flush": "agent.flush", "freshness": "index.freshness",
    "hybrid": "retrieval.ranking", "index_status": "index.status", "late_interaction": "retrieval.late_interaction",
    "mcp_server": "agent.mcp_server", "memory_writes": "files.memory_writes", "note_dates": "text.note_dates",
    "postgres": "storage.postgres", "postgres.fts": "storage.postgres.fts",
    "postgres.schema": "storage.postgres.schema",
    "postgres.store": "storage.postgres.store", "postgres.workspace_id": "storage.postgres.workspace_id",
    "progress": "indexing.progress", "provider_access": "index.provider_access", "query": "text.query_analysis",
    "records": "files.records", "rerank": "retrieval.rerank", "result_ranges": "retrieval.result_ranges",
    "safe_fs": "files.safe_fs", "scheduler": "index.scheduler", "search": "retrieval.pipeline",
    "session_hook": "agent.session_hook", "session_state": "files.session_state", "sessions": "files.sessions",
    "speakers": "text.speakers", "sqlite": "storage.sqlite", "sqlite.driver": "storage.sqlite.driver",
    "sqlite.rows": "storage.sqlite.rows", "sqlite.store": "storage.sqlite.store",
    "sqlite.vec_index": "storage.sqlite.vec_index", "sqlite.vector_cache": "storage.sqlite.vector_cache",
    "sync": "indexing.sync", "sync_runner": "index.sync_runner", "textprep": "text.preparation",
    "tiering": "indexing.two_tier", "time_ranges": "text.time_ranges", "tools": "agent.tools",
    "tuned_search": "index.search_options", "units": "indexing.line_units", "watch": "index.watch",
}
MOVES = sorted((f"openclaw_memory.{old}", f"openclaw_memory.{new}") for old, new in OLD_TO_NEW.items())


def _forget(old: str) -> None:
    """Drop an old path from the import cache, so the next import goes through the alias again."""
    sys.modules.pop(old, None)


def test_every_moved_module_has_its_alias():
    assert MOVED_MODULES == dict(MOVES)


@pytest.mark.parametrize(("old", "new"), MOVES)
def test_an_old_path_imports_the_new_module_and_warns(old: str, new: str):
    _forget(old)
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(old)} moved to {re.escape(new)};") as caught:
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert sys.modules[old] is module
    assert (module.__name__, module.__spec__.name) == (new, new)  # the module keeps its own identity
    assert caught[0].filename == __file__  # the warning points at the import, not into importlib


def test_from_import_and_import_as_reach_the_same_objects():
    from openclaw_memory.retrieval import pipeline, ranking

    _forget("openclaw_memory.search")
    _forget("openclaw_memory.hybrid")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from openclaw_memory.search import run_search
        import openclaw_memory.hybrid as hybrid
    assert run_search is pipeline.run_search
    assert hybrid is ranking
    assert [str(w.message).split(" moved")[0] for w in caught] == ["openclaw_memory.search", "openclaw_memory.hybrid"]


def test_monkeypatching_an_old_path_patches_the_new_module(monkeypatch: pytest.MonkeyPatch):
    from openclaw_memory.retrieval import pipeline

    def limit(max_results: int, multiplier: int) -> int:
        return 3

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        monkeypatch.setattr("openclaw_memory.search.candidate_limit", limit)
    assert pipeline.candidate_limit is limit


def test_other_names_are_left_to_the_import_system():
    assert importlib.util.find_spec("openclaw_memory.no_such_module") is None
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("openclaw_memory.search.no_such_module")


def test_the_old_index_module_is_the_index_package():
    """``openclaw_memory.index`` was a module and is a package now: its public names import without a warning."""
    from openclaw_memory.index import memory_index

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from openclaw_memory.index import IndexStatus, MemoryIndex
    assert (MemoryIndex, IndexStatus) == (memory_index.MemoryIndex, memory_index.IndexStatus)
    assert openclaw_memory.MemoryIndex is MemoryIndex
    with pytest.warns(DeprecationWarning, match=r"openclaw_memory\.index\.memory_index\._check_workspace"):
        assert openclaw_memory.index._check_workspace is memory_index._check_workspace
    with pytest.raises(AttributeError):
        openclaw_memory.index.no_such_name  # noqa: B018


def test_an_index_pickled_by_0_1_0_unpickles(make_index):
    """A pickle of 0.1.0 names ``openclaw_memory.index._reopen`` and ``openclaw_memory.provider_access.AUTO``."""
    index = make_index(provider=AUTO)
    new = pickle.dumps(index, protocol=2)  # protocol 2 names globals as plain "module\nname\n" text
    old = (new.replace(b"openclaw_memory.index.memory_index\n_reopen", b"openclaw_memory.index\n_reopen")
              .replace(b"openclaw_memory.index.provider_access\nAUTO", b"openclaw_memory.provider_access\nAUTO"))
    assert b"openclaw_memory.index\n_reopen" in old and b"openclaw_memory.provider_access\nAUTO" in old
    _forget("openclaw_memory.provider_access")
    with pytest.warns(DeprecationWarning):
        copy = pickle.loads(old)
    try:
        assert type(copy) is type(index)
        assert copy.workspace == index.workspace
        assert copy._explicit_provider is AUTO
    finally:
        copy.close()


def test_the_old_storage_module_is_the_storage_package():
    from openclaw_memory.storage import protocol

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from openclaw_memory.storage import (
            META_KEY,
            CacheKeys,
            FileRecord,
            IndexMeta,
            MemoryStore,
            StoredChunk,
            StoreInfo,
        )
    assert (META_KEY, CacheKeys, FileRecord, IndexMeta, MemoryStore, StoredChunk, StoreInfo) == (
        protocol.META_KEY, protocol.CacheKeys, protocol.FileRecord, protocol.IndexMeta, protocol.MemoryStore,
        protocol.StoredChunk, protocol.StoreInfo)
