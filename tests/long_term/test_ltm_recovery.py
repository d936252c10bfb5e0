"""The long-term memory as a user meets it past the happy path: the async twins take what the sync
methods take, and a damaged LanceDB table is reported, never taken for an empty one."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from openclaw_memory.errors import ConfigError, ProviderError, StoreError
from openclaw_memory.long_term import AutoCapture, CaptureCandidate, LongTermMemory
from openclaw_memory.long_term.capture import CaptureCursor
from openclaw_memory.long_term.store import MemoryThresholds
from openclaw_memory.long_term.tools import memory_store
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.helpers.long_term_memory import MakeMemory

#: every stored memory near enough to be compared word by word (the fake embedder's scores are low)
COMPARE_ALL = MemoryThresholds(similar=0.0, recall=0.0, forget_candidate=0.7, forget_delete=0.9)


async def test_arecall_takes_include_superseded_as_recall_does(make_ltm: MakeMemory) -> None:
    ltm = make_ltm(thresholds=COMPARE_ALL)
    old = ltm.store("The planning meeting is in room 4.12", category="fact")
    new = ltm.store("The planning meeting is in room 3.07", category="fact")
    assert [r.id for r in new.superseded] == [old.record.id]
    audit = await ltm.arecall("planning meeting room", limit=5, min_score=0.0, include_superseded=True)
    assert {h.record.id for h in audit} == {old.record.id, new.record.id}
    assert [h.record.id for h in await ltm.arecall("planning meeting room", min_score=0.0)] == [new.record.id]


def _lose_versions(db_path: Path) -> None:
    """Damage the table as a half-copied backup or a cleaned-up folder does: its manifests are gone."""
    shutil.rmtree(db_path / "memories.lance" / "_versions")


def test_a_table_without_its_manifests_is_reported_not_read_as_empty(make_ltm: MakeMemory, db_path: Path) -> None:
    first = make_ltm()
    first.store("I prefer dark mode in every editor", category="preference")
    first.close()
    _lose_versions(db_path)
    damaged = make_ltm()
    for read in (lambda: damaged.recall("dark mode"), damaged.list, damaged.stats):
        with pytest.raises(StoreError, match="damaged") as failed:
            read()
        assert "memories.lance" in str(failed.value) and "backup" in str(failed.value)


def test_a_store_never_writes_a_new_table_over_a_damaged_one(make_ltm: MakeMemory, db_path: Path) -> None:
    first = make_ltm()
    first.store("The server room is in building C", category="fact")
    first.close()
    _lose_versions(db_path)
    data_before = sorted(p.name for p in (db_path / "memories.lance" / "data").iterdir())
    damaged = make_ltm()
    with pytest.raises(StoreError, match="damaged"):
        damaged.store("The parking garage closes at 22:00", category="fact")
    assert not (db_path / "memories.lance" / "_versions").exists()  # nothing written over the remains
    assert sorted(p.name for p in (db_path / "memories.lance" / "data").iterdir()) == data_before


def test_a_lone_surrogate_is_stored_as_a_replacement_character_not_lost(make_ltm: MakeMemory, tmp_path: Path) -> None:
    # half an emoji, as a model's JSON tool arguments ("\ud83c") decode; append_memory writes it as U+FFFD too
    ltm = make_ltm(mirror_workspace=tmp_path / "ws")
    stored = ltm.store("The launch party needs balloons \ud83c and cake", category="fact")
    assert stored.action == "created" and stored.mirror_error is None
    assert stored.record.text == "The launch party needs balloons \ufffd and cake"
    assert [r.text for r in ltm.list()] == [stored.record.text]
    assert ltm.recall("launch party \udc89 balloons", min_score=0.0)[0].record.id == stored.record.id
    note = (tmp_path / "ws" / stored.mirror_path).read_text(encoding="utf-8")
    assert "balloons \ufffd and cake" in note


def test_a_table_another_process_is_still_creating_is_not_called_damaged(make_ltm: MakeMemory, db_path: Path) -> None:
    first = make_ltm()
    stored = first.store("I prefer dark mode in every editor", category="preference")
    first.close()
    versions = db_path / "memories.lance" / "_versions"
    aside = db_path.parent / "versions-aside"
    versions.rename(aside)  # the folder is there, its first version not yet: as while another process creates it
    later = threading.Timer(0.15, lambda: aside.rename(versions))
    later.start()
    try:
        assert [h.record.id for h in make_ltm().recall("dark mode", min_score=0.0)] == [stored.record.id]
    finally:
        later.join()


@pytest.mark.parametrize("in_memory", [False, True], ids=["state-dir-cursor", "in-memory-cursor"])
def test_a_capture_that_failed_is_offered_again_by_the_next_run(ltm: LongTermMemory,
                                                                fake_provider: FakeEmbeddingProvider,
                                                                in_memory: bool) -> None:
    capture = AutoCapture(ltm, cursor=CaptureCursor() if in_memory else None)
    history = [CaptureCandidate("user", "I prefer window seats on long flights", "u1"),
               CaptureCandidate("user", "We decided to use Rust for the parser", "u2")]
    fake_provider.fail_with = ProviderError("vendor down")
    assert capture.capture(history, session="t1") == []  # the provider was down for this run
    fake_provider.fail_with = None
    stored = capture.capture([*history, CaptureCandidate("user", "thanks", "u3")], session="t1")
    assert [s.record.text for s in stored] == [m.text for m in history]  # not lost: stored by the next run
    assert capture.capture([*history], session="t1") == []  # and then never again


def test_a_table_folder_given_as_db_path_is_refused_naming_its_database(make_ltm: MakeMemory, db_path: Path) -> None:
    make_ltm().store("I prefer dark mode in every editor", category="preference")
    table_folder = db_path / "memories.lance"
    before = sorted(p.name for p in table_folder.iterdir())
    with pytest.raises(ConfigError, match="is a LanceDB table") as refused:
        make_ltm(db_path=table_folder)
    assert str(db_path.resolve()) in str(refused.value)  # the folder to pass instead
    assert sorted(p.name for p in table_folder.iterdir()) == before  # no table made inside the table


def test_the_empty_folder_of_a_table_whose_creation_was_killed_is_made_again(make_ltm: MakeMemory,
                                                                              db_path: Path) -> None:
    (db_path / "memories.lance" / "_transactions").mkdir(parents=True)  # no rows, no version: nothing to lose
    ltm = make_ltm()
    assert ltm.recall("dark mode") == [] and ltm.list() == []
    stored = ltm.store("I prefer dark mode in every editor", category="preference")
    assert [r.id for r in ltm.list()] == [stored.record.id]


def test_a_state_dir_that_cannot_be_written_is_a_store_error_the_tools_report(make_ltm: MakeMemory,
                                                                             tmp_path: Path) -> None:
    """A read-only home (a container) holds the record of unfinished writes: the agent's tool call gets an answer,
    not an OSError out of the tool."""
    state = tmp_path / "state"
    state.mkdir()
    (state / "memory").write_text("a file where the state folder should be")  # writes below it fail, even as root
    ltm = make_ltm(state_dir=state)
    with pytest.raises(StoreError, match="state_dir") as failed:
        ltm.store("I prefer tea with lemon")
    assert str(state) in str(failed.value)
    text, payload = memory_store(ltm, "I prefer tea with lemon")
    assert "error" in payload and "state_dir" in text
    assert ltm.list() == []
