"""One damaged byte anywhere in the index file: search, status and a forced re-index never fail
(the damage is set aside or harmless) and the rebuilt index answers. Seeded: a failure replays."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from tests.helpers.damaged_store import build_index as _build, damaged_copies as _damaged, NOTES


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A workspace and the bytes of its index (its WAL folded in)."""
    root = tmp_path_factory.mktemp("flips")
    ws, store = root / "ws", root / "state" / "index.sqlite"
    _build(ws, store)
    return ws, store.read_bytes()


def _flip_and_use(ws: Path, pristine: bytes, store: Path, offset: int, value: int) -> None:
    damaged = bytearray(pristine)
    damaged[offset] = value
    shutil.rmtree(store.parent, ignore_errors=True)
    store.parent.mkdir(parents=True)
    store.write_bytes(bytes(damaged))
    where = f"byte {offset} set to {value:#04x}"
    with MemoryIndex(workspace=str(ws), store={"path": str(store)}, provider=None, watch=False) as memory:
        memory.search("zephyr billing")  # answers (perhaps from a rebuilt index), never a raw driver error
        memory.status()
        memory.sync(force=True)
        hits = memory.search("zephyr billing").hits
        assert hits and hits[0].path == "memory/2026-01-10.md", where
        assert memory.status().files == len(NOTES), where


def _run(built: tuple[Path, bytes], tmp_path: Path, flips: int, seed: int) -> None:
    ws, pristine = built
    rng = random.Random(seed)
    store = tmp_path / "state" / "index.sqlite"
    before = {rel: (ws / rel).read_bytes() for rel in NOTES}
    for _ in range(flips):
        offset = rng.randrange(len(pristine))
        value = rng.choice([v for v in range(256) if v != pristine[offset]])
        _flip_and_use(ws, pristine, store, offset, value)
    assert {rel: (ws / rel).read_bytes() for rel in NOTES} == before  # the Markdown is never touched


def test_invalid_utf8_in_an_index_name_is_damage(built: tuple[Path, bytes], tmp_path: Path) -> None:
    """The flip that used to fail every search and status (a name in sqlite_master that is not UTF-8)."""
    ws, pristine = built
    store = tmp_path / "state" / "index.sqlite"
    offset = pristine.find(b"sqlite_autoindex_embedding_cache_1") + 11
    _flip_and_use(ws, pristine, store, offset, 0x91)
    assert len(_damaged(store)) == 1  # set aside for inspection, not deleted


def test_random_byte_flips_short(built: tuple[Path, bytes], tmp_path: Path) -> None:
    _run(built, tmp_path, flips=60, seed=20261127)


@pytest.mark.slow
def test_random_byte_flips(built: tuple[Path, bytes], tmp_path: Path) -> None:
    _run(built, tmp_path, flips=200, seed=32)
