"""The adapter package's public surface is explicit and complete."""

from __future__ import annotations

import importlib
import subprocess
import sys
from types import ModuleType

import pytest

import langchain_openclaw_memory as lom

MODULES = ["_convert", "_flush", "callbacks", "consolidation", "embeddings", "long_term", "memory", "middleware", "retriever", "store", "tools"]


def test_all_is_complete_and_sorted() -> None:
    public = {n for n, v in vars(lom).items() if not n.startswith("_") and not isinstance(v, ModuleType)}
    public -= {"annotations", "TYPE_CHECKING", "Any"}
    assert sorted(lom.__all__) == lom.__all__
    assert public == set(lom.__all__)
    for name in [*lom.__all__, "OpenClawChatMemory"]:  # the legacy class is imported lazily, not by "import *"
        assert getattr(lom, name) is not None
    assert "OpenClawChatMemory" in dir(lom)


@pytest.mark.parametrize("name", MODULES)
def test_every_module_declares_its_exports(name: str) -> None:
    module = importlib.import_module(f"langchain_openclaw_memory.{name}")
    assert module.__doc__
    for export in module.__all__:
        assert hasattr(module, export), f"{name}.__all__ lists missing {export}"


def test_unknown_attribute_raises() -> None:
    with pytest.raises(AttributeError, match="NotAThing"):
        lom.NotAThing  # noqa: B018


def test_a_star_import_works_without_langchain_classic() -> None:
    # the legacy OpenClawChatMemory needs the optional extra; "import *" must not pull it in
    code = (
        "import sys; sys.modules['langchain_classic'] = None\n"
        "from langchain_openclaw_memory import *\n"
        "print(OpenClawMemoryRetriever.__name__, 'OpenClawChatMemory' in dir())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["OpenClawMemoryRetriever", "False"]
