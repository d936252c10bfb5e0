"""Embedding bridges in both directions, so the memory index and LlamaIndex share one vector space.

* :class:`LlamaIndexEmbeddingProvider`: any LlamaIndex ``BaseEmbedding`` (``MockEmbedding``,
  ``OpenAIEmbedding``, ``HuggingFaceEmbedding`` …) as an openclaw-memory provider, so the memory
  index embeds its Markdown chunks with the model a LlamaIndex app already uses.
* :class:`OpenClawMemoryEmbedding`: an openclaw-memory provider (the bundled local model, OpenAI,
  Gemini, Voyage …) as a LlamaIndex ``BaseEmbedding``, to pass as ``embed_model=``.

    >>> store = OpenClawVectorStore.from_workspace("~/notes", embed_model=MockEmbedding(embed_dim=8))  # doctest: +SKIP
    >>> embed = OpenClawMemoryEmbedding(store.memory.provider)                                                # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from llama_index.core.bridge.pydantic import PrivateAttr
from openclaw_memory.errors import MemoryArgumentTypeError
from openclaw_memory.providers.base import (
    EmbeddingProvider,
    FrameworkEmbeddingCalls,
    FrameworkEmbeddingProvider,
    check_embedding_provider,
)

__all__ = ["LlamaIndexEmbeddingProvider", "OpenClawMemoryEmbedding"]


def _declared_dims(embed_model: BaseEmbedding) -> int | None:
    """The dimension ``embed_model`` declares (``embed_dim``, as ``MockEmbedding``; ``dimensions``, as
    ``OpenAIEmbedding``), or None when it only shows on the first call."""
    for name in ("embed_dim", "dimensions"):
        value = getattr(embed_model, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class LlamaIndexEmbeddingProvider(FrameworkEmbeddingProvider):
    """An openclaw-memory embedding provider backed by a LlamaIndex ``BaseEmbedding``.

    Documents are embedded with ``get_text_embedding_batch``, queries with
    ``get_query_embedding`` (so models with query/passage prefixes work as intended). Vectors are
    L2-normalised and validated by the base class. The fingerprint names the LlamaIndex class and
    model, and the dimension when the model declares it (``embed_dim``, ``dimensions``; others reveal it only
    on the first call), so switching models or dimensions rebuilds the index.

    Example:
        >>> provider = LlamaIndexEmbeddingProvider(MockEmbedding(embed_dim=8))  # doctest: +SKIP
        >>> memory = MemoryIndex(workspace="~/notes", provider=provider)         # doctest: +SKIP
    """

    id = "llamaindex"

    def __init__(self, embed_model: BaseEmbedding, *, max_input_tokens: int | None = None) -> None:
        if not isinstance(embed_model, BaseEmbedding):
            raise MemoryArgumentTypeError(
                f"embed_model must be a llama_index BaseEmbedding, not {type(embed_model).__name__}"
            )
        calls = FrameworkEmbeddingCalls(embed_model.get_query_embedding, embed_model.get_text_embedding_batch,
                                        embed_model.aget_query_embedding, embed_model.aget_text_embedding_batch)
        super().__init__(calls, model=f"{type(embed_model).__name__}:{embed_model.model_name}",
                         declared_dims=_declared_dims(embed_model), max_input_tokens=max_input_tokens)
        self.embed_model = embed_model


class OpenClawMemoryEmbedding(BaseEmbedding):
    """A LlamaIndex embedding model backed by an openclaw-memory provider.

    Use it as ``embed_model=`` next to an :class:`~llama_index_openclaw_memory.OpenClawVectorStore`
    whose memory index uses the same provider: query embeddings then live in the index's space.

    Example:
        >>> index = VectorStoreIndex.from_vector_store(store, embed_model=OpenClawMemoryEmbedding(store.memory.provider))  # doctest: +SKIP
    """

    _provider: EmbeddingProvider = PrivateAttr()

    def __init__(self, provider: EmbeddingProvider, **kwargs: Any) -> None:
        check_embedding_provider(provider)
        kwargs.setdefault("model_name", f"{provider.id}:{provider.model}")
        super().__init__(**kwargs)
        self._provider = provider

    @classmethod
    def class_name(cls) -> str:
        return "OpenClawEmbedding"

    @property
    def provider(self) -> EmbeddingProvider:
        """The wrapped openclaw-memory provider."""
        return self._provider

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._provider.embed_query(query).tolist()

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return (await self._provider.aembed_query(query)).tolist()

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._provider.embed_documents([text])[0].tolist()

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return (await self._provider.aembed_documents([text]))[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return [v.tolist() for v in self._provider.embed_documents(texts)]

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return [v.tolist() for v in await self._provider.aembed_documents(texts)]
