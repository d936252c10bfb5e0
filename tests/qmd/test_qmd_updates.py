"""When the QMD backend runs `qmd update` (spec §9.3: update interval, debounce) and what a search or
status costs: issue 17's leftovers. The stand-in QMD logs each command it runs; the real QMD maps
normalised file names and the ``memory.qmd.paths`` collections."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import MemoryPathError
from openclaw_memory.agent.tools import memory_get
from tests.helpers.waiting import wait_for as _wait_for


@pytest.fixture
def qmd_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """The commands the stand-in QMD ran so far (``update-end`` when an update finished)."""
    log = tmp_path / "qmd-calls.log"
    monkeypatch.setenv("FAKE_QMD_LOG", str(log))
    return lambda: log.read_text().split() if log.exists() else []


@pytest.fixture
def fake_index(memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str]) -> Iterator[Callable[..., MemoryIndex]]:
    made: list[MemoryIndex] = []

    def make(state: str = "state", **qmd: object) -> MemoryIndex:
        mem = MemoryIndex(workspace=memory_ws, state_dir=tmp_path / state, provider=None, watch=False,
                          backend="qmd", qmd={"command": fake_qmd("noresults"), **qmd})
        made.append(mem)
        return mem

    yield make
    for mem in made:
        mem.close()


def test_status_is_read_only_and_starts_no_update(
    fake_index: Callable[..., MemoryIndex], qmd_log: Callable[[], list[str]]
) -> None:
    mem = fake_index()
    st = mem.status()
    mem.status()
    assert qmd_log() == ["--version"]  # once (cached); no collection add, no update, no `qmd status`
    assert st.backend == "qmd" and not st.files
    assert "no QMD index yet" in st.backend_info["vectors"]["error"]
    assert not Path(st.backend_info["index_path"]).exists()

    mem.search("pgbouncer")  # the first search registers the collections and runs the boot update
    ran = qmd_log()
    assert ran.count("update") == 1
    assert mem.status().backend_info["last_update_at"] is not None
    assert qmd_log() == ran  # status started no process


def test_searches_within_the_debounce_neither_scan_files_nor_update(
    fake_index: Callable[..., MemoryIndex], qmd_log: Callable[[], list[str]], memory_ws: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mem = fake_index()  # the original's defaults: debounce 15 s, interval 5 m
    mem.search("pgbouncer")
    (memory_ws / "memory" / "2026-01-09.md").write_text("# New\n\nA hand edit.\n")
    stats: list[Path] = []
    real_stat = Path.stat

    def spy(self: Path, *args: object, **kwargs: object) -> os.stat_result:
        if str(self).startswith(str(memory_ws)):
            stats.append(self)
        return real_stat(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "stat", spy)
    for _ in range(5):
        assert mem.search("pgbouncer").fallback is None
    assert stats == []  # no stat scan of the memory files while an update could not run anyway
    assert qmd_log().count("update") == 1


def test_a_change_after_the_debounce_is_updated_before_the_search(
    fake_index: Callable[..., MemoryIndex], qmd_log: Callable[[], list[str]], memory_ws: Path
) -> None:
    mem = fake_index(update={"debounceMs": 300})
    mem.search("pgbouncer")
    assert mem.search("pgbouncer").fallback is None  # unchanged files: no update
    assert qmd_log().count("update") == 1
    (memory_ws / "memory" / "2026-01-09.md").write_text("# New\n\nA hand edit.\n")
    time.sleep(0.4)
    mem.search("pgbouncer")
    ran = qmd_log()
    assert ran.count("update") == 2 and ran.index("update-end", ran.index("update-end") + 1) < len(ran) - 1
    assert ran[-1] == "search"  # the search ran after the update it waited for


def test_an_index_older_than_the_interval_is_updated_in_the_background(
    fake_index: Callable[..., MemoryIndex], qmd_log: Callable[[], list[str]], update_seconds: Path
) -> None:
    mem = fake_index(update={"interval": "1s", "debounceMs": 0})
    mem.search("pgbouncer")  # boot update (quick)
    update_seconds.write_text("4")
    time.sleep(1.2)  # the index is now older than the interval
    result = mem.search("pgbouncer")
    ended_when_answered = qmd_log().count("update-end")
    assert result.fallback is None
    assert ended_when_answered == 1  # the search did not wait for the interval update
    _wait_for(lambda: qmd_log().count("update") >= 2)  # which does run, off the search path
    _wait_for(lambda: qmd_log().count("update-end") >= 2)


def test_two_indexes_on_one_qmd_state_never_update_at_once(
    fake_index: Callable[..., MemoryIndex], qmd_log: Callable[[], list[str]], update_seconds: Path,
    sync_concurrently: Callable[[Sequence[MemoryIndex]], list[BaseException]],
) -> None:
    first, second = fake_index(), fake_index()  # the same state dir: one QMD index
    update_seconds.write_text("0.4")
    assert sync_concurrently([first, second, first]) == []
    updates = [c for c in qmd_log() if c in ("update", "update-end")]
    assert len(updates) >= 6
    assert updates == ["update", "update-end"] * (len(updates) // 2)  # one at a time, never overlapping


def test_normalised_file_names_are_mapped_without_a_walk_per_hit(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # QMD versions that normalise names print "runbook-alpha.md" for "Runbook Alpha.md"
    names = ["Runbook Alpha", "Runbook Beta", "Runbook Gamma"]
    for name in names:
        (memory_ws / "memory" / "ops" / f"{name}.md").parent.mkdir(exist_ok=True)
        (memory_ws / "memory" / "ops" / f"{name}.md").write_text(f"# {name}\n\nRotate the hyperdrive keys.\n")
    monkeypatch.setenv("FAKE_QMD_HITS", ",".join(
        f"qmd://memory-dir-main/ops/{n.lower().replace(' ', '-')}.md" for n in names))
    mem = MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False,
                      backend="qmd", qmd={"command": fake_qmd("hits")})
    walked: list[Path] = []
    real_walk = os.walk

    def spy(top: str | os.PathLike[str], *args: object, **kwargs: object) -> object:
        walked.append(Path(top))
        return real_walk(top, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "walk", spy)
    try:
        for _ in range(3):
            result = mem.search("hyperdrive")
            assert result.fallback is None
            assert sorted(h.path for h in result.hits) == [f"memory/ops/{n}.md" for n in names]  # the real names
    finally:
        mem.close()
    assert len(walked) == 1  # one listing of the collection, not one walk per hit


@pytest.mark.slow  # real QMD (node)
def test_a_qmd_paths_folder_in_the_workspace_is_searched_read_and_kept_fresh(
    qmd_index: Callable[..., MemoryIndex], memory_ws: Path
) -> None:
    notes = memory_ws / "notes"
    notes.mkdir()
    (notes / "ops.md").write_text("# Ops\n\nThe pager rotation starts on Mondays.\n")
    mem = qmd_index(paths=[{"path": "notes", "name": "ops"}])

    hit = mem.search("pager rotation").hits[0]
    assert hit.path == "notes/ops.md"
    assert "pager rotation" in mem.get(hit.path).text  # memory_get reads the collection's files

    (notes / "later.md").write_text("# Later\n\nThe zeppelin hangar is in Friedrichshafen.\n")
    assert [h.path for h in mem.search("zeppelin hangar").hits] == ["notes/later.md"]  # a hand edit is seen
    assert memory_get(mem, "notes/later.md", 3, 1)["text"] == "The zeppelin hangar is in Friedrichshafen."
    (memory_ws / "other").mkdir()
    (memory_ws / "other" / "x.md").write_text("not configured\n")
    with pytest.raises(MemoryPathError):
        mem.get("other/x.md")  # other workspace folders stay out of reach


def test_with_an_index_from_an_earlier_run_the_boot_update_does_not_hold_up_the_first_search(
    fake_index: Callable[..., MemoryIndex], qmd_log: Callable[[], list[str]], update_seconds: Path
) -> None:
    fake_index().sync()  # an earlier run left a QMD index in this state dir
    update_seconds.write_text("4")
    later = fake_index()  # waitForBootSync false (the default): the boot update runs beside the search
    result = later.search("pgbouncer")
    ended_when_answered = qmd_log().count("update-end")
    assert result.fallback is None
    _wait_for(lambda: qmd_log().count("update") == ended_when_answered + 1)  # the boot update started
    assert ended_when_answered == qmd_log().count("update") - 1  # ... and had not ended when the search answered
    _wait_for(lambda: qmd_log().count("update-end") == qmd_log().count("update"))


def test_a_normalised_root_file_name_lists_only_the_top_of_the_workspace(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the memory-root collection is the whole workspace with the glob MEMORY.md: no walk below it
    monkeypatch.setenv("FAKE_QMD_HITS", "qmd://memory-root-main/memory.md")
    mem = MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False,
                      backend="qmd", qmd={"command": fake_qmd("hits")})
    walked: list[Path] = []
    real_walk = os.walk
    monkeypatch.setattr(os, "walk", lambda top, *a, **k: walked.append(Path(top)) or real_walk(top, *a, **k))
    try:
        assert [h.path for h in mem.search("green tea").hits] == ["MEMORY.md"]
    finally:
        mem.close()
    assert walked == []


def test_a_vector_mode_update_starts_no_qmd_status(
    qmd_model: Path, fake_index: Callable[..., MemoryIndex], qmd_log: Callable[[], list[str]]
) -> None:
    """`qmd embed` is decided from the update's own output: no `qmd status` process per update (a Node
    start each, on every new process's boot update)."""
    mem = fake_index(searchMode="vsearch", update={"debounceMs": 0})
    for _ in range(3):
        assert mem.search("pgbouncer").fallback is None
    mem.sync()
    ran = qmd_log()
    assert ran.count("update") == 2
    assert "status" not in ran and "embed" not in ran  # the updates reported no document without vectors


def test_documents_without_vectors_are_embedded_once_per_embed_interval(
    qmd_model: Path, fake_index: Callable[..., MemoryIndex], qmd_log: Callable[[], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_QMD_NEED_VECTORS", "2")
    mem = fake_index(searchMode="vsearch", update={"debounceMs": 0})  # embedInterval: 60m
    assert mem.search("pgbouncer").fallback is None  # the boot update, then `qmd embed`
    mem.sync()  # within the embed interval: update only
    ran = qmd_log()
    assert ran.count("update") == 2 and ran.count("embed") == 1 and "status" not in ran
    assert mem.status().backend_info["vectors"] == {"available": True, "count": 2, "error": None}
