"""Consolidation with a LlamaIndex ``LLM``: a small CustomLLM scripted with the decisions a model would
answer (LlamaIndex's MockLLM only echoes its prompt)."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.llms import CompletionResponse, CompletionResponseGen, CustomLLM, LLMMetadata
from llama_index.core.llms.mock import MockLLM
from openclaw_memory.config import MemoryConfig

from llama_index_openclaw_memory import aconsolidate, consolidate

MEMORY = "# Memory\n\n- Deploys happen on Tuesdays.\n- The team lead is Dana.\n"
NOTE = "- Deploys now happen on Fridays only, after the freeze.\n- Carol prefers answers in French.\n"


class ScriptedLLM(CustomLLM):
    """Answers ``answer`` to every prompt and keeps the prompts."""

    answer: str = ""
    prompts: list[str] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text=self.answer)

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield self.complete(prompt)


@pytest.fixture
def config(tmp_path: Path) -> MemoryConfig:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(MEMORY)
    (ws / "memory" / f"{date.today().isoformat()}.md").write_text(NOTE)
    return MemoryConfig(workspace=ws, state_dir=tmp_path / "state", provider="none",
                        dreaming={"min_recall_count": 0, "min_unique_queries": 0})


def test_consolidate_with_an_llm_merges_with_a_source(config: MemoryConfig) -> None:
    llm = ScriptedLLM(answer=json.dumps({"decisions": [{"op": "merge", "candidate": "C1", "entry": "E1"}]}), prompts=[])
    report = consolidate(config, llm)
    text = (config.resolved_workspace() / "MEMORY.md").read_text()
    assert report.merged and "- Deploys happen on Tuesdays.\n  - Deploys now happen on Fridays only" in text
    assert "C2 (memory/" in llm.prompts[0]


def test_aconsolidate_with_an_llm(config: MemoryConfig) -> None:
    llm = ScriptedLLM(answer=json.dumps({"decisions": [{"op": "add", "candidate": "C2"}]}), prompts=[])
    report = asyncio.run(aconsolidate(config, llm))
    assert report.added and "Carol prefers" in (config.resolved_workspace() / "MEMORY.md").read_text()


def test_mock_llm_echoing_its_prompt_is_not_decisions(config: MemoryConfig) -> None:
    report = consolidate(config, MockLLM(), apply=False)
    assert report.mode == "append-only" and report.fallback_reason and not report.applied


def test_not_an_llm_is_refused(config: MemoryConfig) -> None:
    with pytest.raises(TypeError, match="LLM"):
        consolidate(config, object())  # type: ignore[arg-type]
