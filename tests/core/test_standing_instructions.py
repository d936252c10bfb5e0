"""Standing instructions: a line telling the assistant what to always or never do comes back, as a one-line hit, with
the questions on its topic, even when the chunk that holds it is about something else."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.text.instructions import instruction_lines

pytestmark = pytest.mark.both_stores  # also on PostgreSQL (tests/conftest.py)

INSTRUCTION = "Dana: Always include version numbers when I ask about software libraries or dependencies."
MEANING = "Dana: Always use APA 7th edition style when I ask about formatting references."


def _note(instruction_line: str) -> str:
    """A long chat (no user–assistant transcript: its own messages would be hits of their own): many turns about
    libraries, and the instruction inside a turn about the weather."""
    turns = ["# 2024-04-05", ""]
    for i in range(12):
        turns += [f"Dana: which libraries should the parser use, part {i}?",
                  f"Robin: the parser libraries for part {i}: requests and click, both libraries are small.",
                  "Robin: more about the libraries the project could use, and why.", ""]
    turns += ["Dana: it rained all day and the garden is soaked.", "Robin: the garden will dry by Monday.",
              instruction_line, "Robin: Understood.", "Dana: the weather should clear up tomorrow.", ""]
    for i in range(12):
        turns += [f"Dana: tell me about the deployment, step {i}.", f"Robin: deployment step {i} copies files.", ""]
    return "\n".join(turns) + "\n"


def _workspace(tmp_path: Path, instruction_line: str = INSTRUCTION) -> Path:
    (tmp_path / "memory").mkdir(parents=True)
    (tmp_path / "memory" / "2024-04-05.md").write_text(_note(instruction_line), encoding="utf-8")
    return tmp_path


@pytest.fixture
def index_of(make_index: Callable[..., MemoryIndex], tmp_path: Path) -> Callable[..., MemoryIndex]:
    """A synced index (SQLite, and PostgreSQL in the slow runs) of the chat with the instruction."""
    def _index(provider: Any = None, **query: Any) -> MemoryIndex:
        index = make_index(provider=provider, workspace=_workspace(tmp_path / "ws"),
                           chunking={"tokens": 60, "overlap": 0}, query={"hybrid": {"unit_lines": 0}, **query})
        index.sync()
        return index
    return _index


def _instruction_line_number(ws: Path, text: str) -> int:
    return (ws / "memory" / "2024-04-05.md").read_text(encoding="utf-8").splitlines().index(text) + 1


def test_the_lines_that_are_standing_instructions() -> None:
    text = "\n".join([
        "User: Always include version numbers when I ask about libraries.",   # 0
        "Assistant: Always validate input before saving it to the database.",  # the assistant's advice
        "- Never push to main directly, open a pull request.",                 # 2: a curated bullet
        "Caroline: Never mind, see you tomorrow at the park!",
        "Always.",
        "I always forget my keys when I leave the house in a hurry.",
        "User: From now on, answer in French when I ask about recipes.",       # 6
        "Please always run the tests before you commit anything.",             # 7
    ])
    assert [i for i, _ in instruction_lines(text)] == [0, 2, 6, 7]


def test_a_buried_instruction_comes_with_a_question_on_its_topic(index_of: Callable[..., MemoryIndex]) -> None:
    with index_of() as index:
        line = _instruction_line_number(index.workspace, INSTRUCTION)
        hits = index.search("Which libraries and dependencies does the project use?", max_results=4, min_score=0).hits
        assert len(hits) == 4
        assert [(h.start_line, h.end_line) for h in hits if h.start_line <= line <= h.end_line] == [(line, line)]
        instruction = next(h for h in hits if h.start_line == line)
        assert instruction.text == INSTRUCTION and instruction.path == "memory/2024-04-05.md"
        # a question on another topic does not get it
        other = index.search("how are the deployment files copied?", max_results=4, min_score=0).hits
        assert not any(h.start_line <= line <= h.end_line for h in other)


def test_switched_off_the_instruction_stays_buried(index_of: Callable[..., MemoryIndex]) -> None:
    with index_of(standing_instructions=False) as index:
        line = _instruction_line_number(index.workspace, INSTRUCTION)
        hits = index.search("Which libraries and dependencies does the project use?", max_results=4, min_score=0).hits
        assert not any(h.start_line <= line <= h.end_line for h in hits)


@pytest.mark.parametrize("enabled", [True, False])
def test_an_instruction_found_by_meaning_with_embeddings(index_of: Callable[..., MemoryIndex], enabled: bool) -> None:
    # the question shares no word with the instruction; the embedder takes "sources" for "references", … and
    # many turns about citing are closer to the question than the garden chat that holds the instruction
    provider = FakeEmbeddingProvider(synonyms={"references": "sources", "formatting": "list", "apa": "paper",
                                               "always": "how", "use": "should", "style": "my", "edition": "in",
                                               "7th": "the"})
    with index_of(provider=provider, standing_instructions=enabled) as index:
        note = index.workspace / "memory" / "2024-04-05.md"
        citing = "".join(f"Dana: how should I cite the sources in my paper, chapter {i}?\n"
                         f"Robin: cite chapter {i} sources in my paper as a list.\n\n" for i in range(10))
        note.write_text(_note(MEANING).replace("# 2024-04-05\n\n", "# 2024-04-05\n\n" + citing), encoding="utf-8")
        index.sync()
        line = _instruction_line_number(index.workspace, MEANING)
        result = index.search("How should I list the sources in my paper?", max_results=4, min_score=0)
        assert result.mode == "hybrid"
        found = [(h.start_line, h.end_line) for h in result.hits if h.start_line <= line <= h.end_line]
        assert found == ([(line, line)] if enabled else [])


def test_min_score_judges_the_instruction_like_any_hit(index_of: Callable[..., MemoryIndex]) -> None:
    with index_of() as index:
        line = _instruction_line_number(index.workspace, INSTRUCTION)
        hits = index.search("Which libraries and dependencies does the project use?", max_results=4,
                            min_score=0.99).hits
        assert not any(h.start_line == h.end_line == line for h in hits)


def test_a_filtered_search_returns_the_indexed_chunks_as_found(index_of: Callable[..., MemoryIndex]) -> None:
    with index_of() as index:
        line = _instruction_line_number(index.workspace, INSTRUCTION)
        question = "Which libraries and dependencies does the project use?"
        for filtered in ({"after": "2024-04-01"}, {"where": lambda hit: True}):
            hits = index.search(question, max_results=4, min_score=0, **filtered).hits
            assert hits and not any(h.start_line == h.end_line == line for h in hits)


def test_the_hit_is_the_line_as_written_in_a_crlf_note_with_odd_separators(
        make_index: Callable[..., MemoryIndex], tmp_path: Path) -> None:
    note = _note("   - Always include version numbers when I ask about software libraries or dependencies.")
    note = note.replace("Robin: Understood.", "Robin: Under\x0cstood.\u2028").replace("\n", "\r\n")
    ws = _workspace(tmp_path / "crlf")
    (ws / "memory" / "2024-04-05.md").write_bytes(note.encode("utf-8"))
    with make_index(workspace=ws, chunking={"tokens": 60, "overlap": 0}) as index:
        index.sync()
        hits = index.search("Which libraries and dependencies does the project use?", max_results=4, min_score=0).hits
        file_lines = (ws / "memory" / "2024-04-05.md").read_bytes().decode("utf-8").split("\n")
        (hit,) = [h for h in hits if h.start_line == h.end_line and "Always" in h.text]
        assert hit.text == file_lines[hit.start_line - 1]
        assert hit.text.startswith("   - Always include")


class _FailingProvider(FakeEmbeddingProvider):
    """Embeds the question, then fails on anything else as a vendor SDK does (not a ProviderError)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if any("Always" in t and "\n" not in t.strip() for t in texts):  # the instruction alone
            raise RuntimeError("429 rate limited")
        return super().embed_documents(texts)


def test_a_provider_failing_on_the_instructions_leaves_their_words_to_match(index_of: Callable[..., MemoryIndex]) -> None:
    with index_of(provider=_FailingProvider(model="fake-failing")) as index:  # no passage vectors kept for it
        line = _instruction_line_number(index.workspace, INSTRUCTION)
        result = index.search("Which libraries and dependencies does the project use?", max_results=4, min_score=0)
        assert result.mode == "hybrid"
        assert any(h.start_line == h.end_line == line for h in result.hits)


def test_a_new_instruction_is_found_after_the_next_sync(index_of: Callable[..., MemoryIndex]) -> None:
    with index_of() as index:
        question = "Which libraries and dependencies does the project use?"
        index.search(question, max_results=4, min_score=0)  # the instructions of this generation, remembered
        added = "Dana: Never add libraries or dependencies without a pinned version."
        note = index.workspace / "memory" / "2024-04-05.md"
        note.write_text(note.read_text(encoding="utf-8").replace(INSTRUCTION, added), encoding="utf-8")
        index.sync()
        line = _instruction_line_number(index.workspace, added)
        hits = index.search(question, max_results=4, min_score=0).hits
        assert any(h.start_line == h.end_line == line and h.text == added for h in hits)


@pytest.mark.parametrize("max_results", [1, 2])
def test_the_instruction_never_exceeds_max_results(index_of: Callable[..., MemoryIndex], max_results: int) -> None:
    with index_of() as index:
        hits = index.search("Which libraries and dependencies does the project use?", max_results=max_results,
                            min_score=0).hits
        assert len(hits) == max_results
