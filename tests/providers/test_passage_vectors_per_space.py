"""The passages a search embeds itself (line windows to rerank, standing instructions) are kept per vector space, as
the late-interaction cache is: two indexes of one process using the same model at another size (OpenAI's
``dimensions``, Gemini's ``output_dimensionality``) shared them, so the second one's rerank failed ("embedding the
line windows failed": vectors of the other size) and kept the first pass's order."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.retrieval.passage_vectors import passage_vectors

FILLER = [f"Melanie: the weather report for day {i} mentions clouds rivers mountains and trains" for i in range(8)]
DOCS = {
    "memory/2026-04-01.md": "\n".join(["# Apr 1", "", *FILLER[:4], "Caroline: zebra quokka lantern", *FILLER[4:]]),
    "memory/2026-04-02.md": "# Apr 2\n\nCaroline: zebra zebra picnic\n",
}
MODEL = "fake-shared-model-name"


def _search(workspace: Path, index: Path, dims: int) -> tuple[list[str], str | None]:
    query = {"hybrid": {"enabled": False}, "rerank": {"enabled": True}}
    with MemoryIndex(provider=FakeEmbeddingProvider(dims=dims, model=MODEL), workspace=workspace, watch=False,
                     store={"path": str(index)}, query=query) as m:
        m.sync()
        result = m.search("zebra quokka lantern", min_score=0)
    return [h.path for h in result.hits], result.rerank_error


def test_two_sizes_of_one_model_keep_their_own_passage_vectors(tmp_path: Path) -> None:
    for name, text in DOCS.items():
        (tmp_path / "ws" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "ws" / name).write_text(text + "\n", encoding="utf-8")
    small = _search(tmp_path / "ws", tmp_path / "small.sqlite", 256)
    large = _search(tmp_path / "ws", tmp_path / "large.sqlite", 512)
    assert small[1] is None and large[1] is None
    assert large[0][0] == "memory/2026-04-01.md"  # the rerank lifted the note whose line answers


def test_the_vectors_kept_are_of_the_providers_size() -> None:
    for dims in (24, 48):
        found = passage_vectors(FakeEmbeddingProvider(dims=dims, model=MODEL), ["one passage", "another passage"])
        assert {vector.size for vector in found.values()} == {dims}
