"""``query.rerank``: the best hits re-scored by their best-matching run of lines (opt-in)."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.retrieval.pipeline import line_windows

FILLER = [f"Melanie: the weather report for day {i} mentions clouds rivers mountains and trains" for i in range(8)]
DOCS = {
    # the one line that answers sits among many unrelated lines: diluted in the chunk's embedding
    "memory/2026-04-01.md": "\n".join(
        ["# Apr 1", "", *FILLER[:4], "Caroline: zebra quokka lantern", *FILLER[4:]]) + "\n",
    # a short chunk that mentions one query word twice
    "memory/2026-04-02.md": "# Apr 2\n\nCaroline: zebra zebra picnic\n",
}


def _search(write, tmp_path: Path, rerank: bool, provider: FakeEmbeddingProvider) -> list[str]:
    ws = write(DOCS)
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / "r.sqlite")},
                     query={"hybrid": {"enabled": False}, "rerank": {"enabled": rerank}}) as m:
        m.sync()
        return [h.path for h in m.search("zebra quokka lantern", min_score=0).hits]


def test_line_windows() -> None:
    assert line_windows("a\n\nb\nc\n", 2) == ["a\nb", "b\nc"]
    assert line_windows("only one\n", 2) == ["only one"]
    assert line_windows("\n \n", 3) == []


def test_rerank_lifts_a_chunk_whose_lines_answer(write, tmp_path: Path) -> None:
    provider = FakeEmbeddingProvider(dims=512)
    assert _search(write, tmp_path, False, provider)[0] == "memory/2026-04-02.md"  # whole-chunk similarity
    assert _search(write, tmp_path, True, provider)[0] == "memory/2026-04-01.md"


def test_rerank_embeds_each_window_once(write, tmp_path: Path) -> None:
    provider = FakeEmbeddingProvider(dims=512, model="fake-rerank-cache")
    ws = write(DOCS)
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / "c.sqlite")},
                     query={"rerank": {"enabled": True}}) as m:
        m.sync()
        m.search("zebra quokka lantern", min_score=0)
        before = provider.texts_embedded
        m.search("zebra quokka lantern picnic", min_score=0)
        assert provider.texts_embedded == before + 1  # only the new query: the windows are kept


def test_rerank_failure_keeps_the_results(write, tmp_path: Path) -> None:
    provider = FakeEmbeddingProvider(dims=512, model="fake-rerank-fail")
    ws = write(DOCS)
    with MemoryIndex(provider=provider, workspace=ws, watch=False, store={"path": str(tmp_path / "x.sqlite")},
                     query={"hybrid": {"enabled": False}, "rerank": {"enabled": True}}) as m:
        m.sync()

        def down(texts: object) -> list[object]:
            raise RuntimeError("provider down")

        provider.embed_documents = down  # type: ignore[method-assign]  # the query still embeds
        hits = m.search("zebra quokka lantern", min_score=0).hits
    assert [h.path for h in hits][:1] == ["memory/2026-04-02.md"]  # the unreranked order
