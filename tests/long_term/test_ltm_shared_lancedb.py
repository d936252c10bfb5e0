"""Hosts (or processes) sharing one local LanceDB folder, each with its own state_dir: the duplicate check and the
insert of a store are one step across all of them, because the write lock lives next to the LanceDB data."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import lancedb
import pytest

from openclaw_memory.errors import OpenClawMemoryError, StoreError
from openclaw_memory.files.memory_writes import file_lock
from openclaw_memory.long_term.state import update_json
from tests.helpers.long_term_memory import MakeMemory

FACT = "The build server of the payments team is called kestrel-7"


def test_two_hosts_with_their_own_state_dirs_store_the_same_fact_once(make_ltm: MakeMemory, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Host one has checked that the fact is new and is about to insert it when host two stores the same fact:
    host two waits, then finds host one's memory and stores nothing."""
    first = make_ltm(state_dir=tmp_path / "host-1")
    second = make_ltm(state_dir=tmp_path / "host-2")
    checked, go_on = threading.Event(), threading.Event()
    insert = first._insert

    def insert_after_the_other_host_tried(*args: Any, **kwargs: Any) -> Any:
        checked.set()  # the duplicate check found nothing
        assert go_on.wait(10)
        return insert(*args, **kwargs)

    monkeypatch.setattr(first, "_insert", insert_after_the_other_host_tried)
    actions: dict[str, str] = {}
    one = threading.Thread(target=lambda: actions.setdefault("first", first.store(FACT).action))
    one.start()
    assert checked.wait(10)
    two = threading.Thread(target=lambda: actions.setdefault("second", second.store(FACT).action))
    two.start()
    two.join(1.0)
    waited = two.is_alive()
    go_on.set()
    one.join(10)
    two.join(10)
    assert waited  # host two waited for host one's write
    assert actions == {"first": "created", "second": "duplicate"}
    assert [r.text for r in second.list()] == [FACT]


def test_the_write_lock_does_not_make_a_table_of_the_lancedb_folder(make_ltm: MakeMemory, db_path: Path) -> None:
    make_ltm().store(FACT)
    listing = lancedb.connect(db_path).list_tables()
    assert list(getattr(listing, "tables", listing)) == ["memories"]


def test_update_json_waits_for_its_lock_and_names_the_file_when_it_stays_taken(tmp_path: Path) -> None:
    cursor = tmp_path / "capture" / "thread.json"
    assert update_json(cursor, lambda current: ([*(current or []), "a"], "saved")) == "saved"
    with file_lock(cursor.with_name(cursor.name + ".lock"), cursor, "a test holds it"):
        with pytest.raises(OpenClawMemoryError, match=r"could not lock .*thread\.json within 0s"):
            update_json(cursor, lambda current: (current, None), timeout=0.2)
    assert update_json(cursor, lambda current: (current, current)) == ["a"]


def test_a_write_lock_that_cannot_be_made_is_a_store_error_naming_it(make_ltm: MakeMemory, db_path: Path) -> None:
    ltm = make_ltm()
    ltm.store(FACT)
    (db_path / ".openclaw-locks").rename(db_path / "locks-aside")
    (db_path / ".openclaw-locks").write_text("a file where the lock folder should be")  # fails even as root
    with pytest.raises(StoreError, match=r"write lock .*\.openclaw-locks.* cannot be made") as failed:
        ltm.store("I prefer tea with lemon")
    assert "LanceDB folder" in str(failed.value)
    assert [r.text for r in ltm.list()] == [FACT]
