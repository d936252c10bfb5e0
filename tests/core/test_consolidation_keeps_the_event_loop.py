"""``consolidate`` (sync) with an async model function ran it with ``asyncio.run``, which leaves the calling thread
with no current event loop: a LangChain or Jupyter user who had set one found ``asyncio.get_event_loop()`` raising
afterwards. The model's coroutine now runs on a loop of its own, and the thread's loop stays as it was."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from openclaw_memory.consolidation import consolidate
from tests.helpers.consolidation import TODAY, config_for, make_workspace


def test_consolidate_with_an_async_model_leaves_the_threads_event_loop_set(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    outcome: dict[str, Any] = {}

    async def model(prompt: str) -> str:
        await asyncio.sleep(0)
        return json.dumps({"decisions": [{"op": "add", "candidate": "C1"}]})

    def in_thread() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            outcome["report"] = consolidate(config_for(workspace), model, today=TODAY)
            try:
                outcome["same loop"] = asyncio.get_event_loop() is loop
            except RuntimeError as exc:  # "There is no current event loop in thread ..."
                outcome["same loop"] = exc
            outcome["usable"] = loop.run_until_complete(asyncio.sleep(0, "ok"))
        finally:
            asyncio.set_event_loop(None)
            loop.close()

    thread = threading.Thread(target=in_thread)
    thread.start()
    thread.join(60)
    assert outcome["same loop"] is True, outcome["same loop"]
    assert outcome["usable"] == "ok"
    assert outcome["report"].mode == "rewrite" and outcome["report"].added  # the async model was heard
