"""A filtered search (``where``, ``collapse``) that the builtin index answers as QMD's fallback returns the indexed
chunks as found, as many as asked, as it does without QMD (``SearchBackend.search(as_found=True)``)."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory import MemoryIndex

from tests.helpers.kayak_notes import KAYAKS


def _index(ws: Path, state: Path, **kw: object) -> MemoryIndex:
    return MemoryIndex(workspace=ws, state_dir=state, provider=None, watch=False, chunking={"tokens": 48, "overlap": 40},
                       **kw)


def test_the_fallbacks_filtered_search_returns_the_chunks_as_found(write, tmp_path: Path) -> None:
    ws = write(KAYAKS)
    only_b = {"where": lambda h: h.path == "memory/b.md"}
    with _index(ws, tmp_path / "builtin") as builtin:
        builtin.sync()
        want = [(h.path, h.start_line, h.end_line, h.text) for h in
                builtin.search("kayak", max_results=2, min_score=0, **only_b).hits]
        per_file = [h.path for h in builtin.search("kayak", max_results=2, min_score=0, collapse=lambda h: h.path).hits]
    assert [w[0] for w in want] == ["memory/b.md"] and per_file == ["memory/a.md", "memory/b.md"]  # the setup
    with _index(ws, tmp_path / "qmd", backend="qmd", qmd={"command": str(tmp_path / "no-such-qmd")}) as mem:
        mem.sync()
        first = mem.search("kayak", max_results=2, min_score=0)
        assert first.fallback is not None and first.fallback.from_provider == "qmd"  # the builtin answers now
        chunks = {c.id: (c.path, c.start_line, c.end_line) for c in mem.iter_chunks()}
        got = mem.search("kayak", max_results=2, min_score=0, **only_b).hits
        # before: [] (the fallback folded a.md's overlapping chunks, used the line budget, and stopped short)
        assert [(h.path, h.start_line, h.end_line, h.text) for h in got] == want
        collapsed = mem.search("kayak", max_results=2, min_score=0, collapse=lambda h: h.path).hits
        assert [h.path for h in collapsed] == per_file
        assert all(chunks[h.chunk_id] == (h.path, h.start_line, h.end_line) for h in [*got, *collapsed])
