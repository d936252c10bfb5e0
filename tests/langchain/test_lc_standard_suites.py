"""The langchain-tests standard suites, run against the adapter's retriever, tools and embeddings."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import (
    EmbeddingsIntegrationTests,
    RetrieversIntegrationTests,
    ToolsIntegrationTests,
)
from langchain_tests.unit_tests import EmbeddingsUnitTests, ToolsUnitTests
from openclaw_memory import MemoryIndex
from openclaw_memory.providers.fake import FakeEmbeddingProvider

from langchain_openclaw_memory import (
    OpenClawMemoryEmbeddings,
    OpenClawMemoryRetriever,
    create_memory_get_tool,
    create_memory_search_tool,
)


class _WithMemory:
    """Gives each test a fresh synced index over the shared corpus (as ``self.memory``)."""

    memory: MemoryIndex

    @pytest.fixture(autouse=True)
    def _bind_memory(self, memory: MemoryIndex) -> None:
        self.memory = memory


class TestRetrieverStandard(_WithMemory, RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return OpenClawMemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        # min_score 0 so the four SQLite notes all qualify; k=3 must then return exactly 3.
        return {"memory": self.memory, "min_score": 0.0}

    @property
    def retriever_query_example(self) -> str:
        return "SQLite cache"


class _SearchTool(_WithMemory):
    @property
    def tool_constructor(self) -> BaseTool:
        return create_memory_search_tool(self.memory)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "SQLite cache", "maxResults": 2}


class _GetTool(_WithMemory):
    @property
    def tool_constructor(self) -> BaseTool:
        return create_memory_get_tool(self.memory)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"path": "memory/2026-01-16.md", "from": 3, "lines": 1}


class _Embeddings:
    @property
    def embeddings_class(self) -> type[Embeddings]:
        return OpenClawMemoryEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {"provider": FakeEmbeddingProvider(dims=32)}


class TestMemorySearchToolUnit(_SearchTool, ToolsUnitTests):
    pass


class TestMemorySearchToolIntegration(_SearchTool, ToolsIntegrationTests):
    pass


class TestMemoryGetToolUnit(_GetTool, ToolsUnitTests):
    pass


class TestMemoryGetToolIntegration(_GetTool, ToolsIntegrationTests):
    pass


class TestEmbeddingsUnit(_Embeddings, EmbeddingsUnitTests):
    pass


class TestEmbeddingsIntegration(_Embeddings, EmbeddingsIntegrationTests):
    pass
