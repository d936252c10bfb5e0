"""LongTermMemory against a real LanceDB folder: store, recall, forget, list, stats, isolation, bad input."""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from openclaw_memory.errors import ConfigError, MemoryArgumentError, ProviderError, StoreError
from openclaw_memory.long_term import LongTermMemory, distance_to_score
from openclaw_memory.long_term.tools import memory_forget
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbedKind
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.helpers.long_term_memory import MakeMemory


def test_store_then_recall_round_trips_the_row(ltm: LongTermMemory) -> None:
    result = ltm.store("I prefer dark mode in every editor", importance=0.9, category="preference")
    assert result.action == "created"
    uuid.UUID(result.record.id)
    hits = ltm.recall("dark mode editor")
    assert hits[0].record.id == result.record.id
    assert hits[0].record.text == "I prefer dark mode in every editor"
    assert hits[0].record.category == "preference"
    assert hits[0].record.importance == pytest.approx(0.9)
    assert hits[0].record.agent_id == "main"
    assert 0 < hits[0].score <= 1


def test_recall_ranks_by_similarity_and_respects_limit_and_min_score(ltm: LongTermMemory) -> None:
    ltm.store("The deploy server is called atlas", category="entity")
    ltm.store("I prefer tea over coffee in the morning", category="preference")
    ltm.store("We decided to use PostgreSQL for the billing service", category="decision")
    hits = ltm.recall("which database for billing service", limit=3)
    assert hits[0].record.text.startswith("We decided to use PostgreSQL")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(ltm.recall("which database for billing service", limit=1)) == 1
    assert all(h.score >= 0.5 for h in ltm.recall("which database for billing service", min_score=0.5))


def test_score_is_the_originals_one_over_one_plus_l2(ltm: LongTermMemory, fake_provider: FakeEmbeddingProvider) -> None:
    ltm.store("alpha beta gamma")
    ltm.store("delta epsilon zeta")
    query = "alpha beta"
    q = fake_provider.embed_query(query)
    for hit in ltm.recall(query, limit=2, min_score=0.0):
        d = fake_provider.embed_documents([hit.record.text])[0]
        squared_l2 = float(np.sum((q - d) ** 2))  # LanceDB's l2 distance is the squared one
        assert hit.score == pytest.approx(1 / (1 + squared_l2), abs=1e-4)
    assert distance_to_score(0.0) == 1.0
    assert distance_to_score(2.0) == pytest.approx(1 / 3)


def test_near_duplicate_is_skipped_and_reported(ltm: LongTermMemory) -> None:
    first = ltm.store("My phone number is +420123456789")
    again = ltm.store("  My phone number is +420123456789  ")
    assert again.action == "duplicate"
    assert again.record.id == first.record.id
    assert again.score is not None and again.score >= 0.95
    assert len(ltm.list()) == 1
    assert ltm.store("My office is on the third floor").action == "created"
    assert len(ltm.list()) == 2


def test_forget_by_id_and_by_unique_prefix(ltm: LongTermMemory) -> None:
    a = ltm.store("The staging database lives on host db-2").record
    b = ltm.store("Lunch with Dana is on Friday").record
    gone = ltm.forget(memory_id=a.id)
    assert gone.action == "deleted" and gone.deleted is not None and gone.deleted.id == a.id
    assert [r.id for r in ltm.list()] == [b.id]
    assert ltm.forget(memory_id=a.id).action == "not_found"
    assert ltm.forget(memory_id=b.id[:8].upper()).action == "deleted"
    assert ltm.list() == []


def test_forget_by_query_deletes_only_an_unambiguous_match(ltm: LongTermMemory) -> None:
    ltm.store("user likes green tea with honey")
    ltm.store("user likes green tea with lemon")
    result = ltm.forget(query="user likes green tea")
    assert result.action == "candidates"
    assert len(result.candidates) == 2
    assert len(ltm.list()) == 2  # nothing deleted
    exact = ltm.forget(query="user likes green tea with honey")
    # two candidates score >= 0.7, so even the exact text is ambiguous: nothing is deleted
    assert exact.action == "candidates" and len(ltm.list()) == 2
    ltm.forget(memory_id=exact.candidates[1].record.id)
    single = ltm.forget(query="user likes green tea with honey")
    assert single.action == "deleted" and ltm.list() == []
    assert ltm.forget(query="nothing like this at all whatsoever").action == "not_found"
    with pytest.raises(MemoryArgumentError):
        ltm.forget()


def test_list_is_newest_first_and_filters_by_category(ltm: LongTermMemory) -> None:
    ids = [ltm.store(text, category=cat).record.id for text, cat in
           [("one fact here", "fact"), ("I prefer vim", "preference"), ("another fact there", "fact")]]
    assert [r.id for r in ltm.list()] == ids[::-1]
    assert [r.id for r in ltm.list(category="fact")] == [ids[2], ids[0]]
    assert len(ltm.list(limit=1)) == 1
    stats = ltm.stats()
    assert stats["count"] == 3 and stats["by_category"]["fact"] == 2 and stats["by_category"]["preference"] == 1
    assert stats["dims"] == 64 and stats["agent_id"] == "main"


def test_empty_database_reads_without_creating_a_table(ltm: LongTermMemory, db_path: Path) -> None:
    assert ltm.recall("anything") == []
    assert ltm.list() == []
    assert ltm.stats()["count"] == 0 and ltm.stats()["exists"] is False
    assert ltm.forget(query="anything").action == "not_found"
    assert not list(db_path.iterdir())


def test_agents_never_see_each_others_rows(make_ltm: MakeMemory) -> None:
    alice, bob = make_ltm("alice"), make_ltm("bob")
    a = alice.store("alice prefers window seats").record
    assert bob.recall("alice prefers window seats") == []
    assert bob.list() == [] and bob.stats()["count"] == 0
    assert bob.forget(memory_id=a.id).action == "not_found"
    assert bob.forget(query="alice prefers window seats").action == "not_found"
    assert bob.store("alice prefers window seats").action == "created"  # not a duplicate of alice's row
    assert len(alice.list()) == 1 and alice.list()[0].id == a.id


@pytest.mark.parametrize("agent_id", ["x' OR '1'='1", "a b", "", "../etc", "a;DROP", None, "é" * 3])
def test_filter_injection_in_agent_id_is_refused(make_ltm: MakeMemory, agent_id: object) -> None:
    with pytest.raises(ConfigError, match="agent_id"):
        make_ltm(agent_id)  # type: ignore[arg-type]


@pytest.mark.parametrize("memory_id", ["x' OR '1'='1", "' OR agent_id != '", "%", "abc", "12345678%", 42])
def test_filter_injection_in_memory_id_is_refused(make_ltm: MakeMemory, memory_id: object) -> None:
    alice, bob = make_ltm("alice"), make_ltm("bob")
    alice.store("alice secret fact")
    with pytest.raises(MemoryArgumentError, match="memory_id"):
        bob.forget(memory_id=memory_id)  # type: ignore[arg-type]
    assert len(alice.list()) == 1


def test_quotes_in_text_and_agent_ids_with_punctuation_are_stored_verbatim(make_ltm: MakeMemory) -> None:
    memory = make_ltm("team.ops:bot@prod-1")
    text = "It's the user's \"favourite\" table; DROP TABLE memories; -- ok"
    memory.store(text)
    assert memory.list()[0].text == text
    assert memory.recall(text)[0].record.text == text


@pytest.mark.parametrize("text", ["", "   \n\t", "\x00\x00", "\x01\x02\x1b\x7f", "\x07 \x9b\x08"])
def test_empty_text_is_refused(ltm: LongTermMemory, text: str) -> None:
    with pytest.raises(MemoryArgumentError, match="empty"):
        ltm.store(text)
    assert ltm.list() == []


def test_control_characters_are_not_kept_in_the_memory_nor_its_daily_note_line(make_ltm: MakeMemory,
                                                                              tmp_path: Path) -> None:
    """A pasted terminal line (colour codes, a bell) is stored as its text: printed by ``ltm list`` or written into
    the daily note, the codes would restyle or clear the reader's terminal."""
    ltm = make_ltm(mirror_workspace=tmp_path / "ws")
    stored = ltm.store("The build \x1b[31mfails\x1b[0m on ARM\x07 runners\tonly", category="fact")
    assert stored.record.text == "The build [31mfails[0m on ARM runners\tonly"
    assert [r.text for r in ltm.list()] == [stored.record.text]
    note = (tmp_path / "ws" / str(stored.mirror_path)).read_text(encoding="utf-8")
    assert "\x1b" not in note and "\x07" not in note and "[31mfails[0m on ARM runners only" in note
    assert ltm.recall("build fails \x1b[31m on ARM", min_score=0.0)[0].record.id == stored.record.id


def test_a_blank_memory_id_next_to_a_query_forgets_by_the_query(ltm: LongTermMemory) -> None:
    """A model filling every field of memory_forget sends memoryId " " with its query."""
    stored = ltm.store("The storage locker code is 4471")
    text, payload = memory_forget(ltm, query="The storage locker code is 4471", memory_id="  ")
    assert payload.get("action") == "deleted" and payload["id"] == stored.record.id, text
    with pytest.raises(MemoryArgumentError, match="needs a query or a memory_id"):
        ltm.forget(memory_id=" ")


def test_huge_text_is_refused_with_a_clear_error(ltm: LongTermMemory, fake_provider: FakeEmbeddingProvider) -> None:
    with pytest.raises(MemoryArgumentError, match="at most 8000"):
        ltm.store("x" * 100_000)
    with pytest.raises(MemoryArgumentError, match="at most 8000"):
        ltm.recall("y" * 100_000)
    assert fake_provider.calls == 0  # refused before any embedding
    assert ltm.list() == []


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"importance": 1.5}, "importance"), ({"importance": math.nan}, "importance"),
    ({"importance": True}, "importance"), ({"category": "secret"}, "category"),
])
def test_bad_store_arguments(ltm: LongTermMemory, kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(MemoryArgumentError, match=match):
        ltm.store("a valid memory text", **kwargs)  # type: ignore[arg-type]


def test_bad_recall_arguments(ltm: LongTermMemory) -> None:
    for kwargs in ({"limit": 0}, {"limit": 1000}, {"limit": 2.5}, {"min_score": -0.1}, {"min_score": 2}):
        with pytest.raises(MemoryArgumentError):
            ltm.recall("query", **kwargs)  # type: ignore[arg-type]


class NaNProvider(BaseEmbeddingProvider):
    """A provider (through the library base class) whose model returns NaN."""

    id = "nan"

    def __init__(self) -> None:
        super().__init__(model="nan-model", dims=64)

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        return [[float("nan")] * 64 for _ in texts]


class RawNaNProvider:
    """A bare EmbeddingProvider (no base class) that returns NaN vectors unchecked."""

    id = "raw-nan"
    model = "raw"
    dims = 64
    max_input_tokens = 512
    in_process = False
    request_timeout = None
    max_batch_size = None
    default_concurrency = 1
    similarity_floor = None

    def close(self) -> None:
        pass

    def fingerprint(self) -> dict[str, str]:
        return {"provider": self.id, "model": self.model}

    def embed_query(self, text: str) -> np.ndarray:
        return np.full(64, np.nan, dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> list[np.ndarray]:
        return [np.full(64, np.nan, dtype=np.float32) for _ in texts]

    async def aembed_query(self, text: str) -> np.ndarray:
        return self.embed_query(text)

    async def aembed_documents(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self.embed_documents(texts)


@pytest.mark.parametrize("provider", [NaNProvider(), RawNaNProvider()], ids=["base-class", "bare-protocol"])
def test_nan_vectors_are_refused_and_nothing_is_stored(db_path: Path, provider: object) -> None:
    memory = LongTermMemory(db_path, provider)  # type: ignore[arg-type]
    with pytest.raises(ProviderError, match="NaN"):
        memory.store("a memory that embeds to NaN")
    with pytest.raises(ProviderError, match="NaN"):
        memory.recall("a query that embeds to NaN")
    assert memory.list() == [] and memory.stats()["exists"] is False


def test_a_failing_provider_stores_nothing(ltm: LongTermMemory, fake_provider: FakeEmbeddingProvider) -> None:
    ltm.store("kept before the outage")
    fake_provider.fail_with = ProviderError("vendor down")
    with pytest.raises(ProviderError, match="vendor down"):
        ltm.store("lost during the outage")
    fake_provider.fail_with = None
    assert [r.text for r in ltm.list()] == ["kept before the outage"]


def test_table_refuses_vectors_of_another_model(db_path: Path) -> None:
    LongTermMemory(db_path, FakeEmbeddingProvider(dims=64)).store("first memory text")
    with pytest.raises(ConfigError, match="holds vectors of fake:fake-hash"):
        LongTermMemory(db_path, FakeEmbeddingProvider(dims=32)).recall("query")
    with pytest.raises(ConfigError, match="holds vectors"):
        LongTermMemory(db_path, FakeEmbeddingProvider(model="other", dims=64)).store("second memory")
    # another table in the same folder is fine
    other = LongTermMemory(db_path, FakeEmbeddingProvider(dims=32), table_name="memories_small")
    assert other.store("second memory").action == "created"


def test_db_path_errors_and_uris(tmp_path: Path, fake_provider: FakeEmbeddingProvider) -> None:
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="not a folder"):
        LongTermMemory(afile, fake_provider)
    with pytest.raises(ConfigError, match="db_path"):
        LongTermMemory("  ", fake_provider)
    nested = tmp_path / "a" / "b" / "c"
    LongTermMemory(nested, fake_provider).store("created the nested folder")
    assert nested.is_dir()
    # a scheme:// URI goes to LanceDB untouched (file:// is the local object-store URI)
    uri = (tmp_path / "via-uri").as_uri()
    memory = LongTermMemory(uri, fake_provider)
    assert memory.db_uri == uri
    memory.store("stored through a URI")
    assert LongTermMemory(tmp_path / "via-uri", fake_provider).list()[0].text == "stored through a URI"


def test_default_db_path_is_under_the_state_dir(fake_provider: FakeEmbeddingProvider) -> None:
    import os

    memory = LongTermMemory(provider=fake_provider)
    assert memory.db_uri == str((Path(os.environ["OPENCLAW_STATE_DIR"]) / "memory" / "lancedb").resolve())


def test_provider_by_name_and_errors(db_path: Path) -> None:
    with pytest.raises(ConfigError, match="not an embedding provider"):
        LongTermMemory(db_path, object())  # type: ignore[arg-type]
    from openclaw_memory.errors import ProviderUnavailableError

    with pytest.raises(ProviderUnavailableError, match="needs an embedding provider"):
        LongTermMemory(db_path, "none")
    with pytest.raises(ProviderUnavailableError, match="No API key"):
        LongTermMemory(db_path, "openai")


def test_closed_memory_refuses_work(ltm: LongTermMemory) -> None:
    ltm.close()
    with pytest.raises(StoreError, match="closed"):
        ltm.list()


async def test_async_twins(ltm: LongTermMemory) -> None:
    stored = await ltm.astore("async memories work too", category="fact")
    assert stored.action == "created"
    assert (await ltm.arecall("async memories"))[0].record.id == stored.record.id
    assert [r.id for r in await ltm.alist()] == [stored.record.id]
    assert (await ltm.astats())["count"] == 1
    assert (await ltm.aforget(memory_id=stored.record.id)).action == "deleted"


def test_writes_are_compacted_every_optimize_every_writes(make_ltm: MakeMemory, tmp_path: Path) -> None:
    compacted = make_ltm(optimize_every=5)
    never = make_ltm(optimize_every=0, db_path=tmp_path / "never")
    texts = [f"memory number {w} about {w}{w}" for w in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot",
                                                       "golf", "hotel", "india", "juliet", "kilo", "lima")]
    for text in texts:
        compacted.store(text)
        never.store(text)
    assert never.stats()["fragments"] == 12
    assert compacted.stats()["fragments"] <= 3  # compacted after the 5th and 10th write
    assert sorted(r.text for r in compacted.list()) == sorted(texts)  # nothing lost
    compacted.forget(memory_id=compacted.list()[0].id)
    never.optimize()
    assert never.stats()["fragments"] == 1 and len(never.list()) == 12
    with pytest.raises(ConfigError, match="optimize_every"):
        make_ltm(optimize_every=-1)


def test_a_table_made_before_corrections_were_kept_gains_the_column(make_ltm: MakeMemory) -> None:
    ltm = make_ltm()
    old = ltm.store("The quarterly planning meeting on Thursday is in room 4.12 on the fourth floor").record
    ltm._open_table().drop_columns(["superseded_by"])  # the previous version's schema
    ltm.close()
    reopened = make_ltm()
    assert [r.id for r in reopened.list()] == [old.id] and reopened.recall("meeting room", min_score=0.0)
    new = reopened.store("The quarterly planning meeting on Thursday is in room 3.07 on the fourth floor")
    assert new.action == "created" and [r.id for r in new.superseded] == [old.id]
    assert reopened.get(old.id).superseded_by == new.record.id
