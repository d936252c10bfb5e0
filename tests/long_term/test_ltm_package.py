"""Packaging promises of the long-term memory: lazy heavy imports, the extra named when missing."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import openclaw_memory.long_term as lt
from openclaw_memory.errors import MissingDependencyError
from openclaw_memory.providers.fake import FakeEmbeddingProvider


def test_importing_the_core_module_loads_no_framework_nor_lancedb() -> None:
    code = ("import sys, openclaw_memory.long_term, openclaw_memory.long_term.tools, openclaw_memory.cli;"
            "print([m for m in sys.modules if m.split('.')[0] in "
            "('lancedb','pyarrow','langchain','langchain_core','langgraph','llama_index')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.parametrize("name", ["capture", "hooks", "mirror", "store", "tools"])
def test_every_module_declares_its_exports(name: str) -> None:
    module = importlib.import_module(f"openclaw_memory.long_term.{name}")
    assert module.__doc__
    for export in module.__all__:
        assert hasattr(module, export), f"{name}.__all__ lists missing {export}"
    assert lt.__all__ == sorted(lt.__all__)


def test_missing_lancedb_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "lancedb", None)
    with pytest.raises(MissingDependencyError, match=r"openclaw-memory\[lancedb\]"):
        lt.LongTermMemory(tmp_path, FakeEmbeddingProvider())
