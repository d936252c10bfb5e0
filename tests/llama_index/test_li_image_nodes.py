"""An ``ImageNode`` added through the store comes back as an ``ImageNode`` with its image path, url and MIME type,
as LlamaIndex's text-storing vector stores return it (``metadata_dict_to_node`` rebuilds the node's class).

The store returned every node as a ``TextNode``: LlamaIndex's retriever fetches a non-text node from the docstore,
but after a restart (``VectorStoreIndex.from_vector_store``) the docstore is empty and the caller got the image's
caption as plain text, its ``image_path`` / ``image_url`` gone, so a multimodal query engine had no image to show.
The section now keeps those fields (base64 image data is not written to Markdown; a warning says so).
"""

from __future__ import annotations

import pytest
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.schema import ImageNode, TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode
from openclaw_memory import MemoryIndex

from llama_index_openclaw_memory import OpenClawMemoryEmbedding, OpenClawVectorStore

CAPTION = "Architecture diagram of the quokka survey pipeline."


def _image_node() -> ImageNode:
    return ImageNode(text=CAPTION, id_="diagram", image_path="figures/pipeline.png",
                     image_url="https://example.org/pipeline.png", metadata={"figure": 3})


def test_an_image_node_keeps_its_class_and_image_fields(store: OpenClawVectorStore) -> None:
    store.add([_image_node(), TextNode(text="A plain note about quokkas.", id_="plain")])
    nodes = {n.node_id: n for n in store.get_nodes(node_ids=["diagram", "plain"])}
    image = nodes["diagram"]
    assert isinstance(image, ImageNode)
    assert (image.image_path, image.image_url, image.image_mimetype) == (
        "figures/pipeline.png", "https://example.org/pipeline.png", "image/png")
    assert image.get_content() == CAPTION and image.metadata["figure"] == 3
    assert type(nodes["plain"]) is TextNode
    found = store.query(VectorStoreQuery(query_str="quokka pipeline diagram", mode=VectorStoreQueryMode.TEXT_SEARCH,
                                         similarity_top_k=5))
    assert any(isinstance(n, ImageNode) and n.image_path == "figures/pipeline.png" for n in found.nodes)


def test_after_a_restart_the_retriever_returns_the_image_node(memory: MemoryIndex,
                                                              embed_model: OpenClawMemoryEmbedding) -> None:
    storage = StorageContext.from_defaults(vector_store=OpenClawVectorStore(memory))
    VectorStoreIndex([_image_node()], storage_context=storage, embed_model=embed_model)
    reopened = VectorStoreIndex.from_vector_store(OpenClawVectorStore(memory), embed_model=embed_model)  # no docstore
    found = [n.node for n in reopened.as_retriever(similarity_top_k=5).retrieve("quokka survey pipeline diagram")]
    images = [n for n in found if isinstance(n, ImageNode)]
    assert [n.image_url for n in images] == ["https://example.org/pipeline.png"]


def test_base64_image_data_is_not_written_and_a_warning_says_what_to_do(store: OpenClawVectorStore) -> None:
    node = ImageNode(text=CAPTION, id_="inline", image="aGVsbG8=", image_mimetype="image/png")
    with pytest.warns(UserWarning, match="set image_path or image_url"):
        store.add([node])
    (back,) = store.get_nodes(node_ids=["inline"])
    assert isinstance(back, ImageNode) and back.image is None and back.image_mimetype == "image/png"
