"""The OS refusing more file notifications (Linux's fs.inotify.max_user_watches reached, often by an editor's own
watchers; watchfiles raises "OS file watch limit reached") does not leave the index stale: the watcher scans the
memory trees instead and says so. It retried the notifications silently forever, and while it counted as watching,
searches skipped their own check for hand edits, so a new note was never found until the process restarted."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from watchfiles import watch as real_watch

import openclaw_memory.index.watch as watch_module
from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.helpers.waiting import wait_for


def _limited_notifications(*paths: Any, force_polling: bool | None = None, **options: Any) -> Iterator[Any]:
    """watchfiles' ``watch`` on a machine whose inotify watches are used up: polling works, notifications do not."""
    if not force_polling:
        raise FileNotFoundError(f'OS file watch limit reached. about ["{paths[0]}"]')
    yield from real_watch(*paths, force_polling=force_polling, **options)


def test_a_note_written_while_notifications_are_refused_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(watch_module, "watch", _limited_notifications)
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\nThe heron count was 4.\n")
    with caplog.at_level(logging.WARNING, logger="openclaw_memory.index.watch"), \
            MemoryIndex(workspace=ws, provider=FakeEmbeddingProvider(), watch=True,
                        sync={"watch_debounce_ms": 100}, store={"path": str(tmp_path / "i.sqlite")}) as memory:
        memory.sync()
        assert memory.watching
        (ws / "memory" / "2026-01-02.md").write_text("# Day\n\nThe otter arrived at noon.\n")
        wait_for(lambda: any(hit.path == "memory/2026-01-02.md" for hit in memory.search("otter arrived").hits),
                 timeout=15)
    assert any("fs.inotify.max_user_watches" in record.getMessage() for record in caplog.records)
