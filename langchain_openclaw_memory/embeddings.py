"""Embeddings in both directions between openclaw-memory and LangChain.

* :class:`OpenClawMemoryEmbeddings`: an openclaw embedding provider (or the one a
  ``MemoryIndex`` uses) as a LangChain ``Embeddings``, to reuse it elsewhere in an app.
* :class:`LangChainEmbeddingProvider`: any LangChain ``Embeddings`` as an openclaw provider, to
  index memory with the embeddings an app already uses.
"""

from __future__ import annotations

from typing import Any

from langchain_core.embeddings import Embeddings
from openclaw_memory.errors import MemoryArgumentError, MemoryArgumentTypeError, ProviderUnavailableError
from openclaw_memory.index import MemoryIndex
from openclaw_memory.providers.base import (
    EmbeddingProvider,
    FrameworkEmbeddingCalls,
    FrameworkEmbeddingProvider,
    check_embedding_provider,
)
from pydantic import BaseModel, ConfigDict, model_validator

from langchain_openclaw_memory._convert import SerialisedMemory, SerialisedProvider, check_memory_index

__all__ = ["LangChainEmbeddingProvider", "OpenClawMemoryEmbeddings"]


class OpenClawMemoryEmbeddings(BaseModel, Embeddings):
    """A LangChain ``Embeddings`` backed by an openclaw-memory embedding provider.

    Give either ``provider`` (any :class:`~openclaw_memory.providers.base.EmbeddingProvider`)
    or ``memory`` (a ``MemoryIndex``: its resolved provider is used), by keyword or positionally as the
    retriever and the store take the memory. Vectors are unit-length, exactly the ones the memory index stores.

    Example:
        ```python
        embeddings = OpenClawMemoryEmbeddings(memory)
        vector = embeddings.embed_query("cache decision")
        ```
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    provider: SerialisedProvider = None
    """An :class:`~openclaw_memory.providers.base.EmbeddingProvider` (serialised to JSON as its id and model)."""
    memory: SerialisedMemory | None = None
    """A memory index whose provider to use (when ``provider`` is not given; serialised to JSON as its workspace, agent,
    backend and store class)."""

    def __init__(self, source: MemoryIndex | EmbeddingProvider | None = None, /, **data: Any) -> None:
        if source is not None:
            name = "memory" if isinstance(source, MemoryIndex) else "provider"
            if "memory" in data or "provider" in data:
                raise MemoryArgumentTypeError(f"{name} given both positionally and by keyword")
            data[name] = source
        if data.get("provider") is not None:
            check_embedding_provider(data["provider"])  # before pydantic, which would wrap it in a ValidationError
        if data.get("memory") is not None:
            check_memory_index(data["memory"])
        super().__init__(**data)

    @model_validator(mode="after")
    def _check_source(self) -> OpenClawMemoryEmbeddings:
        if self.provider is None and self.memory is None:
            raise MemoryArgumentError("OpenClawMemoryEmbeddings needs provider=<EmbeddingProvider> or "
                                      "memory=<MemoryIndex>")
        if self.provider is not None:
            check_embedding_provider(self.provider)  # model_validate(): pydantic wraps it in a ValidationError
        return self

    def _provider(self) -> EmbeddingProvider:
        provider = self.provider if self.provider is not None else self.memory.provider  # type: ignore[union-attr]
        if provider is None:
            reason = self.memory.status().keyword_only_reason if self.memory is not None else None
            raise ProviderUnavailableError(
                "the memory index runs in keyword-only mode, so there are no embeddings to expose"
                + (f" ({reason})" if reason else "")
                + "; configure an embedding provider (provider='local', 'openai', ...) or pass provider=..."
            )
        return provider

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One unit-length vector per text."""
        return [v.tolist() for v in self._provider().embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        """One unit-length vector for a search query."""
        return self._provider().embed_query(text).tolist()  # type: ignore[no-any-return]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async twin of :meth:`embed_documents`."""
        return [v.tolist() for v in await self._provider().aembed_documents(texts)]

    async def aembed_query(self, text: str) -> list[float]:
        """Async twin of :meth:`embed_query`."""
        return (await self._provider().aembed_query(text)).tolist()  # type: ignore[no-any-return]


def _declared_dims(embeddings: Embeddings) -> int | None:
    """The dimension ``embeddings`` declares (``dimensions``, as ``OpenAIEmbeddings``; ``output_dimension``, as
    ``VoyageAIEmbeddings``; ``size``, as LangChain's fake embeddings), or None when it only shows on the first call."""
    for name in ("dimensions", "output_dimension", "size"):
        value = getattr(embeddings, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class LangChainEmbeddingProvider(FrameworkEmbeddingProvider):
    """An openclaw-memory embedding provider backed by a LangChain ``Embeddings`` object.

    ``model`` names the vector space in the index fingerprint (default: the object's ``model``
    or ``model_name`` attribute, else its class name); changing it forces a re-index, so give a
    stable, specific name when the object has none. The fingerprint also holds the dimension when it is
    known before the first call (``dims=``, else the object's ``dimensions``, ``output_dimension`` or ``size``), so
    the same model with another dimension (``OpenAIEmbeddings(dimensions=256)``) re-indexes too; give ``dims=``
    when the object does not declare it.

    Example:
        ```python
        provider = LangChainEmbeddingProvider(OpenAIEmbeddings(model="text-embedding-3-small"))
        memory = MemoryIndex(workspace="~/notes", provider=provider)
        ```
    """

    id = "langchain"

    def __init__(
        self,
        embeddings: Embeddings,
        *,
        model: str | None = None,
        dims: int | None = None,
        max_input_tokens: int | None = None,
    ) -> None:
        if not isinstance(embeddings, Embeddings):
            raise MemoryArgumentTypeError(f"embeddings must be a langchain_core Embeddings, got "
                                          f"{type(embeddings).__name__}")
        self.embeddings = embeddings
        name = model or getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
        calls = FrameworkEmbeddingCalls(embeddings.embed_query, embeddings.embed_documents, embeddings.aembed_query,
                                        embeddings.aembed_documents)
        super().__init__(calls, model=str(name) if name else type(embeddings).__name__,
                         declared_dims=dims if dims is not None else _declared_dims(embeddings),
                         max_input_tokens=max_input_tokens)

    def fingerprint(self) -> dict[str, Any]:
        """The LangChain class and model, and the dimension when known before the first call: another dimension
        is another vector space, so the index is embedded again."""
        cls = type(self.embeddings)
        return {**super().fingerprint(), "class": f"{cls.__module__}.{cls.__qualname__}"}
