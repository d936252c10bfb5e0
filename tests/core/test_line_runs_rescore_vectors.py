"""``query.hybrid.unit_lines`` / ``unit_weight``: a chunk's runs of lines, embedded into the cache at sync, re-score
the search's candidates on the vector side, so a chunk whose one turn answers the question is not diluted by the
rest of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import StoreError
from openclaw_memory.providers.base import provider_key
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.indexing.line_units import blend_unit_similarity, line_units, unit_hash

FILLER = ["Alice: the weather was grey and cold all day long", "Bob: we walked to the harbour and back again",
          "Alice: dinner was pasta with a green salad tonight", "Bob: the train was late by twenty minutes today",
          "Alice: my sister called about the garden fence", "Bob: I fixed the bike chain in the shed",
          "Alice: the library closes early on sundays now", "Bob: coffee beans are on sale at the market"]
# The fake embedder reads "fiddle" as "violin" and "tuition" as "lessons". One turn of a nine-line session answers
# "violin lessons"; a two-line note only mentions a fiddle, but as a whole it resembles the query more.
DOCS = {
    "memory/2024-01-01.md": "\n".join(FILLER[:4] + ["Alice: fiddle tuition started this week"] + FILLER[4:]) + "\n",
    "memory/2024-01-02.md": "Bob: the fiddle case sat up in the attic by the boxes of photos\nAlice: grey day\n",
}
SESSION = ("memory/2024-01-01.md", 1)


def test_line_units_are_runs_of_non_blank_lines() -> None:
    assert line_units("a\n\nb\nc\nd\n\ne\n", 2) == ["a\nb", "c\nd", "e"]
    assert line_units("a\nb\nc\n", 3) == []  # a chunk of at most one unit is its own vector
    assert line_units("a\nb\nc\nd\n", 0) == []
    assert blend_unit_similarity(0.5, 0.9, 0.3) == pytest.approx(0.62)
    assert blend_unit_similarity(0.5, None, 0.3) == 0.5


def test_defaults() -> None:
    hy = MemoryConfig().query.hybrid
    assert (hy.unit_lines, hy.unit_weight) == (3, 0.4)


def _provider() -> FakeEmbeddingProvider:
    return FakeEmbeddingProvider(dims=256, model="fake-units", synonyms={"fiddle": "violin", "tuition": "lessons"})


def _index(write, tmp_path: Path, name: str, cache: bool = True,  # noqa: ANN001
           **hybrid: object) -> tuple[MemoryIndex, FakeEmbeddingProvider]:
    provider = _provider()
    m = MemoryIndex(provider=provider, workspace=write(DOCS), watch=False,
                    store={"path": str(tmp_path / f"{name}.sqlite")}, cache={"enabled": cache},
                    query={"hybrid": hybrid})
    return m, provider


@pytest.mark.parametrize("hybrid", [False, True])
def test_the_chunk_whose_turn_answers_ranks_first(write, tmp_path: Path, hybrid: bool) -> None:
    found = {}
    for lines in (0, 3):
        m, _ = _index(write, tmp_path, f"u{lines}{hybrid}", enabled=hybrid, unit_lines=lines)
        with m:
            m.sync()
            hits = m.search("violin lessons", max_results=2, min_score=0).hits
        found[lines] = [(h.path, h.start_line) for h in hits]
    assert found[0][0] != SESSION  # the chunk vectors alone prefer the note that only mentions a fiddle
    assert found[3][0] == SESSION


def test_sync_embeds_the_units_into_the_cache_once(write, tmp_path: Path) -> None:
    m, provider = _index(write, tmp_path, "cache")
    with m:
        report = m.sync()
        assert report.embedded == 2  # the chunks; the units are extra texts of the same provider
        units = line_units(DOCS["memory/2024-01-01.md"], 3)
        assert len(units) == 3 and provider.texts_embedded == 2 + 3
        cached = m.store.cache_get(provider.id, provider.model, provider_key(provider.fingerprint()),
                                   [unit_hash(u) for u in units])
        assert len(cached) == 3
        before = provider.texts_embedded
        m.sync(force=True)  # a rebuild reads chunks and units from the cache
        assert provider.texts_embedded == before


def test_turning_units_on_rebuilds_from_the_cache_embedding_only_the_units(write, tmp_path: Path) -> None:
    m, provider = _index(write, tmp_path, "upgrade", unit_lines=0)
    with m:
        m.sync()
        assert provider.texts_embedded == 2
    provider2 = _provider()
    with MemoryIndex(provider=provider2, workspace=m.config.resolved_workspace(), watch=False,
                     store={"path": str(tmp_path / "upgrade.sqlite")}) as m2:
        report = m2.sync()
        assert report.full_rebuild and "line units" in (report.rebuild_reason or "")
        assert provider2.texts_embedded == 3  # the session's three units; the chunk vectors came from the cache
        assert (m2.search("violin lessons", max_results=1, min_score=0).hits[0].path, 1) == SESSION


def test_a_small_cache_limit_keeps_the_live_units(write, tmp_path: Path) -> None:
    """A rebuild prunes the cache to ``cache.max_entries``, but never the units the index searches with
    (leftovers3, item 2: they were evicted, and their chunks fell back to the chunk vectors)."""
    provider = _provider()
    with MemoryIndex(provider=provider, workspace=write(DOCS), watch=False, store={"path": str(tmp_path / "cap.sqlite")},
                     cache={"max_entries": 1}, query={"hybrid": {"enabled": False}}) as m:
        m.sync()
        units = [unit_hash(u) for u in line_units(DOCS["memory/2024-01-01.md"], 3)]
        key = (provider.id, provider.model, provider_key(provider.fingerprint()))
        assert len(m.store.cache_get(*key, units)) == 3 and m.store.cache_count() == 3  # chunk vectors went
        m.sync(force=True)
        assert len(m.store.cache_get(*key, units)) == 3
        assert (m.search("violin lessons", max_results=1, min_score=0).hits[0].path, 1) == SESSION


def test_a_store_failure_reading_units_ranks_by_chunk_vectors_and_a_bug_surfaces(
        write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """``_unit_rescored`` catches the store's failure only (leftovers3, item 2): it used to swallow every error."""
    import openclaw_memory.retrieval.pipeline as search_mod

    m, _ = _index(write, tmp_path, "errors", enabled=False)
    with m:
        m.sync()
        real_get = m.store.cache_get

        def failing_get(*args: object, **kwargs: object) -> object:
            raise StoreError("reading the memory index failed: disk I/O error")

        monkeypatch.setattr(m.store, "cache_get", failing_get)
        hits = m.search("violin lessons", max_results=1, min_score=0).hits
        assert hits and (hits[0].path, hits[0].start_line) != SESSION  # the chunk vectors alone
        assert "line units' vectors failed" in caplog.text
        monkeypatch.setattr(m.store, "cache_get", real_get)

        def buggy(*args: object, **kwargs: object) -> object:
            raise TypeError("unit_vectors() got an unexpected keyword argument")

        monkeypatch.setattr(search_mod, "unit_vectors", buggy)
        with pytest.raises(TypeError):
            m.search("violin lessons", max_results=1, min_score=0)


def test_weight_zero_or_no_cached_units_leave_the_chunk_vectors(write, tmp_path: Path) -> None:
    m, _ = _index(write, tmp_path, "w0", enabled=False, unit_weight=0.0)
    with m:
        m.sync()
        assert (m.search("violin lessons", max_results=1, min_score=0).hits[0].path, 1) != SESSION
    m, _ = _index(write, tmp_path, "nocache", cache=False, enabled=False)  # nowhere to keep the units
    with m:
        m.sync()
        assert (m.search("violin lessons", max_results=1, min_score=0).hits[0].path, 1) != SESSION


@pytest.mark.local_model
def test_the_fast_tier_embeds_no_units_and_the_upgrade_adds_them(write, tmp_path: Path) -> None:
    """The bundled model's fast first index stays quick (heads only); the swap to full vectors brings the units."""
    ws = write({"memory/2024-01-01.md": DOCS["memory/2024-01-01.md"]})
    units = line_units(DOCS["memory/2024-01-01.md"], 3)
    idx = MemoryIndex(workspace=ws, provider="local", store={"path": str(tmp_path / "tiers.sqlite")}, watch=False)
    try:
        idx.sync()
        fast, full = idx.query_provider, idx.provider
        assert fast is not full and idx.store.read_meta().line_units == 0
        for p in (fast, full):
            assert not idx.store.cache_get(p.id, p.model, provider_key(p.fingerprint()), [unit_hash(u) for u in units])
        swapped = idx.upgrade_embeddings()
        assert swapped is not None and idx.store.read_meta().line_units == 3
        cached = idx.store.cache_get(full.id, full.model, provider_key(full.fingerprint()),
                                     [unit_hash(u) for u in units])
        assert len(cached) == len(units) == 3
    finally:
        idx.close()
