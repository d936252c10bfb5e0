"""The LangChain objects holding a ``MemoryIndex`` serialise to JSON (pydantic's ``model_dump_json`` /
``model_dump(mode="json")`` as LangSmith traces them, ``langchain_core.load.dumpd``) with a description of the index,
never with its secrets (API key, header values, passwords in URLs); ``model_dump_json`` failed on the index."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.load import dumpd, dumps
from openclaw_memory import MemoryIndex

from langchain_openclaw_memory import OpenClawChatMemory, OpenClawMemoryEmbeddings, OpenClawMemoryRetriever

SECRETS = ("Zk4pQ8sW2mV6nX1cT7yB3hJ5", "3f9a1c07be4d4e2a9c6b05d8e7f1a2b3", "hunter2pw")


@pytest.fixture
def remote_memory(tmp_path: Path) -> Iterator[MemoryIndex]:
    """An index configured with an API key, a header value and a password in the endpoint URL (never called)."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("# Prefs\n\nThe user prefers tea over coffee.\n")
    remote = {"base_url": f"https://user:{SECRETS[2]}@embeddings.example.invalid/v1", "api_key": SECRETS[0],
              "headers": {"api-key": SECRETS[1]}}
    memory = MemoryIndex(workspace=str(tmp_path / "ws"), store={"path": str(tmp_path / "i.sqlite")},
                         provider="openai", remote=remote, watch=False)
    yield memory
    memory.close()


HOLDERS: dict[str, Callable[[MemoryIndex], Any]] = {
    "retriever": lambda m: OpenClawMemoryRetriever(m, k=3),
    "embeddings of a memory": lambda m: OpenClawMemoryEmbeddings(m),
    "embeddings of a provider": lambda m: OpenClawMemoryEmbeddings(provider=m.provider),
    "chat memory": lambda m: OpenClawChatMemory(memory=m, session_id="s1"),
}


def _assert_no_secret(text: str) -> None:
    assert not [s for s in SECRETS if s in text], text


@pytest.mark.parametrize("make", HOLDERS.values(), ids=HOLDERS.keys())
def test_model_dump_json_describes_the_index_without_secrets(remote_memory: MemoryIndex,
                                                             make: Callable[[MemoryIndex], Any]) -> None:
    holder = make(remote_memory)
    written = holder.model_dump_json()
    _assert_no_secret(written)
    data = json.loads(written)
    described = data.get("memory") or data.get("provider")
    assert described and (described.get("workspace") == str(remote_memory.workspace)
                          or described.get("provider") == "openai")
    assert holder.model_dump(mode="json") == data  # as LangSmith serialises it
    python = holder.model_dump()  # keeps the objects, as for LangChain's own retrievers' vector stores
    assert python.get("memory") is remote_memory or python.get("provider") is remote_memory.provider


def test_the_retriever_describes_its_index_by_workspace_agent_and_backend(remote_memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(remote_memory, k=3)
    data = retriever.model_dump(mode="json")
    assert data["k"] == 3
    assert OpenClawMemoryRetriever(**retriever.model_dump()).memory is remote_memory  # the python-mode round trip
    assert data["memory"] == {"workspace": str(remote_memory.workspace), "agent_id": "main", "backend": "builtin",
                              "store": "SQLiteStore"}


@pytest.mark.parametrize("make", HOLDERS.values(), ids=HOLDERS.keys())
def test_langchain_dumpd_writes_no_secret(remote_memory: MemoryIndex, make: Callable[[MemoryIndex], Any]) -> None:
    holder = make(remote_memory)
    _assert_no_secret(json.dumps(dumpd(holder)))
    _assert_no_secret(dumps(holder))
    _assert_no_secret(repr(holder))
