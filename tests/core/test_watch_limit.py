"""The OS refusing more file notifications (Linux's fs.inotify.max_user_watches reached, often by an editor's own
watchers; watchfiles raises "OS file watch limit reached") does not leave the index stale: the watcher scans the
memory trees instead and says so. It retried the notifications silently forever, and while it counted as watching,
searches skipped their own check for hand edits, so a new note was never found until the process restarted."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from watchfiles import watch as real_watch

import openclaw_memory.index.watch as watch_module
from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from tests.helpers.waiting import wait_for


def _limited_notifications(*paths: Any, force_polling: bool | None = None, ignore_permission_denied: bool = False,
                           **options: Any) -> Iterator[Any]:
    """watchfiles' ``watch`` on a machine whose inotify watches are used up: polling works, notifications do not.
    As watchfiles does, it raises the limit as an OSError, or, told to skip folders it cannot read, says nothing and
    reports no change."""
    if not force_polling:
        if ignore_permission_denied:
            while not options["stop_event"].wait(options["rust_timeout"] / 1000):
                yield set()
            return
        raise OSError(f'OS file watch limit reached. about ["{paths[0]}"] (Error {{ kind: MaxFilesWatch }})')
    yield from real_watch(*paths, force_polling=force_polling, ignore_permission_denied=ignore_permission_denied,
                          **options)


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


_WATCH_IN_A_LIMITED_NAMESPACE = """
import sys, time
from pathlib import Path
from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider

ws = Path(sys.argv[1])
with MemoryIndex(workspace=ws, provider=FakeEmbeddingProvider(), watch=True, sync={"watch_debounce_ms": 100},
                 store={"path": sys.argv[2]}) as memory:
    memory.sync()
    assert memory.watching
    (ws / "memory" / "sub19" / "2026-01-02.md").write_text("# Day\\n\\nThe otter arrived at noon.\\n")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if any(hit.path == "memory/sub19/2026-01-02.md" for hit in memory.search("otter arrived").hits):
            print("found")
            break
        time.sleep(0.2)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="inotify limits are Linux's")
@pytest.mark.parametrize(("limit", "value", "named"), [("max_inotify_watches", 5, "fs.inotify.max_user_watches"),
                                                       ("max_inotify_instances", 0, "fs.inotify.max_user_instances")])
def test_the_real_os_limit_switches_the_watcher_to_scanning(tmp_path: Path, limit: str, value: int,
                                                            named: str) -> None:
    """The OS's own limit, set low in a user namespace of its own (the machine's limits are left alone): watchfiles
    does not raise the watch limit when told to skip folders it cannot read, and says "Too many open files" when no
    inotify instance is left, so the watcher above saw neither and the note was never found."""
    ws = tmp_path / "ws"
    for n in range(20):  # more folders than the watches allowed
        (ws / "memory" / f"sub{n}").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\nThe heron count was 4.\n")
    probe = subprocess.run(["unshare", "-Ur", "sh", "-c", f"echo {value} > /proc/sys/user/{limit}"],
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot set an inotify limit in a user namespace here: {probe.stderr.decode()[:200]}")
    script = tmp_path / "watch.py"
    script.write_text(_WATCH_IN_A_LIMITED_NAMESPACE)
    done = subprocess.run(["unshare", "-Ur", "sh", "-c", f'echo {value} > /proc/sys/user/{limit} && exec "$@"', "sh",
                           sys.executable, str(script), str(ws), str(tmp_path / "i.sqlite")],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "found", done.stderr[-2000:]
    assert named in done.stderr  # the warning says which limit to raise
