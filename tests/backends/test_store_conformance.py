"""The MemoryStore conformance suite: what every storage backend must do, checked the same way.

Every test here runs once per backend in ``tests/backends/conftest.py::BACKENDS`` (through the
``store_factory`` / ``store`` fixtures) and uses nothing but the
:class:`~openclaw_memory.storage.MemoryStore` protocol (plus the public ``MemoryIndex`` for the
fingerprint contract, which is how the library drives a store). A new backend adds one entry to
``BACKENDS`` and must pass this module unmodified; see ``tests/backends/README.md``.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import IndexLockedError, StoreError, SyncCancelled
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.text.query_analysis import analyze_query, match_rows
from openclaw_memory.storage import FileRecord, IndexMeta, MemoryStore, StoredChunk
from openclaw_memory.types import MemoryFile

if TYPE_CHECKING:
    from tests.backends.conftest import StoreFactory

DIMS = 8


def _unit(*values: float) -> np.ndarray:
    vec = np.zeros(DIMS, dtype=np.float32)
    vec[: len(values)] = values
    return vec / np.linalg.norm(vec)


def _file(path: str, texts: Sequence[str], *, source: str = "memory", mtime_ms: float = 1000.0) -> MemoryFile:
    return MemoryFile(path=path, abs_path=f"/workspace/{path}", mtime_ms=mtime_ms, size=sum(len(t) for t in texts),
                      hash=hashlib.sha256("\n".join(texts).encode()).hexdigest(), source=source)  # type: ignore[arg-type]


def _chunks(path: str, texts: Sequence[str], *, source: str = "memory", model: str = "m",
            vectors: Sequence[np.ndarray | None] | None = None) -> list[StoredChunk]:
    vecs = list(vectors) if vectors is not None else [None] * len(texts)
    return [StoredChunk(id=f"{path}#{i}", path=path, source=source, start_line=i + 1, end_line=i + 1,
                        hash=hashlib.sha256(t.encode()).hexdigest(), model=model, text=t, embedding=v)
            for i, (t, v) in enumerate(zip(texts, vecs))]


def _put(store: MemoryStore, path: str, texts: Sequence[str], *, source: str = "memory", model: str = "m",
         vectors: Sequence[np.ndarray | None] | None = None) -> list[StoredChunk]:
    chunks = _chunks(path, texts, source=source, model=model, vectors=vectors)
    store.replace_file(_file(path, texts, source=source), chunks)
    return chunks


def _keyword(store: MemoryStore, query: str, *, limit: int = 10, sources: Sequence[str] | None = None) -> list[str]:
    match = analyze_query(query).match
    assert match, query
    return [c.id for c, _ in store.keyword_search(match, limit=limit, sources=sources)]


def _meta(**changes: object) -> IndexMeta:
    base = dict(model="m", provider="fake", provider_key="k", sources=("memory",), scope_hash="s",
                chunk_tokens=400, chunk_overlap=80, fts_tokenizer="unicode61", vector_dims=DIMS)
    base.update(changes)
    return IndexMeta(**base)  # type: ignore[arg-type]


# ---- files and chunks ------------------------------------------------------------------------------


def test_a_new_store_is_empty(store: MemoryStore) -> None:
    assert store.is_empty() and store.counts() == {} and store.file_records() == {}
    assert list(store.iter_chunks()) == [] and store.read_meta() is None and store.cache_count() == 0
    assert isinstance(store, MemoryStore)


def test_replace_file_writes_chunks_vectors_and_the_file_record(store: MemoryStore) -> None:
    vecs = [_unit(1), _unit(0, 1), None]
    written = _put(store, "memory/a.md", ["alpha one", "beta two", "gamma three"], vectors=vecs)
    assert not store.is_empty()
    f = _file("memory/a.md", ["alpha one", "beta two", "gamma three"])
    assert store.file_records() == {"memory/a.md": FileRecord("memory/a.md", "memory", f.hash, 1000.0, f.size)}
    got = store.get_chunks(["memory/a.md#2", "nope", "memory/a.md#0"])
    assert [c.id for c in got] == ["memory/a.md#2", "memory/a.md#0"]  # the order asked for, unknown ids left out
    assert (got[1].text, got[1].start_line, got[1].end_line, got[1].model, got[1].hash) == (
        "alpha one", 1, 1, "m", written[0].hash)
    np.testing.assert_allclose(got[1].embedding, vecs[0], rtol=1e-6)
    assert got[0].embedding is None
    assert [c.id for c in store.iter_chunks()] == [c.id for c in written]
    assert store.counts() == {"memory": {"files": 1, "chunks": 3}}


def test_replace_file_replaces_every_old_row(store: MemoryStore) -> None:
    _put(store, "memory/a.md", ["zebra crossing", "zebra stripes", "zebra herd"],
         vectors=[_unit(1), _unit(1, 1), _unit(1, 0, 1)])
    _put(store, "memory/a.md", ["lion pride"], vectors=[_unit(0, 0, 0, 1)])
    assert [c.text for c in store.iter_chunks()] == ["lion pride"]
    assert store.get_chunks(["memory/a.md#1", "memory/a.md#2"]) == []
    assert _keyword(store, "zebra") == []  # no keyword row outlives its chunk
    hits = store.vector_search(_unit(1), limit=10)
    assert [c.id for c in hits] == ["memory/a.md#0"] and hits[0].text == "lion pride"
    assert store.counts() == {"memory": {"files": 1, "chunks": 1}}


def test_a_chunk_id_moves_to_the_file_that_now_holds_it(store: MemoryStore) -> None:
    _put(store, "memory/a.md", ["shared text"])
    moved = StoredChunk(id="memory/a.md#0", path="memory/b.md", source="memory", start_line=3, end_line=4,
                        hash="h", model="m", text="shared text moved", embedding=None)
    store.replace_file(_file("memory/b.md", ["shared text moved"]), [moved])
    assert [(c.id, c.path) for c in store.iter_chunks()] == [("memory/a.md#0", "memory/b.md")]
    assert _keyword(store, "moved") == ["memory/a.md#0"]


def test_delete_file_removes_its_chunks_keyword_and_vector_rows(store: MemoryStore) -> None:
    _put(store, "memory/a.md", ["walrus tusk"], vectors=[_unit(1)])
    _put(store, "memory/b.md", ["walrus colony"], vectors=[_unit(1, 0.1)])
    store.delete_file("memory/a.md", "sessions")  # another source: nothing happens
    assert set(store.file_records()) == {"memory/a.md", "memory/b.md"}
    store.delete_file("memory/a.md")
    assert set(store.file_records()) == {"memory/b.md"}
    assert _keyword(store, "walrus") == ["memory/b.md#0"]
    assert [c.id for c in store.vector_search(_unit(1), limit=5)] == ["memory/b.md#0"]
    store.delete_file("memory/b.md", "memory")
    assert store.is_empty() and store.counts() == {}


def test_touch_file_changes_only_mtime_and_size(store: MemoryStore) -> None:
    _put(store, "memory/a.md", ["otter"])
    before = store.file_records()["memory/a.md"]
    f = _file("memory/a.md", ["otter"], mtime_ms=5000.0)
    store.touch_file(MemoryFile(f.path, f.abs_path, 5000.0, 99, "ignored-hash", f.source))
    after = store.file_records()["memory/a.md"]
    assert (after.mtime_ms, after.size, after.hash) == (5000.0, 99, before.hash)
    assert [c.text for c in store.iter_chunks()] == ["otter"]


def test_sources_are_kept_apart(store: MemoryStore) -> None:
    _put(store, "memory/a.md", ["heron by the lake"], vectors=[_unit(1)])
    _put(store, "sessions/s1.jsonl", ["heron in the transcript"], source="sessions", vectors=[_unit(1, 0.2)])
    assert set(store.file_records("sessions")) == {"sessions/s1.jsonl"}
    assert [c.id for c in store.iter_chunks("memory")] == ["memory/a.md#0"]
    assert store.counts() == {"memory": {"files": 1, "chunks": 1}, "sessions": {"files": 1, "chunks": 1}}
    assert _keyword(store, "heron", sources=["sessions"]) == ["sessions/s1.jsonl#0"]
    assert sorted(_keyword(store, "heron")) == ["memory/a.md#0", "sessions/s1.jsonl#0"]


# ---- keyword search ----------------------------------------------------------------------------------

LANG_DOCS = {
    "memory/zh.md": ["我每天早上都要喝一杯咖啡，不然没法工作。", "这个项目下周上线，进度有点紧。", "周末去爬山，天气很好。"],
    "memory/ja.md": ["昨日の夜、本番サーバーが落ちて再起動しました。", "来週の会議は火曜日に変更になりました。"],
    "memory/ko.md": ["어제 서버에서 메모리 누수가 발생했다.", "다음 주 회의는 화요일로 변경되었다."],
    "memory/th.md": ["ร้านนี้ขายอาหารทะเลสดมาก โดยเฉพาะกุ้งเผา", "ประชุมทีมย้ายไปวันพฤหัสบดี"],
    "memory/en.md": ["The quarterly budget review moved to Thursday.", "Ann's birthday dinner is at the Italian place."],
}


@pytest.mark.parametrize(("query", "want"), [
    ("咖啡", "memory/zh.md#0"),
    ("项目", "memory/zh.md#1"),
    ("サーバー", "memory/ja.md#0"),
    ("会議", "memory/ja.md#1"),
    ("서버", "memory/ko.md#0"),
    ("회의는", "memory/ko.md#1"),
    ("อาหารทะเล", "memory/th.md#0"),
    ("กุ้ง", "memory/th.md#0"),
    ("budget review", "memory/en.md#0"),
])
def test_keyword_search_in_five_scripts(store: MemoryStore, query: str, want: str) -> None:
    for path, texts in LANG_DOCS.items():
        _put(store, path, texts)
    assert _keyword(store, query)[:1] == [want]


def test_record_markers_are_not_keyword_indexed(store: MemoryStore) -> None:
    """A record's marker lines (leftovers3, item 1) are stored and returned with the chunk, never matched."""
    text = ('<!-- openclaw-memory:item {"created_at": "2026-03-01T09:00:01", "key": "6f1c2a3e-9b4d"} -->\n'
            "The heron nests by the mill pond.\n<!-- /openclaw-memory:item -->")
    _put(store, "memory/store/birds.md", [text])
    assert _keyword(store, "heron nests") == ["memory/store/birds.md#0"]
    for query in ("6f1c2a3e", "created_at", "openclaw memory item"):
        assert _keyword(store, query) == [], query
    assert store.get_chunks(["memory/store/birds.md#0"])[0].text == text


def test_keyword_ranks_are_bm25_like_lower_is_better(store: MemoryStore) -> None:
    _put(store, "memory/a.md", ["pelican pelican pelican migration", "a note that mentions a pelican once among "
                                "many other words about the weather and the sea and the boats"])
    hits = store.keyword_search(analyze_query("pelican").match or "", limit=5)
    assert [c.id for c, _ in hits] == ["memory/a.md#0", "memory/a.md#1"]
    assert hits[0][1] <= hits[1][1] and [c.text_rank for c, _ in hits] == [1, 2]
    assert store.keyword_search(analyze_query("pelican").match or "", limit=1)[0][0].id == "memory/a.md#0"


def test_a_keyword_only_search_finds_what_any_search_finds(store: MemoryStore) -> None:
    """``vectors=False`` (the caller scores nothing by stored vectors) changes no candidate, rank or text."""
    _put(store, "memory/a.md", ["pelican pelican migration", "one pelican among gulls", "gulls only"])
    match = analyze_query("pelican gulls").match or ""
    for kwargs in ({}, {"order": "recent"}, {"window": 1}):
        with_vectors = store.keyword_search(match, limit=5, **kwargs)  # type: ignore[arg-type]
        without = store.keyword_search(match, limit=5, vectors=False, **kwargs)  # type: ignore[arg-type]
        # the same rank up to rounding: a server's store may rank on the server or in its local copy
        assert [(c.id, c.text, round(r, 12)) for c, r in without] == \
            [(c.id, c.text, round(r, 12)) for c, r in with_vectors] != []


def test_equal_keyword_ranks_keep_the_most_recently_indexed_chunks(store: MemoryStore) -> None:
    """Chunks that rank alike (the same text) come out newest first, and a limit keeps the newest of them, on every
    backend and with every option; before, SQLite kept the oldest (FTS5 cuts a tie in index order) and listed
    substring matches oldest first."""
    for i in range(8):
        _put(store, f"memory/t{i}.md", ["the heron by the canal"])
    match = analyze_query("heron").match or ""
    newest = ["memory/t7.md#0", "memory/t6.md#0", "memory/t5.md#0"]
    assert [c.id for c, _ in store.keyword_search(match, limit=3)] == newest
    assert [c.id for c, _ in store.keyword_search(match, limit=3, window=6)] == newest
    assert [c.id for c, _ in store.keyword_search("", limit=3, like_terms=["heron by"])] == newest


def test_newest_counts_chunks_whatever_removals_left_between_them(store: MemoryStore) -> None:
    """``newest=2`` searches the two most recently indexed chunks, also after files indexed between them were
    removed (which leaves gaps in a store's row numbers); before, SQLite counted row numbers back from the newest
    and found one chunk here."""
    for i in range(4):
        _put(store, f"memory/n{i}.md", [f"kestrel number {i}"])
    store.delete_file("memory/n1.md")
    store.delete_file("memory/n2.md")
    match = analyze_query("kestrel").match or ""
    expected = ["memory/n3.md#0", "memory/n0.md#0"]
    assert [c.id for c, _ in store.keyword_search(match, limit=5, order="recent", newest=2)] == expected
    assert sorted(c.id for c, _ in store.keyword_search(match, limit=5, newest=2)) == sorted(expected)


def test_keyword_options_recent_like_count_and_rejected_syntax(store: MemoryStore) -> None:
    for i in range(5):
        _put(store, f"memory/n{i}.md", [f"kestrel sighting number {i}"])
    match = analyze_query("kestrel").match or ""
    recent = store.keyword_search(match, limit=2, order="recent")
    assert [c.id for c, _ in recent] == ["memory/n4.md#0", "memory/n3.md#0"] and {r for _, r in recent} == {0.0}
    assert store.count_matches(match, cap=3) == 3 and store.count_matches(match, cap=100) == 5
    assert [c.id for c, _ in store.keyword_search("", limit=5, like_terms=["number 2"])] == ["memory/n2.md#0"]
    assert store.keyword_search('"unbalanced', limit=5) == []  # a query the index rejects finds nothing
    assert store.keyword_search("", limit=5) == []


def test_count_matches_many_counts_each_as_count_matches_does(store: MemoryStore) -> None:
    """Counts asked together (one statement or round trip) equal the counts asked one by one: words, prefixes
    (one token or several starting with them, a token holding the cap), phrases, AND/OR, nothing, rejected."""
    texts = ["kestrel painting the heron", "kestrel painted heron and painter", "heron heron", "pelican paint",
             "kestrel the painting", "heron"]
    for i, t in enumerate(texts):
        _put(store, f"memory/c{i}.md", [t])
    matches = ['"kestrel"', '"paint"*', '"pel"*', '"zzz"*', '"he"*', '"kestrel painting"', '"heron" AND "paint"*',
               '"pelican" OR "painter"', '"missing"', "", '"unbalanced', '"kestrel"']
    for cap in (1, 2, 3, 100):
        one_by_one = [store.count_matches(m, cap=cap) for m in matches]
        assert store.count_matches_many(matches, cap=cap) == one_by_one, cap
        assert store.count_matches_many(matches, cap=cap) == one_by_one, cap  # remembered counts too
    assert store.count_matches_many(matches, cap=100)[:9] == [3, 4, 1, 0, 4, 1, 2, 2, 0]
    assert store.count_matches_many([], cap=10) == [] and store.count_matches_many(['"heron"'], cap=0) == [0]


# ---- vector search -------------------------------------------------------------------------------------


def test_vector_search_best_first_with_cosine_scores(store: MemoryStore) -> None:
    _put(store, "memory/a.md", ["far", "near", "middle"], vectors=[_unit(0, 1), _unit(1, 0.05), _unit(1, 1)])
    hits = store.vector_search(_unit(1), limit=2)
    assert [c.id for c in hits] == ["memory/a.md#1", "memory/a.md#2"] and [c.vector_rank for c in hits] == [1, 2]
    assert hits[0].vector_score == pytest.approx(float(_unit(1) @ _unit(1, 0.05)), abs=1e-4)
    assert hits[1].vector_score == pytest.approx(float(np.sqrt(0.5)), abs=1e-4)
    assert hits[0].text == "near" and (hits[0].start_line, hits[0].end_line) == (2, 2)


def test_vector_search_filters_by_source_and_model(store: MemoryStore) -> None:
    _put(store, "memory/a.md", ["mem"], vectors=[_unit(1)])
    _put(store, "sessions/s.jsonl", ["session"], source="sessions", vectors=[_unit(1, 0.01)])
    _put(store, "memory/b.md", ["other model"], model="other", vectors=[_unit(1, 0.02)])
    assert [c.id for c in store.vector_search(_unit(1), limit=5, sources=["sessions"])] == ["sessions/s.jsonl#0"]
    assert [c.id for c in store.vector_search(_unit(1), limit=5, sources=["memory"], model="m")] == ["memory/a.md#0"]
    assert [c.id for c in store.vector_search(_unit(1), limit=5, model="other")] == ["memory/b.md#0"]
    assert len(store.vector_search(_unit(1), limit=5)) == 3


def test_vector_ties_come_in_indexing_order(store: MemoryStore) -> None:
    same = _unit(1, 1)
    _put(store, "memory/b.md", ["b0", "b1"], vectors=[same, same])
    _put(store, "memory/a.md", ["a0"], vectors=[same])
    _put(store, "memory/c.md", ["best"], vectors=[_unit(1, 0.99)])
    hits = store.vector_search(_unit(1, 1), limit=4)
    assert [c.id for c in hits][:3] == ["memory/b.md#0", "memory/b.md#1", "memory/a.md#0"]
    assert [c.id for c in store.vector_search(_unit(1, 1), limit=2)] == ["memory/b.md#0", "memory/b.md#1"]


def test_zero_and_non_finite_vectors(store: MemoryStore) -> None:
    bad = np.full(DIMS, np.nan, dtype=np.float32)
    _put(store, "memory/a.md", ["good", "zero", "nan"], vectors=[_unit(1), np.zeros(DIMS, np.float32), bad])
    hits = store.vector_search(_unit(1), limit=5)
    assert "memory/a.md#2" not in [c.id for c in hits]
    scores = {c.id: c.vector_score for c in hits}
    assert scores["memory/a.md#0"] == pytest.approx(1.0, abs=1e-4) and scores.get("memory/a.md#1", 0.0) == 0.0
    assert store.vector_search(np.zeros(DIMS, np.float32), limit=5) == []
    assert store.vector_search(bad, limit=5) == []


def test_vector_scores_are_what_vector_search_gives_any_chunk(store: MemoryStore) -> None:
    bad = np.full(DIMS, np.nan, dtype=np.float32)
    vectors = [_unit(1, 0.1), _unit(0, 1), _unit(1, 1, 1), np.zeros(DIMS, np.float32), bad, None]
    _put(store, "memory/a.md", ["a0", "a1", "a2", "zero", "nan", "none"], vectors=vectors)
    _put(store, "memory/b.md", ["other model"], model="other", vectors=[_unit(1, 0.2)])
    _put(store, "memory/c.md", ["wider"], vectors=[np.ones(DIMS + 4, np.float32)])
    q = _unit(1, 0.3, 0.2)
    ranked = {c.id: c.vector_score for c in store.vector_search(q, limit=10)}
    ids = [f"memory/a.md#{i}" for i in range(6)] + ["memory/b.md#0", "memory/c.md#0", "missing"]
    got = store.vector_scores(q, ids)
    # exactly the search's scores, also for a chunk outside its top 1; no NaN, missing, unset or wider vector
    assert got == {k: v for k, v in ranked.items() if k in ids} and set(got) == {*ids[:4], "memory/b.md#0"}
    assert got["memory/a.md#3"] == 0.0
    top1 = store.vector_search(q, limit=1)[0]
    assert store.vector_scores(q, ["memory/a.md#1"]) == {"memory/a.md#1": ranked["memory/a.md#1"]}
    assert store.vector_scores(q, [top1.id])[top1.id] == top1.vector_score
    assert set(store.vector_scores(q, ids, model="m")) == set(ids[:4])
    assert store.vector_scores(q, ids, model="nobody") == {}
    assert store.vector_scores(np.zeros(DIMS, np.float32), ids) == {} and store.vector_scores(bad, ids) == {}
    assert store.vector_scores(q, []) == {}
    _put(store, "memory/a.md", ["a0 again"], vectors=[_unit(0, 1)])  # a write: the new vector, the rest gone
    assert store.vector_scores(q, ids[:3]) == {"memory/a.md#0": pytest.approx(float(q @ _unit(0, 1)), abs=1e-6)}


# ---- embedding cache ---------------------------------------------------------------------------------------


def test_embedding_cache_is_keyed_by_provider_model_and_key(store: MemoryStore) -> None:
    store.cache_put("fake", "m", "k1", {"h1": _unit(1), "h2": _unit(0, 1)})
    got = store.cache_get("fake", "m", "k1", ["h1", "h2", "h3", "h1"])
    assert set(got) == {"h1", "h2"}
    np.testing.assert_allclose(got["h2"], _unit(0, 1), rtol=1e-6)
    assert store.cache_get("fake", "m", "k2", ["h1"]) == {}
    assert store.cache_get("fake", "other", "k1", ["h1"]) == {}
    assert store.cache_get("openai", "m", "k1", ["h1"]) == {}
    store.cache_put("fake", "m", "k1", {"h1": _unit(0, 0, 1)})  # replaces
    np.testing.assert_allclose(store.cache_get("fake", "m", "k1", ["h1"])["h1"], _unit(0, 0, 1), rtol=1e-6)
    assert store.cache_count() == 2


def test_embedding_cache_prune_drops_the_oldest_entries(store: MemoryStore) -> None:
    for i in range(5):
        store.cache_put("fake", "m", "k", {f"h{i}": _unit(1, i)})
        time.sleep(0.002)  # distinct write times
    assert store.cache_prune(10) == 0 and store.cache_count() == 5
    assert store.cache_prune(2) == 3 and store.cache_count() == 2
    assert set(store.cache_get("fake", "m", "k", [f"h{i}" for i in range(5)])) == {"h3", "h4"}


def test_cache_prune_never_drops_the_entries_it_is_told_to_keep(store: MemoryStore) -> None:
    """The live index's line units (leftovers3, item 2) survive any ``cache.max_entries``; kept entries count."""
    for i in range(6):
        store.cache_put("fake", "m", "k", {f"h{i}": _unit(1, i)})
        store.cache_put("fake", "m2", "k", {f"h{i}": _unit(1, i)})  # the same hash under another model
        time.sleep(0.002)
    keep = {("fake", "m", "k"): ["h0", "h1", "h1"], ("fake", "m", "other"): ["h2"]}
    assert store.cache_prune(20, keep=keep) == 0
    assert store.cache_prune(4, keep=keep) == 8 and store.cache_count() == 4
    assert set(store.cache_get("fake", "m", "k", [f"h{i}" for i in range(6)])) == {"h0", "h1", "h5"}
    assert set(store.cache_get("fake", "m2", "k", [f"h{i}" for i in range(6)])) == {"h5"}
    assert store.cache_prune(1, keep=keep) == 2 and store.cache_count() == 2  # kept alone exceed the cap
    assert set(store.cache_get("fake", "m", "k", ["h0", "h1"])) == {"h0", "h1"}


# ---- meta, fingerprint and rebuild -------------------------------------------------------------------------


def test_meta_round_trip_survives_reopening(store_factory: StoreFactory) -> None:
    first = store_factory.open("meta")
    assert first.read_meta() is None
    first.write_meta(_meta())
    first.write_meta(_meta(chunk_tokens=200))
    assert first.read_meta() == _meta(chunk_tokens=200)
    assert isinstance(first.fts_tokenizer_id, str) and first.fts_tokenizer_id
    again = store_factory.open("meta")
    assert again.read_meta() == _meta(chunk_tokens=200) and again.fts_tokenizer_id == first.fts_tokenizer_id


def test_fingerprint_mismatch_rebuilds_through_memory_index(store_factory: StoreFactory, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Notes\n\nThe deploy key rotates every quarter.\n", encoding="utf-8")

    def index(**overrides: object) -> MemoryIndex:
        return MemoryIndex(workspace=ws, provider=FakeEmbeddingProvider(dims=DIMS), storage=store_factory.open("fp"),
                           watch=False, **overrides)

    with index() as first:
        assert first.sync().full_rebuild  # no fingerprint yet
        assert not first.sync().full_rebuild  # same settings: incremental
        assert first.search("deploy key").hits
    with index(chunking={"tokens": 123, "overlap": 10}) as changed:
        report = changed.sync()
        assert report.full_rebuild and report.rebuild_reason
        assert changed.store.read_meta() is not None and changed.store.read_meta().chunk_tokens == 123  # type: ignore[union-attr]
        assert changed.search("deploy key").hits


def test_generation_changes_with_every_write_of_chunks_from_any_handle(store_factory: StoreFactory) -> None:
    """What ``chunk_total`` keys its cached count by (leftovers3, item 3): equal tokens, same chunks."""
    writer, reader = store_factory.open("gen"), store_factory.open("gen")  # as two processes
    seen = [reader.generation()]
    assert reader.generation() == seen[-1] and isinstance(seen[-1], str)  # reading changes nothing

    def changed() -> bool:
        now = reader.generation()
        fresh = now not in seen
        seen.append(now)
        return fresh

    _put(writer, "memory/a.md", ["alpha"])
    assert changed()
    _put(writer, "memory/a.md", ["alpha", "beta"])
    assert changed()
    writer.delete_file("memory/a.md")
    assert changed()
    with writer.rebuild() as fresh:
        _put(fresh, "memory/b.md", ["gamma"])
    assert changed()
    assert sum(c["chunks"] for c in reader.counts().values()) == 1


def test_chunk_total_is_exact_after_a_write_from_another_handle(store_factory: StoreFactory) -> None:
    """The rarity weights' chunk count was reused for 30 s in indexes of 5,000 chunks or more (leftovers3, item 3)."""
    from openclaw_memory.retrieval.pipeline import chunk_total

    writer, reader = store_factory.open("total"), store_factory.open("total")
    _put(writer, "memory/big.md", [f"note number {i}" for i in range(5000)])
    assert chunk_total(reader) == 5000
    _put(writer, "memory/small.md", ["one more", "and another"])
    assert chunk_total(reader) == 5002
    writer.delete_file("memory/small.md")
    assert chunk_total(reader) == 5000


def test_rebuild_replaces_the_index_and_keeps_the_cache(store: MemoryStore) -> None:
    _put(store, "memory/old.md", ["old content"], vectors=[_unit(1)])
    store.write_meta(_meta())
    store.cache_put("fake", "m", "k", {"h": _unit(1)})
    with store.rebuild() as fresh:
        assert fresh.is_empty() and set(fresh.cache_get("fake", "m", "k", ["h"])) == {"h"}
        _put(fresh, "memory/new.md", ["new content"], vectors=[_unit(0, 1)])
        fresh.write_meta(_meta(chunk_tokens=100))
    assert [c.path for c in store.iter_chunks()] == ["memory/new.md"]
    assert store.read_meta() == _meta(chunk_tokens=100) and store.cache_count() == 1
    assert [c.id for c in store.vector_search(_unit(0, 1), limit=5)] == ["memory/new.md#0"]
    assert _keyword(store, "content") == ["memory/new.md#0"]


def test_a_failed_rebuild_leaves_the_index_as_it_was(store: MemoryStore) -> None:
    _put(store, "memory/old.md", ["old content"], vectors=[_unit(1)])
    store.write_meta(_meta())
    with pytest.raises(RuntimeError, match="boom"), store.rebuild() as fresh:
        _put(fresh, "memory/new.md", ["new content"])
        raise RuntimeError("boom")
    assert [c.path for c in store.iter_chunks()] == ["memory/old.md"] and store.read_meta() == _meta()
    _put(store, "memory/later.md", ["later"])  # still writable
    assert store.counts()["memory"]["files"] == 2


def _watch(reader: MemoryStore, stop: threading.Event, seen: list[frozenset[str]], errors: list[BaseException],
           source: str | None = None) -> threading.Thread:
    def run() -> None:
        try:
            while not stop.is_set():
                seen.append(frozenset(c.text for c in reader.iter_chunks(source)))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_reader_sees_the_old_or_the_new_index_during_a_rebuild(store_factory: StoreFactory) -> None:
    writer = store_factory.open("swap")
    old = [f"old {i}" for i in range(4)]
    new = [f"new {i}" for i in range(4)]
    for i, text in enumerate(old):
        _put(writer, f"memory/{i}.md", [text])
    reader = store_factory.open("swap")
    seen: list[frozenset[str]] = []
    errors: list[BaseException] = []
    stop = threading.Event()
    thread = _watch(reader, stop, seen, errors)
    while not seen:
        time.sleep(0.001)
    with writer.rebuild() as fresh:
        for i, text in enumerate(new):
            _put(fresh, f"memory/{i}.md", [text])
            time.sleep(0.01)
    deadline = time.monotonic() + 5
    while frozenset(new) not in seen and time.monotonic() < deadline:
        time.sleep(0.005)
    stop.set()
    thread.join(5)
    assert not errors
    assert set(seen) <= {frozenset(old), frozenset(new)} and frozenset(new) in seen


def test_readers_never_see_half_a_write(store_factory: StoreFactory) -> None:
    writer = store_factory.open("rw")
    versions = [[f"version {v} part {i} of the file" for i in range(6)] for v in range(2)]
    _put(writer, "memory/a.md", versions[0], vectors=[_unit(1, i) for i in range(6)])
    readers = [store_factory.open("rw") for _ in range(2)]
    seen: list[frozenset[str]] = []
    errors: list[BaseException] = []
    stop = threading.Event()
    threads = [_watch(r, stop, seen, errors) for r in readers]
    hits_seen: list[set[str]] = []

    def search() -> None:
        try:
            while not stop.is_set():
                hits_seen.append({c.text.split(" part")[0] for c in readers[0].vector_search(_unit(1), limit=6)})
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads.append(threading.Thread(target=search, daemon=True))
    threads[-1].start()
    for n in range(20):
        _put(writer, "memory/a.md", versions[(n + 1) % 2], vectors=[_unit(1, i) for i in range(6)])
    stop.set()
    for t in threads:
        t.join(5)
    assert not errors and seen and hits_seen
    assert set(seen) <= {frozenset(versions[0]), frozenset(versions[1])}
    assert all(len(h) == 1 for h in hits_seen)  # every search answer is from one version of the file


# ---- errors ----------------------------------------------------------------------------------------------------


def test_a_store_that_cannot_be_opened_raises_store_error(store_factory: StoreFactory) -> None:
    with pytest.raises(StoreError):
        store_factory.open_unusable()


def test_a_closed_store_raises_store_error(store_factory: StoreFactory) -> None:
    store = store_factory.open("closed")
    _put(store, "memory/a.md", ["text"], vectors=[_unit(1)])
    store.close()
    calls = [
        lambda: store.read_meta(), lambda: store.file_records(), lambda: store.get_chunks(["memory/a.md#0"]),
        lambda: list(store.iter_chunks()), lambda: store.is_empty(), lambda: store.counts(),
        lambda: store.keyword_search('"text"', limit=3), lambda: store.vector_search(_unit(1), limit=3),
        lambda: store.vector_scores(_unit(1), ["memory/a.md#0"]),
        lambda: store.cache_count(), lambda: store.replace_file(_file("memory/b.md", ["x"]), _chunks("memory/b.md", ["x"])),
        lambda: store.delete_file("memory/a.md"), lambda: store.write_meta(_meta()),
    ]
    for call in calls:
        with pytest.raises(StoreError):
            call()
    store.close()  # closing twice is harmless


def test_match_sets_many_counts_as_count_matches_and_lists_what_it_selects(store: MemoryStore) -> None:
    """Each count equals ``count_matches``; a set, where the store gives one, holds exactly the chunks the
    MATCH selects (below the cap), so AND/OR of sets answers what the AND/OR expression selects."""
    texts = ["kestrel painting the heron", "kestrel painted heron and painter", "heron heron", "pelican paint",
             "kestrel the painting", "heron"]
    for i, t in enumerate(texts):
        _put(store, f"memory/c{i}.md", [t])
    matches = ['"kestrel"', '"paint"*', '"heron"', '"missing"', "", '"unbalanced', '"pelican"']
    for cap in (2, 100):
        got = store.match_sets_many(matches, cap=cap)
        assert [n for n, _ in got] == [store.count_matches(m, cap=cap) for m in matches], cap
        for (n, rows), m in zip(got, matches):
            assert rows is None or (len(rows) == n < cap), (m, cap)
    sets = dict(zip(matches, (rows for _, rows in store.match_sets_many(matches, cap=100))))
    if sets['"kestrel"'] is not None:
        for expr in ('"kestrel" AND "heron"', '"kestrel" OR "pelican"', '("kestrel" AND "paint"*) OR "pelican"'):
            assert len(match_rows(expr, sets.get) or ()) == store.count_matches(expr, cap=100), expr


# ---- the sync lock ----------------------------------------------------------------------------------------


def test_the_sync_lock_is_one_writer_per_index(store_factory: StoreFactory) -> None:
    first, second = store_factory.open("locked"), store_factory.open("locked")
    with first.sync_lock(timeout=5):
        with pytest.raises(IndexLockedError), second.sync_lock(timeout=0.3):
            pass
    with second.sync_lock(timeout=5):  # released
        pass


def test_a_wait_for_the_sync_lock_stops_when_cancelled(store_factory: StoreFactory) -> None:
    first, second = store_factory.open("locked"), store_factory.open("locked")
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    with first.sync_lock(timeout=5):
        started = time.monotonic()
        with pytest.raises(SyncCancelled), second.sync_lock(timeout=600, cancel=cancel):
            pass
        assert time.monotonic() - started < 3
    with second.sync_lock(timeout=5, cancel=cancel):  # a free lock is taken whatever the event says
        pass
