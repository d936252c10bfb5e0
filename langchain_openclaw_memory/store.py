"""``OpenClawMemoryStore``: Markdown memory as a LangGraph ``BaseStore``.

Two kinds of namespace:

* **Memory files** — ``(root, agent_id)``, one per memory index: keys are workspace-relative
  memory file paths (``MEMORY.md``, ``memory/2026-01-16.md``); ``put`` *appends* Markdown
  (``{"text": ...}``) and never rewrites or deletes a hand-written file. A write to ``(root, name)`` where
  ``name`` is no memory's is refused (MemoryArgumentError): items go in other namespaces.
* **Items** — any other namespace, used as LangGraph's docs show
  (``store.put(("users", "u1", "memories"), str(uuid4()), {"data": "likes pizza"})``): each
  namespace is a Markdown file ``memory/store/users/u1/memories.md`` of the (first) memory, each
  item a record in it holding the whole JSON value (every field is kept). ``put`` of the same key
  replaces the item, ``delete`` removes it (only records the store wrote are ever rewritten; a new namespace
  differing only in letter case from an existing one is refused, as macOS and Windows would share its file),
  ``get`` returns the value with its created/updated times, and ``search(prefix, query=...)``
  ranks items with the hybrid memory search (each item is chunked on its own). Which part of a value is
  embedded and keyword-indexed follows LangGraph's stores: the whole value by default, the fields / JSON paths
  of the store's ``index={"fields": [...]}`` or of ``put(..., index=[...])``, and nothing for
  ``put(..., index=False)`` (such an item is found by ``get`` and by listing, never ranked by a query: as in
  LangGraph's ``InMemoryStore`` it follows the ranked items with ``score=None``). Several paths' texts are joined into
  one embedded text (LangGraph embeds each and keeps an item's best score). ``ttl`` is not
  supported (``supports_ttl = False``: LangGraph raises for a ``ttl``); Markdown memory does not
  expire.

``search(query=...)`` is the hybrid memory search; without a query it lists files / items. As in LangGraph's
``InMemoryStore``, a query ranks with no score floor (``min_score`` sets one), ``filter`` is applied before
``limit`` / ``offset``, each ``(namespace, key)`` is returned once (a file's best chunk), and the files and items
the query does not rank (no word matched on a keyword-only memory, ``index=False``) follow the ranked ones in
listing order with ``score=None`` (not with a score floor).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import operator
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from openclaw_memory.files import discovery
from openclaw_memory.files.append import append_memory
from openclaw_memory.text.citations import strip_citation_footer
from openclaw_memory.errors import MemoryArgumentError, MemoryArgumentTypeError, MemoryPathError
from openclaw_memory.index import MemoryIndex
from openclaw_memory.index.search_options import check_search_arguments
from openclaw_memory.types import SearchHit

from langchain_openclaw_memory._convert import check_memory_index
from langchain_openclaw_memory._items import (
    StoreItem,
    case_twin,
    check_case_twin,
    delete_item,
    index_text,
    move_tool_folder_labels,
    namespace_file,
    namespace_files,
    namespace_of,
    read_items,
    upsert_item,
)

__all__ = ["OpenClawMemoryStore"]

log = logging.getLogger(__name__)

_KEY_HINT = "store keys are memory file paths such as 'MEMORY.md' or 'memory/2026-01-16.md'"
#: What a store search looks in: the memory files (items are records in them), never session transcripts.
_MEMORY_FILES = ("memory",)


def _check_dims(dims: object, memories: Mapping[str, MemoryIndex]) -> None:
    """Accept LangGraph's ``index["dims"]`` when it is each memory's embedding dimension (or that is not known yet:
    the provider learns it from its first vector); ValueError when it is another number."""
    if not isinstance(dims, int) or isinstance(dims, bool) or dims < 1:
        raise MemoryArgumentError(f"OpenClawMemoryStore(index=...): 'dims' must be a positive integer, got {dims!r}")
    for name, memory in memories.items():
        provider = memory.provider
        known = provider.dims if provider is not None else None
        if known is not None and known != dims:
            raise MemoryArgumentError(
                f"OpenClawMemoryStore(index=...): 'dims' is {dims}, but memory {name!r} embeds with "
                f"{provider.id}:{provider.model}, which gives {known}-dimensional vectors; drop 'dims' (the "
                "memory's provider sets the dimension) or configure the MemoryIndex with the model you mean"
            )


def _check_agent_label(agent_id: str) -> None:
    """ValueError when a memory's agent id cannot be its namespace label (LangGraph labels hold no '.'), naming
    the mapping that labels it instead."""
    if "." in agent_id:
        label = agent_id.replace(".", "_")
        raise MemoryArgumentError(
            f"the memory's agent id {agent_id!r} cannot be a LangGraph namespace label (labels must not contain "
            f"'.'); name its namespace yourself: OpenClawMemoryStore({{{label!r}: memory}})"
        )


def _writable(rel: str) -> bool:
    return rel in ("MEMORY.md", "memory.md") or (rel.startswith("memory/") and rel.endswith(".md"))


def _mtime(path: Path) -> datetime:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
    except OSError:
        return datetime.now(timezone.utc)


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def _number(value: Any) -> float | None:
    """``value`` as a number, as LangGraph's ``InMemoryStore`` compares it (``float(value)``); None if it is none."""
    if value is None or isinstance(value, (dict, list, tuple)):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _ordered(compare: Callable[[Any, Any], bool], value: Any, expected: Any) -> bool:
    """``$gt $gte $lt $lte``: numbers (a number written as a string too) as numbers, like ``InMemoryStore``;
    otherwise values of one type (strings, dates as ISO text) as Python orders them; anything else matches not."""
    left, right = _number(value), _number(expected)
    if left is not None and right is not None:
        return compare(left, right)
    if value is None or type(value) is not type(expected):
        return False
    try:
        return bool(compare(value, expected))
    except TypeError:
        return False


def _operators_match(value: Any, condition: Mapping[str, Any]) -> bool:
    """Whether ``value`` passes every ``$eq $ne $gt $gte $lt $lte`` of ``condition``."""
    for op, expected in condition.items():
        compare = _OPERATORS.get(op)
        if compare is None:
            raise MemoryArgumentError(f"unsupported filter operator {op!r}; use one of {', '.join(_OPERATORS)}")
        passed = compare(value, expected) if op in ("$eq", "$ne") else _ordered(compare, value, expected)
        if not passed:
            return False
    return True


def _matches(value: Any, condition: Any) -> bool:
    """LangGraph filter semantics (as its ``InMemoryStore`` and PostgreSQL's JSONB containment): a dict of
    ``$eq $ne $gt $gte $lt $lte``, a nested object matched by the keys it names, a list element by element, or
    an exact match."""
    if isinstance(condition, Mapping):
        if any(str(k).startswith("$") for k in condition):
            return _operators_match(value, condition)
        return isinstance(value, Mapping) and all(_matches(value.get(k), c) for k, c in condition.items())
    if isinstance(condition, (list, tuple)):
        return (isinstance(value, (list, tuple)) and len(value) == len(condition)
                and all(_matches(v, c) for v, c in zip(value, condition, strict=True)))
    return bool(value == condition)


def _passes(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """Whether an item's value passes a LangGraph search ``filter`` (every key's condition)."""
    return all(_matches(value.get(k), c) for k, c in (conditions or {}).items())


def _filtered(items: list[SearchItem], conditions: Mapping[str, Any] | None) -> list[SearchItem]:
    return [i for i in items if _passes(i.value, conditions)] if conditions else items


def _item_key(found: tuple[tuple[str, ...], StoreItem] | None) -> tuple[tuple[str, ...], str] | None:
    return None if found is None else (found[0], found[1].key)


def _file_value(hit: SearchHit) -> dict[str, Any]:
    """The value of a memory file's search item: the hit's snippet, where it is and how it scored."""
    return {
        "text": strip_citation_footer(hit.snippet, hit.citation),
        "path": hit.path,
        "start_line": hit.start_line,
        "end_line": hit.end_line,
        "source": hit.source,
        "citation": hit.citation,
        "vector_score": hit.vector_score,
        "text_score": hit.text_score,
    }


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


class OpenClawMemoryStore(BaseStore):
    """A LangGraph store over one or more OpenClaw memory workspaces.

    Args:
        memories: One ``MemoryIndex`` (namespace ``(root, config.agent_id)``) or a mapping
            ``{name: MemoryIndex}`` (namespaces ``(root, name)``).
        root: First namespace label.
        min_score: Score floor of ``search``, 0..1 (anything else raises MemoryArgumentError). Default 0: like
            LangGraph's ``InMemoryStore``, a search ranks every match and returns it with its ``score``, no
            threshold unless asked, then what it does not rank with ``score=None``; None: ``query.min_score`` of
            each memory config (a floor: only ranked results).
        index: LangGraph's index configuration, of which only ``fields`` applies: the fields / JSON paths of an
            item's value that are embedded and keyword-indexed when ``put`` gives no ``index`` (default: the
            whole value). The memory's own embedding provider embeds them: ``dims`` (as LangGraph's configs carry
            it) must equal its dimension or ValueError (accepted while the provider does not know it yet), and
            ``embed`` is ignored with a ``UserWarning``. Other keys raise ValueError.
            Memory files (the ``(root, name)`` namespaces) are Markdown, indexed whole.

    Example:
        ```python
        store = OpenClawMemoryStore(memory)            # namespace ("memory", "main")
        store.put(("memory", "main"), "memory/2026-01-16.md", {"text": "- Chose SQLite."})
        hits = store.search(("memory",), query="which database?")
        agent = create_agent(model, tools, store=store)
        ```
    """

    def __init__(
        self,
        memories: MemoryIndex | Mapping[str, MemoryIndex],
        *,
        root: str = "memory",
        min_score: float | None = 0.0,
        index: IndexConfig | None = None,
    ) -> None:
        check_search_arguments(min_score=min_score)  # MemoryArgumentError now, not at the first search
        extra = sorted(set(index or {}) - {"fields", "dims", "embed"})
        if extra:
            raise MemoryArgumentError(
                f"OpenClawMemoryStore(index=...) takes only 'fields' ('dims' and 'embed' as LangGraph's configs carry "
                f"them), got {extra}: items are embedded by the memory's embedding provider; choose it (and its "
                "dimensions) in the MemoryIndex configuration"
            )
        fields = (index or {}).get("fields")
        #: the fields / JSON paths an item is indexed by when ``put`` gives no ``index`` (None: the whole value)
        self.index_fields: list[str] | None = list(fields) if fields else None  # [] too, as LangGraph reads it
        if isinstance(memories, MemoryIndex):
            _check_agent_label(memories.config.agent_id)
        elif not isinstance(memories, Mapping):
            check_memory_index(memories)  # neither a MemoryIndex nor a mapping of them
        named = {memories.config.agent_id: memories} if isinstance(memories, MemoryIndex) else dict(memories)
        for memory in named.values():
            check_memory_index(memory)
        if not named:
            raise MemoryArgumentError("OpenClawMemoryStore needs at least one MemoryIndex")
        if index and "embed" in index:
            warnings.warn(
                "OpenClawMemoryStore(index=...) ignores 'embed': items are embedded by the memory's own embedding "
                "provider (MemoryIndex(provider=...) or its configuration), so the given embeddings are never called",
                UserWarning, stacklevel=2,
            )
        if index and index.get("dims") is not None:
            _check_dims(index["dims"], named)
        for label in (root, *named):
            if not label or "." in label:
                raise MemoryArgumentError(f"namespace label {label!r} must be non-empty and must not contain '.'")
        if root == "langgraph":
            raise MemoryArgumentError("the root namespace label 'langgraph' is reserved by LangGraph; pick another "
                                      "root")
        self.root = root
        self.min_score = min_score
        self.memories: dict[tuple[str, ...], MemoryIndex] = {(root, name): m for name, m in named.items()}
        for memory in {id(m): m for m in named.values()}.values():
            move_tool_folder_labels(memory.workspace)

    # ---- helpers -----------------------------------------------------------------------------

    def _memory(self, namespace: tuple[str, ...]) -> MemoryIndex | None:
        return self.memories.get(tuple(namespace))

    def _under(self, prefix: tuple[str, ...]) -> list[tuple[tuple[str, ...], MemoryIndex]]:
        return [(ns, m) for ns, m in self.memories.items() if ns[: len(prefix)] == tuple(prefix)]

    def _check_memory_namespace(self, namespace: tuple[str, ...]) -> None:
        """MemoryArgumentError for a write to ``(root, name)`` where ``name`` is no memory's: those namespaces are
        the memories' own files, so the write is a typo of one of them or items put under the reserved root."""
        if len(namespace) != 2 or namespace[0] != self.root or self._memory(namespace) is not None:
            return
        known = ", ".join(repr(ns) for ns in self.memories)
        raise MemoryArgumentError(
            f"namespace {tuple(namespace)!r} names no memory of this store (known: {known}); ({self.root!r}, <name>) "
            f"namespaces hold the memories' Markdown files. To write a memory file, use one of the known namespaces; "
            f"to store items, use another namespace, such as {('users', namespace[1])!r} or one below a memory's "
            f"({(*next(iter(self.memories)), namespace[1])!r})"
        )

    @staticmethod
    def _resolve(memory: MemoryIndex, key: str) -> tuple[Path, str]:
        try:
            return discovery.resolve_memory_path(memory.workspace, memory.config.resolved_extra_paths(), key)
        except MemoryPathError as exc:
            raise MemoryPathError(f"{exc} ({_KEY_HINT})") from None

    # ---- operations --------------------------------------------------------------------------

    # ---- item namespaces ------------------------------------------------------------------------

    def _item_memory(self, namespace: tuple[str, ...]) -> MemoryIndex:
        """The memory holding an item namespace: the one it is nested under, else the first."""
        for ns, memory in self.memories.items():
            if tuple(namespace[: len(ns)]) == ns:
                return memory
        return next(iter(self.memories.values()))

    def _item_namespaces(self) -> list[tuple[tuple[str, ...], MemoryIndex]]:
        found: list[tuple[tuple[str, ...], MemoryIndex]] = []
        for memory in self.memories.values():
            for rel in namespace_files(memory.workspace):
                ns = namespace_of(rel)
                if ns is not None and self._item_memory(ns) is memory:
                    found.append((ns, memory))
        return found

    def _item_get(self, op: GetOp) -> Item | None:
        memory = self._item_memory(op.namespace)
        rel = namespace_file(tuple(op.namespace))
        rec = next((r for r in read_items(memory.workspace, rel) if r.key == op.key), None)
        if rec is None or case_twin(memory.workspace, rel) is not None:  # another namespace's, differing in case
            return None
        return Item(value=rec.value, key=rec.key, namespace=tuple(op.namespace), created_at=rec.created_at,
                    updated_at=rec.updated_at)

    def _item_put(self, op: PutOp) -> MemoryIndex | None:
        if not isinstance(op.key, str) or not op.key:
            raise MemoryArgumentError(f"store keys must be non-empty strings, got {op.key!r}")
        memory = self._item_memory(op.namespace)
        rel = namespace_file(tuple(op.namespace))
        if op.value is None:
            if case_twin(memory.workspace, rel) is not None or not delete_item(memory.workspace, rel, op.key):
                return None  # (a file differing in case is another namespace's)
        else:
            check_case_twin(memory.workspace, tuple(op.namespace), rel)
            value = dict(op.value)
            paths = self.index_fields if op.index is None else (op.index or [])
            upsert_item(memory.workspace, rel, op.key, value, indexed=index_text(value, paths))
        memory.mark_dirty()
        return memory  # also for index=False: the file's other items moved

    def _item_spaces(self, prefix: tuple[str, ...]) -> list[tuple[tuple[str, ...], MemoryIndex]]:
        """The item namespaces under ``prefix``, each with the memory holding it."""
        return [(ns, m) for ns, m in self._item_namespaces() if ns[: len(prefix)] == prefix]

    def _item_search(self, op: SearchOp) -> list[SearchItem]:
        spaces = self._item_spaces(tuple(op.namespace_prefix))
        items: list[SearchItem] = []
        if not op.query:
            return _filtered(list(self._listed_items(spaces)), op.filter)
        by_memory: dict[int, tuple[MemoryIndex, set[tuple[str, ...]]]] = {}
        for ns, memory in spaces:
            by_memory.setdefault(id(memory), (memory, set()))[1].add(ns)
        for memory, wanted in by_memory.values():
            items.extend(self._ranked_items(memory, wanted, op))
        return items

    @staticmethod
    def _listed_items(spaces: list[tuple[tuple[str, ...], MemoryIndex]]) -> Iterator[SearchItem]:
        """The items of ``spaces`` in listing order, each namespace's file read when the listing reaches it."""
        for ns, memory in spaces:
            for rec in read_items(memory.workspace, namespace_file(ns)):
                yield SearchItem(ns, rec.key, rec.value, rec.created_at, rec.updated_at)

    def _ranked_items(self, memory: MemoryIndex, wanted: set[tuple[str, ...]], op: SearchOp) -> list[SearchItem]:
        """The best ``offset + limit`` items of ``wanted`` namespaces passing ``op.filter``, one per key: the
        filter runs inside the search, which walks down the ranking until enough items pass."""
        files: dict[str, list[StoreItem]] = {}

        def record_of(hit: SearchHit) -> tuple[tuple[str, ...], StoreItem] | None:
            hit_ns = namespace_of(hit.path)
            if hit_ns not in wanted:
                return None
            if hit.path not in files:
                files[hit.path] = read_items(memory.workspace, hit.path)
            for rec in files[hit.path]:
                if rec.start_line <= hit.end_line and rec.end_line >= hit.start_line:
                    return (hit_ns, rec) if _passes(rec.value, op.filter) else None
            return None

        result = memory.search(op.query or "", max_results=op.offset + op.limit, min_score=self.min_score,
                               sources=_MEMORY_FILES, where=lambda hit: record_of(hit) is not None,
                               collapse=lambda hit: _item_key(record_of(hit)))
        items = []
        for hit in result.hits:
            found = record_of(hit)
            if found is not None:
                ns, rec = found
                items.append(SearchItem(ns, rec.key, rec.value, rec.created_at, rec.updated_at, score=hit.score))
        return items

    # ---- memory-file namespaces -------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        memory = self._memory(op.namespace)
        if memory is None:
            return self._item_get(op)
        abs_path, rel = self._resolve(memory, op.key)
        if not abs_path.is_file():
            return None
        text = memory.get(rel).text
        stamp = _mtime(abs_path)
        return Item(value={"text": text, "path": rel}, key=rel, namespace=op.namespace, created_at=stamp,
                    updated_at=stamp)

    def _put(self, op: PutOp) -> MemoryIndex | None:
        self._check_memory_namespace(tuple(op.namespace))
        memory = self._memory(op.namespace)
        if memory is None:
            return self._item_put(op)
        if op.value is None:
            raise MemoryPathError(
                f"refusing to delete {op.key!r}: Markdown memory is append-only through the store; "
                "edit or delete the file by hand"
            )
        text = op.value.get("text", op.value.get("content"))
        if not isinstance(text, str):
            raise MemoryArgumentError(f"put value must be {{'text': <markdown str>}}, got keys {sorted(op.value)}")
        _, rel = self._resolve(memory, op.key)
        append_memory(memory.workspace, rel, text, allowed=_writable, origin="agent")
        memory.mark_dirty()
        return None if op.index is False else memory

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.limit < 1:  # as InMemoryStore: nothing asked for, nothing searched
            return []
        items = self._found(op)
        if op.query:
            items.sort(key=lambda i: i.score or 0.0, reverse=True)
            if self.min_score == 0 and len(items) < op.offset + op.limit:
                items.extend(self._unmatched(op, items))
        return items[op.offset : op.offset + op.limit]

    def _found(self, op: SearchOp) -> list[SearchItem]:
        """The memory files and items under ``op``'s prefix: ranked by ``op.query``, else listed."""
        items: list[SearchItem] = []
        for ns, memory in self._under(op.namespace_prefix):
            items.extend(self._search_one(ns, memory, op))
        items.extend(self._item_search(op))
        return items

    def _unmatched(self, op: SearchOp, ranked: list[SearchItem]) -> list[SearchItem]:
        """The listed files and items (``op.filter`` applied) that the query did not rank, in listing order: as
        LangGraph's ``InMemoryStore`` returns the items it cannot score after the ranked ones, ``score=None``.
        The listing stops once the page is full, so a large store is not read whole for a few results."""
        seen = {(item.namespace, item.key) for item in ranked}
        prefix = tuple(op.namespace_prefix)
        files = (self._listed_files(ns, memory) for ns, memory in self._under(prefix))
        listing = itertools.chain(itertools.chain.from_iterable(files), self._listed_items(self._item_spaces(prefix)))
        unmatched = (item for item in listing
                     if (item.namespace, item.key) not in seen and _passes(item.value, op.filter))
        return list(itertools.islice(unmatched, op.offset + op.limit - len(ranked)))

    def _search_one(self, ns: tuple[str, ...], memory: MemoryIndex, op: SearchOp) -> list[SearchItem]:
        if not op.query:
            return _filtered(list(self._listed_files(ns, memory)), op.filter)

        def wanted(hit: SearchHit) -> bool:  # items are returned under their own namespaces
            return namespace_of(hit.path) is None and _passes(_file_value(hit), op.filter)

        # one item per key (the file's best chunk), the filter applied before the limit
        result = memory.search(op.query, max_results=op.offset + op.limit, min_score=self.min_score,
                               sources=_MEMORY_FILES, where=wanted, collapse=lambda hit: hit.path)
        out = []
        for hit in result.hits:
            stamp = _mtime(memory.workspace / hit.path)
            out.append(SearchItem(ns, hit.path, _file_value(hit), stamp, stamp, score=hit.score))
        return out

    @staticmethod
    def _listed_files(ns: tuple[str, ...], memory: MemoryIndex) -> Iterator[SearchItem]:
        """``memory``'s files (not its item files: those are listed as their items) in listing order, each read
        when the listing reaches it."""
        for path in discovery.list_memory_files(memory.workspace, memory.config.resolved_extra_paths()):
            rel = discovery.relative_path(memory.workspace, path)
            if namespace_of(rel) is None:
                stamp = _mtime(path)
                yield SearchItem(ns, rel, {"text": memory.get(rel).text, "path": rel}, stamp, stamp)

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found: set[tuple[str, ...]] = set()
        for ns in [*self.memories, *(ns for ns, _ in self._item_namespaces())]:
            if op.match_conditions and not all(_namespace_matches(ns, c) for c in op.match_conditions):
                continue
            found.add(ns[: op.max_depth] if op.max_depth is not None else ns)
        return sorted(found)[op.offset : op.offset + op.limit]

    supports_ttl = False

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run get / put / search / list-namespaces operations in order."""
        results: list[Result] = []
        to_sync: dict[int, MemoryIndex] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, PutOp):
                touched = self._put(op)
                if touched is not None:
                    to_sync[id(touched)] = touched
                results.append(None)
            elif isinstance(op, SearchOp):
                self._sync(to_sync)
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise MemoryArgumentTypeError(f"unsupported store operation {type(op).__name__}")
        self._sync(to_sync)
        return results

    @staticmethod
    def _sync(pending: dict[int, MemoryIndex]) -> None:
        """Re-index memories written to, so a search right after a put sees the new text."""
        for memory in pending.values():
            memory.sync(reason="store put")
        pending.clear()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async twin of :meth:`batch` (runs in a worker thread)."""
        return await asyncio.to_thread(self.batch, list(ops))
