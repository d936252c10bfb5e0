"""What a full rebuild (``index --force``, a new embedding model) does with the files of an extra path that is not
there (a drive not mounted), and an extra path that is an empty folder (the mount point of a drive not mounted).

A normal sync kept a missing path's files searchable, but a full rebuild started from nothing and dropped them
until the drive was back; and an unmounted drive's mount point, an empty folder, had all its files pruned as if
deleted. Both are now kept: a full rebuild carries their chunks over from the old index (their vectors only when
the model is the same) and marks them to be read again once they are back."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.helpers.workspaces import write_files

pytestmark = pytest.mark.both_stores

TEAM = {"it/vpn.md": "The VPN password rotates monthly.\n", "onboarding.md": "New hires get a laptop on day one.\n"}


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# Memory\n\n- The ferry leaves at 08:30.\n")
    return workspace


@pytest.fixture
def team(tmp_path: Path) -> Path:
    return write_files(tmp_path / "team-docs", TEAM)


@pytest.fixture
def index(make_index: Callable[..., MemoryIndex], ws: Path, team: Path) -> Callable[..., MemoryIndex]:
    """``index(provider=None)``: an index of ``ws`` with ``team`` as an extra path (keyword-only without provider)."""
    return lambda provider=None: make_index(provider, extra_paths=[str(team)])


def _team_chunks(memory: MemoryIndex) -> list:
    return [c for c in memory.store.iter_chunks() if c.path.startswith("../team-docs/")]


def _unmount(team: Path) -> None:
    team.rename(team.with_name("unmounted"))


def _mount(team: Path) -> None:
    if team.exists():
        team.rmdir()
    team.with_name("unmounted").rename(team)


def _searchable(memory: MemoryIndex) -> bool:
    return any(hit.path == "../team-docs/it/vpn.md" for hit in memory.search("VPN password", min_score=0).hits)


def test_a_forced_rebuild_keeps_the_files_of_a_missing_extra_path(index: Callable[..., MemoryIndex],
        team: Path) -> None:
    with index() as memory:
        memory.sync()
        _unmount(team)
        report = memory.sync(force=True)
        assert report.full_rebuild and report.files_deleted == 0
        assert any(str(team) in w and "2 file(s)" in w for w in report.warnings), report.warnings
        assert set(memory.indexed_files()) == {"MEMORY.md", "../team-docs/it/vpn.md", "../team-docs/onboarding.md"}
        assert _searchable(memory)
        assert memory.changed_files() == []  # still not a change while the drive is away
        assert memory.sync().files_deleted == 0
        _mount(team)
        back = memory.sync()
        assert back.files_deleted == 0 and back.files_indexed == 2  # read again once back
        assert _searchable(memory)
        (team / "onboarding.md").unlink()
        assert memory.sync().files_deleted == 1


def test_a_model_change_carries_the_text_over_and_not_the_old_models_vectors(index: Callable[..., MemoryIndex],
        team: Path) -> None:
    with index(FakeEmbeddingProvider(model="model-a", dims=64)) as memory:
        memory.sync()
        assert all(c.embedding is not None and c.embedding.size == 64 for c in _team_chunks(memory))
    _unmount(team)
    with index(FakeEmbeddingProvider(model="model-b", dims=32)) as memory:
        report = memory.sync()
        assert report.full_rebuild and report.files_deleted == 0
        carried = _team_chunks(memory)
        assert len(carried) == 2 and all(c.embedding is None and c.model != "model-a" for c in carried)
        assert _searchable(memory)  # by its keywords
        assert memory.search("VPN password", min_score=0, mode="vector").hits  # the live vectors are model-b's
        _mount(team)
        assert memory.sync().files_indexed == 2  # read and embedded with model-b once back
        assert all(c.embedding is not None and c.embedding.size == 32 and c.model == "model-b"
                   for c in _team_chunks(memory))


def test_a_forced_rebuild_with_the_same_model_keeps_their_vectors(index: Callable[..., MemoryIndex],
        team: Path) -> None:
    with index(FakeEmbeddingProvider(model="model-a", dims=64)) as memory:
        memory.sync()
        before = {c.id: c.embedding for c in _team_chunks(memory)}
        _unmount(team)
        memory.sync(force=True)
        after = {c.id: c.embedding for c in _team_chunks(memory)}
        assert after.keys() == before.keys()
        assert all(vector is not None and (vector == before[key]).all() for key, vector in after.items())


def test_an_empty_mount_point_keeps_its_files_until_a_file_is_put_in_it(index: Callable[..., MemoryIndex],
        team: Path, caplog: pytest.LogCaptureFixture) -> None:
    with index() as memory:
        memory.sync()
        _unmount(team)
        team.mkdir()  # the mount point, empty while the drive is not mounted
        with caplog.at_level(logging.WARNING, logger="openclaw_memory"):
            report = memory.sync()
        assert report.files_deleted == 0
        assert any(str(team) in w and "empty folder" in w and "2 file(s)" in w for w in report.warnings), \
            report.warnings
        assert _searchable(memory) and memory.changed_files() == []
        assert memory.sync(force=True).files_deleted == 0 and _searchable(memory)
        assert any(issue.startswith(f"additional memory path is an empty folder ({team})")
                   for issue in memory.status().issues)
        _mount(team)  # mounted again: nothing lost, nothing to prune
        assert memory.sync().files_deleted == 0 and _searchable(memory)
        for name in TEAM:
            (team / name).unlink()
        (team / "it").rmdir()  # the user emptied the folder: kept as if not mounted ...
        assert memory.sync().files_deleted == 0
        (team / ".keep").write_text("")  # ... until a file in it says it is there
        assert memory.sync().files_deleted == 2
        assert set(memory.indexed_files()) == {"MEMORY.md"}


def test_an_extra_path_that_is_an_empty_folder_from_the_start_is_not_a_warning(
        make_index: Callable[..., MemoryIndex], ws: Path, tmp_path: Path) -> None:
    (tmp_path / "inbox").mkdir()
    with make_index(extra_paths=[str(tmp_path / "inbox")]) as memory:
        assert memory.sync().warnings == []
        (tmp_path / "inbox" / "todo.md").write_text("Renew the passport.\n")
        assert memory.sync().files_indexed == 1


def test_a_model_change_takes_the_new_models_vectors_from_the_cache(index: Callable[..., MemoryIndex],
        team: Path) -> None:
    """Back to a model the cache holds the chunks' vectors of (e.g. the bundled model's full tier after its fast one):
    the carried chunks take them (their files cannot be read to embed them)."""
    with index(FakeEmbeddingProvider(model="model-a", dims=64)) as memory:
        memory.sync()
        vectors_a = {c.text: c.embedding for c in _team_chunks(memory)}
    with index(FakeEmbeddingProvider(model="model-b", dims=32)) as memory:
        memory.sync()
    _unmount(team)
    provider = FakeEmbeddingProvider(model="model-a", dims=64)
    with index(provider) as memory:
        assert memory.sync().full_rebuild
        carried = _team_chunks(memory)
        assert len(carried) == 2 and all(c.model == "model-a" and c.embedding is not None and
                                         (c.embedding == vectors_a[c.text]).all() for c in carried)


class _ProxiedProvider(FakeEmbeddingProvider):
    """The same model name served from another base URL: another provider key, so another vector space."""

    def fingerprint(self) -> dict[str, object]:
        return {**super().fingerprint(), "base_url": "https://proxy.example"}


def test_a_provider_key_change_with_the_same_model_name_does_not_carry_the_old_vectors(
        index: Callable[..., MemoryIndex], team: Path) -> None:
    with index(FakeEmbeddingProvider(model="model-a", dims=64)) as memory:
        memory.sync()
    _unmount(team)
    with index(_ProxiedProvider(model="model-a", dims=64)) as memory:
        report = memory.sync()
        assert report.full_rebuild and report.files_deleted == 0
        carried = _team_chunks(memory)
        assert len(carried) == 2 and all(c.embedding is None for c in carried)
        assert _searchable(memory)  # by its keywords
