"""Nodes written by :class:`~llama_index_openclaw_memory.OpenClawVectorStore` as Markdown sections.

Each node added through the store becomes one *section* of a memory file, a record of kind
``node`` (:mod:`openclaw_memory.files.records`)::

    <!-- openclaw-memory:node {"id": "n1", "ref_doc_id": "doc-1", "metadata": {"topic": "db"}} -->
    We chose SQLite for the memory index.
    <!-- /openclaw-memory:node -->

The opening marker also carries the SHA-256 of the text it was written with (``sha256``): a
section is the store's to remove only while its text still has that hash (:attr:`Section.intact`).

This module translates between those records and the node fields (id, ``ref_doc_id``, metadata,
text, its links to other nodes, an ``IndexNode``'s ``index_id``, an ``ImageNode``'s image path / url / MIME type,
and the node's ``excluded_embed_metadata_keys`` / ``excluded_llm_metadata_keys`` and metadata templates when it has
its own); reading, writing and removing them is the core's. A node whose metadata takes part in its embedding
carries that text as the record's ``index_text`` (:data:`openclaw_memory.text.chunker.RECORD_INDEX_TEXT`), which
the memory index embeds and keyword-indexes in place of the marker line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openclaw_memory.text.chunker import RECORD_INDEX_TEXT, RECORD_OPEN_PREFIX
from openclaw_memory.files.records import Record, parse_records, remove_records, render_record

__all__ = ["CHAR_RANGE", "CONTENT_HASH", "EXCLUDED_EMBED", "EXCLUDED_LLM", "IMAGE", "IMAGE_FIELDS", "INDEX_ID", "KIND",
           "OPEN_PREFIX", "RELATIONSHIPS", "TEMPLATE_FIELDS", "TEXT_END", "Section", "node_attrs_ok", "parse_sections",
           "remove_sections", "render_section", "section_lines", "section_of"]

KIND = "node"
OPEN_PREFIX = f"{RECORD_OPEN_PREFIX}{KIND} "
#: Attribute names of a node's excluded metadata keys (LlamaIndex's field names).
EXCLUDED_EMBED = "excluded_embed_metadata_keys"
EXCLUDED_LLM = "excluded_llm_metadata_keys"
#: How a node renders its metadata (LlamaIndex's field names); written only when not LlamaIndex's default.
TEMPLATE_FIELDS = ("metadata_template", "metadata_separator", "text_template")
#: The attribute holding the SHA-256 (hex) of the text the store wrote.
CONTENT_HASH = "sha256"
#: The attribute holding an ``IndexNode``'s ``index_id`` (LlamaIndex's field name).
INDEX_ID = "index_id"
#: The attribute holding a node's links to other nodes but its source document (``ref_doc_id``): LlamaIndex's
#: ``NodeRelationship`` value -> ``{"node_id", "node_type", "hash"}`` (a list of them for children).
RELATIONSHIPS = "relationships"
#: The attribute holding the line breaks the node's text ended with (a section's body cannot end in one).
TEXT_END = "text_end"
#: The attribute holding an ``ImageNode``'s :data:`IMAGE_FIELDS` (present, even empty, for every image node).
IMAGE = "image"
#: The ``ImageNode`` fields a section keeps (LlamaIndex's field names); the base64 ``image`` itself is not kept.
IMAGE_FIELDS = ("image_path", "image_url", "image_mimetype")
#: Where a node's text lies in its source document (LlamaIndex's field names), kept when the node has them.
CHAR_RANGE = ("start_char_idx", "end_char_idx")


def _content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()


def _keys(value: Any) -> list[str]:
    return [k for k in value if isinstance(k, str)] if isinstance(value, list) else []


@dataclass(frozen=True)
class Section(Record):
    """One node the store wrote: a ``node`` record read as the node's identity, text and metadata.

    ``open_line``/``close_line`` are the marker lines, ``start_line``/``end_line`` the text's
    (1-based, inclusive). ``ref_doc_id`` is None when the node had no source document.
    """

    @property
    def id(self) -> str:
        """The node id."""
        return str(self.attrs["id"])

    @property
    def ref_doc_id(self) -> str | None:
        """The node's source document, if it had one."""
        return self.attrs.get("ref_doc_id")

    @property
    def metadata(self) -> dict[str, Any]:
        """The node's own metadata (a copy)."""
        return dict(self.attrs.get("metadata") or {})

    @property
    def excluded_embed_metadata_keys(self) -> list[str]:
        """The node's own metadata keys left out of its embedding text (empty when none was written)."""
        return _keys(self.attrs.get(EXCLUDED_EMBED))

    @property
    def excluded_llm_metadata_keys(self) -> list[str]:
        """The node's own metadata keys left out of the text the LLM sees (empty when none was written)."""
        return _keys(self.attrs.get(EXCLUDED_LLM))

    @property
    def index_id(self) -> str | None:
        """The ``index_id`` of an ``IndexNode`` (the retriever or object it refers to); None for a text node."""
        value = self.attrs.get(INDEX_ID)
        return value if isinstance(value, str) else None

    @property
    def image(self) -> dict[str, str] | None:
        """An ``ImageNode``'s :data:`IMAGE_FIELDS` that were set; None for a node that was not an image node."""
        value = self.attrs.get(IMAGE)
        if not isinstance(value, dict):
            return None
        return _strings(value, IMAGE_FIELDS)

    @property
    def relationships(self) -> dict[str, dict[str, str] | list[dict[str, str]]]:
        """The node's links to other nodes (see :data:`RELATIONSHIPS`; those that do not name a node are skipped)."""
        value = self.attrs.get(RELATIONSHIPS)
        if not isinstance(value, dict):
            return {}
        out: dict[str, dict[str, str] | list[dict[str, str]]] = {}
        for kind, link in value.items():
            if isinstance(link, list) and all(_link_ok(item) for item in link):
                out[kind] = [_link(item) for item in link]
            elif _link_ok(link):
                out[kind] = _link(link)
        return out

    @property
    def char_range(self) -> dict[str, int]:
        """The node's :data:`CHAR_RANGE` offsets in its source document (those it had when written); none once its
        text was edited by hand (they would point at the old text)."""
        if not self.intact:
            return {}
        return {k: v for k in CHAR_RANGE if isinstance(v := self.attrs.get(k), int) and not isinstance(v, bool)}

    @property
    def templates(self) -> dict[str, str]:
        """The node's own :data:`TEMPLATE_FIELDS` (only those written, i.e. not the default)."""
        return {k: v for k in TEMPLATE_FIELDS if isinstance(v := self.attrs.get(k), str)}

    @property
    def text(self) -> str:
        """The node's text, exactly as added (with the line breaks it ended with)."""
        end = self.attrs.get(TEXT_END)
        return self.body + end if isinstance(end, str) and not end.strip("\r\n") else self.body

    @property
    def intact(self) -> bool:
        """Whether the text is still the one the store wrote (its hash matches the marker's): False for a
        section edited by hand, written by an older version (no hash), or not written by the store at all."""
        recorded = self.attrs.get(CONTENT_HASH)
        return isinstance(recorded, str) and recorded == _content_hash(self.body)


def _link_ok(link: Any) -> bool:
    return isinstance(link, dict) and isinstance(link.get("node_id"), str)


def _link(link: dict[str, Any]) -> dict[str, str]:
    return _strings(link, ("node_id", "node_type", "hash"))


def _strings(value: Mapping[str, Any], keys: Sequence[str]) -> dict[str, str]:
    """The ``keys`` of ``value`` that hold strings (how a marker keeps an image's and a link's fields)."""
    return {k: v for k in keys if isinstance(v := value.get(k), str)}


def node_attrs_ok(attrs: dict[str, Any]) -> bool:
    """Whether a ``node`` record's attributes name a node: a string id, an optional string
    ``ref_doc_id`` and an optional metadata object."""
    ref, meta = attrs.get("ref_doc_id"), attrs.get("metadata")
    return (isinstance(attrs.get("id"), str) and (ref is None or isinstance(ref, str))
            and (meta is None or isinstance(meta, dict)))


def section_of(record: Record) -> Section:
    """The node a ``node`` record holds."""
    return Section(record.kind, record.attrs, record.body, record.open_line, record.close_line)


def render_section(
    node_id: str,
    text: str,
    *,
    ref_doc_id: str | None,
    metadata: dict[str, Any],
    index_text: str = "",
    excluded_embed_metadata_keys: Sequence[str] = (),
    excluded_llm_metadata_keys: Sequence[str] = (),
    templates: Mapping[str, str] | None = None,
    index_id: str | None = None,
    image: Mapping[str, str | None] | None = None,
    relationships: Mapping[str, Any] | None = None,
    char_range: Mapping[str, int | None] | None = None,
) -> str:
    """The Markdown of one node (see :func:`openclaw_memory.files.records.render_record`; ValueError for an
    empty text, a text containing a marker line, or metadata that is not JSON-serializable).

    ``index_text`` (the node's metadata as its embedding sees it) is indexed with the text; it and
    the excluded keys are written only when not empty, ``templates`` (:data:`TEMPLATE_FIELDS`) as given, and
    ``index_id`` for an ``IndexNode``, ``image`` (its :data:`IMAGE_FIELDS`) for an ``ImageNode``, and the node's
    ``relationships`` (:data:`RELATIONSHIPS`) when it has any, and its ``char_range`` offsets (:data:`CHAR_RANGE`)
    that are set.
    """
    attrs: dict[str, Any] = {"id": node_id}
    if ref_doc_id is not None:
        attrs["ref_doc_id"] = ref_doc_id
    if metadata:
        attrs["metadata"] = metadata
    if index_text.strip():
        attrs[RECORD_INDEX_TEXT] = index_text
    if excluded_embed_metadata_keys:
        attrs[EXCLUDED_EMBED] = list(excluded_embed_metadata_keys)
    if excluded_llm_metadata_keys:
        attrs[EXCLUDED_LLM] = list(excluded_llm_metadata_keys)
    attrs.update({k: v for k, v in (templates or {}).items() if k in TEMPLATE_FIELDS})
    if index_id is not None:
        attrs[INDEX_ID] = index_id
    if relationships:
        attrs[RELATIONSHIPS] = dict(relationships)
    if image is not None:
        attrs[IMAGE] = _strings(image, IMAGE_FIELDS)
    attrs.update({k: v for k, v in (char_range or {}).items() if k in CHAR_RANGE and isinstance(v, int)})
    body = text.rstrip("\r\n")  # what the file's section will hold
    if body != text and body.strip():
        attrs[TEXT_END] = text[len(body):]
    attrs[CONTENT_HASH] = _content_hash(body)
    return render_record(KIND, attrs, body, what=f"node {node_id!r}")


def parse_sections(text: str, *, where: str = "") -> list[Section]:
    """Every well-formed section of a file's text, in file order (malformed markers count as
    hand-written text and are logged)."""
    return [section_of(r) for r in parse_records(text, KIND, check=node_attrs_ok, where=where)]


def section_lines(sections: Sequence[Section]) -> set[int]:
    """Line numbers (markers included) that belong to sections."""
    return {n for s in sections for n in range(s.open_line, s.close_line + 1)}


def remove_sections(text: str, should_remove: Callable[[Section], bool], *, where: str = "") -> tuple[str, int]:
    """``text`` without the sections for which ``should_remove`` is true, and how many were removed
    (see :func:`openclaw_memory.files.records.remove_records`)."""
    doomed = [r for r in parse_records(text, KIND, check=node_attrs_ok, where=where) if should_remove(section_of(r))]
    return remove_records(text, doomed), len(doomed)


