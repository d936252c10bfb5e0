"""``search(sources=["sessions"])`` on an index that does not hold transcripts says so (MemoryArgumentError) instead
of answering "no_match" as if nothing matched."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryArgumentError, MemoryIndex
from openclaw_memory.files.sessions import TranscriptWriter


def test_sessions_asked_of_an_index_without_them_is_an_argument_error(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("The billing database is PostgreSQL.\n")
    with MemoryIndex(workspace=tmp_path, state_dir=str(tmp_path / "state"), provider=None, watch=False) as memory:
        memory.sync()
        with pytest.raises(MemoryArgumentError, match="add 'sessions' to the configuration's sources"):
            memory.search("billing", sources=["sessions"])
        assert memory.search("billing", sources=["memory", "sessions"]).hits  # memory still answers


def test_sessions_asked_of_an_index_with_them_answer(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("The billing database is PostgreSQL.\n")
    with MemoryIndex(workspace=tmp_path, state_dir=str(tmp_path / "state"), provider=None, watch=False,
                     sources=["memory", "sessions"]) as memory:
        TranscriptWriter(memory.transcript_path("s1")).append_message("user", "the quokka billing plan")
        memory.sync()
        assert [hit.path for hit in memory.search("quokka", sources=["sessions"], min_score=0).hits] == \
            ["sessions/s1.jsonl"]


def test_qmd_with_exported_sessions_counts_as_holding_them() -> None:
    from openclaw_memory import MemoryConfig
    from openclaw_memory.index.memory_index import _check_sources_indexed

    _check_sources_indexed(["sessions"], MemoryConfig(backend="qmd", qmd={"sessions": {"enabled": True}}))
    with pytest.raises(MemoryArgumentError):
        _check_sources_indexed(["sessions"], MemoryConfig(backend="qmd"))


def test_get_of_a_session_hit_says_it_is_a_transcript(tmp_path: Path) -> None:
    from openclaw_memory import MemoryPathError

    with MemoryIndex(workspace=tmp_path, state_dir=str(tmp_path / "state"), provider=None, watch=False,
                     sources=["memory", "sessions"]) as memory:
        TranscriptWriter(memory.transcript_path("s1")).append_message("user", "the quokka billing plan")
        memory.sync()
        hit = memory.search("quokka", min_score=0).hits[0]
        with pytest.raises(MemoryPathError, match="is a session transcript hit; memory_get reads memory files only"):
            memory.get(hit.path)


@pytest.mark.parametrize("settings", [
    {}, {"sources": ["memory", "sessions"]}, {"backend": "qmd"},
    {"backend": "qmd", "qmd": {"sessions": {"enabled": True}}},
])
def test_the_agent_tools_refuse_the_sessions_corpus_exactly_when_the_index_does(settings: dict[str, object]) -> None:
    # memory_search / MCP / CLI check corpus 'sessions' before searching; a QMD index with exported transcripts
    # holds them, so refusing there would hide every transcript from the agent, and the recall prompt names them
    # exactly when they can be searched
    from openclaw_memory import MemoryConfig
    from openclaw_memory.agent.tools import corpus_error, memory_recall_prompt
    from openclaw_memory.index.memory_index import _check_sources_indexed

    config = MemoryConfig(**settings)
    try:
        _check_sources_indexed(["sessions"], config)
        index_refuses = False
    except MemoryArgumentError:
        index_refuses = True
    assert (corpus_error(config, "sessions") is not None) == index_refuses
    assert ("session transcripts" in memory_recall_prompt(config)) == (not index_refuses)
