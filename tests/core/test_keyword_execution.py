"""How keyword search runs its FTS5 statements: fewer statements, the same rows in the same order."""

from __future__ import annotations

import hashlib
from pathlib import Path

from openclaw_memory.config import MemoryConfig
from openclaw_memory.retrieval.pipeline import COMMON_MATCHES, run_search
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage import StoredChunk
from openclaw_memory.types import MemoryFile


def _put(store: SQLiteStore, rel: str, texts: list[str]) -> None:
    chunks = [
        StoredChunk(id=f"{rel}:{i}", path=rel, source="memory", start_line=i + 1, end_line=i + 1,
                    hash=hashlib.sha256(t.encode()).hexdigest(), model="fts-only", text=t, embedding=None)
        for i, t in enumerate(texts)
    ]
    store.replace_file(MemoryFile(path=rel, abs_path=rel, mtime_ms=0.0, size=1, hash=str(texts)), chunks)


def _ids(rows: list) -> list[str]:
    return [c.id for c, _ in rows]


def test_newest_window_with_a_prefix_is_cut_from_the_whole_index_and_follows_writes(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "i.sqlite", vector_enabled=False)
    for f in range(6):
        _put(store, f"memory/f{f}.md", [f"painting number {f}-{i}" for i in range(10)] + ["unrelated words"])
    every = _ids(store.keyword_search('"paint"*', limit=100, order="recent"))
    assert len(every) == 60
    # the newest 15 chunks (rowids) hold 13 matches: the first 13 of the whole-index order, as the plain
    # word's window search (no prefix: FTS5 itself keeps to the rowid range) finds them
    window = store.keyword_search('"paint"*', limit=20, order="recent", newest=15)
    assert _ids(window) == _ids(store.keyword_search('"painting"', limit=20, order="recent", newest=15)) == every[:13]
    assert all(r == 0.0 for _, r in window)
    whole = store.keyword_search('"paint"*', limit=20, order="recent")  # what a search asks next
    assert _ids(whole) == every[:20]
    # a write in between: the next whole-index search sees it
    store.keyword_search('"paint"*', limit=20, order="recent", newest=15)
    _put(store, "memory/new.md", ["paints drying"])
    after = store.keyword_search('"paint"*', limit=20, order="recent")
    assert _ids(after)[0] == "memory/new.md:0" and _ids(after)[1:] == every[:19]
    # candidates are fresh objects each call (callers set their scores on them)
    again = store.keyword_search('"paint"*', limit=20, order="recent")
    assert {id(c) for c, _ in again}.isdisjoint({id(c) for c, _ in after})
    store.close()


def test_a_stem_prefix_is_not_counted_when_its_word_is_common(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "i.sqlite", vector_enabled=False)
    n = COMMON_MATCHES + 50
    for f in range(0, n, 100):
        _put(store, f"memory/f{f}.md", [f"painting session {i}" for i in range(f, min(n, f + 100))])
    _put(store, "memory/rare.md", ["the painter quoted a zanzibar price"])
    asked: list[str] = []
    count = store.count_matches

    def counting(match: str, *, cap: int) -> int:
        asked.append(match)
        return count(match, cap=cap)

    count_many = store.count_matches_many

    def counting_many(matches: list[str], *, cap: int) -> list[int]:
        asked.extend(matches)
        return count_many(matches, cap=cap)

    sets_many = store.match_sets_many

    def counting_sets(matches: list[str], *, cap: int) -> list[tuple[int, frozenset[object] | None]]:
        asked.extend(matches)
        return sets_many(matches, cap=cap)

    store.count_matches = counting  # type: ignore[method-assign]
    store.count_matches_many = counting_many  # type: ignore[method-assign]
    store.match_sets_many = counting_sets  # type: ignore[method-assign]
    cfg = MemoryConfig(workspace=str(tmp_path), citations="off")
    result = run_search(store, cfg, "painting zanzibar", provider=None, max_results=6, min_score=0)
    assert '"painting"' in asked and '"paint"*' not in asked  # the word reached the cap: so does its prefix
    assert '"zanzibar"' in asked
    assert result.hits[0].path == "memory/rare.md"  # the rare word's chunk first, as before
    store.close()


def test_an_and_with_a_common_word_is_not_run_when_its_rare_words_cannot_fill_the_results(tmp_path: Path) -> None:
    """"harbour" is in every chunk (common: its chunks are not listed), "heron" in three: the AND of both cannot
    reach the six results wanted, so it is not run (its rows would be dropped); the next expression finds the
    heron chunks, as before."""
    store = SQLiteStore(tmp_path / "i.sqlite", vector_enabled=False)
    for f in range(11):
        _put(store, f"memory/h{f}.md", [f"Note {i} of the harbour" + (" with a heron." if i == 7 and f < 3 else ".")
                                        for i in range(100)])
    asked: list[str] = []
    search = store.keyword_search

    def recording(match: str, **kwargs: object) -> list:
        asked.append(match)
        return search(match, **kwargs)  # type: ignore[arg-type]

    store.keyword_search = recording  # type: ignore[method-assign]
    found = run_search(store, MemoryConfig(), "harbour heron", provider=None)
    assert sorted(h.path for h in found.hits[:3]) == ["memory/h0.md", "memory/h1.md", "memory/h2.md"]
    assert not [m for m in asked if "AND" in m], asked  # the AND of harbour and heron never ran
    store.close()
