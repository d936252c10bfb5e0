"""Progress of the first index: live counters in status() while a sync runs, and the progress bar."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from openclaw_memory import MemoryIndex
from openclaw_memory.cli import _print_status
from openclaw_memory.indexing.progress import progress_bar
from openclaw_memory.providers.base import EmbedKind
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.indexing.sync import EMBED_GROUP_CHUNKS


class GatedProvider(FakeEmbeddingProvider):
    """Embeds the first call at once, then waits for ``release`` on every later call."""

    def __init__(self) -> None:
        super().__init__(dims=32)
        self.document_calls = 0
        self.waiting = threading.Event()
        self.release = threading.Event()

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        if kind == "document":
            self.document_calls += 1
            if self.document_calls > 1:
                self.waiting.set()
                assert self.release.wait(30)
        return super()._embed(texts, kind)


def _notes(workspace: Path, n: int) -> None:
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (workspace / "memory" / f"2026-01-{i + 1:02d}.md").write_text(
            f"# Day {i}\n\n- Met the supplier number {i} about the invoice backlog.\n", encoding="utf-8")


def test_status_shows_vectors_filling_while_the_first_index_runs(
    workspace: Path, make_index: Callable[..., MemoryIndex], capsys: pytest.CaptureFixture[str]
) -> None:
    group = EMBED_GROUP_CHUNKS  # files of one chunk each: one embedding call per group of files
    _notes(workspace, 2 * group)
    provider = GatedProvider()
    memory = make_index(provider)
    assert memory.status().indexing is None
    future = memory.sync_in_background(reason="first index")
    try:
        assert provider.waiting.wait(30)  # the first group is committed, the second is being embedded
        live = memory.status().indexing
        assert live is not None
        assert live["reason"] == "first index"
        assert (live["files_done"], live["files_total"]) == (group, 2 * group)
        assert live["chunks_embedded"] == group
        assert live["chunks_estimate"] == 2 * group
        assert live["eta_s"] is not None and live["eta_s"] >= 0
        _print_status(memory.status())
        out = capsys.readouterr().out
        assert f"Indexing (first index): {group} / {2 * group} files · vectors: {group} / ~{2 * group} chunks · ETA" in out
    finally:
        provider.release.set()
    report = future.result(30)
    assert report.embedded == 2 * group and provider.document_calls == 2  # files batched into two model calls
    assert memory.status().indexing is None  # gone once the sync ends
    _print_status(memory.status())
    assert "Indexing (" not in capsys.readouterr().out


def test_status_clears_progress_after_a_failed_sync(workspace: Path, make_index: Callable[..., MemoryIndex]) -> None:
    class Broken(FakeEmbeddingProvider):
        def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
            raise RuntimeError("model crashed")

    _notes(workspace, 2)
    memory = make_index(Broken(dims=32))
    with pytest.raises(Exception):  # noqa: B017 - whichever error the sync raises, progress must end
        memory.sync()
    assert memory.status().indexing is None


def test_progress_bar_shows_files_and_an_eta(workspace: Path, make_index: Callable[..., MemoryIndex]) -> None:
    _notes(workspace, 3)
    out = io.StringIO()
    memory = make_index(FakeEmbeddingProvider(dims=32))
    with progress_bar("Indexing notes", file=out) as bar:
        report = memory.sync(progress=bar)
    assert report.files_indexed == 3
    text = out.getvalue()
    assert "Indexing notes" in text and "3/3" in text
    assert "<" in text  # tqdm's [elapsed<remaining] ETA
    quiet = io.StringIO()
    with progress_bar(file=quiet) as bar:  # nothing to index: nothing drawn
        memory.sync(progress=bar)
    assert quiet.getvalue() == ""
