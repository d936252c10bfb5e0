"""langchain-openai with the langchain-core this project resolves (issue 12, item 8): it imports
(langchain-openai 1.7.4 failed to, with ModelRefusalError, against langchain-core 1.7.2) and its
chat model is accepted where the README uses ``"openai:..."`` model strings."""

from __future__ import annotations

import importlib.metadata as md

from langchain.chat_models import init_chat_model
from openclaw_memory import MemoryIndex
from packaging.requirements import Requirement

from langchain_openclaw_memory import MemoryFlushCallbackHandler, PreCompactionFlushMiddleware


def test_installed_langchain_openai_matches_the_installed_langchain_core() -> None:
    core = md.version("langchain-core")
    needs = [Requirement(r) for r in md.requires("langchain-openai") or [] if r.startswith("langchain-core")]
    assert needs and all(core in r.specifier for r in needs), (core, needs)
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings  # noqa: F401  (failed with ModelRefusalError)


def test_an_openai_chat_model_is_a_valid_flush_model(memory: MemoryIndex, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    model = init_chat_model("openai:gpt-4.1-mini", base_url="http://127.0.0.1:9/v1")
    assert PreCompactionFlushMiddleware(memory, model, trigger_tokens=100_000).runner.model is model
    assert MemoryFlushCallbackHandler(memory, model=model).policy.threshold > 0
