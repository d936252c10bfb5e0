"""``chunking.embed_context``: a chunk is embedded with its note's date or name, the heading path above it and, in a
dialogue, the speaker of the message it starts inside; what is stored, keyword-indexed and returned is unchanged."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.config import MemoryConfig
from openclaw_memory.providers.base import EmbedKind
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.text.chunk_context import NoteOutline, contextual_key
from openclaw_memory.text.chunker import indexed_hash


def test_a_daily_notes_date_and_the_heading_path_above_a_line() -> None:
    text = "# Garden\n\nintro\n## Tomatoes\nwater daily\n### Pests\naphids\n## Roses\nprune\n"
    outline = NoteOutline("memory/2024-03-15.md", text)
    assert outline.at(1) == "15 March 2024"  # the title line itself: nothing above it
    assert outline.at(3) == "15 March 2024 | Garden"
    assert outline.at(5) == "15 March 2024 | Garden > Tomatoes"
    assert outline.at(7) == "15 March 2024 | Garden > Tomatoes > Pests"
    assert outline.at(8) == "15 March 2024 | Garden"  # a heading of the same level closes the one before
    assert outline.at(9) == "15 March 2024 | Garden > Roses"
    assert NoteOutline("notes/garden-plan.md", text).at(5) == "garden-plan | Garden > Tomatoes"


def test_lines_in_fenced_code_are_not_headings_or_speakers() -> None:
    text = "# Setup\n```bash\n# install it\npip install x\n```\nafter the code\n"
    assert NoteOutline("setup.md", text).at(6) == "setup | Setup"


DIALOGUE = (
    "# March-15-2024\n\n"
    "User: How do I debounce the search box?\n\n"
    "Assistant: Wrap the handler.\n"
    "## Step 1: the helper\n"
    "const debounce = (fn) => fn;\n\n"
    "User: And the cache?\n\n"
    "Assistant: Keep a map.\n"
    "It holds the last answers.\n\n"
    "User: Thanks!\n\n"
    "Assistant: You are welcome.\n"
)


def test_a_chunk_that_starts_inside_a_message_says_whose_message_it_is() -> None:
    outline = NoteOutline("memory/2024-03-15.md", DIALOGUE)
    lines = DIALOGUE.split("\n")
    assert lines[6] == "const debounce = (fn) => fn;"
    assert outline.at(7) == "15 March 2024 | March-15-2024 > Step 1: the helper\nAssistant: …"
    assert outline.at(5) == "15 March 2024 | March-15-2024"  # it opens with its label: nothing to add
    assert outline.at(8) == "15 March 2024 | March-15-2024"  # blank lines are skipped: the next line has a label
    assert outline.at(12) == "15 March 2024 | March-15-2024\nAssistant: …"  # the answer's heading ended with it


def test_the_cache_key_is_that_of_what_is_embedded() -> None:
    text, text_hash = "water daily", "h"
    assert contextual_key("", text, text_hash) == indexed_hash(text, text_hash)
    assert contextual_key("Garden > Tomatoes", text, text_hash) != contextual_key("Garden > Roses", text, text_hash)


def test_off_by_default() -> None:
    assert MemoryConfig().chunking.embed_context is False
    assert MemoryConfig.load(None, chunking={"embedContext": True}).chunking.embed_context is True


class RecordingProvider(FakeEmbeddingProvider):
    """The fake embedder that keeps every document text it was sent."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.documents: list[str] = []

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        if kind != "query":
            self.documents.extend(texts)
        return super()._embed(texts, kind)


# The note's second chunk never says "tomatoes"; only the heading above it does.
NOTE = (
    "# Tomatoes\n"
    "Seedlings go out in May after the frost.\n"
    "Stake them early and pinch the side shoots.\n\n"
    "Give each plant a bucket of water at dawn.\n"
    "Feed every fortnight once flowers show.\n"
)
OTHER = "# Chores\nWater the lawn and feed the cat every morning.\nSweep the porch.\n"


def _index(ws: Path, tmp_path: Path, provider: FakeEmbeddingProvider, context: bool, name: str = "s") -> MemoryIndex:
    return MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / f"{name}.sqlite")},
                       chunking={"tokens": 30, "overlap": 0, "embed_context": context},
                       query={"hybrid": {"unit_lines": 0}})


@pytest.mark.parametrize("context", [False, True])
def test_the_heading_above_a_chunk_finds_it_by_vector(write, tmp_path: Path, context: bool) -> None:
    ws = write({"memory/garden.md": NOTE, "memory/chores.md": OTHER})
    provider = RecordingProvider(dims=256, model=f"fake-context-{context}")
    with _index(ws, tmp_path, provider, context) as m:
        m.sync()
        starts = sorted(c.start_line for c in m.iter_chunks() if c.path == "memory/garden.md")
        assert starts == [1, 5]  # the setup: the watering lines are a chunk of their own
        hits = m.search("water tomatoes", mode="vector", max_results=3, min_score=0).hits
    top = (hits[0].path, hits[0].start_line)
    if context:  # the only chunk that says both, with its heading
        assert top == ("memory/garden.md", 5)
        assert hits[0].text.startswith("Give each plant")  # the returned text is the chunk's own
    else:
        assert top != ("memory/garden.md", 5)
    watering = [d for d in provider.documents if "bucket of water" in d]
    assert watering == (["garden | Tomatoes\nGive each plant a bucket of water at dawn.\n"
                         "Feed every fortnight once flowers show."] if context else
                        ["Give each plant a bucket of water at dawn.\nFeed every fortnight once flowers show."])


def test_a_changed_heading_embeds_the_chunks_below_it_again(write, tmp_path: Path) -> None:
    ws = write({"memory/garden.md": NOTE})
    provider = RecordingProvider(dims=64)
    with _index(ws, tmp_path, provider, True) as m:
        m.sync()
        (ws / "memory" / "garden.md").write_text(NOTE.replace("# Tomatoes", "# Peppers"), encoding="utf-8")
        provider.documents.clear()
        m.sync()
    assert "garden | Peppers\nGive each plant a bucket of water at dawn.\nFeed every fortnight once flowers show." \
        in provider.documents


def test_switching_it_rebuilds_the_index(write, tmp_path: Path) -> None:
    ws = write({"memory/garden.md": NOTE})
    provider = RecordingProvider(dims=64)
    with _index(ws, tmp_path, provider, False) as m:
        m.sync()
    with _index(ws, tmp_path, provider, True) as m:
        report = m.sync()
    assert report.full_rebuild and "chunking.embed_context" in (report.rebuild_reason or "")


class SmallInputProvider(RecordingProvider):
    """A remote-style embedder that takes at most 120 bytes per input."""

    def __init__(self) -> None:
        super().__init__(dims=64, model="fake-small-input")
        self._max_input_tokens = 120


def test_a_chunk_and_its_context_fit_the_providers_input_limit(write, tmp_path: Path) -> None:
    body = "\n".join(f"line {i} says something about the garden beds" for i in range(12))
    ws = write({"memory/2024-05-01.md": f"# A rather long heading about the vegetable garden\n{body}\n"})
    provider = SmallInputProvider()
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / "s.sqlite")},
                     chunking={"embed_context": True}, query={"hybrid": {"unit_lines": 0}}) as m:
        m.sync()
        assert all(c.embedding is not None for c in m.iter_chunks())
    assert provider.documents and all(len(d.encode("utf-8")) <= 120 for d in provider.documents)
    later = [d for d in provider.documents if "line 5 " in d]
    assert later and all(d.startswith("1 May 2024 | A rather long heading") for d in later)


@pytest.mark.local_model
def test_the_background_upgrade_embeds_what_the_full_index_embeds(write, tmp_path: Path) -> None:
    """The bundled model's fast first index, then its upgrade: the full vectors it caches are those of the chunks
    with their context, so the swap embeds nothing more."""
    ws = write({"memory/garden.md": NOTE, "memory/2024-03-15.md": DIALOGUE})
    with MemoryIndex(workspace=ws, provider="local", store={"path": str(tmp_path / "i.sqlite")}, watch=False,
                     chunking={"tokens": 30, "overlap": 0, "embed_context": True}) as m:
        first = m.sync()
        assert first.full_rebuild and m.status().embedding_upgrade["live"] == "fast"
        swapped = m.upgrade_embeddings()
        assert swapped is not None and swapped.full_rebuild
        assert swapped.embedded == 0 and swapped.cache_hits == first.embedded
