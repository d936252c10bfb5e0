"""Shared fixtures: an isolated environment, a workspace builder and a fake-provider index."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider

# Property tests explore new random inputs on every local run; under CI (CI=true) they replay the same
# derandomized examples, so a landing never hinges on a lucky draw. Test modules' own ``settings(...)``
# inherit this profile.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

_ENV_PREFIXES = ("OPENCLAW_", "OPENAI_", "GEMINI_", "GOOGLE_", "VOYAGE_", "HF_", "HUGGINGFACE_")

# huggingface_hub reads this once, at import (possibly during collection): never reach the Hub.
os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No vendor keys or OpenClaw settings leak in from the machine; state lives in a temp dir."""
    for key in list(os.environ):
        if key.startswith(_ENV_PREFIXES):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


WriteFiles = Callable[[dict[str, str | bytes]], Path]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory."""
    ws = tmp_path / "workspace"
    ws.mkdir()
    return ws


@pytest.fixture
def write(workspace: Path) -> WriteFiles:
    """``write({"MEMORY.md": "...", "memory/2026-01-16.md": "..."})`` creates files in the workspace."""

    def _write(files: dict[str, str | bytes]) -> Path:
        for rel, content in files.items():
            path = workspace / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return workspace

    return _write


@pytest.fixture
def fake_provider() -> FakeEmbeddingProvider:
    """A deterministic offline embedder that counts its calls."""
    return FakeEmbeddingProvider()


@pytest.fixture
def make_index(workspace: Path, tmp_path: Path) -> Iterator[Callable[..., MemoryIndex]]:
    """Build MemoryIndex objects on the workspace with a temp store; all are closed afterwards."""
    made: list[MemoryIndex] = []

    def _make(provider: object = None, **overrides: object) -> MemoryIndex:
        overrides.setdefault("workspace", workspace)
        overrides.setdefault("store", {"path": str(tmp_path / "index.sqlite")})
        overrides.setdefault("watch", False)
        idx = MemoryIndex(provider=provider, **overrides)  # type: ignore[arg-type]
        made.append(idx)
        return idx

    yield _make
    for idx in made:
        idx.close()


@pytest.fixture(scope="session")
def pg() -> object:
    """A real PostgreSQL + pgvector (``tests/pg_server.py``): started once per test process."""
    from tests.pg_server import shared_pg_server

    return shared_pg_server()
