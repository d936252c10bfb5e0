"""A node with metadata longer than a chunk (its marker line is past 1,600 characters) is still one record in one
chunk: the excluded keys' values are not searchable, the node reads back whole, the file's lines are unchanged."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery
from llama_index.core.vector_stores.types import VectorStoreQueryMode as Mode

from llama_index_openclaw_memory import OpenClawVectorStore
from openclaw_memory import MemoryIndex
from openclaw_memory.text.chunker import indexed_text
from openclaw_memory.errors import ProviderError
from openclaw_memory.providers.base import EmbedKind
from openclaw_memory.providers.fake import FakeEmbeddingProvider

SECRET = "quokkaref7781"


def _big() -> TextNode:
    return TextNode(id_="n-big", text="The harbour survey found two cracked bollards on the east pier.",
                    metadata={"title": "Harbour survey", "source_ref": SECRET, "raw": "lorem ipsum dolor " * 200},
                    excluded_embed_metadata_keys=["source_ref", "raw"])


def _ids(store: OpenClawVectorStore, text: str) -> list[str]:
    res = store.query(VectorStoreQuery(query_str=text, similarity_top_k=3, mode=Mode.TEXT_SEARCH))
    return list(res.ids or [])


def test_a_node_with_long_metadata_is_one_record_in_one_chunk(store: OpenClawVectorStore, memory: MemoryIndex,
                                                               corpus: Path) -> None:
    node = _big()
    store.add([node])
    markdown = (corpus / "memory/llamaindex.md").read_text(encoding="utf-8")
    marker = next(line for line in markdown.split("\n") if '"id": "n-big"' in line)
    assert len(marker) > 1600
    assert _ids(store, SECRET) == [] and _ids(store, "lorem ipsum") == []  # excluded keys: not searchable
    assert _ids(store, "cracked bollards") == ["n-big"]
    chunks = [c for c in memory.store.iter_chunks() if c.path == "memory/llamaindex.md"]
    assert len(chunks) == 1 and chunks[0].text.split("\n")[0] == marker
    assert indexed_text(chunks[0].text) == node.get_content(metadata_mode=MetadataMode.EMBED)
    (got,) = store.get_nodes(node_ids=["n-big"])
    assert got.metadata["source_ref"] == SECRET and got.metadata["raw"] == node.metadata["raw"]
    lines = markdown.split("\n")
    read = memory.get("memory/llamaindex.md", chunks[0].start_line, chunks[0].end_line - chunks[0].start_line + 1)
    assert read.text == "\n".join(lines[chunks[0].start_line - 1 : chunks[0].end_line]) == chunks[0].text


class LimitedProvider(FakeEmbeddingProvider):
    """The fake embedder with a remote API's input limit: a longer text is rejected (as an endpoint answers 400)."""

    max_input_tokens = 512  # a remote provider: the index sends at most this many bytes in one text

    def __init__(self) -> None:
        super().__init__()
        self.longest = 0

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        self.longest = max([self.longest, *(len(t.encode("utf-8")) for t in texts)])
        if self.longest > self.max_input_tokens:
            raise ProviderError(f"input too long: {self.longest} bytes > {self.max_input_tokens}")
        return super()._embed(texts, kind)


def test_embedded_metadata_longer_than_the_providers_input_limit(
        make_index: Callable[..., MemoryIndex], corpus: Path) -> None:
    provider = LimitedProvider()
    memory = make_index(provider, timezone="UTC")
    memory.sync()
    store = OpenClawVectorStore(memory)
    node = TextNode(id_="n-long", text="The harbour survey found two cracked bollards on the east pier.",
                    metadata={"summary": " ".join(f"word{i}" for i in range(600)) + " zanzibar"})
    store.add([node])  # every text sent fits the limit; the metadata is embedded in pieces
    assert 0 < provider.longest <= 512
    assert memory.status(deep=True).integrity["chunks_missing_vector_row"] == 0  # type: ignore[index]
    assert _ids(store, "zanzibar") == ["n-long"]  # the end of the metadata is still keyword-indexed
    assert _ids(store, "cracked bollards") == ["n-long"]
