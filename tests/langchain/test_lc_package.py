"""The adapter package's public surface is explicit and complete."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

import langchain_openclaw_memory as lom

MODULES = ["_convert", "_flush", "callbacks", "consolidation", "embeddings", "long_term", "memory", "middleware", "retriever", "store", "tools"]


def test_all_is_complete_and_sorted() -> None:
    public = {n for n, v in vars(lom).items() if not n.startswith("_") and not isinstance(v, ModuleType)}
    public -= {"annotations", "TYPE_CHECKING", "Any"}
    assert sorted(lom.__all__) == lom.__all__
    assert public | {"OpenClawChatMemory"} == set(lom.__all__)  # the legacy class is imported lazily
    for name in lom.__all__:
        assert getattr(lom, name) is not None


@pytest.mark.parametrize("name", MODULES)
def test_every_module_declares_its_exports(name: str) -> None:
    module = importlib.import_module(f"langchain_openclaw_memory.{name}")
    assert module.__doc__
    for export in module.__all__:
        assert hasattr(module, export), f"{name}.__all__ lists missing {export}"


def test_unknown_attribute_raises() -> None:
    with pytest.raises(AttributeError, match="NotAThing"):
        lom.NotAThing  # noqa: B018
