"""``OpenClawVectorStore.to_dict()`` writes no secret, and ``from_dict`` reopens with the real key (from the
environment) instead of the masked ``**********``: checked at the loopback vendor server (real openai SDK),
which records the credentials each request carried."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from llama_index_openclaw_memory import OpenClawVectorStore  # noqa: E402
from openclaw_memory import MemoryIndex  # noqa: E402
from tests.helpers.vendor_server import VendorServer

API_KEY = "Zk4pQ8sW2mV6nX1cT7yB3hJ5"
HEADER = "3f9a1c07be4d4e2a9c6b05d8e7f1a2b3"


@pytest.fixture
def vendor() -> Iterator[VendorServer]:
    server = VendorServer()
    server.start()
    yield server
    server.stop()


def test_to_dict_holds_no_secret_and_from_dict_reopens_with_the_real_key(
        tmp_path: Path, vendor: VendorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("# Prefs\n\nThe user prefers tea over coffee.\n")
    remote = {"base_url": f"{vendor.url}/openai/v1", "api_key": API_KEY, "headers": {"api-key": HEADER}}
    memory = MemoryIndex(workspace=str(tmp_path / "ws"), store={"path": str(tmp_path / "i.sqlite")},
                         provider="openai", remote=remote, watch=False)
    store = OpenClawVectorStore(memory, close_memory=True)
    try:
        data = store.to_dict()
    finally:
        store.close()
    written = json.dumps(data)
    assert API_KEY not in written and HEADER not in written and "**********" not in written

    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    copy = OpenClawVectorStore.from_dict(data, remote={"headers": {"api-key": HEADER}})
    try:
        vendor.reset()
        copy.memory.sync()
        copy.memory.search("tea")
    finally:
        copy.close()
    sent = vendor.headers("openai.embeddings")
    assert sent and all(h["authorization"] == f"Bearer {API_KEY}" and h["api-key"] == HEADER for h in sent)
