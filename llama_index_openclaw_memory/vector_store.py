"""OpenClawVectorStore: an OpenClaw memory workspace as a LlamaIndex vector store.

The Markdown files stay the source of truth. The store is a *view* over them:

* **Hand-written memory** (``MEMORY.md``, ``memory/*.md``, extra paths, indexed transcripts)
  appears as one node per indexed chunk: ``id_`` = chunk id, ``ref_doc_id`` = the file path
  (in a file that also holds sections, the node keeps only the chunk's hand-written lines).
* **Nodes added through the store** (``add``, ``VectorStoreIndex.insert``, ``from_documents``)
  are appended, append-only, to one memory file (``append_path``, default
  ``memory/llamaindex.md``; ``"memory/{date}.md"`` targets today's daily note) as Markdown
  sections that keep their id, ``ref_doc_id``, metadata and excluded metadata keys (see
  :mod:`._sections`). The index is synced right after, so they are searchable by every OpenClaw
  tool too. As in LlamaIndex, a node's metadata takes part in its embedding (and keyword index):
  what ``node.get_metadata_str(MetadataMode.EMBED)`` gives, so ``excluded_embed_metadata_keys``
  keep keys out of search.

What deletes do: ``delete``, ``delete_nodes`` and ``clear`` remove only sections the store
wrote, as it wrote them: each section records the hash of its text, and one whose text no
longer matches (edited by hand, written by an older version, or marker lines not written by the
store) is left in place. A request that would remove hand-written memory or such a section raises
:class:`ProtectedMemoryError` and changes nothing (``clear`` leaves them and logs a warning);
edit those files yourself. Marker lines in text appended by anything else (notes, flushes) are
escaped when written, so they never open a section.

Embeddings: the memory index embeds the Markdown with its own provider, and the embeddings that
arrive on added nodes are not stored. Give the store the embed model your index uses
(``from_workspace(..., embed_model=...)``) or give the index the store's provider
(``OpenClawMemoryEmbedding(store.memory.provider)``), so query embeddings are in the same space.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import BaseNode, ImageNode, IndexNode, MetadataMode, TextNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from openclaw_memory import MemoryIndex
from openclaw_memory.files.append import normalize_rel_path, today
from openclaw_memory.text.citations import format_citation
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import (
    MemoryArgumentError,
    MemoryArgumentTypeError,
    OpenClawMemoryError,
    ProtectedMemoryError,
)
from openclaw_memory.providers.base import normalize_vectors
from openclaw_memory.types import SearchHit

from llama_index_openclaw_memory._convert import (
    check_memory_index,
    chunk_node,
    hit_chunk_node,
    node_matches,
    own_excluded_keys,
    own_metadata,
    own_templates,
    relationship_attrs,
    section_node,
)
from llama_index_openclaw_memory._files import SectionFiles
from llama_index_openclaw_memory._sections import IMAGE_FIELDS, Section, render_section
from llama_index_openclaw_memory.embeddings import LlamaIndexEmbeddingProvider

__all__ = ["DEFAULT_APPEND_PATH", "OpenClawVectorStore", "ProtectedMemoryError"]

log = logging.getLogger(__name__)

#: Where added nodes are written unless ``append_path`` says otherwise.
DEFAULT_APPEND_PATH = "memory/llamaindex.md"
_UNSET: Any = object()
# A query embedding this close to the memory's own embedding of the same text is from the same model.
_SAME_MODEL_COSINE = 0.98
_SUPPORTED_MODES = ("default", "hybrid", "text_search", "sparse", "mmr")




def _provider_option(embed_model: BaseEmbedding | None, provider: Any) -> dict[str, Any]:
    """The ``provider=`` a :class:`MemoryIndex` is opened with for ``embed_model`` or ``provider`` (none: the
    configured one)."""
    if embed_model is not None and provider is not _UNSET:
        raise MemoryArgumentError("pass either embed_model or provider, not both")
    if embed_model is not None:
        return {"provider": LlamaIndexEmbeddingProvider(embed_model)}
    return {} if provider is _UNSET else {"provider": provider}


def _image_fields(node: ImageNode) -> dict[str, str | None]:
    """The image path / url / MIME type an ``ImageNode``'s section keeps; warns that base64 image data is not
    kept (Markdown memory holds text: give the node an ``image_path`` or ``image_url``)."""
    if node.image:
        warnings.warn(
            f"ImageNode {node.node_id!r}: its base64 image data is not written to Markdown memory (only its text, "
            "image_path, image_url and image_mimetype are); save the image to a file and set image_path or "
            "image_url to get it back", UserWarning, stacklevel=4,
        )
    return {field: getattr(node, field) for field in IMAGE_FIELDS}


class OpenClawVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store over an OpenClaw memory workspace (Markdown + SQLite hybrid index).

    Query modes: ``DEFAULT`` (dense similarity; the memory's provider embeds ``query_str`` when no
    embedding is given, keyword search when it has none; while the bundled model's fast first index
    is live, its hybrid merge, see :mod:`openclaw_memory.indexing.two_tier`), ``HYBRID`` (``alpha`` = vector weight,
    ``1 - alpha`` = keyword weight; ``hybrid_top_k`` overrides ``similarity_top_k``),
    ``TEXT_SEARCH``/``SPARSE`` (keywords only) and ``MMR`` (``mmr_threshold`` = lambda, on the query or, as
    LlamaIndex's retriever passes it, in ``vector_store_kwargs``). Filters:
    ``MetadataFilters`` on any metadata key (``path``, ``source``, ``date``, ``start_line`` …,
    plus the metadata of added nodes) and, as in LlamaIndex's stores, on ``ref_doc_id`` / ``doc_id`` /
    ``document_id`` (the node's source document), nested and with AND/OR/NOT; ``doc_ids`` and ``node_ids``
    (an empty list means no restriction). Each returned node's similarity is the score of the best
    indexed chunk that covers it (each node the store wrote is chunked on its own, so it has its
    own score). The query mode decides MMR; temporal decay follows the memory's configuration. Filters
    apply to the candidates the core search returns (at most 200 per side), so on a very large
    memory a narrow filter can return fewer than ``similarity_top_k`` nodes.

    Example:
        >>> store = OpenClawVectorStore.from_workspace("~/notes", embed_model=embed_model)      # doctest: +SKIP
        >>> index = VectorStoreIndex.from_vector_store(store, embed_model=embed_model)         # doctest: +SKIP
        >>> index.as_retriever(vector_store_query_mode="hybrid", alpha=0.7).retrieve("db?")   # doctest: +SKIP
    """

    stores_text: bool = True
    is_embedding_query: bool = True
    append_path: str = Field(
        default=DEFAULT_APPEND_PATH,
        description="Workspace-relative Markdown file added nodes are appended to; '{date}' becomes today's date.",
    )
    min_score: float = Field(
        default=0.0, ge=0.0, le=1.0,
        description="Score floor for query results (LlamaIndex expects plain top-k, hence 0).",
    )

    _memory: MemoryIndex = PrivateAttr()
    _close_memory: bool = PrivateAttr(default=False)
    _files: SectionFiles = PrivateAttr()
    _warned_model: bool = PrivateAttr(default=False)
    # whether callers' query embeddings come from the memory's model: checked once, on the first query with text
    _same_model: bool | None = PrivateAttr(default=None)

    def __init__(
        self,
        memory: MemoryIndex,
        *,
        append_path: str = DEFAULT_APPEND_PATH,
        min_score: float = 0.0,
        close_memory: bool = False,
    ) -> None:
        """Wrap ``memory``; ``close_memory`` makes :meth:`close` close it too."""
        check_memory_index(memory)
        super().__init__(append_path=append_path, min_score=min_score)
        self._memory = memory
        self._close_memory = close_memory
        self._files = SectionFiles(memory)
        self._target_rel()  # validate now, not at the first add

    @classmethod
    def from_workspace(
        cls,
        workspace: str | os.PathLike[str],
        *,
        embed_model: BaseEmbedding | None = None,
        provider: Any = _UNSET,
        append_path: str = DEFAULT_APPEND_PATH,
        min_score: float = 0.0,
        **memory_options: Any,
    ) -> OpenClawVectorStore:
        """Open a memory index on ``workspace`` and wrap it (the store closes it on :meth:`close`).

        Args:
            workspace: The directory holding ``MEMORY.md`` and ``memory/``.
            embed_model: A LlamaIndex embedding model the memory index should embed with
                (recommended: the same one the ``VectorStoreIndex`` uses).
            provider: An openclaw-memory provider or None (keyword-only) instead of
                ``embed_model``; by default the configured provider (``auto``).
            append_path: See the class docstring.
            min_score: Score floor for query results.
            **memory_options: Passed to :class:`openclaw_memory.MemoryIndex` (``store={"path": ...}``,
                ``watch=False``, ``query={...}`` …).
        """
        memory = MemoryIndex(workspace=workspace, **memory_options, **_provider_option(embed_model, provider))
        try:
            return cls(memory, append_path=append_path, min_score=min_score, close_memory=True)
        except Exception:
            memory.close()
            raise

    @classmethod
    def class_name(cls) -> str:
        return "OpenClawVectorStore"

    def to_dict(self, **kwargs: Any) -> dict[str, Any]:
        """The store's settings and its memory index's configuration (JSON-safe, without secrets: see
        :meth:`~openclaw_memory.config.MemoryConfig.without_secrets`). ``from_dict`` opens a new index from it;
        an embedding provider given as an object (not by name in the configuration) is not serialised: pass it
        back, ``from_dict(data, embed_model=...)`` or ``provider=...``."""
        data = super().to_dict(**kwargs)
        data["memory_config"] = self._memory.config.without_secrets()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], **kwargs: Any) -> OpenClawVectorStore:
        """Rebuild a store from :meth:`to_dict` (it owns and closes the index it opens).

        Keyword arguments: ``append_path`` / ``min_score`` override the saved ones; ``embed_model`` or ``provider``
        (as in :meth:`from_workspace`) give back an embedding model that was an object (not serialised; without
        them the copy embeds with the configured provider, and an index built with another model is rebuilt);
        ``remote={"headers": {...}}`` (or any other ``remote`` setting) is applied to the configuration. Secrets
        were not written: the API key comes from the environment again. Raises TypeError for any other keyword.
        """
        unknown = sorted(set(kwargs) - {"append_path", "min_score", "embed_model", "provider", "remote"})
        if unknown:
            raise MemoryArgumentTypeError(f"from_dict() got unexpected keyword argument(s) {', '.join(unknown)}; "
                                          "it takes append_path, min_score, embed_model, provider and remote")
        remote = kwargs.pop("remote", None)
        model = _provider_option(kwargs.pop("embed_model", None), kwargs.pop("provider", _UNSET))
        data = {**data, **kwargs}
        config = data.get("memory_config")
        if config is None:
            raise MemoryArgumentError("from_dict needs the 'memory_config' that OpenClawVectorStore.to_dict() writes")
        known = {k: data[k] for k in ("append_path", "min_score") if k in data}
        memory = MemoryIndex(MemoryConfig.load(config, **({"remote": remote} if remote else {})), **model)
        try:
            return cls(memory, close_memory=True, **known)
        except Exception:
            memory.close()
            raise

    @property
    def embed_model(self) -> BaseEmbedding:
        """A LlamaIndex embed model in this store's vector space (the memory index's own provider),
        for ``VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)``. Raises
        ValueError when the memory index is keyword-only."""
        from llama_index_openclaw_memory.embeddings import OpenClawMemoryEmbedding

        provider = self._memory.provider
        if provider is None:
            raise MemoryArgumentError(
                "this memory index has no embedding provider (keyword-only); query it with "
                "vector_store_query_mode='text_search', or open it with a provider / embed_model"
            )
        return OpenClawMemoryEmbedding(provider)

    @property
    def client(self) -> MemoryIndex:
        """The wrapped :class:`openclaw_memory.MemoryIndex`."""
        return self._memory

    @property
    def memory(self) -> MemoryIndex:
        """The wrapped :class:`openclaw_memory.MemoryIndex`."""
        return self._memory

    def close(self) -> None:
        """Close the memory index if this store opened it (``from_workspace``)."""
        if self._close_memory:
            self._memory.close()

    # ---- files and sections --------------------------------------------------------------------

    def _target_rel(self) -> str:
        """``append_path`` for today, validated: MEMORY.md or a Markdown file under memory/."""
        ws = self._memory.workspace
        raw = self.append_path.replace("{date}", today(self._memory.config.timezone).isoformat())
        rel = normalize_rel_path(ws, raw)
        if "{" in rel or "}" in rel or not (rel == "MEMORY.md" or (rel.startswith("memory/") and rel.endswith(".md"))):
            raise MemoryArgumentError(
                f"append_path must be MEMORY.md or a Markdown file under memory/ (for example "
                f"{DEFAULT_APPEND_PATH!r} or 'memory/{{date}}.md') so what the store writes gets indexed; "
                f"got {self.append_path!r}"
            )
        return rel

    def _remove(self, should_remove: Callable[[str, Section], bool]) -> int:
        """Remove the sections ``should_remove`` picks whose text is still what the store wrote (checked
        under the file's lock); the others stay, named in a warning. How many were removed."""
        left: set[str] = set()

        def intact(rel: str, section: Section) -> bool:
            if not should_remove(rel, section):
                return False
            if not section.intact:
                left.add(format_citation(rel, section.open_line, section.close_line))
            return section.intact

        removed = self._files.remove(intact, extra=[self._target_rel()])
        if left:
            log.warning(
                "left %d section(s) in place (%s): their text is not what the store wrote (edited by hand, written "
                "by an older version, or not written by the store); edit or remove those lines yourself",
                len(left), ", ".join(sorted(left)[:5]),
            )
        if removed:
            self._memory.sync(reason="llamaindex delete")
        return removed

    def _refuse_changed(self, pick: Callable[[str, Section], bool], action: str) -> None:
        """Raise ProtectedMemoryError (nothing changed) when a section ``pick`` selects no longer holds the
        text the store wrote."""
        changed = [
            format_citation(rel, s.open_line, s.close_line)
            for rel, sections in self._files.all_sections(extra=[self._target_rel()]).items()
            for s in sections if pick(rel, s) and not s.intact
        ]
        if changed:
            raise ProtectedMemoryError(
                f"refusing to {action}: {len(changed)} section(s) ({', '.join(changed[:3])}) no longer hold the text "
                "the store wrote (edited by hand, written by an older version, or not written by the store); "
                "nothing was changed. Edit or remove those lines yourself."
            )

    def _view(self) -> list[tuple[TextNode, bool]]:
        """Every node, and whether the store may delete it: sections (True while their text is what the
        store wrote) and chunks of hand-written text (False), in file order."""
        self._refresh()
        out: list[tuple[tuple[str, int], TextNode, bool]] = []
        for rel, sections in self._files.all_sections(extra=[self._target_rel()]).items():
            out.extend(((rel, s.start_line), section_node(s, rel), s.intact) for s in sections)
        for chunk in self._memory.iter_chunks():
            parsed = self._files.read(chunk.path) if chunk.source == "memory" else None
            if parsed is None or not parsed.sections:
                out.append(((chunk.path, chunk.start_line), chunk_node(chunk), False))
            elif (own := parsed.own_text(chunk.start_line, chunk.end_line)) is not None:
                out.append(((chunk.path, own[0]), chunk_node(chunk, own), False))
        out.sort(key=lambda item: item[0])  # by location: a node's own metadata may name another path
        return [(node, writable) for _, node, writable in out]

    def _refresh(self) -> None:
        """Make queries see the current Markdown: the core's freshness check, then wait for the sync."""
        if self._memory.ensure_fresh() or self._memory.dirty:
            try:
                self._memory.sync(reason="llamaindex query")
            except OpenClawMemoryError as exc:  # the previous index still answers
                log.warning("memory sync before the query failed: %s", exc)

    # ---- writes -----------------------------------------------------------------------------------

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Append ``nodes`` as Markdown sections to ``append_path``, sync, and return their ids.

        A node whose id the store already wrote is replaced (its old section is removed first).
        Node embeddings are not kept: the memory index embeds the Markdown itself.
        Raises ValueError for a node without text or with non-JSON metadata, and ProtectedMemoryError
        when the section to replace no longer holds the text the store wrote (nothing is written).
        """
        if not nodes:
            return []
        self._check_node_embeddings(nodes)
        ids = [n.node_id for n in nodes]
        if len(set(ids)) != len(ids):
            raise MemoryArgumentError("add() got the same node id twice; node ids must be unique")
        rendered = [self._render(n) for n in nodes]
        rel = self._target_rel()
        wanted = set(ids)
        self._refuse_changed(lambda _rel, s: s.id in wanted, "replace the nodes added before with these ids")
        self._files.remove(lambda _rel, s: s.id in wanted and s.intact, extra=[rel])  # re-adding an id replaces it
        self._files.append(rel, rendered)
        self._memory.sync(reason="llamaindex add")
        log.info("appended %d node(s) to %s", len(nodes), rel)
        return ids

    @staticmethod
    def _render(node: BaseNode) -> str:
        """A node's section: its text, own metadata and excluded keys, and (as the text indexed with it)
        its metadata as its embedding sees it (``get_metadata_str(MetadataMode.EMBED)``)."""
        own = own_metadata(node)
        return render_section(
            node.node_id,
            node.get_content(metadata_mode=MetadataMode.NONE),
            ref_doc_id=node.ref_doc_id,
            metadata=own,
            index_text=node.model_copy(update={"metadata": own}).get_metadata_str(MetadataMode.EMBED),
            excluded_embed_metadata_keys=own_excluded_keys(node.excluded_embed_metadata_keys, own),
            excluded_llm_metadata_keys=own_excluded_keys(node.excluded_llm_metadata_keys, own),
            templates=own_templates(node),
            index_id=node.index_id if isinstance(node, IndexNode) else None,
            image=_image_fields(node) if isinstance(node, ImageNode) else None,
            relationships=relationship_attrs(node),
            char_range={"start_char_idx": node.start_char_idx, "end_char_idx": node.end_char_idx},
        )

    def _check_node_embeddings(self, nodes: Sequence[BaseNode]) -> None:
        """Refuse nodes embedded in another vector space (another dimension): the index that sent
        them embeds its queries with that model too, and those queries could not be answered."""
        provider = self._memory.provider
        dims = provider.dims if provider is not None else None
        if dims is None:
            return
        for node in nodes:
            if node.embedding is not None and len(node.embedding) != dims:
                raise MemoryArgumentError(
                    f"node {node.node_id!r} was embedded with {len(node.embedding)} dimensions but the memory index "
                    f"embeds with {provider.id}:{provider.model} ({dims} dimensions). Give the index this store's "
                    "model: VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)"
                )

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Remove every node of source document ``ref_doc_id`` that the store wrote.

        A section without its own source document belongs to its file, so passing that file's path
        removes it. Raises ProtectedMemoryError (removing nothing) when ``ref_doc_id`` names an indexed
        file that holds no section of that document (hand-written memory), or when a section of it no
        longer holds the text the store wrote. An unknown id is a no-op.
        """
        def of_document(rel: str, section: Section) -> bool:
            return (section.ref_doc_id or rel) == ref_doc_id

        self._refuse_changed(of_document, f"delete the nodes of {ref_doc_id!r}")
        removed = self._remove(of_document)
        if removed:
            return
        if ref_doc_id in self._memory.indexed_files():
            raise ProtectedMemoryError(
                f"refusing to delete {ref_doc_id!r}: it holds hand-written memory that this store did not write. "
                "Only nodes added through OpenClawVectorStore can be deleted; edit or remove the file yourself."
            )
        log.debug("delete(%r): no node of that document; nothing to do", ref_doc_id)

    def delete_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None, **delete_kwargs: Any
    ) -> None:
        """Remove the nodes matching ``node_ids`` and ``filters`` (both must match when both are given).

        Raises ValueError when neither is given, and ProtectedMemoryError (removing nothing) when any
        match is hand-written memory. Unknown ids are ignored; an empty ``node_ids`` deletes nothing,
        with filters or without.
        """
        if node_ids is None and filters is None:
            raise MemoryArgumentError("delete_nodes needs node_ids or filters; clear() removes every node this store "
                                      "wrote")
        if node_ids is not None and not node_ids:
            return
        targets = self._select(self._view(), node_ids, filters)
        protected = [n for n, written in targets if not written]
        if protected:
            where = ", ".join(sorted({format_citation(n.metadata["path"], n.metadata["start_line"], n.metadata["end_line"]) for n in protected})[:3])
            raise ProtectedMemoryError(
                f"refusing to delete {len(protected)} node(s) of hand-written memory ({where}); nothing was deleted. "
                "Only nodes added through OpenClawVectorStore, with the text it wrote, can be deleted (a section "
                "edited by hand counts as hand-written); narrow node_ids/filters."
            )
        doomed = {n.node_id for n, _ in targets}
        if doomed:
            self._remove(lambda _rel, s: s.id in doomed)

    def clear(self) -> None:
        """Remove every node the store wrote, in every memory file. Hand-written memory is untouched, and so
        is a section whose text is no longer what the store wrote (a warning names it)."""
        self._remove(lambda _rel, _s: True)

    def get_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        """Nodes by id and/or metadata filters (all nodes when neither is given), in file order."""
        return [n for n, _ in self._select(self._view(), node_ids, filters)]

    @staticmethod
    def _select(
        view: list[tuple[TextNode, bool]], node_ids: list[str] | None, filters: MetadataFilters | None
    ) -> list[tuple[TextNode, bool]]:
        wanted = set(node_ids) if node_ids else None
        return [
            (n, w) for n, w in view
            if (wanted is None or n.node_id in wanted) and node_matches(n, filters)
        ]

    # ---- query ------------------------------------------------------------------------------------

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """Search the memory; see the class docstring for modes and filters. ``mmr_threshold`` may come as a keyword
        too, as LlamaIndex's retriever passes it (``vector_store_kwargs={"mmr_threshold": ...}``)."""
        if query.mmr_threshold is None and kwargs.get("mmr_threshold") is not None:
            query = dataclasses.replace(query, mmr_threshold=kwargs["mmr_threshold"])
        mode = VectorStoreQueryMode(query.mode)
        if mode.value not in _SUPPORTED_MODES:
            raise MemoryArgumentError(
                f"query mode {mode.value!r} is not supported by OpenClawVectorStore; "
                f"use one of {', '.join(_SUPPORTED_MODES)}"
            )
        text = (query.query_str or "").strip()
        if not text and (mode != VectorStoreQueryMode.DEFAULT or query.query_embedding is None):
            raise MemoryArgumentError(
                f"a {mode.value} query needs query_str"
                + (" or query_embedding" if mode == VectorStoreQueryMode.DEFAULT else "")
                + " (the keyword side of the memory index searches the text)"
            )
        top_k = query.similarity_top_k
        if mode == VectorStoreQueryMode.HYBRID and query.hybrid_top_k:
            top_k = query.hybrid_top_k
        elif mode == VectorStoreQueryMode.SPARSE and query.sparse_top_k:
            top_k = query.sparse_top_k
        if top_k < 1:
            raise MemoryArgumentError(f"similarity_top_k must be at least 1, got {top_k}")
        self._refresh()
        return self._search(query, mode, text, top_k)

    def _query_vector(self, embedding: list[float], text: str = "") -> np.ndarray:
        provider = self._memory.provider
        if provider is None:
            raise MemoryArgumentError(
                "this memory index has no embedding provider (keyword-only), so it holds no vectors; "
                "use TEXT_SEARCH mode, or build the store with embed_model=... / a provider"
            )
        dims = provider.dims
        if dims is not None and len(embedding) != dims:
            raise MemoryArgumentError(
                f"the query embedding has {len(embedding)} dimensions but the memory index stores {dims}-dimensional "
                f"vectors from {provider.id}:{provider.model}. Use the same embedding model for the index and the "
                "store: OpenClawVectorStore.from_workspace(..., embed_model=<your model>) or "
                "VectorStoreIndex.from_vector_store(store, embed_model=OpenClawMemoryEmbedding(store.memory.provider)) "
                "(or embed_model=store.embed_model)"
            )
        vector = normalize_vectors([embedding], expected_dims=dims, who="query_embedding")[0]
        if text and self._same_model is not True:  # same dimension, another model? Checked once, on the
            # first query with text (an embedding call), by comparing with the memory's own embedding of it.
            own = normalize_vectors([provider.embed_query(text)], expected_dims=dims, who="query")[0]
            if self._same_model is None:
                self._same_model = float(np.dot(vector, own)) >= _SAME_MODEL_COSINE
            if not self._same_model:
                if not self._warned_model:
                    self._warned_model = True
                    log.warning(
                        "the query embedding does not come from the memory index's model (%s:%s): same dimension, "
                        "another vector space. The store searches with its own embedding of the query text instead; "
                        "give the index this store's model: VectorStoreIndex.from_vector_store(store, "
                        "embed_model=store.embed_model)", provider.id, provider.model,
                    )
                return own
        return vector

    def _search_options(self, query: VectorStoreQuery, mode: VectorStoreQueryMode) -> dict[str, Any]:
        """The LlamaIndex query mode as :meth:`MemoryIndex.search` options."""
        if mode in (VectorStoreQueryMode.TEXT_SEARCH, VectorStoreQueryMode.SPARSE):
            return {"mode": "keyword", "mmr": False}
        if mode == VectorStoreQueryMode.DEFAULT:
            return {"mode": "vector", "mmr": False}
        alpha = query.alpha
        if alpha is not None and not 0.0 <= alpha <= 1.0:
            raise MemoryArgumentError(f"alpha must be between 0 (keywords only) and 1 (vectors only), got {alpha}")
        mmr: bool | float = False
        if mode == VectorStoreQueryMode.MMR:
            mmr = True if query.mmr_threshold is None else float(query.mmr_threshold)
            if not isinstance(mmr, bool) and not 0.0 <= mmr <= 1.0:
                raise MemoryArgumentError(f"mmr_threshold (MMR lambda) must be between 0 and 1, got {mmr}")
        return {"mode": "hybrid", "vector_weight": alpha, "mmr": mmr}

    def _nodes_for(self, hits: Sequence[SearchHit]) -> list[tuple[TextNode, float]]:
        """Map chunk hits to nodes: the sections a chunk covers, and the chunk's hand-written lines
        when it has any. First (best) occurrence wins."""
        out: list[tuple[TextNode, float]] = []
        seen: set[str] = set()

        def emit(node: TextNode, score: float) -> None:
            if node.node_id not in seen:
                seen.add(node.node_id)
                out.append((node, score))

        for h in hits:
            parsed = self._files.read(h.path) if h.source == "memory" else None
            if parsed is None or not parsed.sections:
                emit(hit_chunk_node(h), h.score)
                continue
            for s in parsed.sections:
                if h.start_line <= s.end_line and h.end_line >= s.start_line:
                    emit(section_node(s, h.path), h.score)
            if (own := parsed.own_text(h.start_line, h.end_line)) is not None:
                emit(hit_chunk_node(h, own), h.score)
        return out

    def _search(self, query: VectorStoreQuery, mode: VectorStoreQueryMode, text: str, top_k: int) -> VectorStoreQueryResult:
        qv = self._query_vector(query.query_embedding, text) if query.query_embedding is not None and mode not in (
            VectorStoreQueryMode.TEXT_SEARCH, VectorStoreQueryMode.SPARSE) else None
        doc_ids = set(query.doc_ids) if query.doc_ids else None
        node_ids = set(query.node_ids) if query.node_ids else None

        def wanted(node: TextNode) -> bool:
            return ((doc_ids is None or node.ref_doc_id in doc_ids)
                    and (node_ids is None or node.node_id in node_ids)
                    and node_matches(node, query.filters))

        def node_ids_of(hit: SearchHit) -> tuple[str, ...]:
            return tuple(n.node_id for n, _ in self._nodes_for([hit]) if wanted(n))

        # a node's text can span several chunks: the search counts each node once (its best chunk)
        result = self._memory.search(
            text, max_results=top_k, min_score=self.min_score, query_vector=qv,
            where=lambda hit: bool(node_ids_of(hit)), collapse=node_ids_of, **self._search_options(query, mode),
        )
        if result.mode == "keyword" and mode not in (VectorStoreQueryMode.TEXT_SEARCH, VectorStoreQueryMode.SPARSE):
            log.info("memory query ran keyword-only: %s", result.keyword_only_reason)
        chosen = [(n, score) for n, score in self._nodes_for(result.hits) if wanted(n)][:top_k]
        return VectorStoreQueryResult(
            nodes=[node for node, _ in chosen],
            similarities=[float(score) for _, score in chosen],
            ids=[node.node_id for node, _ in chosen],
        )

    # ---- async twins --------------------------------------------------------------------------------

    async def async_add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        """Async twin of :meth:`add`."""
        return await asyncio.to_thread(self.add, nodes, **kwargs)

    async def adelete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Async twin of :meth:`delete`."""
        await asyncio.to_thread(self.delete, ref_doc_id, **delete_kwargs)

    async def adelete_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None, **delete_kwargs: Any
    ) -> None:
        """Async twin of :meth:`delete_nodes`."""
        await asyncio.to_thread(self.delete_nodes, node_ids, filters, **delete_kwargs)

    async def aclear(self) -> None:
        """Async twin of :meth:`clear`."""
        await asyncio.to_thread(self.clear)

    async def aget_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        """Async twin of :meth:`get_nodes`."""
        return await asyncio.to_thread(self.get_nodes, node_ids, filters)

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """Async twin of :meth:`query`."""
        return await asyncio.to_thread(self.query, query, **kwargs)

