"""Translation between the core's records (hits, chunks, sections) and LlamaIndex nodes.

Every node carries ``path``, ``source``, ``start_line`` and ``end_line`` metadata (plus ``date``
for dated notes such as ``memory/2026-01-16.md``) and a SOURCE relationship naming its source
document. These keys are hidden from the embedding text; the LLM sees the location. A node the
store wrote also gets back its own metadata (a key of its own named like a location key, say its
own ``source`` or ``date``, wins over the derived one), excluded metadata keys and metadata templates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from llama_index.core.schema import (
    BaseNode,
    ImageNode,
    IndexNode,
    NodeRelationship,
    RelatedNodeInfo,
    RelatedNodeType,
    ObjectType,
    TextNode,
)
from llama_index.core.vector_stores.types import FilterCondition, MetadataFilter, MetadataFilters
from llama_index.core.vector_stores.utils import build_metadata_filter_fn
from openclaw_memory.errors import MemoryArgumentError
from openclaw_memory.index.memory_index import check_memory_index
from openclaw_memory.text.note_dates import dated_path_timestamp
from openclaw_memory.types import SearchHit

from llama_index_openclaw_memory._sections import TEMPLATE_FIELDS, Section

__all__ = [
    "DOCUMENT_KEYS",
    "LOCATION_KEYS",
    "ChunkLike",
    "adapter_keys",
    "check_memory_index",
    "chunk_node",
    "hit_chunk_node",
    "hit_node",
    "location_metadata",
    "matches_filters",
    "node_links",
    "node_matches",
    "own_excluded_keys",
    "own_metadata",
    "own_templates",
    "relationship_attrs",
    "section_node",
]

#: Metadata keys the adapter derives from where a node lives (never stored in a section).
LOCATION_KEYS = ("path", "source", "start_line", "end_line", "date")
#: The keys a node's source document can be filtered on (LlamaIndex's ``node_to_metadata_dict`` writes them).
DOCUMENT_KEYS = ("ref_doc_id", "doc_id", "document_id")
_SCORE_KEYS = ("vector_score", "text_score", "chunk_id", "citation")
_HIDDEN_FROM_LLM = ("source", "date", "vector_score", "text_score", "chunk_id")


class ChunkLike(Protocol):
    """What :func:`chunk_node` reads: a stored chunk, a search candidate or a hit record."""

    @property
    def id(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def text(self) -> str: ...


def location_metadata(path: str, source: str, start_line: int, end_line: int) -> dict[str, Any]:
    """``path``, ``source``, ``start_line``, ``end_line`` and, for dated files, ``date`` (YYYY-MM-DD)."""
    meta: dict[str, Any] = {"path": path, "source": source, "start_line": start_line, "end_line": end_line}
    dated = dated_path_timestamp(path)
    if dated is not None:
        meta["date"] = dated.date().isoformat()
    return meta


def _derived(key: str) -> bool:
    """Whether ``key`` is named like one the adapter derives on read (a location or score key)."""
    return key in LOCATION_KEYS or key in _SCORE_KEYS


def adapter_keys(node: BaseNode) -> set[str]:
    """The metadata keys the adapter put on ``node`` when it returned it (its location and scores, recomputed on
    read, never stored): the derived keys it excludes from its embedding, when it carries the adapter's line range
    (``start_line``/``end_line``, excluded too). A node of the caller's own has none: every key is its own."""
    excluded = {k for k in node.excluded_embed_metadata_keys if k in node.metadata}
    if not {"start_line", "end_line"} <= excluded:
        return set()
    return {k for k in excluded if _derived(k)}


def own_metadata(node: BaseNode) -> dict[str, Any]:
    """A node's own metadata: without the keys the adapter derived when it returned it (see :func:`adapter_keys`)."""
    derived = adapter_keys(node)
    return {k: v for k, v in node.metadata.items() if k not in derived}


def own_excluded_keys(keys: Sequence[str], own: Mapping[str, Any]) -> list[str]:
    """A node's excluded metadata keys without the derived ones the node has no metadata of its own for
    (the adapter excludes those itself on read)."""
    return [k for k in keys if not _derived(k) or k in own]


def own_templates(node: BaseNode) -> dict[str, str]:
    """The node's metadata/text templates that differ from LlamaIndex's defaults (``TextNode``'s)."""
    values = {"metadata_template": node.metadata_template, "metadata_separator": node.metadata_separator}
    if isinstance(node, TextNode):
        values["text_template"] = node.text_template
    return {k: v for k, v in values.items() if k in TEMPLATE_FIELDS and v != TextNode.model_fields[k].default}


def _node(node_id: str, text: str, metadata: dict[str, Any], ref_doc_id: str, *, derived: Sequence[str],
          excluded_embed: Sequence[str] = (), excluded_llm: Sequence[str] = (),
          templates: Mapping[str, str] | None = None, index_id: str | None = None,
          image: Mapping[str, str] | None = None,
          links: Mapping[NodeRelationship, RelatedNodeType] | None = None,
          char_range: Mapping[str, int] | None = None) -> TextNode:
    """``derived``: the metadata keys the adapter computed (hidden from the embedding, some from the LLM);
    ``index_id``: the node is an ``IndexNode`` referring to that retriever or object; ``image``: the node is an
    ``ImageNode`` with these ``image_path`` / ``image_url`` / ``image_mimetype``; ``links``: its relationships to
    other nodes but its source document; ``char_range``: its ``start_char_idx`` / ``end_char_idx``."""
    extra: dict[str, Any] = {"index_id": index_id} if index_id is not None else dict(image or {})
    kind = IndexNode if index_id is not None else ImageNode if image is not None else TextNode
    return kind(
        **(templates or {}),
        **extra,
        **(char_range or {}),
        id_=node_id,
        text=text,
        metadata=metadata,
        relationships={**(links or {}), NodeRelationship.SOURCE: RelatedNodeInfo(node_id=ref_doc_id)},
        excluded_embed_metadata_keys=[*excluded_embed, *derived],
        excluded_llm_metadata_keys=[*excluded_llm, *(k for k in derived if k in _HIDDEN_FROM_LLM)],
    )


def chunk_node(chunk: ChunkLike, own: tuple[int, int, str] | None = None) -> TextNode:
    """A hand-written chunk as a node: id = chunk id, ``ref_doc_id`` = its file path.

    ``own`` narrows it to its hand-written lines ``(first, last, text)`` when the chunk also
    covers sections the store wrote.
    """
    start, end, text = own if own is not None else (chunk.start_line, chunk.end_line, chunk.text)
    meta = location_metadata(chunk.path, chunk.source, start, end)
    return _node(chunk.id, text, meta, chunk.path, derived=list(meta))


def hit_chunk_node(hit: SearchHit, own: tuple[int, int, str] | None = None) -> TextNode:
    """A hit's chunk as a node, like :func:`chunk_node` (location metadata only, no scores)."""
    start, end, text = own if own is not None else (hit.start_line, hit.end_line, hit.text or hit.snippet)
    meta = location_metadata(hit.path, hit.source, start, end)
    return _node(hit.id, text, meta, hit.path, derived=list(meta))


def hit_node(hit: SearchHit) -> TextNode:
    """A search hit as a node: id = the hit's id (its chunk id, or one derived from it for a folded or cut hit),
    its full text, scores, ``chunk_id`` and citation in the metadata."""
    meta = location_metadata(hit.path, hit.source, hit.start_line, hit.end_line)
    meta.update(vector_score=hit.vector_score, text_score=hit.text_score, chunk_id=hit.chunk_id)
    if hit.citation:
        meta["citation"] = hit.citation
    return _node(hit.id, hit.text or hit.snippet, meta, hit.path, derived=list(meta))


def section_node(section: Section, path: str) -> TextNode:
    """A node the store wrote, rebuilt from its Markdown section (``ref_doc_id`` defaults to the path): its own
    metadata, then the location keys it has no value of its own for; an ``IndexNode`` or ``ImageNode`` when it was
    one."""
    own = section.metadata
    location = {k: v for k, v in location_metadata(path, "memory", section.start_line, section.end_line).items()
                if k not in own}
    return _node(section.id, section.text, {**own, **location}, section.ref_doc_id or path, derived=list(location),
                 excluded_embed=section.excluded_embed_metadata_keys, excluded_llm=section.excluded_llm_metadata_keys,
                 templates=section.templates, index_id=section.index_id, image=section.image,
                 links=node_links(section.relationships), char_range=section.char_range)


def relationship_attrs(node: BaseNode) -> dict[str, Any]:
    """A node's relationships but its source document, as a section keeps them (:data:`RELATIONSHIPS`)."""
    def link(info: RelatedNodeInfo) -> dict[str, str]:
        kind = info.node_type.value if isinstance(info.node_type, ObjectType) else info.node_type
        return {k: v for k, v in (("node_id", info.node_id), ("node_type", kind), ("hash", info.hash)) if v is not None}

    return {relation.value: [link(i) for i in related] if isinstance(related, list) else link(related)
            for relation, related in node.relationships.items() if relation != NodeRelationship.SOURCE}


def node_links(attrs: Mapping[str, Any]) -> dict[NodeRelationship, RelatedNodeType]:
    """The relationships a section kept (see :func:`relationship_attrs`), as LlamaIndex's ``RelatedNodeInfo``."""
    relations = {relation.value: relation for relation in NodeRelationship}
    return {relations[kind]: [RelatedNodeInfo(**i) for i in link] if isinstance(link, list) else RelatedNodeInfo(**link)
            for kind, link in attrs.items() if kind in relations and kind != NodeRelationship.SOURCE.value}


def _single(f: MetadataFilter) -> Callable[[Mapping[str, Any]], bool]:
    fn = build_metadata_filter_fn(lambda meta: meta, MetadataFilters(filters=[f]))  # type: ignore[arg-type,return-value]
    return fn  # type: ignore[return-value]


def node_matches(node: BaseNode, filters: MetadataFilters | None) -> bool:
    """Whether ``node`` passes ``filters``: on its metadata, and on its source document under the keys LlamaIndex's
    stores file it under for filters (:data:`DOCUMENT_KEYS`, as ``node_to_metadata_dict`` does; a metadata key of the
    node's own with one of those names wins)."""
    if filters is None or not filters.filters:
        return True
    return matches_filters({**dict.fromkeys(DOCUMENT_KEYS, node.ref_doc_id), **node.metadata}, filters)


def matches_filters(metadata: Mapping[str, Any], filters: MetadataFilters | None) -> bool:
    """Whether ``metadata`` passes ``filters`` (LlamaIndex operator semantics; nesting allowed).

    ``AND``/``OR`` combine the filters; ``NOT`` matches when none of them does.
    """
    if filters is None or not filters.filters:
        return True
    results = (
        matches_filters(metadata, f) if isinstance(f, MetadataFilters) else _single(f)(metadata)  # type: ignore[arg-type]
        for f in filters.filters
    )
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.AND:
        return all(results)
    if condition == FilterCondition.OR:
        return any(results)
    if condition == FilterCondition.NOT:
        return not any(results)
    raise MemoryArgumentError(f"unsupported filter condition {condition!r}; use AND, OR or NOT")
