"""PostgresStore: the index in a PostgreSQL server with pgvector, shared by many processes and hosts.

Markdown stays the source of truth; the server holds the derived index (chunks, keyword and vector
indexes), the embedding cache and the bookkeeping of each namespace (:mod:`.schema`). Keyword search
follows FTS5 exactly (:mod:`.fts`); vector search is an exact cosine scan for small namespaces and an
HNSW index (``halfvec`` above 2,000 dimensions) once a namespace holds ``hnsw_min_rows`` vectors.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypeVar

import numpy as np

from openclaw_memory.text.chunker import indexed_text
from openclaw_memory.config import is_postgres_url
from openclaw_memory.errors import ConfigError, StoreError, StoreUnavailableError
from openclaw_memory.redaction import url_passwords, url_without_password
from openclaw_memory.text.note_dates import NOTE_DATES_IN_KEYWORD_INDEX, note_date_words
from openclaw_memory.storage.lock_wait import wait_for_lock
from openclaw_memory.storage.postgres import fts
from openclaw_memory.storage.postgres.schema import SCHEMA_VERSION, migrate
from openclaw_memory.storage.postgres.workspace_id import WORKSPACE_ID_FILE, read_workspace_id, workspace_id
from openclaw_memory.storage.postgres.keyword_copy import KeywordCopy
from openclaw_memory.storage.postgres.vector_copy import read_matrix
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage.sqlite.vector_cache import (MatrixCache, VectorMatrix, exact_scores, stored_scores,
                                                          unit_rows)
from openclaw_memory.storage import META_KEY, CacheKeys, FileRecord, IndexMeta, StoreInfo, StoredChunk
from openclaw_memory.text.preparation import FTS_TOKENIZER_ID
from openclaw_memory.types import Candidate, MemoryFile

try:
    import psycopg
    from pgvector import Vector
    from pgvector.psycopg import register_vector
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError:  # pragma: no cover - the extra is missing
    psycopg = None  # type: ignore[assignment]

__all__ = ["PostgresStore", "default_ef_search", "is_postgres_url", "redact_url"]

log = logging.getLogger(__name__)

#: vectors up to this many dimensions are indexed as ``vector``; above, as ``halfvec`` (pgvector's limit)
_VECTOR_INDEX_MAX_DIMS = 2000
#: rows fetched beyond ``limit`` by a vector search, rescored exactly before the cut
_SPARE = 16
#: pgvector's bounds of ``hnsw.ef_search``
_EF_SEARCH_MAX = 1000
#: the smallest default ``hnsw.ef_search`` (:func:`default_ef_search`)
_EF_SEARCH_MIN = 500
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
#: the meta key naming the workspace a namespace indexes
_WORKSPACE_KEY = "workspace"
#: the meta key holding the id of the workspace copy a namespace indexes (:mod:`.workspace_id`)
_WORKSPACE_ID_KEY = "workspace_id"
_CHUNK_COLS = "id, path, source, start_line, end_line, hash, model, text, embedding, raw_embedding"
#: The condition of the statements that select chunks by a tsquery and read them all (counts, chunk lists, the rows
#: to rank): the tsquery reaches the planner as a parameter (a subquery's result), so it cannot tell how many chunks
#: match and takes a bitmap scan of the GIN index. Seeing a tsquery that selects many of a namespace's rows, it walks
#: the table or the seq index testing every row's tsvector instead (kept out of line, in TOAST, which it does not
#: count), several times slower. No run-time settings are needed, so each such statement runs on its own (no
#: transaction, no settings sent with it).
_GIN_SCAN = "tsv @@ (SELECT %s::tsquery)"
#: the columns of a keyword search's candidate (:meth:`PostgresStore._kcand`)
_KEYWORD_COLS = "seq, id, path, source, start_line, end_line, text"
#: the columns of a vector search's rows (:meth:`PostgresStore._vcand`)
_VECTOR_ROW_COLS = f"{_KEYWORD_COLS}, embedding"
#: read after them: the candidate's stored vector, in its binary form (decoded when scored:
#: :meth:`PostgresStore._keep_vectors`)
_VECTOR_COLS = "model, vector_send(embedding), raw_embedding"
#: the same columns when the vectors are not read (a keyword-only search: ``keyword_search(vectors=False)``)
_NO_VECTOR_COLS = "model, NULL::bytea, NULL::bytea"
#: vectors of keyword candidates kept for :meth:`PostgresStore.vector_scores` at most
_KEPT_VECTORS = 4096
#: what :meth:`PostgresStore._answered_by_copy` returns when the server's path is to answer
_ON_SERVER = object()
#: a quoted phrase of a MATCH (a prefix's star included)
_QUOTED_PHRASE = re.compile(r'"(?:[^"]|"")*"\*?')
#: what may stand between the quoted phrases of a MATCH both FTS5 and the server's translation read alike
_BETWEEN_PHRASES = re.compile(r"(?:\s|\(|\)|\bAND\b|\bOR\b|\bNOT\b)*")


def _read_alike(matches: Sequence[str]) -> bool:
    """Whether each of ``matches`` is made of quoted phrases, AND/OR/NOT and parentheses only, as the keyword side
    builds them: FTS5 (the keyword copy) and the server's translation read those alike, not bare words (FTS5 reads
    ``heron.canal`` as a syntax error, ``NEAR(...)`` and ``text:heron`` as operators)."""
    return all(_BETWEEN_PHRASES.fullmatch(_QUOTED_PHRASE.sub(" ", m)) is not None for m in matches)
#: seconds a probe of a server that is down may take (libpq's smallest connect_timeout)
_PROBE_TIMEOUT = 2
#: SQLSTATEs that mean the server cannot serve this connection now (shutting down, starting, out of connections)
_UNAVAILABLE_STATES = ("57P01", "57P02", "57P03")
#: too_many_connections: the server answers but has no connection left for this role or database. Not an outage
#: (the pool's other connections still work): the call fails with the advice to size the pools, and no breaker.
_OUT_OF_CONNECTIONS = "53300"
_F = TypeVar("_F", bound=Callable[..., Any])
#: turns off, for the transaction holding an advisory lock, the server's limits on idle or long transactions (those
#: this server has: ``transaction_timeout`` is PostgreSQL 17's)
_KEEP_LOCK_OPEN = ("SELECT set_config(name, '0', true) FROM pg_settings WHERE name IN "
                   "('idle_in_transaction_session_timeout', 'transaction_timeout')")


def _out_of_connections(exc: BaseException) -> bool:
    """Whether ``exc`` is the server refusing a connection for lack of slots (a refused login carries no
    SQLSTATE, only the server's message)."""
    text = str(exc)
    return getattr(exc, "sqlstate", None) == _OUT_OF_CONNECTIONS or "too many connections" in text \
        or "remaining connection slots are reserved" in text


class _Retryable(Exception):
    """A failure the same call may not meet again (:func:`_retry_once` runs it once more)."""


class _PoolerRetry(StoreError, _Retryable):
    """A transaction-mode pooler rejected a prepared statement (prepared statements are off from then on)."""


class _OutageRetry(StoreUnavailableError, _Retryable):
    """The connection was lost or refused (the breaker decides whether the second try reaches the server)."""


def _retry_once(method: _F) -> _F:
    """Run ``method`` a second time after a :class:`_Retryable` failure (its transaction was rolled back)."""
    @functools.wraps(method)
    def wrapper(self: PostgresStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except _Retryable:
            try:
                return method(self, *args, **kwargs)
            except _Retryable as again:
                raise (StoreUnavailableError if isinstance(again, StoreUnavailableError) else StoreError)(
                    str(again)) from None
    return wrapper  # type: ignore[return-value]


def default_ef_search(limit: int) -> int:
    """``hnsw.ef_search`` for a search of ``limit`` rows when ``store.pgEfSearch`` is unset: eight times the
    rows fetched (``limit`` plus the spare rows rescored exactly), at least 500 (so a default search and
    hybrid search's 24 candidates get 500), at most pgvector's limit 1000; docs/design/postgres-decisions.md
    gives the recall measured at each."""
    return min(_EF_SEARCH_MAX, max(_EF_SEARCH_MIN, 8 * (int(limit) + _SPARE)))


def redact_url(url: str) -> str:
    """``url`` (a URL or a key/value DSN) with its password (and any ``password=`` parameter) replaced by
    ``***``."""
    return url_without_password(url, "***") or "***"


def _normalised_url(url: str) -> str:
    """``url`` as libpq reads it: without the whitespace around it (a line of a secret file ends with a newline,
    which libpq would take into the last value) and with the scheme in lower case, as the configuration accepts
    it in any case (``PostgreSQL://``)."""
    url = url.strip()
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url)
    return scheme.group(0).lower() + url[scheme.end():] if scheme else url


_UNENCODED = ("store.url: the user name or password holds a '{char}' that is not percent-encoded; write it as "
              "{code} (postgresql://user:pa{code}ss@host/db), or give the password in a key/value DSN "
              "(password='pa{char}ss') or the PGPASSWORD environment variable")


def _check_credentials(url: str) -> None:
    """Refuse a URL whose user name or password holds an ``@``, ``/``, ``?`` or ``#`` that is not percent-encoded:
    libpq ends the credentials at the first ``@`` and the host part at the first ``/?#``, so it would take the rest
    of the password for the host or the database (and show it in its error); or a ``%`` that starts no
    percent-encoded character (libpq refuses the URL, naming only the masked password)."""
    if "://" not in url:
        return
    rest = url.split("://", 1)[1]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if authority.count("@") > 1:
        raise ConfigError(_UNENCODED.format(char="@", code="%40"))
    if re.search(r"%(?![0-9A-Fa-f]{2})", authority.rpartition("@")[0]):  # libpq: "invalid percent-encoded token"
        raise ConfigError(_UNENCODED.format(char="%", code="%25"))
    # "user:pa/ss@host": the authority ends inside the password, which the rest of the URL would show
    port = authority.rsplit(":", 1)[-1] if ":" in authority and not authority.endswith("]") else ""
    if "@" not in authority and "@" in rest and port and not port.isdigit():
        char = rest[len(authority)]
        raise ConfigError(_UNENCODED.format(char=char, code={"/": "%2F", "?": "%3F", "#": "%23"}[char]))


def _now_ms() -> int:
    return int(time.time() * 1000)


def _sentence(text: str) -> str:
    """``text`` ending as a sentence does (a full stop added unless it ends with one, or with ? or !)."""
    text = text.rstrip()
    return text if text.endswith((".", "?", "!")) else text + "."


def _array(value: Any) -> np.ndarray:
    """A stored ``vector`` as a float32 numpy array."""
    return value.to_numpy().astype(np.float32, copy=False) if isinstance(value, Vector) else \
        np.asarray(value, dtype=np.float32)


def _sent_vector(data: bytes) -> np.ndarray:
    """A ``vector`` in its binary form (``vector_send``), decoded as the driver's binary loader decodes it."""
    return _array(Vector.from_binary(data))


def _embedding(vector: Any, raw: bytes | None, decode: Callable[[Any], np.ndarray]) -> np.ndarray | None:
    """A chunk's stored vector: its ``embedding`` column decoded by ``decode``, else its ``raw_embedding``
    (little-endian float32, a vector pgvector cannot hold), else None."""
    if vector is not None:
        return decode(vector)
    return np.frombuffer(raw, dtype="<f4") if raw is not None else None


def _parsed_meta(value: str | None) -> IndexMeta | None:
    """A stored index meta, None when absent or unreadable."""
    try:
        return IndexMeta.from_json(json.loads(value)) if value is not None else None
    except (ValueError, TypeError):
        return None


def _build_memory_mb(rows: int, dims: int) -> int:
    """``maintenance_work_mem`` for building an HNSW index over ``rows`` vectors of ``dims`` dimensions:
    room for pgvector's in-memory graph (the vector, stored as ``halfvec`` above 2,000 dimensions, plus
    its neighbour lists), at least 256 MB and at most 4 GB."""
    per_row = (2 if dims > _VECTOR_INDEX_MAX_DIMS else 4) * dims + 512
    return int(min(4096, max(256, rows * per_row * 1.25 / 2**20)))


def _after_prefix(prefix: str) -> str | None:
    """The least string above every string starting with ``prefix`` in code point order (the byte order of UTF-8,
    which ``text_pattern_ops`` compares): ``prefix`` with its last character advanced; None when there is none."""
    while prefix:
        code = ord(prefix[-1]) + 1
        if code == 0xD800:  # surrogates are no characters of a PostgreSQL string
            code = 0xE000
        if code <= 0x10FFFF:
            return prefix[:-1] + chr(code)
        prefix = prefix[:-1]
    return None


@functools.lru_cache(maxsize=4096)
def _parsed(match: str, porter: bool) -> tuple[fts.Node, str | None] | str:
    """A MATCH expression parsed, with its tsquery (a search parses each of its expressions several times: for the
    counts, for the ranked search); the message of its MatchSyntaxError when it is rejected."""
    try:
        node = fts.parse_match(match, porter=porter)
    except fts.MatchSyntaxError as exc:
        return str(exc)
    return node, fts.to_tsquery(node)


class _StoredVector(NamedTuple):
    """A chunk's stored vector, as :func:`~openclaw_memory.storage.sqlite.vector_cache.stored_scores` reads it."""

    id: str
    model: str
    embedding: np.ndarray | None


def _preparable(sql: str) -> bool:
    """Whether a keyword search's statement is prepared, so that the server plans it once per connection (its
    generic plan, the same for every query of its shape: its tsqueries and counts are parameters) instead of on
    every search. Not one with a LIKE pattern: a generic plan cannot range-scan an index by an unknown prefix."""
    return " LIKE " not in sql


def _finite(vec: np.ndarray) -> bool:
    return bool(np.isfinite(vec).all())


class PostgresStore:
    """The :class:`~openclaw_memory.storage.MemoryStore` on a PostgreSQL server with pgvector.

    ``namespace`` separates agents and workspaces sharing one database (nothing of one is visible
    from another); ``schema`` is the PostgreSQL schema holding the tables. ``hnsw_min_rows``: from
    this many vectors of one size in a namespace, the next sync builds an HNSW index and searches
    use it; ``exact=True`` always scans exactly. ``ef_search`` is HNSW's candidate list per search
    (``hnsw.ef_search``; None: :func:`default_ef_search` of the rows asked for). ``workspace`` (the
    workspace's absolute path) is recorded in the namespace on first open; opening the namespace for
    another workspace raises ConfigError, as two workspaces sharing one namespace would overwrite each
    other's index, and so is opening it from another copy of the workspace at that path (:mod:`.workspace_id`).
    ``pool_size`` connections at most (``store.pool``); a call waits ``pool_timeout`` seconds for one, then
    raises StoreUnavailableError when the server does not answer, and later calls fail at once until it
    does. ``prepared_statements`` False never prepares (None: off once a transaction-mode pooler rejects
    one). ``memory_cache`` (``store.vector.memoryCache``) keeps the namespace's vectors in this process's memory
    (:mod:`.vector_copy`: loaded in the background after a vector search, on its pooled connections, and again
    after each write to the namespace from any host) and searches them there while they are current; it also keeps
    the namespace's keyword index in a SQLite file of this process (:mod:`.keyword_copy`), which answers keyword
    searches while it holds the namespace's current version. On a
    read-only session or role (``read_only``) it searches and refuses to write. Thread-safe.
    """

    #: every call is a round trip to the server: a search asks for more at once
    round_trips = True

    def __init__(
        self,
        url: str,
        *,
        namespace: str = "main",
        schema: str = "openclaw_memory",
        fts_tokenizer: str = "unicode61",
        vector_enabled: bool = True,
        hnsw_min_rows: int = 1_000,
        exact: bool = False,
        ef_search: int | None = None,
        pool_size: int = 2,
        pool_timeout: float = 5.0,
        prepared_statements: bool | None = None,
        connect_timeout: float = 5.0,
        workspace: str | None = None,
        fts_note_dates: bool = NOTE_DATES_IN_KEYWORD_INDEX,
        memory_cache: bool = True,
        _parent: PostgresStore | None = None,
        _build_id: int | None = None,
    ) -> None:
        if fts_tokenizer not in ("unicode61", "porter"):
            raise ConfigError(f"store.fts.tokenizer {fts_tokenizer!r} is not available with PostgreSQL; use "
                              "'unicode61' or 'porter'")
        if not _IDENT.match(schema):
            raise ConfigError(f"store.pgSchema {schema!r} cannot be used: a schema name here is ASCII letters, "
                              "digits and _, not starting with a digit, at most 63 characters (e.g. openclaw_memory)")
        if not namespace or len(namespace) > 200:
            raise ConfigError("store.namespace must be a non-empty name of at most 200 characters")
        if "\x00" in namespace:
            raise ConfigError(f"store.namespace {namespace!r} holds a NUL character, which PostgreSQL text cannot "
                              "hold; remove it from store.namespace")
        url = _normalised_url(url)
        _check_credentials(url)
        self.url = url
        self.safe_url = redact_url(url)
        self.namespace = namespace
        self.schema = schema
        self.fts_tokenizer = fts_tokenizer
        self.vector_enabled = vector_enabled
        self.hnsw_min_rows = int(hnsw_min_rows)
        self.exact = exact
        if ef_search is not None and not 1 <= int(ef_search) <= _EF_SEARCH_MAX:
            raise ConfigError(f"store.pgEfSearch must be between 1 and {_EF_SEARCH_MAX} (got {ef_search})")
        self.ef_search = None if ef_search is None else int(ef_search)
        self._porter = fts_tokenizer == "porter"
        #: ``store.fts.note_dates``: a dated note's date is indexed as words with each of its chunks, as in SQLite
        self.fts_note_dates = fts_note_dates
        self._s = f'"{schema}"'
        self._secrets = url_passwords(url)
        self._build_id = _build_id
        self._connect_timeout = max(_PROBE_TIMEOUT, int(connect_timeout))
        self._closed = False
        self._lock = threading.Lock()
        #: exact match counts by (build id, namespace version, tsquery): valid until the namespace is written
        self._counts: dict[tuple[int, int, str], int] = {}
        self._count_head: tuple[int, int] | None = None  # the build and version the last count read
        #: the id of the build a search last found (statements name it so the planner knows which rows they
        #: read; each checks it is still the build and runs again when not)
        self._build_seen: int | None = _build_id
        #: by vector size: the build id and whether its HNSW index existed, as the last vector search read them
        self._vector_heads: dict[int, tuple[int, bool]] = {}
        #: whether this store has said that its role cannot build a namespace's HNSW index (not the table's owner)
        self._hnsw_not_owner_said = False
        #: whether the upkeep after writes (:meth:`_ensure_vector_indexes`) has run since this store last wrote
        self._upkept = False
        #: per thread: the generation the thread's last match counts read (see :meth:`search_generation`)
        self._generation_read = threading.local()
        #: per thread: the term statistics the thread's last match counts read, with the build and version they
        #: describe (:meth:`keyword_search_many` ranks with them instead of reading them again)
        self._stats_read = threading.local()
        #: per thread: the chunks (seqs) of each phrase the thread's last match counts listed in full, with the build
        #: and version they describe (BM25 counts a phrase only in the chunks that hold it)
        self._sets_read = threading.local()
        #: by chunk id: the stored vectors of the chunks keyword searches returned, read with them (a chunk id names its
        #: text and model), for :meth:`vector_scores`; dropped when a search finds the build or its version changed
        self._hit_vectors: dict[str, tuple[str, bytes | None, bytes | None]] = {}
        self._vectors_head: tuple[int, int] | None = None
        #: the namespace's vectors in this process's memory (``memory_cache``), and the connection reading them
        self.memory_cache = memory_cache
        self._vector_copy = MatrixCache(self._read_vector_copy, label=f"{self.safe_url} (namespace {namespace!r})",
                                        fallback="PostgreSQL's vector search",
                                        interrupt=functools.partial(self._interrupt_copy, "vectors"),
                                        refresh=True)
        #: by copy ("vectors", "keywords"): the connection a step of loading it holds (cancelled by :meth:`close`)
        self._copy_conns: dict[str, Any] = {}
        #: the namespace's keyword index copied into a SQLite file of this process (``memory_cache``)
        self._keyword_copy = KeywordCopy(
            functools.partial(self._copy_connection, "keywords", "copying the keyword index"), self._s,
            self._build_where, _CHUNK_COLS, self._chunk, fts_tokenizer=fts_tokenizer,
            fts_note_dates=fts_note_dates, label=f"{self.safe_url} (namespace {namespace!r})",
            interrupt=functools.partial(self._interrupt_copy, "keywords")) if memory_cache else None
        #: the store owning the pool and the outage state (a rebuild's store shares its parent's)
        self._root: PostgresStore = _parent._root if _parent is not None else self
        if _parent is not None:
            self.read_only = _parent.read_only
            self._server_version, self._pgvector_version = _parent._server_version, _parent._pgvector_version
            return
        if psycopg is None:
            raise StoreError("the PostgreSQL backend needs its extra: pip install 'openclaw-memory[postgres]'")
        self._pool_size, self._pool_timeout = max(1, int(pool_size)), float(pool_timeout)
        #: prepared statements: True/False as configured; None: on until a transaction-mode pooler rejects one
        self._prepare = prepared_statements
        self._down_since: float | None = None  # when the server stopped answering (None: it answers)
        self._probe_lock = threading.Lock()
        #: True on a read-only session (a replica, default_transaction_read_only) or a role without write rights
        self.read_only = False
        try:
            with psycopg.connect(url, **self._connect_args()) as conn:
                self.read_only = conn.execute("SHOW transaction_read_only").fetchone()[0] == "on"
                self._require_vector_extension(conn)
                with conn.transaction():
                    migrate(conn, schema, read_only=self.read_only)
                    if not self.read_only and not conn.execute(
                            "SELECT has_table_privilege(%s, 'INSERT, UPDATE, DELETE')",
                            (f"{self._s}.chunks",)).fetchone()[0]:
                        self.read_only = True  # a role allowed to read only
                    if not self.read_only:
                        conn.execute(
                            f"INSERT INTO {self._s}.namespaces(name, state) VALUES (%s, 'active') "
                            "ON CONFLICT (name) WHERE state = 'active' DO NOTHING", (namespace,))
                    if workspace is not None:
                        self._claim_workspace(conn, workspace)
                self._server_version = str(conn.execute("SHOW server_version").fetchone()[0])
                row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
                self._pgvector_version = str(row[0]) if row else "?"
            self._pool = self._new_pool()
        except (StoreError, ConfigError):
            raise
        except Exception as exc:
            raise StoreError(f"cannot open the memory index in PostgreSQL at {self.safe_url}: "
                             f"{_sentence(self._clean(exc))} Check that the server is running and the URL (store.url) "
                             "is right") from None

    def _require_vector_extension(self, conn: Any) -> None:
        """Create pgvector in the database when it is missing (StoreError when that is not possible)."""
        if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is not None:
            return
        try:
            if self.read_only:
                raise psycopg.errors.ReadOnlySqlTransaction("the connection is read-only")
            with conn.transaction():  # serialised: concurrent CREATE EXTENSION IF NOT EXISTS can collide
                conn.execute("SELECT pg_advisory_xact_lock(hashtext('openclaw-memory:extension'), 0)")
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            raise StoreError(
                f"pgvector is not available on the PostgreSQL server at {self.safe_url} ({self._clean(exc)}); "
                "install the pgvector extension there (or ask an administrator to run CREATE EXTENSION "
                "vector in this database)") from None

    # ---- connections and errors ---------------------------------------------------------------

    def _connect_args(self, *, timeout: int | None = None, autocommit: bool = True) -> dict[str, Any]:
        """Keyword arguments of every connection this store opens."""
        args: dict[str, Any] = {"autocommit": autocommit, "connect_timeout": timeout or self._connect_timeout}
        if "application_name" not in self.url:
            args["application_name"] = "openclaw-memory"
        return args

    def _new_pool(self) -> Any:
        """A pool of up to ``pool_size`` connections. Connections are not checked before use (a round trip
        each): a call that meets a lost one (a server restart) trips the breaker and runs once more, and the
        breaker replaces the whole pool once the server answers."""
        return ConnectionPool(
            self.url, min_size=1, max_size=self._pool_size, open=True, name="openclaw-memory",
            kwargs=self._connect_args(), configure=self._configure, timeout=self._pool_timeout, reconnect_timeout=0)

    def _configure(self, conn: Any) -> None:
        register_vector(conn)
        if self._prepare is False:
            conn.prepare_threshold = None

    def _clean(self, exc: BaseException | str) -> str:
        """An error message without any secret of the connection URL."""
        text = str(exc).strip()
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _outage(self, exc: BaseException | str) -> str:
        """The message of StoreUnavailableError."""
        since = self._root._down_since
        ago = f" for {time.monotonic() - since:.0f}s" if since is not None else ""
        return (f"PostgreSQL at {self.safe_url} is unavailable{ago} (outage, restart or no free connection: "
                f"{self._clean(exc)}); notes are still written to the Markdown files and the index catches up "
                "on the next sync once the server answers")

    def _trip(self) -> None:
        """Open the breaker: until the server answers a probe again, calls fail at once."""
        root = self._root
        if root._down_since is None:
            root._down_since = time.monotonic()
            log.warning("PostgreSQL at %s stopped answering; searches fail fast until it is back", self.safe_url)

    def _through_breaker(self) -> None:
        """While the breaker is open: one quick probe of the server; StoreUnavailableError when it still does
        not answer, else the breaker closes (with a fresh pool: the old one may be waiting out a back-off)."""
        root = self._root
        if root._down_since is None:
            return
        with root._probe_lock:
            if root._down_since is None:
                return
            try:
                psycopg.connect(self.url, **self._connect_args(timeout=_PROBE_TIMEOUT)).close()
            except psycopg.Error as exc:
                raise StoreUnavailableError(self._outage(exc)) from None
            old, root._pool = root._pool, root._new_pool()
            root._down_since = None
            log.warning("PostgreSQL at %s answers again", self.safe_url)
        threading.Thread(target=old.close, kwargs={"timeout": 0}, daemon=True).start()

    def _out_of_connections(self, what: str, exc: BaseException) -> str:
        return (f"{what}: PostgreSQL at {self.safe_url} has no connection left for this role or database "
                f"({self._clean(exc)}); lower store.pool.max_size in each agent process, raise the server's "
                "max_connections, or put PgBouncer in transaction mode in front of it (docs: Beyond one database)")

    def _unavailable(self, exc: BaseException) -> bool:
        """Whether ``exc`` says the server (not this statement) failed: connection lost or refused, shutting
        down or starting up, out of connections."""
        if not isinstance(exc, psycopg.OperationalError):
            return False
        return exc.sqlstate is None or exc.sqlstate.startswith("08") or exc.sqlstate in _UNAVAILABLE_STATES

    @contextlib.contextmanager
    def _driver_errors(self, what: str) -> Iterator[None]:
        """Driver and pool errors inside the block become StoreError naming ``what`` (no secret in it):
        StoreUnavailableError when the server is unreachable (a _Retryable one when retrying may succeed)."""
        if self._closed:
            raise StoreError(f"the memory index {self!r} is closed")
        root = self._root
        try:
            yield
        except StoreError:
            raise
        except PoolTimeout as exc:
            try:  # a busy pool or a server that is gone?
                psycopg.connect(self.url, **self._connect_args(timeout=_PROBE_TIMEOUT)).close()
            except psycopg.Error as probe:
                if _out_of_connections(probe):
                    raise StoreError(self._out_of_connections(what, probe)) from None
                self._trip()
                raise StoreUnavailableError(self._outage(probe)) from None
            raise StoreError(f"{what}: all {root._pool_size} connections to PostgreSQL at {self.safe_url} stayed busy "
                             f"for {root._pool_timeout:.0f}s ({self._clean(exc)}); raise store.pool.max_size") from None
        except psycopg.Error as exc:
            if root._prepare is None and isinstance(exc, (psycopg.errors.DuplicatePreparedStatement,
                                                          psycopg.errors.InvalidSqlStatementName)):
                root._prepare = False  # a transaction-mode pooler: statements land on other server sessions
                log.info("PostgreSQL at %s is behind a transaction-mode pooler: prepared statements off",
                         self.safe_url)
                raise _PoolerRetry(f"{what} failed on PostgreSQL: {self._clean(exc)}") from None
            if _out_of_connections(exc):
                raise StoreError(self._out_of_connections(what, exc)) from None
            if self._unavailable(exc):
                self._trip()
                raise _OutageRetry(self._outage(exc)) from None
            raise StoreError(f"{what} failed on PostgreSQL ({self.safe_url}, namespace {self.namespace!r}): "
                             f"{self._clean(exc)}") from None

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        """A pooled connection (after the breaker let the call through)."""
        root = self._root
        self._through_breaker()
        with root._pool.connection() as conn:
            if root._prepare is False:
                conn.prepare_threshold = None
            yield conn

    def _writable(self, what: str) -> None:
        if self.read_only:
            raise StoreError(f"{what}: the connection to PostgreSQL at {self.safe_url} is read-only (a replica, "
                             "a read-only session or a role without write rights): it can search, not index. Sync "
                             "from a host whose store.url allows writes")

    @contextlib.contextmanager
    def _conn(self, what: str, *, read: bool = False, untimed: bool = False) -> Iterator[Any]:
        """A pooled connection in a transaction (a REPEATABLE READ snapshot for ``read``; no statement_timeout for
        ``untimed``); driver errors become StoreError."""
        if not read:
            self._writable(what)
        with self._driver_errors(what), self._connection() as conn:
            if read:  # BEGIN carries them (no SET TRANSACTION round trip); put back for the pool's next user
                conn.isolation_level, conn.read_only = psycopg.IsolationLevel.REPEATABLE_READ, True
            try:
                with conn.transaction():
                    if untimed:  # upkeep of a large table (an index build takes minutes at 100k vectors): a
                        # statement_timeout of the server or role, a guard against runaway queries, would cancel it
                        conn.execute("SET LOCAL statement_timeout = 0")
                    yield conn
            finally:
                if read:
                    conn.isolation_level, conn.read_only = None, None

    @contextlib.contextmanager
    def _autocommit(self, what: str) -> Iterator[Any]:
        """A pooled connection outside any transaction, for reads of one statement each (a statement is a
        consistent snapshot of its own); driver errors become StoreError."""
        with self._driver_errors(what), self._connection() as conn:
            yield conn

    @staticmethod
    @contextlib.contextmanager
    def _one_round_trip(conn: Any, settings: dict[str, str]) -> Iterator[None]:
        """The statements of the block in one read-only transaction with ``settings`` (run-time parameters, for
        this transaction only), sent in one round trip (a pipeline) on ``conn``, a connection in autocommit mode:
        BEGIN and COMMIT travel with them. The transaction is rolled back when the block or a statement fails."""
        try:
            with conn.pipeline():
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                if settings:
                    conn.execute("SELECT " + ", ".join(["set_config(%s, %s, true)"] * len(settings)),
                                 [x for item in settings.items() for x in item])
                yield
                conn.execute("COMMIT")
        except BaseException:
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                with contextlib.suppress(Exception):
                    conn.rollback()
            raise

    def _build_where(self, alias: str = "n") -> tuple[str, list[Any]]:
        """The condition selecting this store's build in ``namespaces`` (aliased ``alias``), with its arguments."""
        if self._build_id is not None:
            return f"{alias}.id = %s", [self._build_id]
        return f"{alias}.name = %s AND {alias}.state = 'active'", [self.namespace]

    def _ns(self, conn: Any) -> int:
        """The id of the build this store reads and writes (the namespace's active one)."""
        if self._build_id is not None:
            return self._build_id
        row = conn.execute(f"SELECT id FROM {self._s}.namespaces WHERE name = %s AND state = 'active'",
                           (self.namespace,)).fetchone()
        if row is not None:
            return int(row[0])
        if self.read_only:
            return -1  # not indexed yet: a read-only connection finds an empty index
        # created on open; only missing if someone deleted it meanwhile (its rows went with it: ON DELETE CASCADE)
        sql = (f"INSERT INTO {self._s}.namespaces(name, state) VALUES (%s, 'active') ON CONFLICT (name) "
               "WHERE state = 'active' DO UPDATE SET name = excluded.name RETURNING id")
        if not conn.read_only:
            return int(conn.execute(sql, (self.namespace,)).fetchone()[0])
        # A read-only transaction cannot write: the namespace is recreated (empty) in a transaction of its own.
        # This snapshot cannot see the new row, but it holds nothing either: the read finds an empty index,
        # and the next sync rebuilds it.
        log.warning("the namespace %r was deleted from %s while this index was open; recreating it empty (the "
                    "next sync rebuilds the index)", self.namespace, self.safe_url)
        with psycopg.connect(self.url, **self._connect_args()) as other:
            return int(other.execute(sql, (self.namespace,)).fetchone()[0])

    def _write_ns(self, conn: Any) -> int:
        """:meth:`_ns`, locked for this transaction: writers of one build take turns, so each sees what
        the previous one committed and the chunk counts and term statistics stay exact."""
        ns = self._ns(conn)
        conn.execute(f"SELECT 1 FROM {self._s}.namespaces WHERE id = %s FOR UPDATE", (ns,))
        return ns

    def _claim_workspace(self, conn: Any, workspace: str) -> None:
        """Record ``workspace`` (its path and the id of its copy) as the one this namespace indexes, or refuse
        another one (ConfigError): another path, or another copy at the same path."""
        ns = self._ns(conn) if self.read_only else self._write_ns(conn)
        rows = dict(conn.execute(f"SELECT key, value FROM {self._s}.meta WHERE ns_id = %s AND key = ANY(%s)",
                                 (ns, [_WORKSPACE_KEY, _WORKSPACE_ID_KEY])).fetchall())
        first = not self.read_only and _WORKSPACE_ID_KEY not in rows and rows.get(_WORKSPACE_KEY, workspace) == workspace
        mine = workspace_id(workspace) if first else read_workspace_id(workspace)  # made only for a first claim
        if not self.read_only:
            for key, value in ((_WORKSPACE_KEY, workspace), (_WORKSPACE_ID_KEY, mine)):
                if key not in rows and value is not None:
                    conn.execute(f"INSERT INTO {self._s}.meta(ns_id, key, value) VALUES (%s, %s, %s)",
                                 (ns, key, value))
                    rows[key] = value
        recorded = rows.get(_WORKSPACE_ID_KEY)
        if rows.get(_WORKSPACE_KEY, workspace) == workspace and recorded is not None and mine != recorded:
            raise ConfigError(
                f"store.namespace {self.namespace!r} on {self.safe_url} indexes another copy of the workspace "
                f"{workspace!r} (its {WORKSPACE_ID_FILE} holds {recorded}; here it "
                f"{'holds ' + mine if mine else 'is missing'}): hosts sharing a namespace must share one volume, "
                "or each would undo the other's index. Give each host's copy its own store.namespace (e.g. "
                "\"{agent_id}-{host}\"), or, if this is the same workspace, put that id back in the file")
        row = (rows[_WORKSPACE_KEY],) if _WORKSPACE_KEY in rows else None
        if row is None:
            return
        if row[0] != workspace:
            raise ConfigError(
                f"store.namespace {self.namespace!r} on {self.safe_url} already holds the index of the workspace "
                f"{row[0]!r}, not of {workspace!r}: two workspaces in one namespace would overwrite each other's "
                "index. Give this workspace its own store.namespace (hosts sharing one workspace must mount it at "
                "the same path)")

    @property
    def db_errors(self) -> tuple[type[BaseException], ...]:
        """The driver's exception class (every public method already raises StoreError instead)."""
        return (psycopg.Error,) if psycopg is not None else ()

    @property
    def fts_tokenizer_id(self) -> str:
        """The keyword-index identity recorded in the fingerprint (``+dates``: ``fts_note_dates``)."""
        return ("pg-lexemes:" + FTS_TOKENIZER_ID + ("+porter" if self._porter else "")
                + ("+dates" if self.fts_note_dates else ""))

    # ---- meta -----------------------------------------------------------------------------------

    @_retry_once
    def read_meta(self) -> IndexMeta | None:
        with self._conn("reading the index meta", read=True) as conn:
            row = conn.execute(f"SELECT value FROM {self._s}.meta WHERE ns_id = %s AND key = %s",
                               (self._ns(conn), META_KEY)).fetchone()
        return _parsed_meta(row[0]) if row else None

    @_retry_once
    def write_meta(self, meta: IndexMeta) -> None:
        value = json.dumps(meta.to_json(), separators=(",", ":"))
        with self._conn("writing the index meta") as conn:
            ns = self._ns(conn)
            conn.execute(f"INSERT INTO {self._s}.meta(ns_id, key, value) VALUES (%s, %s, %s) ON CONFLICT (ns_id, key) "
                         "DO UPDATE SET value = excluded.value", (ns, META_KEY, value))
        self._ensure_vector_indexes()

    # ---- files and chunks ------------------------------------------------------------------------

    @_retry_once
    def file_records(self, source: str | None = None) -> dict[str, FileRecord]:
        with self._conn("listing indexed files", read=True) as conn:
            sql = f"SELECT path, source, hash, mtime, size FROM {self._s}.files WHERE ns_id = %s"
            args: list[Any] = [self._ns(conn)]
            if source:
                sql += " AND source = %s"
                args.append(source)
            rows = conn.execute(sql, args).fetchall()
        return {r[0]: FileRecord(r[0], r[1], r[2], float(r[3]), int(r[4])) for r in rows}

    def _delete_rows(self, conn: Any, ns: int, where: str, args: Sequence[Any], terms: Counter[str]) -> None:
        """Delete chunks of build ``ns`` and take them out of its statistics (their tokens leave ``terms``)."""
        rows = conn.execute(f"DELETE FROM {self._s}.chunks WHERE ns_id = %s AND {where} RETURNING tokens",
                            [ns, *args]).fetchall()
        if not rows:
            return
        n_tokens = 0
        for (tokens,) in rows:
            toks = tokens.split(" ") if tokens else []
            n_tokens += len(toks)
            terms.subtract({t for t in toks if t})
        conn.execute(f"UPDATE {self._s}.namespaces SET n_rows = n_rows - %s, n_tokens = n_tokens - %s, "
                     "version = version + 1 WHERE id = %s", (len(rows), n_tokens, ns))

    def _update_terms(self, conn: Any, ns: int, terms: Counter[str]) -> None:
        """Add ``terms`` (token → change of its chunk count) to build ``ns``'s term statistics, in the
        caller's transaction. Rows are locked in one order, so concurrent writers never deadlock."""
        items = [(t, n) for t, n in terms.items() if n]
        if not items:
            return
        conn.execute(
            f"INSERT INTO {self._s}.terms AS t(ns_id, term, n_docs) SELECT %s, u.term, u.n FROM "
            "unnest(%s::text[], %s::bigint[]) AS u(term, n) ORDER BY u.term COLLATE \"C\" "
            "ON CONFLICT (ns_id, term) DO UPDATE SET n_docs = t.n_docs + excluded.n_docs",
            (ns, [t for t, _ in items], [n for _, n in items]))
        gone = [t for t, n in items if n < 0]
        if gone:
            conn.execute(f"DELETE FROM {self._s}.terms WHERE ns_id = %s AND term = ANY(%s) AND n_docs <= 0",
                         (ns, gone))

    @_retry_once
    def replace_file(self, file: MemoryFile, chunks: Sequence[StoredChunk]) -> None:
        # this store's own writes: no kept vector, nor the in-memory copy, outlives them (others': the next search)
        self._hit_vectors, self._vectors_head = {}, None
        self._upkept = False
        now = _now_ms()
        by_id: dict[str, tuple[Any, ...]] = {}
        added: dict[str, list[str]] = {}
        for c in chunks:  # a repeated id keeps its last chunk (the insert below upserts)
            dated = note_date_words(c.path) if self.fts_note_dates else None
            body = indexed_text(c.text)  # record markers left out
            toks = fts.index_tokens(f"{body}\n{dated}" if dated else body, porter=self._porter)
            added[c.id] = toks
            vec, raw, dims, zero = None, None, None, False
            if c.embedding is not None and np.asarray(c.embedding).size:
                e = np.asarray(c.embedding, dtype=np.float32).reshape(-1)
                dims = int(e.size)
                if _finite(e):
                    vec, zero = e, not bool(np.any(e))
                else:
                    raw = e.astype("<f4").tobytes()
            # PostgreSQL text holds no NUL (a file is sniffed for one only at its start): refused, one NUL failed
            # the whole sync, on every host
            text = c.text.replace("\x00", "\ufffd")
            by_id[c.id] = (c.id, c.path, c.source, c.start_line, c.end_line, c.hash, c.model, text, " ".join(toks),
                           fts.tsvector_literal(toks), vec, raw, dims, zero, now)
        rows = list(by_id.values())
        n_tokens = sum(len(t) for t in added.values())
        terms: Counter[str] = Counter()
        for toks in added.values():
            terms.update({t for t in toks if t})
        with self._conn(f"writing {file.path}") as conn:
            ns = self._write_ns(conn)
            self._delete_rows(conn, ns, "path = %s", [file.path], terms)
            ids = list(by_id)
            if ids:  # the same chunk id under another path moves here
                self._delete_rows(conn, ns, "id = ANY(%s)", [ids], terms)
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {self._s}.chunks(ns_id, id, path, source, start_line, end_line, hash, model, text, "
                    "tokens, tsv, embedding, raw_embedding, dims, zero, updated_at) VALUES "
                    "(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s::tsvector,%s,%s,%s,%s,%s) ON CONFLICT (ns_id, id) DO UPDATE SET "
                    "path = excluded.path, source = excluded.source, start_line = excluded.start_line, "
                    "end_line = excluded.end_line, hash = excluded.hash, model = excluded.model, text = excluded.text, "
                    "tokens = excluded.tokens, tsv = excluded.tsv, embedding = excluded.embedding, "
                    "raw_embedding = excluded.raw_embedding, dims = excluded.dims, zero = excluded.zero, "
                    "updated_at = excluded.updated_at",
                    [(ns, *r) for r in rows])
            conn.execute(f"UPDATE {self._s}.namespaces SET n_rows = n_rows + %s, n_tokens = n_tokens + %s, "
                         "version = version + 1 WHERE id = %s", (len(rows), n_tokens, ns))
            self._update_terms(conn, ns, terms)
            conn.execute(
                f"INSERT INTO {self._s}.files(ns_id, path, source, hash, mtime, size) VALUES (%s,%s,%s,%s,%s,%s) "
                "ON CONFLICT (ns_id, path) DO UPDATE SET source = excluded.source, hash = excluded.hash, "
                "mtime = excluded.mtime, size = excluded.size",
                (ns, file.path, file.source, file.hash, file.mtime_ms, file.size))
        self._vectors_head = None  # again: a search meanwhile may have read the version before this write

    @_retry_once
    def touch_file(self, file: MemoryFile) -> None:
        with self._conn(f"updating {file.path}") as conn:
            conn.execute(f"UPDATE {self._s}.files SET mtime = %s, size = %s WHERE ns_id = %s AND path = %s",
                         (file.mtime_ms, file.size, self._ns(conn), file.path))

    @_retry_once
    def delete_file(self, path: str, source: str | None = None) -> None:
        self._hit_vectors, self._vectors_head = {}, None
        self._upkept = False
        with self._conn(f"deleting {path}") as conn:
            ns = self._write_ns(conn)
            where, args = ("path = %s AND source = %s", [path, source]) if source else ("path = %s", [path])
            terms: Counter[str] = Counter()
            self._delete_rows(conn, ns, where, args, terms)
            self._update_terms(conn, ns, terms)
            conn.execute(f"DELETE FROM {self._s}.files WHERE ns_id = %s AND {where}", [ns, *args])
        self._vectors_head = None  # again: a search meanwhile may have read the version before this write

    @staticmethod
    def _chunk(r: Sequence[Any]) -> StoredChunk:
        emb = _embedding(r[8], r[9], _array)
        return StoredChunk(id=r[0], path=r[1], source=r[2], start_line=int(r[3]), end_line=int(r[4]), hash=r[5],
                           model=r[6], text=r[7], embedding=emb)

    def iter_chunks(self, source: str | None = None) -> Iterator[StoredChunk]:
        with self._conn("reading chunks", read=True) as conn:
            sql = f"SELECT {_CHUNK_COLS} FROM {self._s}.chunks WHERE ns_id = %s"
            args: list[Any] = [self._ns(conn)]
            if source:
                sql += " AND source = %s"
                args.append(source)
            rows = conn.execute(sql + " ORDER BY path, start_line, id", args).fetchall()
        for r in rows:
            yield self._chunk(r)

    @_retry_once
    def get_chunks(self, ids: Sequence[str]) -> list[StoredChunk]:
        if not ids:
            return []
        nw, nargs = self._build_where()
        with self._autocommit("reading chunks") as conn:  # one statement: a snapshot of its own
            rows = conn.execute(f"SELECT {_CHUNK_COLS} FROM {self._s}.chunks WHERE ns_id = (SELECT n.id FROM "
                                f"{self._s}.namespaces n WHERE {nw}) AND id = ANY(%s)", [*nargs, list(ids)],
                                binary=True).fetchall()
        by_id = {r[0]: self._chunk(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    @_retry_once
    def is_empty(self) -> bool:
        nw, nargs = self._build_where()
        with self._autocommit("reading the index") as conn:
            return conn.execute(f"SELECT 1 FROM {self._s}.chunks WHERE ns_id = (SELECT n.id FROM {self._s}.namespaces "
                                f"n WHERE {nw}) LIMIT 1", nargs).fetchone() is None

    @_retry_once
    def generation(self) -> str:
        """The build's id and its ``version`` (advanced by every write of chunks in the same transaction)."""
        nw, nargs = self._build_where()
        with self._autocommit("reading the index") as conn:
            row = conn.execute(f"SELECT n.id, n.version FROM {self._s}.namespaces n WHERE {nw}", nargs).fetchone()
        return f"{row[0]}:{row[1]}" if row else "none:0"

    def _generation_or_none(self) -> str | None:
        try:
            return self.generation()
        except StoreError:
            return None

    def search_generation(self) -> str:
        """:meth:`generation` as the calling thread's last :meth:`match_sets_many` read it, in the statements it
        counted with (no round trip of its own), given once: a second call, or one on a thread whose counts read no
        build, reads it as :meth:`generation` does."""
        seen = getattr(self._generation_read, "value", None)
        self._generation_read.value = None
        return seen if seen is not None else self.generation()

    @_retry_once
    def counts(self) -> dict[str, dict[str, int]]:
        with self._conn("counting the index", read=True) as conn:
            ns = self._ns(conn)
            rows = conn.execute(
                f"SELECT source, 'files', count(*) FROM {self._s}.files WHERE ns_id = %s GROUP BY source UNION ALL "
                f"SELECT source, 'chunks', count(*) FROM {self._s}.chunks WHERE ns_id = %s GROUP BY source",
                (ns, ns)).fetchall()
        out: dict[str, dict[str, int]] = {}
        for source, kind, n in rows:
            out.setdefault(source, {"files": 0, "chunks": 0})[kind] = int(n)
        return out

    # ---- keyword search ---------------------------------------------------------------------------

    def _known_build(self, conn: Any) -> int | None:
        """The id of the build this store reads as a search last found it (read now when none has; None: no
        build yet)."""
        if self._build_seen is None:
            nw, nargs = self._build_where()
            row = conn.execute(f"SELECT n.id FROM {self._s}.namespaces n WHERE {nw}", nargs).fetchone()
            if row is None:
                return None
            self._build_seen = int(row[0])
        return self._build_seen

    def _parse(self, match: str) -> tuple[fts.Node, str] | None:
        parsed = _parsed(match, self._porter)
        if isinstance(parsed, str):
            log.warning("keyword query %r rejected: %s", match, parsed)  # search goes on without it
            return None
        node, q = parsed
        return (node, q) if q else None

    # A statement with a tsquery literal is not prepared: a generic plan cannot see how selective the query is and
    # walks the whole namespace in seq order, testing every chunk (a custom plan uses the GIN index). The counts and
    # the ranked expressions take their tsqueries as subquery parameters (:data:`_GIN_SCAN`), which no plan sees, and
    # their limits as literals: they are prepared (:func:`_preparable`), so their generic plan serves every search.

    @_retry_once
    def keyword_search(
        self, match: str, *, limit: int, sources: Sequence[str] | None = None, like_terms: Sequence[str] = (),
        window: int | None = None, order: Literal["rank", "recent"] = "rank", newest: int | None = None,
        vectors: bool = True,
    ) -> list[tuple[Candidate, float]]:
        if limit <= 0 or (not match and not like_terms):
            return []
        if not like_terms:  # substrings: ILIKE on the server, SQLite's LIKE (ASCII case only) in the copy
            found = self._answered_by_copy([match], lambda copy: copy.keyword_search(
                match, limit=limit, sources=sources, window=window, order=order, newest=newest, vectors=vectors))
            if found is not _ON_SERVER:
                return found  # type: ignore[no-any-return]
        parsed = self._parse(match) if match else None
        if match and parsed is None:
            return []
        nw, nargs = self._build_where()
        ns_sql = f"(SELECT n.id FROM {self._s}.namespaces n WHERE {nw})"  # the build: resolved inside each statement
        cond, args = self._match_condition(parsed[1] if parsed else None, sources, like_terms, newest, ns_sql, nargs)
        if not parsed or order == "recent":  # one statement: the newest matches, unranked
            with self._autocommit("keyword search") as conn:
                rows = conn.execute(*self._newest_statement(parsed[1] if parsed else None, {
                    "sources": sources, "like_terms": like_terms, "newest": newest, "limit": limit}, vectors=vectors),
                                    prepare=False, binary=True).fetchall()
            self._keep_vectors(rows, read=vectors)
            return [(self._kcand(r, pos), 0.0) for pos, r in enumerate(rows, start=1)]
        phrase_list = fts.phrases(parsed[0])
        vectors = self._hits_need_vectors(vectors)  # ranked: the version read is recorded (_vectors_at)
        ranked = self._ranked_in_one_snapshot(parsed[1], sources, like_terms, newest, window, limit, phrase_list,
                                              node=parsed[0], vectors=vectors)
        if ranked is not None:
            return ranked
        with self._conn("keyword search", read=True) as conn:  # one snapshot across the statements below
            # one round trip: the build's totals, the rows to rank (their stored tokens; the text is read for
            # the chunks that make the cut only) and the phrases' term statistics
            with conn.pipeline():
                c_head = conn.execute(f"SELECT n.id, n.n_rows, n.n_tokens, n.version FROM {self._s}.namespaces n "
                                      f"WHERE {nw}", nargs)
                c_rows = conn.execute(f"SELECT seq, tokens FROM {self._s}.chunks WHERE {cond} ORDER BY seq DESC"
                                      + (" LIMIT %s" if window is not None else ""),
                                      [*args] + ([max(int(window), int(limit))] if window is not None else []),
                                      prepare=False)
                stats = self._term_stats_query(ns_sql, nargs, phrase_list)
                c_stats = conn.execute(stats[0], stats[1], prepare=False) if stats else None
            head, rows = c_head.fetchone(), c_rows.fetchall()
            if head is None or not rows:
                return []
            ns, n_rows, n_tokens, version = (int(x) for x in head)
            self._vectors_at(ns, version)
            term_stats = self._read_term_stats(c_stats.fetchall() if c_stats else [], phrase_list)
            hits = self._phrase_hits(conn, ns, version, phrase_list, term_stats)
            assert hits is not None  # counted on this connection when not remembered
            return self._ranked([(r[0], r[1], None) for r in rows], phrase_list, hits, n_rows, n_tokens, limit,
                                lambda seqs: self._rows_by_seq(conn, ns, seqs, vectors=vectors),
                                self._same_phrases(phrase_list, term_stats), node=parsed[0])

    def _match_condition(self, tsquery: str | None, sources: Sequence[str] | None, like_terms: Sequence[str],
                         newest: int | None, ns_sql: str, ns_args: Sequence[Any], *, gin: bool = False
                         ) -> tuple[str, list[Any]]:
        """The WHERE condition (and its arguments) selecting the chunks of the build ``ns_sql`` (a subquery taking
        ``ns_args``) that match ``tsquery``, are of ``sources``, contain every one of ``like_terms`` and are among
        the ``newest``. ``gin``: the tsquery is found through the GIN index (:data:`_GIN_SCAN`); else the planner
        sees it and chooses (a common word's newest matches: a walk of the chunks by seq)."""
        # through the GIN index, the build's chunks are filtered (``ns_id + 0``): a generic plan, not knowing the
        # build's share of the table, would otherwise intersect the scan with every chunk of the build's path index
        where, args = [f"ns_id + 0 = {ns_sql}" if gin else f"ns_id = {ns_sql}"], [*ns_args]
        if tsquery:
            where.append(_GIN_SCAN if gin else "tsv @@ %s::tsquery")
            args.append(tsquery)
        if sources:
            where.append("source = ANY(%s)")
            args.append(list(sources))
        for t in like_terms:
            where.append("text ILIKE %s ESCAPE '\\'")
            args.append("%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        if newest is not None:  # the newest chunks only: from the seq of the ``newest``-th newest one
            where.append(f"seq >= coalesce((SELECT seq FROM {self._s}.chunks WHERE ns_id = {ns_sql} ORDER BY seq DESC "
                         "OFFSET %s LIMIT 1), 0)")
            args += [*ns_args, max(0, int(newest) - 1)]
        return " AND ".join(where), args

    def _ranked_in_one_snapshot(self, tsquery: str, sources: Sequence[str] | None, like_terms: Sequence[str],
                                newest: int | None, window: int | None, limit: int,
                                phrase_list: Sequence[tuple[str, ...]], *, node: fts.Node | None = None,
                                vectors: bool = True) -> list[tuple[Candidate, float]] | None:
        """The ``limit`` best matches of ``tsquery`` (parsed: ``node``) by FTS5's BM25 from one statement
        (:meth:`_rank_statement`) and, when more match, a second one reading the texts of those that do. None when
        that is not enough: a phrase's chunk count must be counted, the build changed twice, or a chunk that made
        the cut changed in between (the caller then ranks in a transaction). ``vectors``: the rows carry their stored
        vectors (kept for :meth:`vector_scores`)."""
        with self._autocommit("keyword search") as conn:
            for _ in range(2):  # a second time when the build changed since the last search
                ns = self._known_build(conn)
                if ns is None:
                    return []
                sql, args = self._rank_statement(ns, tsquery, sources, like_terms, newest, window, limit, phrase_list,
                                                 vectors=vectors)
                cur = conn.execute(sql, args, prepare=_preparable(sql), binary=True)
                ranked = self._rank_finish(conn, ns, cur.fetchall(), limit, phrase_list, node=node, vectors=vectors)
                if ranked != "moved":
                    return ranked  # type: ignore[return-value]
        return None

    def _rank_finish(self, conn: Any, ns: int, found: Sequence[Sequence[Any]], limit: int,
                     phrase_list: Sequence[tuple[str, ...]],
                     known: tuple[int, tuple[dict[str, int], dict[str, tuple[int, int]]]] | None = None, *,
                     node: fts.Node | None = None, vectors: bool = True) -> list[tuple[Candidate, float]] | None | str:
        """:meth:`_rank_statement`'s rows ranked (the winners' texts read on ``conn`` when they did not come with
        them); ``"moved"`` when the build is no longer ``ns`` (:attr:`_build_seen` is the new one), None as in
        :meth:`_ranked_in_one_snapshot` or when ``known`` (the version and term statistics the statement was built
        without, :meth:`_known_stats`) is not of the version it read."""
        head = next((r for r in found if r[0] == "h"), None)
        if head is None:
            return []
        if int(head[2]) != ns:
            self._build_seen = int(head[2])
            return "moved"
        rows = [r for r in found if r[0] == "r"]
        if not rows:
            return []
        n_rows, n_tokens, version = (int(x) for x in head[3:6])
        self._vectors_at(ns, version)
        for r in found:
            if r[0] == "c" and r[2] is not None:  # a phrase's count: remembered for _phrase_hits
                self._remember((ns, version, r[1]), int(r[2]))
        if known is not None and known[0] != version:
            return None  # written since the counts read the statistics: ranked again with its own
        term_stats = known[1] if known is not None else \
            self._read_term_stats([(r[6], r[1], r[2], r[3]) for r in found if r[0] == "s"], phrase_list)
        hits = self._phrase_hits(None, ns, version, phrase_list, term_stats)
        if hits is None:
            return None
        whole = int(rows[0][3]) <= int(limit)  # every match makes the cut: the texts came with them
        if whole:
            self._keep_vectors([(int(r[2]), *r[7:]) for r in rows], read=vectors)
        xmin = {int(r[2]): r[1] for r in rows}
        fetch = lambda seqs: {s: r for s, r in self._rows_by_seq(  # noqa: E731
            conn, ns, seqs, with_xmin=True, vectors=vectors).items() if r[-1] == xmin[s]}
        return self._ranked([(int(r[2]), r[6], (int(r[2]), *r[7:]) if whole else None) for r in rows],
                            phrase_list, hits, n_rows, n_tokens, limit, fetch,
                            self._same_phrases(phrase_list, term_stats), self._known_sets(ns, version, phrase_list),
                            node=node)

    def _rank_statement(self, ns: int, tsquery: str, sources: Sequence[str] | None, like_terms: Sequence[str],
                        newest: int | None, window: int | None, limit: int, phrase_list: Sequence[tuple[str, ...]],
                        *, with_stats: bool = True, vectors: bool = True) -> tuple[str, list[Any]]:
        """One statement (one snapshot) reading, over build ``ns``, an ``h`` row (the build this store reads and
        its totals), ``s`` rows (the phrases' term statistics, unless not ``with_stats``) and ``r`` rows: the
        matches' seqs and stored tokens, with their candidate columns (and, with ``vectors``, stored vectors) when
        they are no more than ``limit``."""
        nw, nargs = self._build_where()
        cond, args = self._match_condition(tsquery, sources, like_terms, newest, "%s", [ns], gin=True)
        stats = self._term_stats_query("%s", [ns], phrase_list) if with_stats else None
        counts, count_args = self._phrase_counts_query(ns, phrase_list)
        lim = max(int(window), int(limit)) if window is not None else None
        sql = (f"WITH h AS MATERIALIZED (SELECT n.id, n.n_rows, n.n_tokens, n.version FROM {self._s}.namespaces n "
               f"WHERE {nw}) "
               "SELECT 'h', NULL::text, id, n_rows, n_tokens, version, NULL::text, NULL::text, NULL::text, NULL::text, "
               "NULL::int, NULL::int, NULL::text, NULL::text, NULL::bytea, NULL::bytea FROM h"
               + (" UNION ALL SELECT 's', s.term, s.n_terms, s.n_docs, NULL, NULL, s.kind, NULL, NULL, NULL, NULL, "
                  f"NULL, NULL, NULL, NULL, NULL FROM ({stats[0]}) s(kind, term, n_terms, n_docs)" if stats else "")
               + "".join(f" UNION ALL SELECT 'c', %s, ({c}), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                         "NULL, NULL, NULL, NULL" for c in counts)
               # the candidate columns when every match makes the cut (else the winners' are read apart)
               + " UNION ALL SELECT 'r', r.xmin::text, r.seq, r.total, NULL, NULL, r.tokens, "
               + ", ".join(f"CASE WHEN r.total <= {int(limit)} THEN r.{col} END"
                           for col in ("id", "path", "source", "start_line", "end_line", "text", "model"))
               # the vectors looked up for those rows only (not carried through the sort of every match)
               + ("".join(f", CASE WHEN r.total <= {int(limit)} THEN (SELECT {col} FROM {self._s}.chunks v WHERE "
                          f"v.ns_id = %s AND v.seq = r.seq) END"
                          for col in ("vector_send(v.embedding)", "v.raw_embedding")) if vectors else
                  ", NULL::bytea, NULL::bytea")
               + f" FROM (SELECT m.*, count(*) OVER () AS total FROM (SELECT xmin, {_KEYWORD_COLS}, model, tokens FROM "
               f"{self._s}.chunks WHERE {cond} ORDER BY seq DESC" + (f" LIMIT {lim}" if lim is not None else "")
               + ") m) r")
        return sql, [*nargs, *(stats[1] if stats else []), *count_args, *([ns, ns] if vectors else []), *args]

    def _phrase_counts_query(self, ns: int, phrase_list: Sequence[tuple[str, ...]]) -> tuple[list[str], list[Any]]:
        """Subqueries counting, in build ``ns``, the chunks of each phrase whose count :meth:`_phrase_hits` cannot
        read from the term statistics and does not remember for the build's last known version (a longer phrase;
        a prefix, unless at most one token starts with it: the count is then NULL), and their arguments (each
        subquery's tsquery first)."""
        head = self._count_head
        parts: list[str] = []
        args: list[Any] = []
        for p in dict.fromkeys(phrase_list):
            q = fts.to_tsquery(fts.Node("phrase", p))
            if q is None or (len(p) == 1 and not p[0].endswith(fts.PREFIX)) or (
                    head is not None and head[0] == ns and (*head, q) in self._counts):
                continue
            count = f"SELECT count(*) FROM {self._s}.chunks WHERE ns_id + 0 = %s AND {_GIN_SCAN}"
            if len(p) == 1:  # a prefix: counted only when two tokens or more start with it
                parts.append(f"CASE WHEN (SELECT count(*) FROM (SELECT 1 FROM {self._s}.terms WHERE ns_id = %s AND "
                             f"term LIKE %s LIMIT 2) t) <= 1 THEN NULL ELSE ({count}) END")
                args += [q, ns, self._like_prefix(p[0][:-1]), ns, q]
            else:
                parts.append(count)
                args += [q, ns, q]
        return parts, args

    @_retry_once
    def keyword_search_many(self, queries: Sequence[Mapping[str, Any]]) -> list[list[tuple[Candidate, float]]]:
        """:meth:`keyword_search` of each of ``queries``, the BM25-ranked ones in one round trip (one snapshot)."""
        if not any(q.get("like_terms") for q in queries):
            found = self._answered_by_copy([q.get("match") or "" for q in queries],
                                           lambda copy: copy.keyword_search_many(queries))
            if found is not _ON_SERVER:
                return found  # type: ignore[no-any-return]
        out: dict[int, list[tuple[Candidate, float]]] = {}
        parsed = {i: p for i, q in enumerate(queries) if q.get("match") and int(q["limit"]) > 0
                  and (p := self._parse(q["match"])) is not None}
        ranked = {i: (p, queries[i]) for i, p in parsed.items() if queries[i].get("order", "rank") == "rank"}
        vectors = any(q.get("vectors", True) for q in queries)  # one search's: all alike
        ranked_vectors = self._hits_need_vectors(vectors)  # the ranked ones record the version they read
        if parsed:
            with self._autocommit("keyword search") as conn:
                ns = self._known_build(conn)
                if ns is None:
                    return [[] for _ in queries]
                lists = {i: fts.phrases(p[0]) for i, (p, _) in ranked.items()}
                known = {i: self._known_stats(ns, lists[i]) for i in ranked}  # read by this search's counts
                with conn.pipeline():  # each statement a snapshot of its own
                    statements = {i: self._rank_statement(
                        ns, p[1], q.get("sources"), q.get("like_terms", ()), q.get("newest"), q.get("window"),
                        int(q["limit"]), lists[i], with_stats=known[i] is None, vectors=ranked_vectors)
                        for i, (p, q) in ranked.items()}
                    cursors = {i: conn.execute(sql, args, prepare=_preparable(sql), binary=True)
                               for i, (sql, args) in statements.items()}
                    newest = {i: conn.execute(*self._newest_statement(p[1], queries[i], vectors=vectors), prepare=False,
                                              binary=True) for i, p in parsed.items() if i not in ranked}
                for i, cur in cursors.items():
                    done = self._rank_finish(conn, ns, cur.fetchall(), int(queries[i]["limit"]), lists[i], known[i],
                                             node=ranked[i][0][0], vectors=ranked_vectors)
                    if isinstance(done, list):
                        out[i] = done
                for i, cur in newest.items():
                    rows = cur.fetchall()
                    self._keep_vectors(rows, read=vectors)
                    out[i] = [(self._kcand(r, pos), 0.0) for pos, r in enumerate(rows, start=1)]
        return [out[i] if i in out else self.keyword_search(**q) for i, q in enumerate(queries)]

    def _newest_statement(self, tsquery: str | None, query: Mapping[str, Any], *, vectors: bool = True
                          ) -> tuple[str, list[Any]]:
        """The statement of :meth:`keyword_search` with ``order="recent"`` (``query`` its keyword arguments): the
        newest matches of ``tsquery``, unranked, in the build this store reads (resolved by the statement), with
        their stored vectors when ``vectors``."""
        nw, nargs = self._build_where()
        ns_sql = f"(SELECT n.id FROM {self._s}.namespaces n WHERE {nw})"
        cond, args = self._match_condition(tsquery, query.get("sources"), query.get("like_terms", ()),
                                           query.get("newest"), ns_sql, nargs)
        cols = _VECTOR_COLS if vectors else _NO_VECTOR_COLS
        return (f"SELECT {_KEYWORD_COLS}, {cols} FROM {self._s}.chunks WHERE {cond} ORDER BY seq DESC LIMIT %s",
                [*args, int(query["limit"])])

    def _rows_by_seq(self, conn: Any, ns: int, seqs: Sequence[int], *, with_xmin: bool = False,
                     vectors: bool = True) -> dict[int, tuple[Any, ...]]:
        """The candidate columns of the chunks ``seqs`` of build ``ns`` and, with ``vectors``, their stored vectors
        (kept for :meth:`vector_scores`), and each row's ``xmin``, by seq."""
        cols = f"{_KEYWORD_COLS}, {_VECTOR_COLS if vectors else _NO_VECTOR_COLS}" + (", xmin::text" if with_xmin else "")
        rows = conn.execute(f"SELECT {cols} FROM {self._s}.chunks WHERE ns_id = %s AND seq = ANY(%s)",
                            (ns, list(seqs)), binary=True).fetchall()
        self._keep_vectors(rows, read=vectors)
        return {int(r[0]): tuple(r) for r in rows}

    def _hits_need_vectors(self, asked: bool) -> bool:
        """Whether a keyword search reads its hits' vectors (for :meth:`vector_scores`): when ``asked`` and no
        current in-memory copy of the namespace's vectors scores them instead."""
        return asked and self._current_copy() is None

    def _current_copy(self, dims: int | None = None) -> VectorMatrix | None:
        """The in-memory copy of the namespace's vectors (:mod:`.vector_copy`, of ``dims`` dimensions when given)
        when it is of the build and version this store's searches last read, and this store has not written since."""
        head = self._vectors_head
        if not self.memory_cache or head is None:
            return None
        return self._vector_copy.get(f"{head[0]}:{head[1]}", dims)

    def _keep_vectors(self, rows: Sequence[Sequence[Any]], *, read: bool) -> None:
        """Keep the stored vectors of keyword candidates ``rows`` (:data:`_KEYWORD_COLS` then :data:`_VECTOR_COLS`)
        for :meth:`vector_scores`; nothing when the rows were ``read`` without them (:data:`_NO_VECTOR_COLS`)."""
        if not read:
            return
        kept = self._hit_vectors
        if len(kept) > _KEPT_VECTORS:
            kept = self._hit_vectors = {}
        for r in rows:
            kept[r[1]] = (r[7], r[8], r[9])

    def _vectors_at(self, ns: int, version: int) -> None:
        """Drop the kept vectors when build ``ns`` at ``version`` (what a search just read) is not the one they were
        read at; :meth:`vector_scores` scores at that version."""
        if self._vectors_head != (ns, version):
            self._hit_vectors, self._vectors_head = {}, (ns, version)

    @staticmethod
    def _ranked(rows: Sequence[tuple[int, str | None, Sequence[Any] | None]], phrase_list: Sequence[tuple[str, ...]],
                hits: Sequence[int], n_rows: int, n_tokens: int, limit: int,
                fetch: Callable[[list[int]], dict[int, Sequence[Any]]], same: Sequence[int | None],
                within: Sequence[frozenset[int] | None] | None = None, *, node: fts.Node | None = None
                ) -> list[tuple[Candidate, float]] | None:
        """The ``limit`` best of ``rows`` (``seq, tokens``, and the candidate columns when already read) by FTS5's
        BM25 (``same`` as :func:`~.fts.bm25_scores` takes it; ``within``: per phrase, the seqs of every chunk holding
        it, or None; ``node``: the expression the phrases come from); the candidate columns of the others come from
        ``fetch`` (seqs → rows by seq). None when ``fetch`` misses one."""
        ranks = fts.bm25_scores([r[1] or "" for r in rows], phrase_list, hits, n_rows, n_tokens / max(1, n_rows), same,
                                within=within, keys=[r[0] for r in rows] if within is not None else None, node=node)
        order_ix = sorted(range(len(rows)), key=lambda i: (ranks[i], -rows[i][0]))[: int(limit)]
        missing = [rows[i][0] for i in order_ix if rows[i][2] is None]
        read = fetch(missing) if missing else {}
        if len(read) < len(missing):
            return None
        return [(PostgresStore._kcand(rows[i][2] or read[rows[i][0]], pos), ranks[i])
                for pos, i in enumerate(order_ix, start=1)]

    @staticmethod
    def _like_prefix(prefix: str) -> str:
        """A LIKE pattern for the terms starting with ``prefix``."""
        return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"

    @staticmethod
    def _stat_keys(phrase_list: Sequence[tuple[str, ...]]) -> tuple[list[str], list[str]]:
        """The whole tokens and the one-token prefixes (without ``*``) whose statistics the phrases need."""
        unique = list(dict.fromkeys(phrase_list))
        tokens = sorted({t for p in unique for t in p if not t.endswith(fts.PREFIX)})
        prefixes = sorted({p[0][:-1] for p in unique if len(p) == 1 and p[0].endswith(fts.PREFIX)})
        return tokens, prefixes

    def _term_stats_query(self, ns_sql: str, ns_args: Sequence[Any], phrase_list: Sequence[tuple[str, ...]]
                          ) -> tuple[str, list[Any]] | None:
        """One statement reading, from the term statistics of the build ``ns_sql`` selects (no scan of the
        chunks), how many chunks hold each whole token of the phrases, and for each one-token prefix how
        many distinct tokens start with it and the largest chunk count among them."""
        tokens, prefixes = self._stat_keys(phrase_list)
        parts: list[str] = []
        args: list[Any] = []
        if tokens:
            parts.append(f"SELECT 'w', term, 1, n_docs FROM {self._s}.terms WHERE ns_id = {ns_sql} AND term = ANY(%s)")
            args += [*ns_args, tokens]
        for p in prefixes:  # a constant pattern per prefix (unprepared): each is a range scan of the terms_prefix index
            parts.append(f"SELECT 'p', %s, count(*), coalesce(max(n_docs), 0) FROM {self._s}.terms "
                         f"WHERE ns_id = {ns_sql} AND term LIKE %s")
            args += [p, *ns_args, self._like_prefix(p)]
        return (" UNION ALL ".join(parts), args) if parts else None

    @staticmethod
    def _same_phrases(phrase_list: Sequence[tuple[str, ...]], stats: tuple[dict[str, int], dict[str, tuple[int, int]]]
                      ) -> list[int | None]:
        """For each phrase, an earlier one found exactly as often in every chunk (:func:`~.fts.bm25_scores`'s
        ``same``): a repeat, or for a one-token prefix that the term statistics ``stats`` show starts a single token
        of the index which is a phrase too, that token's phrase (the prefix occurs wherever the token does)."""
        singles, by_prefix = stats
        first: dict[tuple[str, ...], int] = {}
        out: list[int | None] = []
        for j, p in enumerate(phrase_list):
            key = p
            if len(p) == 1 and p[0].endswith(fts.PREFIX) and by_prefix.get(p[0][:-1], (0, 0))[0] == 1 \
                    and singles.get(p[0][:-1], 0) > 0:
                key = (p[0][:-1],)  # the one token it starts is that word
            out.append(first.get(key))
            first.setdefault(key, j)
        return out

    def _read_term_stats(self, found: Sequence[Sequence[Any]], phrase_list: Sequence[tuple[str, ...]]
                         ) -> tuple[dict[str, int], dict[str, tuple[int, int]]]:
        """:meth:`_term_stats_query`'s rows as (chunks per token, (tokens, largest chunk count) per prefix)."""
        tokens, prefixes = self._stat_keys(phrase_list)
        singles = {t: 0 for t in tokens}
        by_prefix = {p: (0, 0) for p in prefixes}
        for kind, term, n_terms, n_docs in found:
            if kind == "w":
                singles[term] = int(n_docs)
            else:
                by_prefix[term] = (int(n_terms), int(n_docs))
        return singles, by_prefix

    def _phrase_hits(self, conn: Any | None, ns: int, version: int, phrase_list: Sequence[tuple[str, ...]],
                     stats: tuple[dict[str, int], dict[str, tuple[int, int]]]) -> list[int] | None:
        """How many chunks of the namespace contain each phrase (FTS5's per-phrase document frequency):
        a one-token phrase's count is read from the term statistics ``stats``, and so is a one-token prefix's
        when a single token of the namespace starts with it; a longer phrase or a prefix of several
        tokens is counted through the GIN index on ``conn`` (0 at once when one of its whole tokens is in no
        chunk) and remembered until the namespace is written again. None when such a count is needed and not
        remembered, and ``conn`` is None."""
        unique = list(dict.fromkeys(phrase_list))
        singles, by_prefix = stats
        known: dict[tuple[str, ...], int] = {}
        for p in unique:
            q = fts.to_tsquery(fts.Node("phrase", p))
            one_prefix = by_prefix.get(p[0][:-1]) if len(p) == 1 and p[0].endswith(fts.PREFIX) else None
            if q is None or any(singles.get(t, 0) == 0 for t in p if not t.endswith(fts.PREFIX)):
                known[p] = 0
            elif len(p) == 1 and not p[0].endswith(fts.PREFIX):
                known[p] = singles[p[0]]
            elif one_prefix is not None and one_prefix[0] <= 1:  # no token or one token starts with it
                known[p] = one_prefix[1]
            else:
                key = (ns, version, q)
                if key not in self._counts:
                    if conn is None:
                        return None
                    self._remember(key, int(conn.execute(
                        f"SELECT count(*) FROM {self._s}.chunks WHERE ns_id = %s AND tsv @@ %s::tsquery", (ns, q),
                        prepare=False).fetchone()[0]))
                known[p] = self._counts[key]
        return [known[p] for p in phrase_list]

    def _remember(self, key: tuple[int, int, str], count: int) -> None:
        if len(self._counts) > 20_000:
            self._counts.clear()
        self._counts[key] = count

    @staticmethod
    def _kcand(r: Sequence[Any], pos: int) -> Candidate:
        return Candidate(id=r[1], path=r[2], source=r[3], start_line=int(r[4]), end_line=int(r[5]), text=r[6],
                         text_rank=pos)

    @_retry_once
    def count_matches(self, match: str, *, cap: int) -> int:
        return self.count_matches_many([match], cap=cap)[0]

    def _count_statement(self, node: fts.Node | None, q: str, cap: int) -> tuple[str, list[Any], str, int | None]:
        """One statement for a capped count (build id, version, then the count or the statistics), how to read
        it, and the count remembered for ``q`` at the build's last known version. A whole token's count is its
        term statistics; a one-token prefix's too when none, one, or a token with at least ``cap`` chunks starts
        with it (the statement reads those statistics); anything else (``node`` None: such a prefix otherwise)
        is counted through the GIN index, unless remembered for the build's version (the count is then NULL)."""
        nw, nargs = self._build_where()
        tok = node.tokens[0] if node is not None and node.op == "phrase" and len(node.tokens) == 1 else None
        if tok is not None:  # a whole token's statistics, or a prefix's (a range scan of the terms' prefix index)
            on, arg = ("t.term LIKE %s", self._like_prefix(tok[:-1])) if tok.endswith(fts.PREFIX) else ("t.term = %s", tok)
            return (f"SELECT n.id, n.version, coalesce(max(t.n_docs), 0), count(t.term) FROM {self._s}.namespaces n "
                    f"LEFT JOIN {self._s}.terms t ON t.ns_id = n.id AND {on} WHERE {nw} GROUP BY n.id, n.version",
                    [arg, *nargs], "prefix" if tok.endswith(fts.PREFIX) else "token", None)
        head = self._count_head
        remembered = self._counts.get((*head, q)) if head is not None else None
        skip, skip_args = ("s.id = %s AND s.version = %s", list(head)) if head is not None and remembered is not None \
            else ("FALSE", [])
        return (f"SELECT s.id, s.version, CASE WHEN {skip} THEN NULL ELSE (SELECT count(*) FROM (SELECT 1 FROM "
                f"{self._s}.chunks c WHERE c.ns_id = s.id AND c.tsv @@ %s::tsquery LIMIT %s) m) END "
                f"FROM (SELECT n.id, n.version FROM {self._s}.namespaces n WHERE {nw}) s",
                [*skip_args, q, int(cap), *nargs], "count", remembered)

    def _run_counts(self, plans: dict[int, tuple[str, list[Any], str, int | None]]) -> dict[int, Any]:
        """The rows of ``plans``' statements, sent in one round trip (each statement its own snapshot)."""
        with self._autocommit("keyword search") as conn, conn.pipeline():
            cursors = {i: conn.execute(sql, args, prepare=False) for i, (sql, args, _, _) in plans.items()}
        return {i: cur.fetchone() for i, cur in cursors.items()}

    def _sets_statement(self, parsed: Mapping[int, tuple[fts.Node, str]], cap: int, ns: int) -> tuple[str, list[Any]]:
        """One statement (one snapshot) for the capped counts and the chunks counted of every match of ``parsed``
        (index → node, tsquery), a row per match in build ``ns``: build id, version, the index, the count or, for a
        prefix, the most chunks one token it starts is in; the seqs of the chunks selected (NULL from ``cap`` on;
        listed only when ``ns`` is the build this store reads); for a prefix that starts a single token which is
        also one of the whole tokens asked, that token (its chunks are then listed once, for the token); and for a
        prefix how many tokens it starts, 2 for more. A whole token is counted by its term statistics; a prefix one
        of whose tokens alone reaches ``cap`` too. The matches travel as arrays (as subqueries: a plan sees neither
        their values nor their lengths), so the statement's text is the same for any query of a store and the
        server keeps its generic plan; its tsqueries reach the GIN index scan as parameters (a bitmap scan: no
        run-time settings, no transaction of its own)."""
        nw, nargs = self._build_where()
        keys: list[int] = []
        tokens: list[str | None] = []
        lows: list[str | None] = []
        highs: list[str | None] = []
        queries: list[str] = []
        for i, (node, q) in parsed.items():
            tok = node.tokens[0] if node.op == "phrase" and len(node.tokens) == 1 else None
            prefix = tok[:-1] if tok is not None and tok.endswith(fts.PREFIX) else None
            keys.append(i)
            tokens.append(tok if prefix is None else None)
            lows.append(prefix)
            highs.append(_after_prefix(prefix) if prefix is not None else None)
            queries.append(q)
        words = [t for t in tokens if t is not None]
        most = "coalesce(w.most, p.most, 0)"
        same = "CASE WHEN p.terms = 1 AND p.term = ANY(%s::text[]) THEN p.term END"  # a token listed for itself
        # the build's chunks filtered (ns_id + 0), not looked up in the path index (a generic plan would intersect
        # the GIN index scan with every chunk of the build there)
        return (f"SELECT n.id, n.version, k.i, {most}, CASE WHEN {most} < {int(cap)} AND {same} IS NULL THEN ARRAY("
                f"SELECT c.seq FROM {self._s}.chunks c WHERE c.ns_id + 0 = %s AND n.id = %s AND c.tsv @@ k.q "
                f"LIMIT {int(cap)}) END, "
                f"{same}, p.terms "
                f"FROM {self._s}.namespaces n CROSS JOIN unnest((SELECT %s::int[]), (SELECT %s::text[]), "
                "(SELECT %s::text[]), (SELECT %s::text[]), (SELECT %s::text[]::tsquery[])) AS k(i, tok, lo, hi, q) "
                f"LEFT JOIN LATERAL (SELECT max(t.n_docs) AS most FROM {self._s}.terms t WHERE t.ns_id = n.id AND "
                "t.term = k.tok) w ON k.tok IS NOT NULL "
                # one range scan of the prefix index: the most chunks a token it starts is in, how many tokens it starts
                # (2 for more) and the first of them
                f"LEFT JOIN LATERAL (SELECT max(t.n_docs) AS most, least(count(*), 2) AS terms, min(t.term) AS term "
                f"FROM {self._s}.terms t WHERE t.ns_id = n.id AND t.term ~>=~ k.lo AND t.term ~<~ k.hi) p "
                "ON k.lo IS NOT NULL "
                f"WHERE {nw}",
                [words, ns, ns, words, keys, tokens, lows, highs, queries, *nargs])

    def _remember_stats(self, parsed: Mapping[int, tuple[fts.Node, str]], found: Mapping[int, Sequence[Any]]) -> None:
        """Keep, for this thread, the term statistics :meth:`_sets_statement`'s rows ``found`` read (in the form of
        :meth:`_read_term_stats`: chunks per whole token, and per one-token prefix how many tokens it starts, 2 for
        more, and the most chunks one of them is in), with the build and version they describe."""
        singles: dict[str, int] = {}
        prefixes: dict[str, tuple[int, int]] = {}
        heads = {(int(row[0]), int(row[1])) for row in found.values()}
        if len(heads) != 1:
            return
        for i, row in found.items():
            node = parsed[i][0]
            if node.op != "phrase" or len(node.tokens) != 1:
                continue
            token = node.tokens[0]
            if token.endswith(fts.PREFIX):
                if _after_prefix(token[:-1]) is not None:  # else its range was not read
                    prefixes[token[:-1]] = (int(row[6] or 0), int(row[3]))
            else:
                singles[token] = int(row[3])
        self._stats_read.value = (*heads.pop(), singles, prefixes)

    def _known_stats(self, ns: int, phrase_list: Sequence[tuple[str, ...]]
                     ) -> tuple[int, tuple[dict[str, int], dict[str, tuple[int, int]]]] | None:
        """The version of build ``ns`` and the term statistics of ``phrase_list`` as this thread's last match counts
        read them; None when they did not read them all."""
        read = getattr(self._stats_read, "value", None)
        if read is None or read[0] != ns:
            return None
        tokens, prefixes = self._stat_keys(phrase_list)
        singles, by_prefix = read[2], read[3]
        if any(t not in singles for t in tokens) or any(p not in by_prefix for p in prefixes):
            return None
        return read[1], ({t: singles[t] for t in tokens}, {p: by_prefix[p] for p in prefixes})

    @contextlib.contextmanager
    def _keywords_here(self) -> Iterator[SQLiteStore | None]:
        """The keyword copy (:mod:`.keyword_copy`) for one search when it holds the build's current version, read
        in one round trip (and then recorded as the one this search read); None otherwise: the search runs on the
        server, and the copy is brought up to date meanwhile."""
        copy = self._keyword_copy
        if copy is None:
            yield None
            return
        if copy.generation is None or self._older_than_seen(copy.generation):  # known to be behind: no round trip
            copy.start_update(None)
            yield None
            return
        generation = self.generation()
        with copy.searching(generation) as found:
            if found is None:
                copy.start_update(generation)
            else:
                self._read_at(generation)
            yield found

    def _answered_by_copy(self, matches: Sequence[str], ask: Callable[[SQLiteStore], Any]) -> Any:
        """What ``ask`` returns of the keyword copy for ``matches`` when it holds the build's current version
        (:meth:`_keywords_here`); :data:`_ON_SERVER` when it does not, when FTS5 would read one of ``matches`` otherwise
        than the server (:func:`_read_alike`), or when the copy cannot answer: the server's path answers then."""
        if not _read_alike(matches):
            return _ON_SERVER
        with self._keywords_here() as copy:
            if copy is None:
                return _ON_SERVER
            try:
                return ask(copy)
            except StoreError as exc:
                log.debug("the keyword copy of %s could not answer (%s): asking the server", self.safe_url, exc)
                return _ON_SERVER

    def _read_at(self, generation: str) -> None:
        """Record ``generation`` as the one this thread's search read (:meth:`search_generation`, the kept vectors)
        without the server's per-search state, which describes another read."""
        self._generation_read.value = generation
        self._stats_read.value = None
        self._sets_read.value = None
        build, _, version = generation.partition(":")
        if build.isdigit():
            self._vectors_at(int(build), int(version))

    @_retry_once
    def match_sets_many(self, matches: Sequence[str], *, cap: int) -> list[tuple[int, frozenset[object] | None]]:
        """The counts, and the seqs of the chunks of each match below ``cap``, in one statement (one snapshot)."""
        found = self._answered_by_copy(matches, lambda copy: copy.match_sets_many(matches, cap=cap))
        if found is not _ON_SERVER:
            return found  # type: ignore[no-any-return]
        out: list[tuple[int, frozenset[object] | None]] = [(0, frozenset())] * len(matches)
        self._generation_read.value = None  # set below by the counts that read it
        self._stats_read.value = None
        self._sets_read.value = None
        parsed = {i: p for i, m in enumerate(matches) if m and cap > 0 and (p := self._parse(m)) is not None}
        if not parsed:
            return out
        with self._autocommit("keyword search") as conn:
            for _ in range(2):  # a second time when the build changed since the last search
                ns_seen = self._known_build(conn)
                if ns_seen is None:
                    return out
                found = {int(row[2]): row for row in conn.execute(*self._sets_statement(parsed, cap, ns_seen),
                                                                  prepare=True, binary=True).fetchall()}
                builds = {int(row[0]) for row in found.values()}
                if builds <= {ns_seen}:
                    break
                self._build_seen = max(builds)
            else:
                return [(n, None) for n in self.count_matches_many(matches, cap=cap)]
        by_token = {parsed[i][0].tokens[0]: row[4] for i, row in found.items() if row[5] is None and
                    parsed[i][0].op == "phrase" and len(parsed[i][0].tokens) == 1}  # a whole token's (or a prefix's)
        self._remember_stats(parsed, found)
        listed: dict[tuple[str, ...], frozenset[int]] = {}
        for i, row in found.items():
            ns, version, most = int(row[0]), int(row[1]), int(row[3])
            seqs = row[4] if row[5] is None else by_token[row[5]]  # a prefix of one token: that token's chunks
            self._count_head = (ns, version)
            self._generation_read.value = f"{ns}:{version}"
            node, q = parsed[i]
            whole_token = node.op == "phrase" and len(node.tokens) == 1 and not node.tokens[0].endswith(fts.PREFIX)
            n = most if whole_token else len(seqs) if seqs is not None else int(cap)
            if seqs is not None and len(seqs) < cap:
                if not whole_token:  # the exact count: keyword_search's BM25 needs it for the same phrase
                    self._remember((ns, version, q), len(seqs))
                out[i] = (min(n, int(cap)), frozenset(seqs))
                if node.op == "phrase":
                    listed[node.tokens] = out[i][1]  # type: ignore[assignment]
            else:
                out[i] = (min(n, int(cap)), None)
        heads = {(int(row[0]), int(row[1])) for row in found.values()}
        if len(heads) == 1:
            self._vectors_at(*next(iter(heads)))
        self._sets_read.value = (*heads.pop(), listed) if len(heads) == 1 else None
        return out

    def _known_sets(self, ns: int, version: int, phrase_list: Sequence[tuple[str, ...]]
                    ) -> list[frozenset[int] | None] | None:
        """Per phrase, the seqs of every chunk of build ``ns`` at ``version`` that holds it, as this thread's last
        match counts listed them (a longer phrase: the chunks holding all its words), or None where they did not;
        None when they listed none at that version."""
        read = getattr(self._sets_read, "value", None)
        if read is None or read[0] != ns or read[1] != version:
            return None
        listed: dict[tuple[str, ...], frozenset[int]] = read[2]
        out: list[frozenset[int] | None] = []
        for p in phrase_list:
            found = listed.get(p)
            if found is None and len(p) > 1 and all((t,) in listed for t in p):
                found = frozenset.intersection(*(listed[(t,)] for t in p))
            out.append(found)
        return out if any(x is not None for x in out) else None

    @_retry_once
    def count_matches_many(self, matches: Sequence[str], *, cap: int) -> list[int]:
        counted = self._answered_by_copy(matches, lambda copy: copy.count_matches_many(matches, cap=cap))
        if counted is not _ON_SERVER:
            return counted  # type: ignore[no-any-return]
        out = [0] * len(matches)
        parsed = {i: p for i, m in enumerate(matches) if m and cap > 0 and (p := self._parse(m)) is not None}
        plans = {i: self._count_statement(node, q, cap) for i, (node, q) in parsed.items()}
        while plans:  # one round trip, and a second for the prefixes their statistics do not settle
            again: dict[int, tuple[str, list[Any], str, int | None]] = {}
            for i, row in self._run_counts(plans).items():
                if row is None:  # no build: nothing to count
                    continue
                ns, version, n = int(row[0]), int(row[1]), row[2]
                kind, remembered, q = plans[i][2], plans[i][3], parsed[i][1]
                self._count_head = (ns, version)
                if kind == "token" or (kind == "prefix" and (int(row[3]) <= 1 or int(n) >= cap)):
                    out[i] = min(int(n), int(cap))
                elif kind == "prefix":
                    again[i] = self._count_statement(None, q, cap)
                elif n is None and remembered is not None:  # remembered for this version
                    out[i] = min(remembered, int(cap))
                elif n is not None:
                    if int(n) < cap:  # the exact count: keyword_search's BM25 needs it for the same phrase
                        self._remember((ns, version, q), int(n))
                    out[i] = int(n)
            plans = again
        return out

    # ---- vector search ------------------------------------------------------------------------------

    def _index_name(self, ns: int, dims: int) -> str:
        return f"chunks_hnsw_{ns}_{dims}"

    @staticmethod
    def _index_pattern(ns: int) -> str:
        """A LIKE pattern matching the HNSW indexes of build ``ns`` only (``_`` escaped: unescaped, build 1's
        pattern would also match build 12's indexes)."""
        return f"chunks\\_hnsw\\_{int(ns)}\\_%"

    @staticmethod
    def _cast(dims: int) -> tuple[str, str]:
        """The type a vector of ``dims`` dimensions is indexed as, and its cosine operator class."""
        if dims > _VECTOR_INDEX_MAX_DIMS:
            return f"halfvec({dims})", "halfvec_cosine_ops"
        return f"vector({dims})", "vector_cosine_ops"

    @_retry_once
    def vector_search(
        self, query: np.ndarray, *, limit: int, sources: Sequence[str] | None = None, model: str | None = None
    ) -> list[Candidate]:
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if limit <= 0 or q.size == 0 or not _finite(q) or not np.any(q):
            return []  # a zero or non-finite query has no direction: nothing is similar to it
        dims = int(q.size)
        picked = self._picked_from_copy(q, limit, sources, model)  # before taking a connection: numpy's part
        if picked is not None and (local := self._picked_from_keyword_copy(*picked)) is not None:
            return local
        with self._autocommit("vector search") as conn:
            ranked = self._rows_of_picked(conn, *picked) if picked is not None else None
            if ranked is None:
                filt, args = "", []
                if sources:
                    filt += " AND source = ANY(%s)"
                    args.append(list(sources))
                if model is not None:
                    filt += " AND model = %s"
                    args.append(model)
                rows, seen = self._vector_rows(conn, q, limit, filt, args)
        if ranked is not None:
            return [self._vcand(row, score, pos) for pos, (row, score) in enumerate(ranked, start=1)]
        if self.memory_cache:  # after the search, which the load would slow down
            self._vector_copy.start_loading(dims, lambda: seen)
        if not rows:
            return []
        # rescored exactly as the SQLite store scores (float64 over unit vectors): the same chunk scores the
        # same on both backends, and rows pgvector's float32 distance put in a slightly different order settle
        embs = np.stack([_array(r[7]) for r in rows])
        scores = exact_scores(unit_rows(embs)[0], unit_rows(q.reshape(1, -1))[0][0])
        order = sorted(range(len(rows)), key=lambda i: (-scores[i], rows[i][0]))[: int(limit)]
        return [self._vcand(rows[i], float(scores[i]), pos, embs[i]) for pos, i in enumerate(order, start=1)]

    @staticmethod
    def _vcand(row: Sequence[Any], score: float, rank: int, embedding: np.ndarray | None = None) -> Candidate:
        """A vector search's candidate from its row (``seq, id, path, source, start_line, end_line, text,
        embedding``)."""
        return Candidate(id=row[1], path=row[2], source=row[3], start_line=int(row[4]), end_line=int(row[5]),
                         text=row[6], vector_score=score, vector_rank=rank,
                         embedding=_array(row[7]) if embedding is None else embedding)

    def _vector_head(self, dims: int) -> tuple[str, list[Any]]:
        """A statement reading the build's id, whether its HNSW index for ``dims`` dimensions exists, and the
        build's version."""
        nw, nargs = self._build_where()
        return (f"SELECT n.id, to_regclass(format('%%I.%%I', %s::text, 'chunks_hnsw_' || n.id || '_' || %s::int)) "
                f"IS NOT NULL, n.version FROM {self._s}.namespaces n WHERE {nw}", [self.schema, dims, *nargs])

    def _picked_from_copy(self, q: np.ndarray, limit: int, sources: Sequence[str] | None, model: str | None
                          ) -> tuple[VectorMatrix, list[tuple[str, float]]] | None:
        """The in-memory copy of the build's vectors of ``q``'s size (:mod:`.vector_copy`) and the ``limit`` nearest
        ``q`` in it, best first, scored as :meth:`vector_search` rescores the server's rows; None when no copy of
        that size is loaded, or it is older than a version a search has read since."""
        copy = self._vector_copy.latest(int(q.size)) if self.memory_cache else None
        if copy is None or self._older_than_seen(copy.generation):
            return None
        return copy, copy.search(q, limit, sources, model)

    def _picked_from_keyword_copy(self, copy: VectorMatrix, hits: Sequence[tuple[str, float]]
                                  ) -> list[Candidate] | None:
        """``hits`` (picked from ``copy``) as candidates made of their chunks in the keyword copy, when both copies
        hold the build's current version (read in one round trip); None otherwise."""
        keywords = self._keyword_copy
        if keywords is None or keywords.generation != copy.generation:
            return None  # not worth the round trip
        with self._keywords_here() as found:
            if found is None or keywords.generation != copy.generation:
                return None
            chunks = {c.id: c for c in found.get_chunks([chunk_id for chunk_id, _ in hits])}
        if len(chunks) != len(hits):
            return None
        return [Candidate(id=c.id, path=c.path, source=c.source, start_line=c.start_line,  # type: ignore[arg-type]
                          end_line=c.end_line, text=c.text, vector_score=score, vector_rank=pos, embedding=c.embedding)
                for pos, (c, score) in enumerate(((chunks[i], s) for i, s in hits), start=1)]

    def _rows_of_picked(self, conn: Any, copy: VectorMatrix, hits: Sequence[tuple[str, float]]
                        ) -> list[tuple[Any, float]] | None:
        """``hits`` (picked from ``copy``) each with its row as :meth:`_vector_rows` reads it, read in one statement
        with the build's current version; None when that is not the copy's version (a write, from any host, since
        the copy was read)."""
        ids = [chunk_id for chunk_id, _ in hits]
        nw, nargs = self._build_where()
        read = conn.execute(  # one statement, one snapshot: the build's version and the rows of that version
            f"SELECT h.id, h.version, c.* FROM (SELECT n.id, n.version FROM {self._s}.namespaces n WHERE {nw}) h "
            f"LEFT JOIN LATERAL (SELECT {_VECTOR_ROW_COLS} FROM {self._s}.chunks WHERE ns_id = h.id "
            "AND id = ANY(%s)) c ON TRUE", [*nargs, ids], binary=True).fetchall()
        if read:
            self._vectors_at(int(read[0][0]), int(read[0][1]))
        if (f"{read[0][0]}:{read[0][1]}" if read else "none:0") != copy.generation:
            return None
        rows = {r[3]: r[2:] for r in read if r[2] is not None}
        return [(rows[chunk_id], score) for chunk_id, score in hits] if len(rows) == len(ids) else None

    def _older_than_seen(self, generation: str) -> bool:
        """Whether a copy read at ``generation`` is older than the version of its build a search has read since (a
        build's version only grows): it cannot answer, and trying costs a scan of it."""
        seen = self._vectors_head
        build, _, version = generation.partition(":")
        return seen is not None and str(seen[0]) == build and version.isdigit() and seen[1] > int(version)

    def _read_vector_copy(self, dims: int, stop: threading.Event, previous: VectorMatrix | None
                          ) -> VectorMatrix | None:
        """The build's vectors of ``dims`` dimensions (``previous`` brought up to date) as
        :func:`.vector_copy.read_matrix` reads them on this store's pooled connections."""
        nw, nargs = self._build_where()
        return read_matrix(functools.partial(self._copy_connection, "vectors", "loading the vectors into memory"),
                           self._s, nw, nargs, dims, stop, previous)

    @contextlib.contextmanager
    def _copy_connection(self, copy: str, what: str) -> Iterator[Any]:
        """A pooled connection for a step of loading ``copy`` (``"vectors"``, ``"keywords"``; cancelled by
        :meth:`close`), doing ``what``."""
        with self._autocommit(what) as conn:
            self._copy_conns[copy] = conn
            try:
                yield conn
            finally:
                self._copy_conns.pop(copy, None)

    def _interrupt_copy(self, copy: str) -> None:
        """Cancel the statement a step of loading ``copy`` runs, if any."""
        conn = self._copy_conns.get(copy)
        if conn is not None:
            conn.cancel_safe()

    def wait_vector_cache(self, timeout: float | None = None) -> bool:
        """Wait for a background load of the in-memory vectors (mainly for tests and benchmarks); True when none
        is running any more."""
        return self._vector_copy.wait(timeout)

    def wait_keyword_cache(self, timeout: float | None = None) -> bool:
        """Wait for a background update of the keyword copy (mainly for tests and benchmarks); True when none is
        running any more."""
        return self._keyword_copy is None or self._keyword_copy.wait(timeout)

    def _vector_rows(self, conn: Any, q: np.ndarray, limit: int, filt: str, args: Sequence[Any]
                     ) -> tuple[list[Any], str]:
        """The ``limit`` + spare rows nearest ``q`` (``seq, id, path, source, start_line, end_line, text,
        embedding``) and the :meth:`generation` they were read at, in one round trip: one read-only transaction
        reads the build, whether its HNSW index exists and its version, and searches the build and index it found
        last time (inlined, so the partial HNSW index applies). When they changed (or on the first search) it
        searches again with what it read."""
        dims = int(q.size)
        head_sql, head_args = self._vector_head(dims)
        known = self._vector_heads.get(dims)
        if known is None:
            row = conn.execute(head_sql, head_args).fetchone()
            if row is None:
                return [], "none:0"
            known = self._vector_heads[dims] = (int(row[0]), bool(row[1]))
        for _ in range(3):  # builds swapped or HNSW indexes built meanwhile: searched again with what was read
            ns, indexed = known
            hnsw = indexed and not self.exact
            cols = _VECTOR_ROW_COLS
            # a sort disabled: the planner walks the HNSW index even where its cost model prefers sorting a scan
            # (a few thousand rows), so the index is what searches from hnsw_min_rows
            settings = {"hnsw.ef_search": str(self.ef_search or default_ef_search(limit)),
                        "hnsw.iterative_scan": "relaxed_order", "enable_sort": "off"} if hnsw else {}
            with self._one_round_trip(conn, settings):
                c_head = conn.execute(head_sql, head_args)
                if hnsw:
                    cast, _ = self._cast(dims)
                    c_rows = conn.execute(
                        f"SELECT {cols} FROM {self._s}.chunks WHERE ns_id = {int(ns)} AND dims = {dims} AND "
                        f"embedding IS NOT NULL{filt} ORDER BY (embedding::{cast}) <=> %s::{cast} LIMIT %s",
                        [*args, q, int(limit) + _SPARE], binary=True)
                else:
                    c_rows = conn.execute(
                        f"SELECT {cols} FROM {self._s}.chunks WHERE ns_id = {int(ns)} AND dims = {dims} AND "
                        f"embedding IS NOT NULL{filt} ORDER BY CASE WHEN zero THEN 1.0 ELSE embedding <=> %s END, "
                        "seq LIMIT %s", [*args, q, int(limit) + _SPARE], binary=True)
            row = c_head.fetchone()
            if row is None:
                self._vector_heads.pop(dims, None)
                return [], "none:0"
            found = (int(row[0]), bool(row[1]))
            rows = c_rows.fetchall()
            self._vectors_at(int(row[0]), int(row[2]))
            if found == known:
                return rows, f"{row[0]}:{row[2]}"
            known = self._vector_heads[dims] = found  # a rebuild, or an HNSW index built or dropped meanwhile
        return rows, f"{row[0]}:{row[2]}"  # the build changed under every try: what the last one found in it

    @_retry_once
    def vector_scores(self, query: np.ndarray, ids: Sequence[str], *, model: str | None = None) -> dict[str, float]:
        if not ids:
            return {}
        kept = self._hit_vectors  # read with the keyword hits: no round trip for them
        stored = [_StoredVector(i, kept[i][0], _embedding(kept[i][1], kept[i][2], _sent_vector)) for i in ids if i in kept]
        copy = self._current_copy(int(np.size(query)))  # of the version the ranked keyword hits were read at
        left = [i for i in ids if i not in kept]
        scored = copy.scores_of(query, left, model) if copy is not None and left else {}
        missing = left if copy is None else []  # the copy holds every vector of its size that can be scored
        if missing:
            nw, nargs = self._build_where()
            with self._autocommit("reading chunk vectors") as conn:  # the vectors only: no text read out of line
                rows = conn.execute(f"SELECT id, model, embedding, raw_embedding FROM {self._s}.chunks WHERE ns_id = "
                                    f"(SELECT n.id FROM {self._s}.namespaces n WHERE {nw}) AND id = ANY(%s)",
                                    [*nargs, list(missing)], binary=True).fetchall()
            stored += [_StoredVector(r[0], r[1], _embedding(r[2], r[3], _array)) for r in rows]
        return {**scored, **stored_scores(query, stored, model)}  # scored as vector_search rescores its rows

    def _ensure_vector_indexes(self, *, full: bool = True) -> None:
        """Merge the keyword index's pending list after a sync's writes and build the HNSW index of each vector
        size that has reached ``hnsw_min_rows`` in this namespace. ``full`` (a new index meta: a first index or a
        rebuild) also refreshes the planner's statistics and looks for sizes left unindexed; otherwise (the end of
        any sync) an index is built only while the build has none (a sync writes vectors of one size)."""
        with self._conn("refreshing planner statistics", untimed=True) as conn:  # a sync's writes change them most
            if full:
                conn.execute(f"ANALYZE {self._s}.chunks")
            # New rows wait in the GIN index's pending list until a vacuum; every keyword search reads all of it,
            # and the planner, counting it, scans the table instead of the index. Merged here (by the index's
            # owner: another role leaves it to autovacuum).
            conn.execute("SELECT gin_clean_pending_list(c.oid) FROM pg_class c WHERE c.oid = to_regclass(%s) AND "
                         "pg_has_role(c.relowner, 'USAGE')", (f"{self._s}.chunks_tsv",))
            ns = self._ns(conn)
            head = conn.execute(
                f"SELECT n_rows, EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = %s AND indexname LIKE %s), "
                "pg_has_role((SELECT relowner FROM pg_class WHERE oid = to_regclass(%s)), 'USAGE'), "
                f"(SELECT value FROM {self._s}.meta WHERE ns_id = n.id AND key = %s) "
                f"FROM {self._s}.namespaces n WHERE id = %s",
                (self.schema, self._index_pattern(ns), f"{self._s}.chunks", META_KEY, ns)).fetchone()
        self._upkept = True
        # (counting the vectors of a large namespace takes tens of milliseconds: not on every sync, nor for an index
        # whose meta says it holds none)
        meta = _parsed_meta(head[3]) if head is not None else None
        if not self.vector_enabled or self.exact or head is None or int(head[0]) < self.hnsw_min_rows or (
                head[1] and not full) or (meta is not None and not meta.vector_dims):
            return
        if not head[2]:  # only the table's owner may index it: vector search scans exactly until the owner syncs
            if not head[1] and not self._root._hnsw_not_owner_said:
                self._root._hnsw_not_owner_said = True  # said once per store (and its rebuilds): syncs are frequent
                log.warning("namespace %r has reached store.pgHnswMinRows (%d) but this role does not own the "
                            "chunks table, so it cannot build the HNSW index: vector search scans every vector "
                            "until a sync by the table's owner builds it", self.namespace, self.hnsw_min_rows)
            return
        with self._conn("indexing vectors") as conn:
            sizes = conn.execute(f"SELECT dims, count(*) FROM {self._s}.chunks WHERE ns_id = %s AND dims IS NOT NULL "
                                 "AND embedding IS NOT NULL GROUP BY dims", (ns,)).fetchall()
        for dims, n in sizes:
            if int(n) < self.hnsw_min_rows or int(dims) > 4000:
                continue
            cast, ops = self._cast(int(dims))
            name = self._index_name(ns, int(dims))
            with self._conn("building the HNSW index", untimed=True) as conn:
                # the graph built in memory (beyond maintenance_work_mem pgvector goes on on disk, many times slower)
                conn.execute(f"SET LOCAL maintenance_work_mem = '{_build_memory_mb(int(n), int(dims))}MB'")
                conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {self._s}.chunks USING hnsw "
                             f"((embedding::{cast}) {ops}) WHERE ns_id = {int(ns)} AND dims = {int(dims)} "
                             "AND embedding IS NOT NULL")

    # ---- embedding cache ----------------------------------------------------------------------------

    @_retry_once
    def cache_get(self, provider: str, model: str, provider_key: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        unique = list(dict.fromkeys(hashes))
        if not unique:
            return {}
        with self._autocommit("reading the embedding cache") as conn:
            rows = conn.execute(
                f"SELECT hash, embedding FROM {self._s}.embedding_cache WHERE namespace = %s AND provider = %s "
                "AND model = %s AND provider_key = %s AND hash = ANY(%s)",
                (self.namespace, provider, model, provider_key, unique)).fetchall()
        return {h: np.frombuffer(bytes(b), dtype="<f4") for h, b in rows if b}

    @_retry_once
    def cache_put(self, provider: str, model: str, provider_key: str, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = _now_ms()
        with self._conn("writing the embedding cache") as conn, conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {self._s}.embedding_cache(namespace, provider, model, provider_key, hash, embedding, dims, "
                "updated_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (namespace, provider, model, provider_key, "
                "hash) DO UPDATE SET embedding = excluded.embedding, dims = excluded.dims, updated_at = excluded.updated_at",
                [(self.namespace, provider, model, provider_key, h,
                  (np.asarray(v, dtype="<f4") + np.float32(0.0)).astype("<f4").tobytes(), int(np.asarray(v).size), now)
                 for h, v in sorted(items.items())])

    @_retry_once
    def cache_prune(self, max_entries: int, *, keep: CacheKeys | None = None) -> int:
        with self._conn("pruning the embedding cache") as conn:
            total = int(conn.execute(f"SELECT count(*) FROM {self._s}.embedding_cache WHERE namespace = %s",
                                     (self.namespace,)).fetchone()[0])
            excess = total - int(max_entries)
            if excess <= 0:
                return 0
            names = [(*name, h) for name, hashes in (keep or {}).items() for h in dict.fromkeys(hashes)]
            cur = conn.execute(
                f"WITH k(provider, model, provider_key, hash) AS (SELECT * FROM unnest(%s::text[], %s::text[], "
                f"%s::text[], %s::text[])) DELETE FROM {self._s}.embedding_cache WHERE (namespace, provider, model, "
                f"provider_key, hash) IN (SELECT e.namespace, e.provider, e.model, e.provider_key, e.hash FROM "
                f"{self._s}.embedding_cache e WHERE e.namespace = %s AND NOT EXISTS (SELECT 1 FROM k WHERE "
                "k.provider = e.provider AND k.model = e.model AND k.provider_key = e.provider_key AND k.hash = e.hash) "
                "ORDER BY e.updated_at, e.hash LIMIT %s)",
                ([n[0] for n in names], [n[1] for n in names], [n[2] for n in names], [n[3] for n in names],
                 self.namespace, excess))
            return int(cur.rowcount)

    @_retry_once
    def cache_count(self) -> int:
        with self._conn("counting the embedding cache", read=True) as conn:
            return int(conn.execute(f"SELECT count(*) FROM {self._s}.embedding_cache WHERE namespace = %s",
                                    (self.namespace,)).fetchone()[0])

    # ---- locks ----------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _advisory(self, kind: str, key: str, timeout: float, busy: str,
                  cancel: threading.Event | None = None) -> Iterator[None]:
        """An advisory lock on (``kind``, ``key``) held by an open transaction on a connection of its own
        (released when it ends, or by the server if this process dies; a transaction-mode pooler keeps one
        server session for it); IndexLockedError after ``timeout`` seconds, SyncCancelled as soon as ``cancel``
        is set while waiting."""
        self._through_breaker()
        try:
            conn = psycopg.connect(self.url, **self._connect_args(autocommit=False), prepare_threshold=None)
        except psycopg.Error as exc:
            if _out_of_connections(exc):
                raise StoreError(self._out_of_connections(busy, exc)) from None
            if self._unavailable(exc):
                self._trip()
                raise StoreUnavailableError(self._outage(exc)) from None
            raise StoreError(f"cannot reach PostgreSQL at {self.safe_url}: {self._clean(exc)}") from None
        try:
            # held as long as the sync runs (embedding may take minutes): a server or role ending transactions left
            # idle (or long) would end the lock with it, and another host's sync would start alongside this one
            conn.execute(_KEEP_LOCK_OPEN)
            wait_for_lock(lambda: bool(conn.execute("SELECT pg_try_advisory_xact_lock(hashtext(%s), hashtext(%s))",
                                                    (f"{self.schema}:{kind}", key)).fetchone()[0]),
                          timeout, cancel, busy=busy,
                          cancelled=f"sync cancelled while waiting for another process's sync of namespace "
                                    f"{self.namespace!r}; the index is as it was")
            yield
        except psycopg.Error as exc:
            raise StoreError(f"lock on PostgreSQL at {self.safe_url} failed: {self._clean(exc)}") from None
        finally:
            with contextlib.suppress(Exception):
                conn.close()  # ends the transaction: the lock is released

    @contextlib.contextmanager
    def sync_lock(self, timeout: float = 600.0, *, cancel: threading.Event | None = None) -> Iterator[None]:
        """One writer per namespace across every host (a PostgreSQL advisory lock); searches go on.
        Builds left by rebuilds that were killed are dropped once it is held. StoreError on a read-only
        connection; SyncCancelled as soon as ``cancel`` is set while waiting for another host's sync."""
        self._writable("indexing")
        with self._advisory("sync", self.namespace, timeout,
                            f"another process has been indexing namespace {self.namespace!r} for more than "
                            f"{timeout:g}s; wait for it to finish or stop it", cancel):
            self._tidy_abandoned_builds()
            yield
            # an incremental sync writes no meta: what write_meta keeps up (the keyword index's pending list,
            # the HNSW index of a namespace that grew past hnsw_min_rows) is kept up here, once after this store's
            # writes (and once for a store that has not yet: an index grown by an earlier version); best effort,
            # the sync's writes are committed
            if not self._upkept:
                try:
                    self._ensure_vector_indexes(full=False)
                except StoreError as exc:
                    log.warning("keeping up the indexes of namespace %r after a sync failed (searches work; the "
                                "next sync that writes tries again): %s", self.namespace, exc)

    # ---- lifecycle --------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def rebuild(self, *, swap_warnings: list[str] | None = None) -> Iterator[PostgresStore]:
        """A new build of the namespace, made active in one transaction on success (readers see the old
        index or the new one); on failure it is dropped and the current index stays as it was. When dropping
        the old build fails (an outage), the new one stays live: the failure goes to ``swap_warnings`` and the
        next sync drops the old build."""
        with self._conn("starting a rebuild") as conn:
            new_id = int(conn.execute(f"INSERT INTO {self._s}.namespaces(name, state) VALUES (%s, 'building') "
                                      "RETURNING id", (self.namespace,)).fetchone()[0])
        fresh = PostgresStore(self.url, namespace=self.namespace, schema=self.schema, fts_tokenizer=self.fts_tokenizer,
                              vector_enabled=self.vector_enabled, hnsw_min_rows=self.hnsw_min_rows, exact=self.exact,
                              ef_search=self.ef_search, fts_note_dates=self.fts_note_dates, memory_cache=False,
                              _parent=self, _build_id=new_id)
        try:
            yield fresh
            with self._conn("activating the rebuilt index") as conn:
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))",
                             (f"{self.schema}:activate", self.namespace))
                old = conn.execute(f"UPDATE {self._s}.namespaces SET state = 'retired' WHERE name = %s AND "
                                   "state = 'active' RETURNING id", (self.namespace,)).fetchall()
                conn.execute(f"UPDATE {self._s}.namespaces SET state = 'active' WHERE id = %s", (new_id,))
                conn.execute(f"INSERT INTO {self._s}.meta(ns_id, key, value) SELECT %s, key, value FROM {self._s}.meta "
                             "WHERE ns_id = ANY(%s) AND key = ANY(%s) ON CONFLICT (ns_id, key) DO NOTHING",
                             (new_id, [int(r[0]) for r in old], [_WORKSPACE_KEY, _WORKSPACE_ID_KEY]))  # its owner
        except BaseException:
            with contextlib.suppress(Exception):
                self._drop_builds([new_id])
            raise
        self._hit_vectors, self._vectors_head = {}, None  # of the build replaced
        self._drop_replaced_builds([int(r[0]) for r in old], swap_warnings)

    def _drop_replaced_builds(self, ids: Sequence[int], swap_warnings: list[str] | None) -> None:
        """Drop the builds a rebuild replaced; a failure leaves them to the next sync (``sync_lock`` drops
        abandoned builds) and is logged and added to ``swap_warnings``."""
        try:
            self._drop_builds(ids)
        except StoreError as exc:
            warning = (f"the rebuilt index of namespace {self.namespace!r} is live, but its old build could not be "
                       f"dropped yet ({exc}); the next sync drops it")
            log.warning("%s", warning)
            if swap_warnings is not None:
                swap_warnings.append(warning)

    def _drop_builds(self, ids: Sequence[int]) -> None:
        """Delete builds that are no longer active (their HNSW indexes, rows and bookkeeping)."""
        for ns in ids:
            with self._conn("dropping an old index build", untimed=True) as conn:  # a large build's rows take long
                for (name,) in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s AND indexname "
                                            "LIKE %s", (self.schema, self._index_pattern(ns))).fetchall():
                    conn.execute(f'DROP INDEX IF EXISTS {self._s}."{name}"')
                conn.execute(f"DELETE FROM {self._s}.namespaces WHERE id = %s AND state <> 'active'", (ns,))

    def _tidy_abandoned_builds(self) -> None:
        """:meth:`_drop_abandoned_builds` for a sync that goes on when they cannot be dropped (the next one tries
        again); an outage is raised."""
        try:
            self._drop_abandoned_builds()
        except StoreUnavailableError:
            raise
        except StoreError as exc:
            log.warning("builds of namespace %r left by earlier rebuilds could not be dropped (the sync goes on; the "
                        "next one tries again): %s", self.namespace, exc)

    @_retry_once  # the first pooled call of a sync: after a server restart it meets a cut connection
    def _drop_abandoned_builds(self) -> list[str]:
        """Drop builds left by rebuilds that were killed (only while holding ``sync_lock``)."""
        with self._conn("looking for abandoned builds", read=True) as conn:
            ids = [int(r[0]) for r in conn.execute(
                f"SELECT id FROM {self._s}.namespaces WHERE name = %s AND state <> 'active'", (self.namespace,))]
        self._drop_builds(ids)
        return [f"{self.namespace}#build{i}" for i in ids]

    def recover_from_damage(self, exc: BaseException) -> str | None:
        """A server database is never set aside here: errors are reported as they are."""
        return None

    @_retry_once
    def integrity(self) -> dict[str, Any]:
        """Counts of files, chunks, keyword and vector rows and rows that point at nothing (``problems``)."""
        with self._conn("checking the index", read=True) as conn:
            ns = self._ns(conn)
            one = lambda sql: int(conn.execute(sql.format(s=self._s), (ns,)).fetchone()[0])  # noqa: E731
            out: dict[str, Any] = {
                "files": one("SELECT count(*) FROM {s}.files WHERE ns_id = %s"),
                "chunks": one("SELECT count(*) FROM {s}.chunks WHERE ns_id = %s"),
                "chunks_without_file": one("SELECT count(*) FROM {s}.chunks c WHERE ns_id = %s AND NOT EXISTS "
                                           "(SELECT 1 FROM {s}.files f WHERE f.ns_id = c.ns_id AND f.path = c.path)"),
                "chunks_with_vector": one("SELECT count(*) FROM {s}.chunks WHERE ns_id = %s AND dims IS NOT NULL"),
            }
            stats = conn.execute(f"SELECT n_rows FROM {self._s}.namespaces WHERE id = %s", (ns,)).fetchone()
            out["terms_off"] = int(conn.execute(
                f"SELECT count(*) FROM (SELECT x.w AS term, count(*) AS n FROM {self._s}.chunks c, LATERAL "
                "(SELECT DISTINCT w FROM unnest(string_to_array(c.tokens, ' ')) AS u(w) WHERE w <> '') x "
                f"WHERE c.ns_id = %s GROUP BY x.w) a FULL JOIN (SELECT term, n_docs FROM {self._s}.terms "
                "WHERE ns_id = %s) b ON a.term = b.term WHERE a.n IS DISTINCT FROM b.n_docs", (ns, ns)).fetchone()[0])
        problems = []
        if out["terms_off"]:
            problems.append(f"keyword statistics: {out['terms_off']} terms with a wrong chunk count")
        if out["chunks_without_file"]:
            problems.append(f"chunks without file: {out['chunks_without_file']}")
        if stats and int(stats[0]) != out["chunks"]:
            problems.append(f"keyword statistics count {stats[0]} chunks, the index holds {out['chunks']}")
        out["problems"] = problems
        return out

    def info(self) -> StoreInfo:
        dims, size, mode = None, None, "pgvector exact"
        notes: list[str] = []
        try:
            with self._conn("reading the index state", read=True) as conn:
                ns = self._ns(conn)
                row = conn.execute(f"SELECT dims FROM {self._s}.chunks WHERE ns_id = %s AND dims IS NOT NULL LIMIT 1",
                                   (ns,)).fetchone()
                dims = int(row[0]) if row else None
                size = self._namespace_bytes(conn)
                if dims and conn.execute("SELECT to_regclass(%s)", (f"{self._s}.{self._index_name(ns, dims)}",)
                                         ).fetchone()[0] is not None and not self.exact:
                    mode = "pgvector hnsw (halfvec)" if dims > _VECTOR_INDEX_MAX_DIMS else "pgvector hnsw"
        except StoreError as exc:
            notes.append(str(exc))
        if self.read_only:
            notes.append("read-only connection (a replica, a read-only session or role): searches only; syncs run "
                         "on a host whose store.url allows writes")
        return StoreInfo(
            backend="postgresql", path=f"{self.safe_url} (namespace {self.namespace})",
            driver=f"psycopg {psycopg.__version__}" if psycopg is not None else "psycopg (missing)",
            sqlite_version="", fts_available=True, fts_error=None,
            vector_path=mode if self.vector_enabled else "disabled", vector_error=None, vector_dims=dims,
            vector_cache=self._vector_copy.state(self._generation_or_none) if self.memory_cache else "off",
            keyword_cache=self._keyword_copy.state(self._generation_or_none()) if self._keyword_copy else "off",
            notes=notes, server_version=self._server_version,
            pgvector_version=self._pgvector_version, namespace=self.namespace, size_bytes=size,
        )

    def _namespace_bytes(self, conn: Any) -> int:
        """The bytes on the server this namespace accounts for: of each table (with its shared indexes), the
        share of its rows that belong to the namespace's builds, plus the namespace's own HNSW indexes."""
        builds = [int(r[0]) for r in conn.execute(f"SELECT id FROM {self._s}.namespaces WHERE name = %s",
                                                  (self.namespace,))]
        own_chunks, all_chunks = conn.execute(
            f"SELECT coalesce(sum(n_rows) FILTER (WHERE id = ANY(%s)), 0), coalesce(sum(n_rows), 0) "
            f"FROM {self._s}.namespaces", (builds,)).fetchone()
        shares = {"chunks": (int(own_chunks), int(all_chunks))}
        for table, col, key in (("files", "ns_id", builds), ("meta", "ns_id", builds), ("terms", "ns_id", builds),
                                ("embedding_cache", "namespace", self.namespace)):
            op = "= ANY(%s)" if isinstance(key, list) else "= %s"
            shares[table] = tuple(int(x) for x in conn.execute(  # type: ignore[assignment]
                f"SELECT count(*) FILTER (WHERE {col} {op}), count(*) FROM {self._s}.{table}", (key,)).fetchone())
        own_indexes = [self._index_pattern(b) for b in builds]
        total = 0.0
        for table, (own, every) in shares.items():
            if own and every:
                size = int(conn.execute(
                    "SELECT pg_table_size(t.oid) + coalesce(sum(pg_relation_size(i.indexrelid)) FILTER (WHERE "
                    "ix.relname NOT LIKE 'chunks\\_hnsw\\_%%'), 0) FROM pg_class t JOIN pg_namespace n ON n.oid = "
                    "t.relnamespace LEFT JOIN pg_index i ON i.indrelid = t.oid LEFT JOIN pg_class ix ON ix.oid = "
                    "i.indexrelid WHERE n.nspname = %s AND t.relname = %s GROUP BY t.oid",
                    (self.schema, table)).fetchone()[0])
                total += size * own / every
        total += int(conn.execute(
            "SELECT coalesce(sum(pg_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = "
            "c.relnamespace WHERE n.nspname = %s AND c.relkind = 'i' AND c.relname LIKE ANY(%s)",
            (self.schema, own_indexes)).fetchone()[0])
        return int(total)

    @property
    def schema_version(self) -> int:
        """The schema version this code reads and writes."""
        return SCHEMA_VERSION

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._vector_copy.close()  # stops a background load promptly and frees the in-memory vectors
        if self._keyword_copy is not None:
            self._keyword_copy.close()
        if self._root is self:
            with contextlib.suppress(Exception):
                self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.safe_url!r}, namespace={self.namespace!r})"
