"""``store.fts.note_dates`` (issue 13, round 6): the SQLite keyword index holds a daily note's date as words
with each of its chunks, so a question that names only the day finds that day's chunks. Each test also runs
the option switched off, so it shows what the index found before."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.config import MemoryConfig
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.storage.sqlite.store import SQLiteStore

DOCS = {
    # the day asked about: no word of the question, and the note never says its own date
    "memory/2023-10-13.md": "Went kayaking on the lake with Sam.\nSam: the water was cold but calm.\n",
    # another day that does say "October" (and more than once)
    "memory/2023-10-20.md": "Coffee with Sam in October, the best October coffee in town.\n",
    "MEMORY.md": "Sam likes kayaking and coffee.\n",
}
QUERY = "What did I do on 13 October 2023?"


def _paths(write, tmp_path: Path, name: str, **fts: object) -> list[str]:  # noqa: ANN001
    with MemoryIndex(provider=None, workspace=write(DOCS), watch=False,
                     store={"path": str(tmp_path / f"{name}.sqlite"), "fts": fts}) as m:
        m.sync()
        hits = m.search(QUERY, min_score=0).hits
    assert all("13 October" not in h.text for h in hits)  # the chunk's own text is returned, never the date
    return [h.path for h in hits]


def test_a_question_naming_only_the_day_finds_that_days_note(write, tmp_path: Path) -> None:
    assert _paths(write, tmp_path, "on")[0] == "memory/2023-10-13.md"
    # before: the note holds no word of the question, so the keyword index cannot return it at all
    assert "memory/2023-10-13.md" not in _paths(write, tmp_path, "off", note_dates=False)


def test_an_index_without_the_dates_is_rebuilt_from_the_embedding_cache(write, tmp_path: Path) -> None:
    ws = write(DOCS)
    store = {"path": str(tmp_path / "old.sqlite")}
    provider = FakeEmbeddingProvider(dims=64, model="fake-dates")
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store={**store, "fts": {"noteDates": False}},
                     query={"hybrid": {"unitLines": 0}}) as m:
        m.sync()
    embedded = provider.texts_embedded
    assert embedded > 0
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store=store,
                     query={"hybrid": {"unitLines": 0}}) as m:
        report = m.sync()
        assert report.full_rebuild and "keyword index" in (report.rebuild_reason or "")
        assert provider.texts_embedded == embedded  # every vector came from the cache
        assert not m.sync().full_rebuild  # and it stays built
        found = m.search(QUERY, min_score=0, max_results=6).hits
    assert "memory/2023-10-13.md" in [h.path for h in found]


def test_config_key() -> None:
    assert MemoryConfig().store.fts.note_dates is True
    assert MemoryConfig.load(None, store={"fts": {"noteDates": False}}).store.fts.note_dates is False


def test_the_index_identity_names_its_contents(tmp_path: Path) -> None:
    ids = {}
    for name, tok, dates in (("a", "unicode61", True), ("b", "unicode61", False), ("c", "trigram", True)):
        with SQLiteStore(tmp_path / f"{name}.sqlite", fts_tokenizer=tok, fts_note_dates=dates) as s:
            ids[name] = s.fts_tokenizer_id
    assert ids["a"] == ids["b"] + "+dates"
    assert not ids["c"].endswith("+dates")  # a trigram index matches substrings: it stays as it was


def test_a_store_built_directly_has_the_configs_default(tmp_path: Path) -> None:
    """leftovers4: ``SQLiteStore(path)`` defaulted to no dates while ``store.fts.note_dates`` defaults to on, so a
    store opened directly on an index the memory built read another keyword layout (one default now)."""
    import inspect

    from openclaw_memory.storage.postgres.store import PostgresStore

    default = MemoryConfig().store.fts.note_dates
    assert default is True
    store = SQLiteStore(tmp_path / "direct.sqlite")
    try:
        assert store.fts_note_dates is default
    finally:
        store.close()
    assert inspect.signature(PostgresStore.__init__).parameters["fts_note_dates"].default is default
