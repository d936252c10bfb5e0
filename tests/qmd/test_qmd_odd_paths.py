"""QMD output naming a file outside its collection (``..`` in the path, an absolute path) is dropped:
a search never reads, nor returns, a file outside the collections, as ``memory_get`` of such a path
is refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import MemoryPathError


@pytest.mark.parametrize("escaping", [
    "qmd://memory-dir-main/../../outside.md",
    "qmd://memory-dir-main/projects/../../../outside.md",
    "qmd://memory-root-main/../outside.md",
])
def test_a_hit_outside_its_collection_is_dropped_and_never_read(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str], monkeypatch: pytest.MonkeyPatch, escaping: str
) -> None:
    outside = memory_ws.parent / "outside.md"
    outside.write_text("# Not a memory\n\nThe deploy key passphrase is zebra-kettle-91.\n", encoding="utf-8")
    monkeypatch.setenv("FAKE_QMD_HITS", f"{escaping},qmd://memory-dir-main/2026-01-02.md")
    mem = MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False,
                      backend="qmd", qmd={"command": fake_qmd("hits")})
    try:
        result = mem.search("deploy key passphrase")
        assert result.fallback is None
        assert [h.path for h in result.hits] == ["memory/2026-01-02.md"]  # the collection's own hit stays
        assert all("zebra-kettle" not in (h.snippet + (h.text or "")) for h in result.hits)
        with pytest.raises(MemoryPathError):
            mem.get("qmd/memory-dir-main/../../outside.md")  # as memory_get already refuses it
    finally:
        mem.close()


def test_a_query_longer_than_a_command_line_is_searched_not_taken_for_a_missing_qmd(
    memory_ws: Path, tmp_path: Path, fake_qmd: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a pasted log as the query: one `qmd search` argument above Linux's 128 KiB limit for one argument
    monkeypatch.setenv("FAKE_QMD_HITS", "qmd://memory-dir-main/2026-01-02.md")
    mem = MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False,
                      backend="qmd", qmd={"command": fake_qmd("hits"), "daemon": False})
    try:
        result = mem.search("pgbouncer connection pooling " * 6000)
        assert result.fallback is None, result.fallback
        assert [h.path for h in result.hits] == ["memory/2026-01-02.md"]
    finally:
        mem.close()
