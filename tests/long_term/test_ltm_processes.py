"""Two processes on one LanceDB folder: a reader sees a writer's memories while it writes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from openclaw_memory.long_term import LongTermMemory
from openclaw_memory.providers.fake import FakeEmbeddingProvider

WRITER = textwrap.dedent("""
    import sys
    from openclaw_memory.long_term import LongTermMemory
    from openclaw_memory.providers.fake import FakeEmbeddingProvider
    memory = LongTermMemory(sys.argv[1], FakeEmbeddingProvider(dims=256), agent_id="writer", optimize_every=7)
    for i in range(int(sys.argv[2])):
        memory.store(f"writer memory number {i} about topic{i}")
    print("done", flush=True)
""")


@pytest.mark.slow
def test_a_second_process_reads_while_one_writes(tmp_path: Path) -> None:
    db = tmp_path / "lancedb"
    total = 30
    reader = LongTermMemory(db, FakeEmbeddingProvider(dims=256), agent_id="writer")
    # both processes compact now and then while the other writes
    other_agent = LongTermMemory(db, FakeEmbeddingProvider(dims=256), agent_id="reader", optimize_every=5)
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(total)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[int] = []
    results = []
    deadline = time.monotonic() + 90
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            count = len(reader.list())  # reads while the other process writes: never fails, never goes back
            assert not seen or count >= seen[-1]
            seen.append(count)
            reader.recall("writer memory about topic3")
            results.append(other_agent.store(f"reader note alpha{len(seen)} beta{len(seen)} gamma{len(seen)}"))
            time.sleep(0.01)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "done" in out
    assert len(reader.list()) == total  # the other process's writes are visible without reopening
    assert reader.recall("writer memory number 7 about topic7", limit=1)[0].record.text == \
        "writer memory number 7 about topic7"
    assert all(r.text.startswith("reader note") for r in other_agent.list())  # both processes' writes kept
    assert [r.action for r in results] == ["created"] * len(results)
    assert len(other_agent.list()) == len(seen)
