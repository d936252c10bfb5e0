"""A node longer than one chunk is indexed as several chunks but is still one result."""

from __future__ import annotations

from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery
from llama_index.core.vector_stores.types import VectorStoreQueryMode as Mode
from openclaw_memory import MemoryIndex

from llama_index_openclaw_memory import OpenClawVectorStore


def test_a_node_spanning_several_chunks_counts_once(store: OpenClawVectorStore, memory: MemoryIndex) -> None:
    long_text = "\n\n".join(f"Paragraph {i}: the kestrel falcon survey counted birds on ridge {i} again." * 6
                            for i in range(12))
    store.add([TextNode(id_="n-long", text=long_text), TextNode(id_="n-short", text="One kestrel falcon sighting."),
               TextNode(id_="n-other", text="A kestrel nested in the barn.")])
    assert sum(1 for c in memory.iter_chunks() if c.path == "memory/llamaindex.md") >= 4  # n-long is split
    for mode in (Mode.TEXT_SEARCH, Mode.DEFAULT, Mode.HYBRID):
        res = store.query(VectorStoreQuery(query_str="kestrel falcon survey", similarity_top_k=2, mode=mode))
        assert res.ids is not None and len(res.ids) == len(set(res.ids)) == 2, (mode, res.ids)
        assert "n-long" in res.ids
