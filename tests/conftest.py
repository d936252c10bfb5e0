"""Shared fixtures: an isolated environment, a workspace builder and a fake-provider index."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


# The stores a module marked ``pytest.mark.both_stores`` runs its tests on (the PostgreSQL runs are slow).
BOTH_STORES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run each test of a ``both_stores`` module that builds an index once per store of :data:`BOTH_STORES`."""
    if metafunc.definition.get_closest_marker("both_stores") and "store_backend" in metafunc.fixturenames:
        metafunc.parametrize("store_backend", BOTH_STORES, indirect=True)


@pytest.fixture
def store_backend(request: pytest.FixtureRequest) -> str:
    """The store ``make_index`` builds on: "sqlite", or each of :data:`BOTH_STORES` in a ``both_stores`` module."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def make_index(
    workspace: Path, tmp_path: Path, store_backend: str, request: pytest.FixtureRequest
) -> Iterator[Callable[..., MemoryIndex]]:
    """Build MemoryIndex objects on the workspace with a temp store (a SQLite file, or one namespace of the
    test PostgreSQL server when ``store_backend`` is "postgresql"); all are closed afterwards."""
    made: list[MemoryIndex] = []
    if store_backend == "postgresql":
        server: Any = request.getfixturevalue("pg")
        store: dict[str, str] = {"url": server.url, "namespace": server.namespace(), "pg_schema": server.schema}
    else:
        store = {"path": str(tmp_path / "index.sqlite")}

    def _make(provider: object = None, **overrides: object) -> MemoryIndex:
        overrides.setdefault("workspace", workspace)
        overrides.setdefault("store", dict(store))
        overrides.setdefault("watch", False)
        idx = MemoryIndex(provider=provider, **overrides)  # type: ignore[arg-type]
        made.append(idx)
        if store_backend == "postgresql":
            assert idx.status().backend == "postgresql"
        return idx

    yield _make
    for idx in made:
        idx.close()


@pytest.fixture(scope="session")
def pg() -> object:
    """A real PostgreSQL + pgvector (``tests/pg_server.py``): started once per test process."""
    from tests.pg_server import shared_pg_server

    return shared_pg_server()
