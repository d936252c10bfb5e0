"""Typed configuration mirroring OpenClaw's ``agents.defaults.memorySearch`` and ``compaction``.

Field names are the original camelCase keys in snake_case, with the original defaults. Every
model accepts both spellings (``max_results`` or ``maxResults``), so an OpenClaw config can be
used unchanged::

    MemoryConfig(workspace="~/notes", query={"max_results": 8})
    MemoryConfig.from_dict({"workspace": "~/notes", "query": {"maxResults": 8}})
    MemoryConfig.from_openclaw_file("~/.openclaw/openclaw.json", agent_id="main")

Invalid values raise :class:`~openclaw_memory.errors.ConfigError` naming the key.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import shlex
import socket
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    SerializationInfo,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from openclaw_memory.errors import ConfigError
from openclaw_memory.redaction import (REDACTED, redact, register_assigned_secrets,
                                       url_without_credentials, url_without_password)
from openclaw_memory.text.note_dates import NOTE_DATES_IN_KEYWORD_INDEX

__all__ = [
    "BatchConfig",
    "CacheConfig",
    "ChunkingConfig",
    "CompactionConfig",
    "DreamingConfig",
    "ExperimentalConfig",
    "FtsConfig",
    "HybridConfig",
    "KeywordRankingConfig",
    "LateInteractionConfig",
    "LocalConfig",
    "MMRConfig",
    "MemoryConfig",
    "MemoryFlushConfig",
    "PROVIDER_ENV_KEYS",
    "QmdConfig",
    "QueryConfig",
    "RemoteConfig",
    "SessionsSyncConfig",
    "StoreConfig",
    "SyncConfig",
    "TemporalDecayConfig",
    "VectorConfig",
    "check_agent_id",
    "default_state_dir",
    "header_problem",
]

log = logging.getLogger(__name__)

ProviderName = Literal["auto", "local", "openai", "gemini", "voyage", "fake", "none"]
FallbackName = Literal["none", "local", "openai", "gemini", "voyage", "fake"]


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_assignment=True,
        frozen=False,
        allow_inf_nan=False,  # an infinite interval or timeout would overflow the wait it is given
        hide_input_in_errors=True,  # a refused value may be a key, a header's value or a URL with its token
    )

    def __repr_args__(self) -> Any:
        """The fields as ``repr`` shows them: an endpoint URL with its password or key redacted
        (``http://user:[REDACTED]@host``), and QMD's command too (``env HF_TOKEN=[REDACTED] qmd``), so a printed or
        logged config holds no secret."""
        for name, value in super().__repr_args__():
            yield name, (redact(value) if isinstance(value, str) and _shown_redacted(name) else value)

    @field_serializer("base_url", "command", check_fields=False)  # every endpoint (remote, rerank, dreaming); QMD
    def _shown(self, value: str | None, info: SerializationInfo) -> str | None:
        """An endpoint URL or QMD's command as a dumped config (``model_dump``, ``model_dump_json``) shows it, as its
        ``repr`` does: with its password or key redacted, while the config itself keeps the real value
        (``MemoryConfig.load`` dumps with the context ``{"secrets": True}`` to copy it whole)."""
        if value is None or (isinstance(info.context, dict) and info.context.get("secrets")):
            return value
        return redact(value)

    @field_validator("*")
    @classmethod
    def _usable_url(cls, value: Any, info: ValidationInfo) -> Any:
        """An endpoint URL is an ``http(s)://`` URL (``localhost:8000/v1`` would fail each request as "could not
        connect"), and neither it nor QMD's command is a dumped config's redacted one (``http://user:[REDACTED]@host``:
        that password would fail at the server, later and less clearly)."""
        if not isinstance(value, str) or not _shown_redacted(info.field_name):
            return value
        if REDACTED in value:
            what = "command" if info.field_name == "command" else "URL"
            raise ValueError(f"this {what} is redacted, as a printed or dumped config shows it: give the real {what}")
        problem = endpoint_url_problem(value) if info.field_name == "base_url" and value.strip() else None
        if problem:
            raise ValueError(problem)
        return value.strip() if info.field_name == "base_url" else value  # a line break read with it is no part

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """``true``/``false`` is not a number (pydantic would read it as 1/0)."""
        if isinstance(value, bool) and info.field_name and _is_number(cls.model_fields[info.field_name].annotation):
            raise ValueError("expected a number, not true/false")
        return value


def _shown_redacted(name: str | None) -> bool:
    """Whether setting ``name`` is shown redacted by a printed or dumped config: an endpoint URL, or QMD's command
    (either may carry a credential: ``https://TOKEN@host``, ``env HF_TOKEN=… qmd``)."""
    return name is not None and (name.endswith("url") or name == "command")


def _endpoint_url_kept(url: str) -> str:
    """An endpoint URL as :meth:`MemoryConfig.without_secrets` writes it: without its password or token
    (:func:`~openclaw_memory.redaction.url_without_credentials`), the user name of a ``user:password@`` kept (it
    names the account, and :func:`redact` would take it for a token), the rest redacted."""
    scheme, separator, rest = url_without_credentials(url).partition("://")
    authority = rest.split("/", 1)[0]
    user = authority.rpartition("@")[0] + "@" if separator and "@" in authority else ""
    return scheme + separator + user + redact(rest.removeprefix(user))


def _is_number(annotation: Any) -> bool:
    """Whether a field's type is a number (``int``, ``float`` or an optional one)."""
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_is_number(a) for a in get_args(annotation) if a is not type(None))
    return annotation in (int, float)


class ChunkingConfig(_Model):
    """``chunking``: chunk size and overlap in estimated tokens (chars/4, CJK weighted)."""

    tokens: int = Field(400, ge=1)
    overlap: int = Field(80, ge=0)

    @model_validator(mode="after")
    def _clamp_overlap(self) -> ChunkingConfig:
        if self.overlap > self.tokens - 1:
            object.__setattr__(self, "overlap", max(0, self.tokens - 1))
        return self


class MMRConfig(_Model):
    """``query.hybrid.mmr``: maximal marginal relevance re-ranking (opt-in)."""

    enabled: bool = False
    lambda_: float = Field(0.7, alias="lambda", ge=0.0, le=1.0)


class TemporalDecayConfig(_Model):
    """``query.hybrid.temporalDecay``: exponential decay of dated notes (opt-in)."""

    enabled: bool = False
    half_life_days: float = Field(30, ge=1)


class LateInteractionConfig(_Model):
    """``query.hybrid.late_interaction`` (this library's addition, opt-in): the best ``top`` hits of a hybrid search
    re-ordered by fusing their rank with their rank by token-level similarity to the question (MaxSim over each
    line's token vectors, :mod:`openclaw_memory.retrieval.late_interaction`), ``weight`` weighing the second rank. Only
    with a provider that gives token vectors (sentence-transformers models); others search as before. Skipped when
    the HTTP reranker (``query.rerank.provider = "http"``) has ordered the head: the endpoint's order stands."""

    enabled: bool = False
    top: int = Field(24, ge=2, le=200)
    weight: float = Field(0.5, ge=0.0)


class HybridConfig(_Model):
    """``query.hybrid``: how vector and keyword candidates are merged."""

    enabled: bool = True
    vector_weight: float = Field(0.7, ge=0.0, le=1.0)
    text_weight: float = Field(0.3, ge=0.0, le=1.0)
    candidate_multiplier: int = Field(4, ge=1, le=20)
    merge: Literal["weighted", "rrf"] = "weighted"
    rrf_k: int = Field(60, ge=1)
    #: This library's addition: under the weighted merge, a keyword candidate that is not among the vector
    #: side's candidates is scored with its real cosine (from its stored vector) instead of 0, so its score
    #: does not depend on whether it made the other side's cut (:mod:`openclaw_memory.retrieval.ranking`).
    score_both_sides: bool = True
    #: This library's addition: a second vector weight (keywords weigh the rest) that ``min_score`` judges
    #: hybrid hits by: a hit passes when its score under either these weights or the merge's reaches
    #: ``min_score``; the merge's weights alone order the hits. Unset: the merge's weights only. The bundled
    #: model's fast tier orders by ``local.fast_vector_weight`` and sets this to the configured ``vector_weight``,
    #: so a match found by its vectors alone still passes ``min_score``.
    relevance_vector_weight: float | None = Field(None, ge=0.0, le=1.0)
    #: This library's addition: under the weighted merge, each candidate also earns ``file_coverage_weight · c²``,
    #: where ``c`` is the query coverage of all candidates of its file together, so near-ties of the vector side
    #: go to chunks of notes whose retrieved parts hold the question's words (:mod:`openclaw_memory.retrieval.ranking`;
    #: 0 turns it off; not used when either side's weight is 0).
    file_coverage_weight: float = Field(0.04, ge=0.0, le=1.0)
    #: This library's addition: under the weighted merge (both weights > 0), each candidate's score is lowered by
    #: ``file_repeat_penalty`` × the number of better-scored candidates of the same note, so the six hits of a
    #: question whose evidence is spread over several notes come from more of them, and a neighbouring chunk is
    #: folded into a hit (``query.merge_overlapping``) only when it leads the next note's best by more than that
    #: (:mod:`openclaw_memory.retrieval.ranking`; it orders, ``min_score`` is judged before it; 0, the default,
    #: turns it off: opt-in, see docs/design/retrieval-decisions.md).
    file_repeat_penalty: float = Field(0.0, ge=0.0, le=1.0)
    #: This library's addition: under the weighted merge (both weights > 0), a candidate from the daily note
    #: (``memory/YYYY-MM-DD.md``) of a date the question names ("7 July, 2023", "July 2023") earns
    #: ``note_date_weight`` × the share of that date (day, month, year) the question says
    #: (:func:`openclaw_memory.text.note_dates.note_date_share`); it orders, ``min_score`` is judged before it; 0 turns
    #: it off.
    note_date_weight: float = Field(0.2, ge=0.0, le=1.0)
    #: This library's addition: when the vector side's candidates are a dialogue (``Name: text`` lines) and the
    #: question names one speaker, the hybrid search ranks its vector side by the question's embedding without the
    #: speakers' names (every chunk says them; :mod:`openclaw_memory.text.speakers`); one more query embedding for such
    #: questions.
    drop_speaker_names: bool = True
    #: This library's addition: a sync also embeds each chunk's runs of ``unit_lines`` non-blank lines (into the
    #: embedding cache), and a search scores its candidates on the vector side by ``(1 − unit_weight)·chunk cosine
    #: + unit_weight·best unit cosine`` (:mod:`openclaw_memory.indexing.line_units`). 0 turns it off (nothing more
    #: is embedded).
    unit_lines: int = Field(3, ge=0, le=50)
    unit_weight: float = Field(0.4, ge=0.0, le=1.0)
    mmr: MMRConfig = Field(default_factory=MMRConfig)
    late_interaction: LateInteractionConfig = Field(default_factory=LateInteractionConfig)
    temporal_decay: TemporalDecayConfig = Field(default_factory=TemporalDecayConfig)

    @model_validator(mode="after")
    def _normalise_weights(self) -> HybridConfig:
        total = self.vector_weight + self.text_weight
        if total <= 0:
            vw, tw = 0.7, 0.3
        else:
            vw, tw = self.vector_weight / total, self.text_weight / total
        object.__setattr__(self, "vector_weight", vw)
        object.__setattr__(self, "text_weight", tw)
        return self


class RerankConfig(_Model):
    """``query.rerank`` (this library's addition, opt-in): re-order the best ``top`` hits of a search.

    ``provider = "windows"`` (the default when enabled): re-score the hits of a hybrid or vector search
    by their best-matching run of ``window_lines`` lines, embedded with the index's model (a chunk's one
    relevant turn is diluted in the chunk's own embedding). Embeds up to ``top`` × lines short texts on
    a search (kept in memory for later searches).

    ``provider = "http"``: send the query and the ``top`` hits' texts to a ``/rerank`` endpoint in the
    Cohere/Jina wire format (vLLM, Infinity, Jina, Voyage, Cohere and most gateways serve it):
    ``POST {base_url}/rerank`` with ``model``; the API key is read from the environment variable named
    by ``api_key_env`` (sent as ``Authorization: Bearer``), never from the config file. A request taking
    longer than ``timeout_seconds``, or failing, leaves the hits in their unreranked order; the result's
    ``rerank_error`` says why (and it is logged). Works in every mode, keyword-only included.
    """

    enabled: bool = False
    provider: Literal["windows", "http"] = "windows"
    top: int = Field(12, ge=1, le=200)
    window_lines: int = Field(2, ge=1)
    base_url: str | None = None
    model: str | None = None
    api_key_env: str = Field("RERANK_API_KEY", min_length=1)
    timeout_seconds: float = Field(10.0, gt=0)

    @model_validator(mode="after")
    def _http_needs_url(self) -> RerankConfig:
        if self.enabled and self.provider == "http" and not (self.base_url or "").strip():
            raise ValueError('query.rerank.provider "http" needs query.rerank.base_url '
                             '(e.g. "http://127.0.0.1:8080/v1")')
        return self


class KeywordRankingConfig(_Model):
    """``query.keyword`` (this library's addition): how the keyword side measures a chunk's coverage of the
    query (its share of the query's words, which orders keyword hits together with BM25).

    ``window_lines``: coverage is that of the chunk's best run of this many consecutive lines, so words
    that stand together in one turn or bullet count more than words scattered over a chunk (0: the whole
    chunk, as before). ``rarity_weights``: each query word's share is weighted by its inverse document
    frequency in the index, so a word found in most chunks (a conversation's speaker names) counts little.
    Both cost ~1.5× the keyword side's CPU time per search (what each is worth: docs/design/retrieval-decisions.md)."""

    window_lines: int = Field(3, ge=0)
    rarity_weights: bool = True
    #: A daily note's date (``memory/2023-10-13.md``) counts as words of every line of it in coverage
    #: ("13 October 2023"), so "what did I paint on October 13, 2023?" prefers that day's note, whose
    #: chunks rarely say their own date.
    note_dates: bool = True


class QueryConfig(_Model):
    """``query``: result count, score floor and the hybrid merge."""

    max_results: int = Field(6, ge=1)
    min_score: float = Field(0.35, ge=0.0, le=1.0)
    hybrid: HybridConfig = Field(default_factory=HybridConfig)
    #: This library's addition: English words of a query also match words of the same Porter stem
    #: ("paintings" finds "painted") in a ``unicode61`` keyword index, at search time (no re-index).
    stemming: bool = True
    rerank: RerankConfig = Field(default_factory=RerankConfig)
    keyword: KeywordRankingConfig = Field(default_factory=KeywordRankingConfig)
    max_injected_chars: int | None = Field(None, ge=1)
    snippet_max_chars: int = Field(700, ge=1)
    #: This library's addition: hits of one note whose line ranges overlap are returned as one hit (their lines'
    #: union), so the slot goes to the next candidate, within the lines the best ``max_results`` chunks would
    #: have held (the last hit trimmed to its best-matching lines; :mod:`openclaw_memory.retrieval.result_ranges`).
    merge_overlapping: bool = True
    #: This library's addition: the standing instruction ("Always …", "Never …", "From now on …" lines) that
    #: matches the question is returned as a one-line hit, in place of the weakest hit when the results are full
    #: (:mod:`openclaw_memory.retrieval.standing_instructions`).
    standing_instructions: bool = True
    #: This library's addition: in transcripts of a user and an assistant (``User: …`` / ``Assistant: …``), each of
    #: the user's messages is also indexed alone, and up to two thirds of the hits are the best of those messages
    #: (:mod:`openclaw_memory.retrieval.user_turns`). Turning it off changes the ranking only (the messages stay
    #: indexed).
    user_turns: bool = True


class CacheConfig(_Model):
    """``cache``: the embedding cache (unbounded unless ``max_entries`` is set)."""

    enabled: bool = True
    max_entries: int | None = Field(None, ge=1)


class VectorConfig(_Model):
    """``store.vector``: the sqlite-vec index (falls back to numpy when it cannot load).

    ``memory_cache`` is this library's addition, not an OpenClaw key: a long-lived process also keeps
    the vectors in memory (loaded in the background after the first vector search and after each
    index change) and searches them with numpy once loaded; until then SQLite searches with sqlite-vec
    and PostgreSQL (``store.url``) with pgvector. ``False`` keeps no copy in memory.
    """

    enabled: bool = True
    extension_path: str | None = None
    memory_cache: bool = True


class FtsConfig(_Model):
    """``store.fts``: the keyword index tokenizer.

    ``"porter"`` (this library's addition) is ``unicode61`` plus English Porter stemming: "painting" finds
    "painted"; IDs, error strings and CJK/Thai/Korean match as with ``unicode61``.
    """

    tokenizer: Literal["unicode61", "porter", "trigram"] = "unicode61"
    #: This library's addition (not with the ``trigram`` tokenizer): a daily note's date (``memory/2023-10-13.md``)
    #: is indexed as words ("13 October 2023") with each of its chunks, so "what did I do on October 13?" finds
    #: that day's chunks that do not say their date (searched only: results return the chunk's text). Changing
    #: it rebuilds the keyword index from the embedding cache (measured effect: docs/design/retrieval-decisions.md).
    note_dates: bool = NOTE_DATES_IN_KEYWORD_INDEX


class PoolConfig(_Model):
    """``store.pool``: the PostgreSQL connections of each process.

    ``max_size`` connections at most (a sync holds one more for its lock while it runs); a search waits
    ``timeout`` seconds at most for one, or for the server (then it fails with StoreUnavailableError
    and later calls fail at once until the server answers again). ``prepared_statements``: None
    (default) uses them and turns them off on the first sign of a transaction-mode pooler (PgBouncer
    ``pool_mode=transaction``); False never uses them."""

    max_size: int = Field(default=2, ge=1, le=100)
    timeout: float = Field(default=5.0, gt=0, le=300)
    prepared_statements: bool | None = None


class StoreConfig(_Model):
    """``store``: where the index lives. ``path`` may use ``{agent_id}`` and ``~``
    (default ``<state_dir>/memory/<agent_id>.<workspace key>.openclaw-memory.sqlite``: one per workspace)."""

    driver: Literal["sqlite"] = "sqlite"
    path: str | None = None
    vector: VectorConfig = Field(default_factory=VectorConfig)
    fts: FtsConfig = Field(default_factory=FtsConfig)
    # PostgreSQL instead of SQLite (``pip install "openclaw-memory[postgres]"``): ``url`` selects it (a URL
    # ``postgresql://…`` or a libpq key/value DSN ``host=… dbname=…``); ``namespace`` (default: the agent id;
    # may use ``{agent_id}``) separates agents/workspaces in one database; ``pg_schema`` is the PostgreSQL
    # schema holding the tables; ``pool`` sizes the connections each process keeps.
    url: SecretStr | None = None  # a SecretStr: its password never shows in a printed config
    namespace: str | None = None
    pg_schema: str = "openclaw_memory"
    pool: PoolConfig = Field(default_factory=PoolConfig)
    # PostgreSQL vector search: an HNSW index once a namespace holds ``pg_hnsw_min_rows`` vectors of one
    # size (built by the sync that crosses it); ``pg_exact_search`` always scans exactly (no HNSW).
    pg_hnsw_min_rows: int = Field(default=1_000, ge=1)
    pg_exact_search: bool = False
    # HNSW's candidate list per search (pgvector's ``hnsw.ef_search``, set for each search's transaction);
    # unset: eight times the rows a search fetches, at least 500 (see ``postgres.store.default_ef_search``).
    pg_ef_search: int | None = Field(default=None, ge=1, le=1000)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        """``store: "postgresql://…"`` / ``"host=… dbname=…"`` (or an index file path) is short for
        ``{url: …}`` (or ``{path: …}``)."""
        if isinstance(value, str):
            return store_shorthand(value)
        return value

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not is_postgres_url(value.get_secret_value()):
            raise ValueError("store.url must be a PostgreSQL URL (postgresql://user:password@host:5432/database) or "
                             "a libpq key/value DSN (host=… port=… dbname=… user=…)")
        return value

    @field_validator("path")
    @classmethod
    def _check_path(cls, value: str | None) -> str | None:
        if value is not None and (is_postgres_url(value) or "://" in value):
            raise ValueError("store.path is the index file; a database connection string belongs in store.url")
        if value and value.strip() and not value.startswith("~") and not os.path.isabs(value):
            return os.path.abspath(value)  # from the current directory now, not wherever the process is later
        return value


#: the endings of an index file given as ``store: "<path>"`` or ``--store``
INDEX_FILE_SUFFIXES = (".sqlite", ".sqlite3", ".db", ".db3")
#: libpq connection keywords (a key/value DSN uses only these)
_LIBPQ_KEYWORDS = frozenset(
    "host hostaddr port dbname user password passfile require_auth channel_binding connect_timeout "
    "client_encoding options application_name fallback_application_name keepalives keepalives_idle "
    "keepalives_interval keepalives_count tcp_user_timeout replication gssencmode sslmode requiressl "
    "sslcompression sslcert sslkey sslkeylogfile sslpassword sslcertmode sslrootcert sslcrl sslcrldir sslsni "
    "requirepeer ssl_min_protocol_version ssl_max_protocol_version krbsrvname gsslib gssdelegation service "
    "target_session_attrs load_balance_hosts sslnegotiation min_protocol_version max_protocol_version".split())
_DSN_PAIR = re.compile(r"\s*([A-Za-z_]+)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']*)\s*")


def _is_keyword_dsn(value: str) -> bool:
    """Whether ``value`` is a libpq key/value connection string (``host=… dbname=…``, values optionally quoted)."""
    pos, keys = 0, []
    while pos < len(value):
        pair = _DSN_PAIR.match(value, pos)
        if pair is None or pair.end() == pos:
            return False
        keys.append(pair.group(1).lower())
        pos = pair.end()
    return bool(keys) and all(k in _LIBPQ_KEYWORDS for k in keys)


def is_postgres_url(value: object) -> bool:
    """Whether ``value`` is a PostgreSQL connection string: a ``postgresql://`` (or ``postgres://``) URL or a
    libpq key/value DSN (``host=127.0.0.1 port=5432 dbname=memory user=app``)."""
    if not isinstance(value, str) or not value.strip():
        return False
    if "://" in value:
        return value.split("://", 1)[0].strip().lower() in ("postgresql", "postgres")
    return _is_keyword_dsn(value)


def store_shorthand(value: str) -> dict[str, str]:
    """The ``store`` section a string stands for (``store: "<string>"``, ``--store``): ``{url: …}`` for a
    PostgreSQL URL or DSN, ``{path: …}`` for an index file path ending in one of INDEX_FILE_SUFFIXES.
    Anything else is a ConfigError (never a file named after a connection string)."""
    if is_postgres_url(value):
        return {"url": value}
    if "://" not in value and "=" not in value and value.strip() and value.lower().endswith(INDEX_FILE_SUFFIXES):
        return {"path": value}
    shown = "a connection string" if ("=" in value or "://" in value) else repr(value)
    raise ConfigError(f"store: {shown} is neither a PostgreSQL connection string (postgresql://user@host/db or "
                      f"host=… dbname=… user=…) nor an index file path ending in {', '.join(INDEX_FILE_SUFFIXES)}")


class SessionsSyncConfig(_Model):
    """``sync.sessions``: re-index a transcript only after it grew this much.

    ``post_compaction_force`` (OpenClaw's ``postCompactionForce``): after a compaction, index that
    session's transcript at once, however little it grew (:meth:`MemoryIndex.after_compaction`;
    when is set by ``compaction.post_index_sync``).
    """

    delta_bytes: int = 100_000
    delta_messages: int = 50
    post_compaction_force: bool = True


class SyncConfig(_Model):
    """``sync``: when the index is refreshed."""

    on_session_start: bool = True
    on_search: bool = True
    watch: bool = True
    watch_debounce_ms: int = Field(1500, ge=0)
    interval_minutes: float = Field(0, ge=0)
    sessions: SessionsSyncConfig = Field(default_factory=SessionsSyncConfig)


class BatchConfig(_Model):
    """``remote.batch``: vendor batch APIs for large (re)indexing jobs."""

    enabled: bool = False
    wait: bool = True
    concurrency: int = Field(2, ge=1)
    poll_interval_ms: int = Field(2000, ge=1)
    timeout_minutes: float = Field(60, gt=0)


def endpoint_url_problem(url: str) -> str | None:
    """Why ``url`` is no endpoint URL, or None: it starts with ``http://`` or ``https://`` and names a host, with a
    port from 0 to 65535 if any (``localhost:8000/v1`` or ``http://127.0.0.1:80a/v1`` would fail each request as
    "could not connect", as if the server were down). Never quotes the URL (it may hold a password)."""
    example = "(e.g. http://127.0.0.1:8000/v1)"
    if not url.strip().lower().startswith(("http://", "https://")):
        return f"an endpoint URL starts with http:// or https:// {example}"
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError for a port that is no number from 0 to 65535
    except ValueError as exc:
        return f"this endpoint URL does not parse ({str(exc).lower().removesuffix('.')}) {example}"
    if not parts.hostname:
        return f"this endpoint URL names no host after its http:// {example}"
    return None


#: an HTTP header name (an RFC 9110 token)
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


def header_problem(name: str, value: str) -> str | None:
    """Why the HTTP client cannot send header ``name: value`` (never quoting the value, perhaps a secret), or None."""
    if not _HEADER_NAME.match(name):
        return f"header name {name!r} is not a valid HTTP header name (letters, digits and -, no spaces)"
    if any(ch in value for ch in "\r\n\0"):
        return f"the value of header {name!r} holds a line break (a value pasted from a file?)"
    if not value.isascii():
        return f"the value of header {name!r} holds a non-ASCII character, which HTTP headers cannot carry"
    return None


#: what pydantic shows for a SecretStr
_SECRET_MASK = "**********"


class RemoteConfig(_Model):
    """``remote``: endpoint, key and headers for a remote provider. The key and the header values (an Azure
    ``api-key``, an ``Authorization``) are secrets: a printed or dumped config shows ``**********``."""

    base_url: str | None = None
    api_key: SecretStr | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    batch: BatchConfig = Field(default_factory=BatchConfig)

    def header_values(self) -> dict[str, str]:
        """The headers with their real values (for the provider's requests only)."""
        return {name: value.get_secret_value() for name, value in self.headers.items()}

    @field_validator("api_key", "headers")
    @classmethod
    def _not_the_mask(cls, value: Any) -> Any:
        """A dumped config's ``**********`` is not a key: sending it would fail at the provider, later and less clearly."""
        secrets = value.values() if isinstance(value, dict) else [value]
        if any(s is not None and s.get_secret_value() == _SECRET_MASK for s in secrets):
            raise ValueError("this is the mask a printed config shows, not the secret: give the real value, or leave "
                             "remote.api_key out to read the key from the environment")
        return value

    @field_validator("headers")
    @classmethod
    def _sendable(cls, value: dict[str, SecretStr]) -> dict[str, SecretStr]:
        """Every header is one the HTTP client can send (each request would fail otherwise, as if the server were
        down); the message never quotes a value."""
        for name, secret in value.items():
            problem = header_problem(name, secret.get_secret_value())
            if problem:
                raise ValueError(problem)
        return value


class ProviderLimitsConfig(_Model):
    """``provider_limits``: how long to wait for the embedding provider and when to stop asking it.

    A search waits at most ``query_timeout_seconds`` for its query embedding (then it answers from
    keywords); only the first ``query_max_chars`` characters of a query are embedded (the keyword
    side uses all of it). Indexing waits ``request_timeout_seconds`` per remote request
    (``local_timeout_seconds`` per local-model batch) and retries ``retries`` times; a server asking
    (``Retry-After``) for more than ``max_retry_after_seconds`` is not waited for. After
    ``breaker_failures`` failures in a row (0: never) the provider is not asked for
    ``breaker_cooldown_seconds``: searches are keyword-only and syncs fail fast meanwhile.

    ``sync_give_up_seconds`` bounds how long indexing waits for a remote provider that does not answer, whatever
    the timeouts and retries above: once no request has succeeded for that long, the sync stops asking, indexes
    the text (keyword search finds it), opens the circuit breaker (searches do not wait either) and the vectors
    are added by a later sync.
    """

    request_timeout_seconds: float = Field(60.0, gt=0)
    local_timeout_seconds: float = Field(300.0, gt=0)
    query_timeout_seconds: float = Field(10.0, gt=0)
    query_max_chars: int = Field(2000, ge=1)
    retries: int = Field(3, ge=0)
    max_retry_after_seconds: float = Field(30.0, ge=0)
    breaker_failures: int = Field(3, ge=0)
    breaker_cooldown_seconds: float = Field(60.0, gt=0)
    sync_give_up_seconds: float = Field(30.0, gt=0)


class LocalConfig(_Model):
    """``local``: an on-device model (sentence-transformers name/dir, or a GGUF file).

    ``first_index`` and ``fast_passage_bytes`` are this library's additions for the bundled model
    (``model_path`` unset): ``"fast"`` builds the first index from the head of each chunk (its first
    ``fast_passage_bytes`` UTF-8 bytes, ~10x faster) and upgrades it to full vectors in the background
    (:mod:`openclaw_memory.indexing.two_tier`); ``"full"`` embeds whole chunks from the start. While the fast
    vectors are live, hybrid search orders hits with them weighed ``fast_vector_weight`` and keywords the rest
    (a chunk's head says less than the chunk: with the usual 0.7 the window ranked below keyword-only);
    ``min_score`` also admits hits the configured weights admit (``query.hybrid.relevance_vector_weight``).
    """

    model_path: str | None = None
    model_cache_dir: str | None = None
    first_index: Literal["fast", "full"] = "fast"
    fast_passage_bytes: int = Field(192, ge=16)
    fast_vector_weight: float = Field(0.15, ge=0.0, le=1.0)


class ExperimentalConfig(_Model):
    """``experimental``: the original gates session-transcript indexing behind this flag."""

    session_memory: bool = False


class MultimodalConfig(_Model):
    """``multimodal``: OpenClaw's opt-in indexing of images and audio in the extra paths (Gemini only). Read so that an
    OpenClaw ``memorySearch`` block loads as it is; this library indexes Markdown only, so ``enabled`` indexes no
    image or audio file (``MemoryIndex`` logs a warning saying so)."""

    enabled: bool = False
    modalities: list[str] | str | None = None
    max_file_bytes: int | None = Field(None, ge=1)


class MemoryFlushConfig(_Model):
    """``compaction.memoryFlush``: the silent pre-compaction turn."""

    enabled: bool = True
    soft_threshold_tokens: int = Field(4000, ge=0)
    force_flush_transcript_bytes: int = Field(2 * 1024 * 1024, ge=0)
    prompt: str | None = None
    system_prompt: str | None = None


class CompactionConfig(_Model):
    """``agents.defaults.compaction`` keys that drive the memory flush.

    ``post_index_sync`` (OpenClaw's ``postIndexSync``): how the index is refreshed after a flush
    turn wrote memory and after a compaction (the transcript sync of
    :meth:`MemoryIndex.after_compaction`): ``"async"`` in the background (default), ``"await"``
    before going on, ``"off"`` not at all (the usual triggers still apply).
    """

    reserve_tokens_floor: int = Field(20_000, ge=0)
    context_window: int = Field(200_000, ge=1)
    memory_flush: MemoryFlushConfig = Field(default_factory=MemoryFlushConfig)
    post_index_sync: Literal["async", "await", "off"] = "async"


# ---- memory.backend = "qmd": the QMD sidecar (spec §9.2) ------------------------------------------

_DURATION_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def duration_ms(value: str | int | float) -> int:
    """``"5m"`` / ``"15s"`` / ``"1h"`` / ``"250ms"`` / a number of ms → milliseconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    text = str(value).strip().lower()
    for unit in ("ms", "s", "m", "h", "d"):
        if text.endswith(unit) and text[: -len(unit)].strip().replace(".", "", 1).isdigit():
            return int(float(text[: -len(unit)]) * _DURATION_UNITS_MS[unit])
    if text.replace(".", "", 1).isdigit():
        return int(float(text))
    raise ValueError(f"not a duration: {value!r} (use e.g. '15s', '5m', '1h' or milliseconds)")


class QmdPathConfig(_Model):
    """``memory.qmd.paths[]`` / ``memorySearch.qmd.extraCollections[]``: an extra folder QMD indexes as
    its own collection (``name`` kept verbatim only outside the workspace)."""

    path: str
    name: str | None = None
    pattern: str = "**/*.md"


class QmdSessionsConfig(_Model):
    """``memory.qmd.sessions``: export session transcripts as Markdown for QMD to index."""

    enabled: bool = False
    export_dir: str | None = None
    retention_days: int | None = Field(None, ge=1)


class QmdUpdateConfig(_Model):
    """``memory.qmd.update``: when ``qmd update`` / ``qmd embed`` run, and the command timeouts."""

    interval: str = "5m"
    debounce_ms: int = Field(15_000, ge=0)
    on_boot: bool = True
    wait_for_boot_sync: bool = False
    embed_interval: str = "60m"
    command_timeout_ms: int = Field(30_000, ge=1)
    update_timeout_ms: int = Field(120_000, ge=1)
    embed_timeout_ms: int = Field(120_000, ge=1)

    @field_validator("interval", "embed_interval", mode="before")
    @classmethod
    def _duration(cls, v: Any) -> str:
        duration_ms(v)  # raises ValueError → ConfigError naming the key
        return str(v)

    def interval_ms(self) -> int:
        return duration_ms(self.interval)

    def embed_interval_ms(self) -> int:
        return duration_ms(self.embed_interval)


class QmdLimitsConfig(_Model):
    """``memory.qmd.limits``: result count, snippet size, the injected-chars clamp, search timeout."""

    max_results: int = Field(6, ge=1)
    max_snippet_chars: int = Field(700, ge=1)
    max_injected_chars: int = Field(4000, ge=1)
    timeout_ms: int = Field(4000, ge=1)


class QmdScopeMatch(_Model):
    """What a scope rule matches: the session key's chat type and/or a key prefix."""

    chat_type: Literal["direct", "group", "channel"] | None = None
    key_prefix: str | None = None


class QmdScopeRule(_Model):
    action: Literal["allow", "deny"]
    match: QmdScopeMatch = Field(default_factory=QmdScopeMatch)


def _default_scope_rules() -> list[QmdScopeRule]:
    return [QmdScopeRule(action="allow", match=QmdScopeMatch(chat_type="direct")),
            QmdScopeRule(action="allow", match=QmdScopeMatch(chat_type="channel"))]


class QmdScopeConfig(_Model):
    """``memory.qmd.scope``: which sessions may search through QMD (first matching rule wins;
    default: direct chats and channels yes, groups no)."""

    default: Literal["allow", "deny"] = "deny"
    rules: list[QmdScopeRule] = Field(default_factory=_default_scope_rules)


class QmdMcporterConfig(_Model):
    """``memory.qmd.mcporter``: accepted for compatibility; this library talks MCP to QMD itself
    (see ``QmdConfig.daemon``)."""

    enabled: bool = False
    server_name: str = "qmd"
    start_daemon: bool = True


class QmdConfig(_Model):
    """``memory.qmd``: the QMD sidecar backend, used when ``backend = "qmd"``.

    ``command`` is shell-split (e.g. ``"node /opt/qmd/dist/cli/qmd.js"``). ``search_mode``:
    ``search`` (BM25), ``vsearch`` (vectors), ``query`` (hybrid + rerank; both need QMD's models).
    ``daemon`` is this library's addition: keep one ``qmd mcp`` session per index and query it
    instead of starting a process per query (falls back to a process per query when the QMD
    version has no MCP server).
    """

    command: str = "qmd"
    search_mode: Literal["search", "vsearch", "query"] = "search"
    include_default_memory: bool = True
    paths: list[QmdPathConfig] = Field(default_factory=list)
    extra_collections: list[QmdPathConfig] = Field(default_factory=list)  # memorySearch.qmd.extraCollections
    sessions: QmdSessionsConfig = Field(default_factory=QmdSessionsConfig)
    update: QmdUpdateConfig = Field(default_factory=QmdUpdateConfig)
    limits: QmdLimitsConfig = Field(default_factory=QmdLimitsConfig)
    scope: QmdScopeConfig = Field(default_factory=QmdScopeConfig)
    mcporter: QmdMcporterConfig = Field(default_factory=QmdMcporterConfig)
    daemon: bool = True

    @field_validator("command")
    @classmethod
    def _command(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError("the QMD command must not be empty")
        if v in ("/opt/homebrew/bin/qmd", "/usr/local/bin/qmd"):  # as the original normalises them
            return "qmd"
        _register_command_secrets(v)
        return v


def _register_command_secrets(command: str) -> None:
    """Have :func:`~openclaw_memory.redaction.redact` hide the value of each ``NAME=value`` word of QMD's command
    whose name says it is a credential (``env QMD_API_KEY=… qmd``), whatever its shape."""
    try:
        words = shlex.split(command)
    except ValueError:
        return
    register_assigned_secrets(words)

# ---- end of memory.qmd ------------------------------------------------------------------------------


# Not OpenClaw's own ``<agent_id>.sqlite``: both tools may run on one machine, and their index
# schemas differ, so sharing one file would make each rebuild the other's index.
DEFAULT_STORE_SUFFIX = ".openclaw-memory.sqlite"


class DreamingConfig(_Model):
    """``dreaming``: consolidation of recent daily notes into ``MEMORY.md`` (this library's addition,
    after OpenClaw's dreaming; see the Consolidation page of the docs).

    A candidate line of the last ``lookback_days`` days of daily notes reaches the model only when
    searches surfaced it at least ``min_recall_count`` times, for at least ``min_unique_queries``
    distinct queries, with a best score of at least ``min_score`` (``record_recalls`` records
    those signals in the state directory). A rewrite that would remove more than
    ``max_prior_entry_loss_fraction`` of MEMORY.md's entries (at least one may go), or grow it past
    ``max_memory_chars``, is not made (append-only promotion instead); a promoted entry keeps at
    most ``max_entry_chars`` of its line. ``model``, ``base_url`` and ``api_key`` name the
    OpenAI-compatible chat endpoint ``openclaw-memory dream`` uses (the key may instead be in
    ``OPENAI_API_KEY``).
    """

    record_recalls: bool = True
    lookback_days: int = Field(7, ge=1)
    min_score: float = Field(0.0, ge=0.0, le=1.0)
    min_recall_count: int = Field(1, ge=0)
    min_unique_queries: int = Field(1, ge=0)
    max_candidates: int = Field(40, ge=1)
    max_entry_chars: int = Field(640, ge=40)
    max_prior_entry_loss_fraction: float = Field(0.25, ge=0.0, le=1.0)
    max_memory_chars: int = Field(20_000, ge=200)
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    timeout_seconds: float = Field(120.0, gt=0)

    @field_validator("api_key")
    @classmethod
    def _not_the_mask(cls, value: SecretStr | None) -> SecretStr | None:
        """A dumped config's ``**********`` is not a key: the model would refuse it later and less clearly."""
        if value is not None and value.get_secret_value() == _SECRET_MASK:
            raise ValueError("this is the mask a printed config shows, not the secret: give the real value, or leave "
                             "dreaming.api_key out to read the key from OPENAI_API_KEY")
        return value


#: An agent id names files and folders (the index, the sessions folder): letters, digits, ``_ . : @ -``.
_AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$")


def check_agent_id(agent_id: Any) -> str:
    """``agent_id`` if it is a valid agent id (letters, digits, ``_ . : @ -``), else ConfigError."""
    if not isinstance(agent_id, str) or not _AGENT_ID.match(agent_id):
        raise ConfigError(
            f"agent_id: {agent_id!r} is not a valid agent id; use 1-128 letters, digits, '_', '.', ':', '@' or '-'"
        )
    return agent_id


def default_state_dir() -> Path:
    """``$OPENCLAW_STATE_DIR`` or ``~/.openclaw``."""
    env = os.environ.get("OPENCLAW_STATE_DIR", "").strip()
    return Path(os.path.abspath(Path(env).expanduser())) if env else Path("~/.openclaw").expanduser()


class MemoryConfig(_Model):
    """All settings of one agent's memory: ``memorySearch`` keys plus ``compaction``."""

    enabled: bool = True
    agent_id: str = "main"
    workspace: Path | None = None
    state_dir: Path | None = None
    sources: list[Literal["memory", "sessions"]] = Field(default_factory=lambda: ["memory"])
    extra_paths: list[str] = Field(default_factory=list)
    sessions_dir: Path | None = None
    provider: ProviderName = "auto"
    model: str | None = None
    fallback: FallbackName = "none"
    output_dimensionality: int | None = Field(None, ge=1)
    remote: RemoteConfig = Field(default_factory=RemoteConfig)
    local: LocalConfig = Field(default_factory=LocalConfig)
    provider_limits: ProviderLimitsConfig = Field(default_factory=ProviderLimitsConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    chunking: ChunkingConfig = Field(default_factory=ChunkingConfig)
    query: QueryConfig = Field(default_factory=QueryConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    sync: SyncConfig = Field(default_factory=SyncConfig)
    experimental: ExperimentalConfig = Field(default_factory=ExperimentalConfig)
    multimodal: MultimodalConfig = Field(default_factory=MultimodalConfig)
    citations: Literal["auto", "on", "off"] = "auto"
    timezone: str | None = None
    compaction: CompactionConfig = Field(default_factory=CompactionConfig)
    dreaming: DreamingConfig = Field(default_factory=DreamingConfig)
    # ``memory.backend`` / ``memory.qmd`` (spec §9): which engine serves search
    backend: Literal["builtin", "qmd"] = "builtin"
    qmd: QmdConfig = Field(default_factory=QmdConfig)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise config_error(exc) from None

    @field_validator("agent_id", mode="before")
    @classmethod
    def _valid_agent_id(cls, v: Any) -> str:
        try:
            return check_agent_id(v)
        except ConfigError:  # reported by the model's ConfigError, which names the key and the value
            raise PydanticCustomError("agent_id", "not a valid agent id (agent_id: 1-128 letters, digits, '_', "
                                      "'.', ':', '@' or '-'; never a path)") from None

    @field_validator("workspace", "state_dir", "sessions_dir", mode="before")
    @classmethod
    def _not_blank(cls, v: Any) -> Any:
        """An empty folder name (an unset environment variable) is no folder: it would mean the current one."""
        if isinstance(v, str) and not v.strip():
            raise PydanticCustomError("blank_path", "empty folder name; give a path, or leave the key out for the "
                                      "default")
        return v

    @field_validator("workspace", "state_dir", "sessions_dir")
    @classmethod
    def _absolute(cls, v: Path | None) -> Path | None:
        """Relative folders are taken from the current directory when the config is built, once: an index must not
        move to another folder when the process changes directory later (a notebook, a server, an agent's tool)."""
        if v is None or v.is_absolute() or str(v).startswith("~"):  # "~" stays as written (expanded on use)
            return v
        return Path(os.path.abspath(v))

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        if not _is_zone(v):
            raise PydanticCustomError("timezone", "unknown time zone; use an IANA name such as 'Europe/Berlin' or "
                                      "'UTC'")
        return v.strip()

    @field_validator("sources")
    @classmethod
    def _memory_always(cls, v: list[str]) -> list[str]:
        out = sorted(set(v) | {"memory"})
        return out  # type: ignore[return-value]

    @field_validator("extra_paths")
    @classmethod
    def _clean_extra(cls, v: list[str]) -> list[str]:
        seen: list[str] = []
        for p in v:
            p = str(p).strip()
            if p and p not in seen:
                seen.append(p)
        return seen

    # ---- derived values -------------------------------------------------------------------

    def resolved_state_dir(self) -> Path:
        """The state directory: ``state_dir`` if set, else ``$OPENCLAW_STATE_DIR`` or ``~/.openclaw``."""
        return Path(self.state_dir).expanduser() if self.state_dir else default_state_dir()

    def resolved_workspace(self) -> Path:
        """The workspace directory (default ``<state_dir>/workspace``), absolute."""
        ws = Path(self.workspace).expanduser() if self.workspace else self.resolved_state_dir() / "workspace"
        return ws.resolve()

    def resolved_store_path(self) -> Path:
        """The SQLite file: ``store.path`` with ``{agent_id}``/``{agentId}`` and ``~`` expanded, else one
        index per agent and workspace, ``<state_dir>/memory/<agent_id>.<workspace key>.openclaw-memory.sqlite``
        (the key: 12 hex digits of the sha256 of the resolved workspace path; beside, never on, OpenClaw's
        own index)."""
        raw = self.store.path
        if not raw:
            key = hashlib.sha256(str(self.resolved_workspace()).encode("utf-8", "surrogatepass")).hexdigest()[:12]
            return self.resolved_state_dir() / "memory" / f"{self.agent_id}.{key}{DEFAULT_STORE_SUFFIX}"
        raw = raw.replace("{agent_id}", self.agent_id).replace("{agentId}", self.agent_id)
        return Path(raw).expanduser().resolve()

    def legacy_store_path(self) -> Path:
        """The default index file of earlier versions, shared by every workspace of the agent:
        ``<state_dir>/memory/<agent_id>.openclaw-memory.sqlite``."""
        return self.resolved_state_dir() / "memory" / f"{self.agent_id}{DEFAULT_STORE_SUFFIX}"

    def resolved_store_namespace(self) -> str:
        """The PostgreSQL namespace: ``store.namespace`` with ``{agent_id}`` and ``{host}`` (this machine's name)
        expanded, else the agent id."""
        raw = self.store.namespace or self.agent_id
        return raw.replace("{agent_id}", self.agent_id).replace("{agentId}", self.agent_id).replace(
            "{host}", socket.gethostname())

    def resolved_sessions_dir(self) -> Path:
        """Transcripts directory: ``sessions_dir`` or ``<state_dir>/agents/<agent_id>/sessions``."""
        if self.sessions_dir:
            return Path(self.sessions_dir).expanduser().resolve()
        return self.resolved_state_dir() / "agents" / self.agent_id / "sessions"

    def resolved_extra_paths(self) -> list[Path]:
        """Extra paths resolved against the workspace, de-duplicated, in order."""
        ws = self.resolved_workspace()
        out: list[Path] = []
        for p in self.extra_paths:
            path = Path(p).expanduser()
            path = path if path.is_absolute() else ws / path
            path = Path(os.path.normpath(path))
            if path not in out:
                out.append(path)
        return out

    def without_secrets(self) -> dict[str, Any]:
        """Every setting as JSON-safe values, secrets left out (``remote.api_key``, ``remote.headers``,
        ``dreaming.api_key``, the password of ``store.url``, the password or token of each endpoint's ``base_url``, a
        credential in ``qmd.command``): what may be written to a file. A config built from it takes its keys from the
        environment (``OPENAI_API_KEY``, ...), the database password from ``PGPASSWORD`` / ``~/.pgpass``, and its
        headers from whoever reopens it."""
        secrets = {"remote": {"api_key", "headers"}, "store": {"url"}, "dreaming": {"api_key"}}
        data = self.model_dump(mode="json", exclude=secrets, context={"secrets": True})  # URL passwords: below
        url = url_without_password(self.store.url.get_secret_value()) if self.store.url is not None else None
        if url is not None:
            data["store"]["url"] = url
        for section in (data["remote"], data["query"]["rerank"], data["dreaming"]):  # endpoints: no password
            if section.get("base_url"):
                section["base_url"] = _endpoint_url_kept(section["base_url"])
        data["qmd"]["command"] = redact(data["qmd"]["command"])  # a credential in it (``env HF_TOKEN=… qmd``)
        return data

    def sessions_enabled(self) -> bool:
        """True when ``sources`` includes ``"sessions"`` (no experimental gate in this library)."""
        return "sessions" in self.sources

    # ---- construction -----------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, ignore_unknown: bool = False) -> MemoryConfig:
        """Build from a dict in snake_case or camelCase. Unknown keys are an error unless ignored."""
        if not isinstance(data, dict):
            raise ConfigError(f"a memory configuration is an object (dict), not {type(data).__name__}")
        if ignore_unknown:
            data = _prune_unknown(cls, data, "")
        return cls(**data)

    @classmethod
    def load(cls, config: MemoryConfig | dict[str, Any] | None = None, **overrides: Any) -> MemoryConfig:
        """Accept a config, a dict or nothing, then apply keyword overrides (validated)."""
        if isinstance(config, MemoryConfig):
            if not overrides:
                return config
            base = config.model_dump(by_alias=False, context={"secrets": True})  # every value, so derived ones
            # (weights) stay put, and the URLs with their passwords
        elif config is None or isinstance(config, dict):
            base = dict(config or {})
        elif isinstance(config, (str, os.PathLike)):
            raise ConfigError(f"config must be a MemoryConfig or a dict, not the path {os.fspath(config)!r}; to open "
                              f"that folder pass it as workspace=... (MemoryIndex(workspace={os.fspath(config)!r}))")
        else:
            raise ConfigError(f"config must be a MemoryConfig or a dict, not {type(config).__name__}")
        base = _merge_settings(cls, base, overrides)
        return cls.from_dict(base)

    @classmethod
    def from_openclaw_file(cls, path: str | os.PathLike[str], *, agent_id: str | None = None, **overrides: Any) -> MemoryConfig:
        """Read an ``openclaw.json`` (JSON5) file: ``agents.defaults.memorySearch`` merged with the
        agent's own ``memorySearch``, ``agents.defaults.compaction``, the workspace, ``userTimezone`` (as
        ``timezone``: the day of a daily note and of "today") and ``memory.citations``. Keys this library does
        not use are ignored with a debug log; every value it reads is validated as :class:`MemoryConfig`
        validates it, and a file larger than
        :data:`MAX_CONFIG_FILE_BYTES` is refused (ConfigError naming the key or the limit)."""
        file = Path(path).expanduser()
        raw = _read_config_file(file)
        try:
            base = cls.from_dict(_from_openclaw(raw, agent_id, file.parent), ignore_unknown=True)
        except ConfigError as exc:
            raise ConfigError(f"{file}: {exc}") from None
        return cls.load(base, **overrides) if overrides else base


#: The largest config file read (a hand-written ``openclaw.json`` is a few KB; JSON5 parses at ~50 KB/s).
MAX_CONFIG_FILE_BYTES = 256 * 1024


def _read_config_file(file: Path) -> dict[str, Any]:
    """The top-level object of a JSON5 config file; ConfigError when it is missing, too large, not JSON5 or
    nested too deeply."""
    import json5

    try:
        with open(file, "rb") as handle:
            data = handle.read(MAX_CONFIG_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {file}") from None
    except OSError as exc:
        raise ConfigError(f"config file {file} cannot be read: {exc}") from None
    if len(data) > MAX_CONFIG_FILE_BYTES:
        raise ConfigError(f"{file} is larger than {MAX_CONFIG_FILE_BYTES // 1024} KB; a config file is not that big "
                          "(is it the right file?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file} is not UTF-8 text: {exc}") from None
    try:
        try:
            raw = json.loads(text)  # plain JSON (what OpenClaw writes) parses far faster than JSON5
        except ValueError:
            raw = json5.loads(text)
    except RecursionError:
        raise ConfigError(f"{file}: values are nested too deeply") from None
    except ValueError as exc:
        raise ConfigError(f"{file} is not valid JSON5: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{file}: the top level must be an object")
    return raw


def _section(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """``parent[key]`` when it is an object, ``{}`` when absent or null; ConfigError naming ``where.key`` otherwise."""
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}{key} must be an object, not {type(value).__name__} ({value!r:.60})")
    return value


def _list_at(parent: dict[str, Any], key: str, where: str) -> list[Any]:
    """``parent[key]`` when it is a list, ``[]`` when absent or null; ConfigError naming ``where.key`` otherwise
    (a string is not split into characters)."""
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"{where}{key} must be a list, not {type(value).__name__} ({value!r:.60})")
    return value


def _chosen_agent(agent_list: list[Any], agent_id: str | None) -> tuple[dict[str, Any], str]:
    """The ``agents.list`` entry of ``agent_id`` (default: the one marked ``default``, else the first) and its id."""
    entries = [a for a in agent_list if isinstance(a, dict)]
    if agent_id is None:
        chosen = next((a for a in entries if a.get("default")), entries[0] if entries else {})
        agent_id = chosen.get("id") or "main"
        if not isinstance(agent_id, str):
            raise ConfigError(f"agents.list[].id must be a string, not {type(agent_id).__name__} ({agent_id!r:.60})")
        return chosen, agent_id
    return next((a for a in entries if a.get("id") == agent_id), {}), agent_id


def _from_openclaw(raw: dict[str, Any], agent_id: str | None, base_dir: Path) -> dict[str, Any]:
    agents = _section(raw, "agents", "")
    defaults = _section(agents, "defaults", "agents.")
    chosen, agent_id = _chosen_agent(_list_at(agents, "list", "agents."), agent_id)
    own = f"agents.list[id={agent_id}]."
    default_search = _section(defaults, "memorySearch", "agents.defaults.")
    agent_search = _section(chosen, "memorySearch", own)
    data: dict[str, Any] = _merge_settings(MemoryConfig, dict(default_search), dict(agent_search))
    extra = (_list_at(default_search, "extraPaths", "agents.defaults.memorySearch.")
             + _list_at(agent_search, "extraPaths", own + "memorySearch."))
    if extra:
        data["extraPaths"] = extra
    data["agentId"] = agent_id
    workspace = chosen.get("workspace") or defaults.get("workspace")
    if workspace and "workspace" not in data:
        data["workspace"] = workspace
    user_timezone = chosen.get("userTimezone") or defaults.get("userTimezone")  # the zone of the user's day
    if user_timezone and "timezone" not in data:
        if _is_zone(user_timezone):
            data["timezone"] = user_timezone
        else:  # OpenClaw falls back to the host's zone
            log.warning("userTimezone %r is not a known time zone; using the system's", user_timezone)
    compaction = _merge_settings(CompactionConfig, dict(_section(defaults, "compaction", "agents.defaults.")),
                             dict(_section(chosen, "compaction", own)))
    if compaction:
        data["compaction"] = compaction
    memory = _section(raw, "memory", "")
    citations = memory.get("citations")
    if citations:
        data["citations"] = citations
    if memory.get("backend"):  # memory.backend / memory.qmd (spec §9)
        data["backend"] = memory["backend"]
    # memorySearch.qmd.extraCollections (defaults' then the agent's) joins memory.qmd as qmd.extraCollections
    search_qmd = data.pop("qmd", None)
    extra_colls = [c for ms, where in ((default_search, "agents.defaults.memorySearch.qmd."),
                                       (agent_search, own + "memorySearch.qmd."))
                   if isinstance(ms.get("qmd"), dict) for c in _list_at(ms["qmd"], "extraCollections", where)]
    if isinstance(search_qmd, dict) and not extra_colls:  # snake_case spelling
        extra_colls = list(_list_at(search_qmd, "extra_collections", "memorySearch.qmd."))
    ignored = sorted(k for k in search_qmd if k not in ("extraCollections", "extra_collections")) \
        if isinstance(search_qmd, dict) else []
    if ignored:  # OpenClaw reads only extraCollections there; say so rather than drop settings silently
        log.warning("memorySearch.qmd.%s ignored: only extraCollections is read under memorySearch.qmd (as "
                    "OpenClaw does); put QMD settings under memory.qmd", ", memorySearch.qmd.".join(ignored))
    if memory.get("qmd") is not None:
        data["qmd"] = _section(memory, "qmd", "memory.")
    if extra_colls:
        qmd = dict(data.get("qmd") or {})
        own_colls = _list_at(qmd, "extraCollections", "memory.qmd.") or _list_at(qmd, "extra_collections", "memory.qmd.")
        qmd.pop("extraCollections", None)
        qmd.pop("extra_collections", None)
        data["qmd"] = {**qmd, "extraCollections": [*own_colls, *extra_colls]}
    plugins = _section(_section(_section(raw, "plugins", ""), "entries", "plugins."), "memory-core", "plugins.entries.")
    dreaming = _section(_section(plugins, "config", "plugins.entries.memory-core."), "dreaming",
                        "plugins.entries.memory-core.config.")
    if dreaming:  # the original's place; memorySearch.dreaming wins
        known = _prune_unknown(DreamingConfig, dreaming, "plugins.entries.memory-core.config.dreaming.")
        data["dreaming"] = _merge_settings(DreamingConfig, known, dict(data.get("dreaming") or {}))
    _apply_model_provider(data, raw)
    _resolve_secret_inputs(data, raw, base_dir)
    _clamp_like_openclaw(data)
    store = data.get("store") or {}
    if isinstance(store, dict) and store.get("path"):
        p = Path(str(store["path"]).replace("{agentId}", agent_id).replace("{agent_id}", agent_id)).expanduser()
        if not p.is_absolute():
            store = {**store, "path": str(base_dir / p)}
            data["store"] = store
    return data


#: ``"${OPENAI_API_KEY}"`` / ``"$OPENAI_API_KEY"``: OpenClaw's shorthand for an env SecretRef on a SecretInput field
_ENV_SHORTHAND = re.compile(r"^\$(?:\{([A-Z][A-Z0-9_]{0,127})\}|([A-Z][A-Z0-9_]{0,127}))$")
_KEY_VARIABLES = "OPENAI_API_KEY, GEMINI_API_KEY or VOYAGE_API_KEY"


#: the environment variables holding each remote provider's API key, in the order they are read
PROVIDER_ENV_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "voyage": ("VOYAGE_API_KEY",),
}
#: the ``models.providers`` entry of each remote provider in ``openclaw.json``
_MODEL_PROVIDER_ENTRIES = {"openai": "openai", "gemini": "google", "voyage": "voyage"}


def _apply_model_provider(data: dict[str, Any], raw: dict[str, Any]) -> None:
    """In place: for an explicitly chosen remote provider, what ``models.providers.<p>`` (``google`` for Gemini)
    holds, as OpenClaw reads it: its ``baseUrl`` when ``remote.baseUrl`` is unset, its ``apiKey`` when neither
    ``remote.apiKey`` nor the provider's environment variable is set, its ``headers`` under ``remote.headers``."""
    name = data.get("provider")
    entry_name = _MODEL_PROVIDER_ENTRIES.get(name) if isinstance(name, str) else None
    if entry_name is None:
        return
    entry = _section(_section(_section(raw, "models", ""), "providers", "models."), entry_name, "models.providers.")
    if not entry:
        return
    remote = dict(_section(data, "remote", "memorySearch."))
    if entry.get("baseUrl") and not (remote.get("baseUrl") or remote.get("base_url")):
        remote["baseUrl"] = entry["baseUrl"]
    has_key = remote.get("apiKey") or remote.get("api_key") or any(
        os.environ.get(env, "").strip() for env in PROVIDER_ENV_KEYS[str(name)])
    if entry.get("apiKey") and not has_key:
        remote["apiKey"] = entry["apiKey"]
    if isinstance(entry.get("headers"), dict):
        remote["headers"] = {**entry["headers"], **_section(remote, "headers", "memorySearch.remote.")}
    data["remote"] = remote


def _resolve_secret_inputs(data: dict[str, Any], raw: dict[str, Any], base_dir: Path) -> None:
    """Replace each SecretRef of the SecretInput fields this library reads (``remote.apiKey``, ``remote.headers.*``,
    ``dreaming.apiKey``) by the secret it points to, as OpenClaw resolves them at startup."""
    for section_key in ("remote", "dreaming"):
        section = data.get(section_key)
        if not isinstance(section, dict):
            continue
        section = data[section_key] = dict(section)  # the file's own objects stay as read
        for key in ("apiKey", "api_key"):
            if key in section:
                section[key] = _secret_input(section[key], raw, base_dir, f"{section_key}.{key}")
        if section_key == "remote" and isinstance(section.get("headers"), dict):
            section["headers"] = {name: _secret_input(value, raw, base_dir, f"remote.headers.{name}")
                                  for name, value in section["headers"].items()}


def _secret_input(value: Any, raw: dict[str, Any], base_dir: Path, where: str) -> Any:
    """A SecretInput's secret: ``value`` itself, unless it is a SecretRef (``{source, provider, id}``) or the
    ``"${VAR}"`` shorthand, which are resolved; ConfigError naming ``where`` when one does not resolve."""
    if isinstance(value, str):
        match = _ENV_SHORTHAND.match(value.strip())
        return _env_secret(match.group(1) or match.group(2), where) if match else value
    if not isinstance(value, dict) or "source" not in value:
        return value  # not a reference: validated as any value is
    source, ref_id, provider = value.get("source"), value.get("id"), value.get("provider") or "default"
    if not isinstance(ref_id, str) or not ref_id:
        raise ConfigError(f"{where}: a SecretRef needs an id (the variable, JSON pointer or key it reads)")
    if source == "env":
        return _env_secret(ref_id, where)
    if source == "file":
        return _file_secret(raw, base_dir, str(provider), ref_id, where)
    raise ConfigError(f"{where}: SecretRefs with source {source!r} are not resolved by this library (only \"env\" "
                      f"and \"file\" are); give the key in {_KEY_VARIABLES}, or as an env or file SecretRef")


def _env_secret(name: str, where: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ConfigError(f"{where}: the environment variable {name} its SecretRef names is not set (or empty); "
                          "set it, or give the key another way")
    return value


def _file_secret(raw: dict[str, Any], base_dir: Path, provider: str, pointer: str, where: str) -> str:
    """The secret at JSON pointer ``pointer`` of the file of ``secrets.providers.<provider>`` (its whole content
    when the provider's mode is ``singleValue``)."""
    settings = _section(_section(_section(raw, "secrets", ""), "providers", "secrets."), provider, "secrets.providers.")
    if settings.get("source") != "file" or not isinstance(settings.get("path"), str):
        raise ConfigError(f"{where}: its SecretRef names the file provider {provider!r}, but secrets.providers."
                          f"{provider} is not a file provider with a path")
    file = Path(settings["path"]).expanduser()
    file = file if file.is_absolute() else base_dir / file
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read the secrets file {file} ({type(exc).__name__})") from None
    if settings.get("mode") == "singleValue":
        value: Any = text.strip()
    else:
        try:
            value = json.loads(text)
        except ValueError:
            raise ConfigError(f"{where}: the secrets file {file} is not JSON (mode \"json\")") from None
        for part in pointer.split("/")[1:] if pointer.startswith("/") else [None]:
            key = None if part is None else part.replace("~1", "/").replace("~0", "~")
            if not isinstance(value, dict) or key not in value:
                raise ConfigError(f"{where}: the secrets file {file} has nothing at {pointer!r} (a JSON pointer)")
            value = value[key]
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: the secret at {pointer!r} in {file} is not a non-empty string")
    return value.strip()


def _is_zone(name: Any) -> bool:
    """Whether ``name`` is an IANA time zone name this system knows."""
    try:
        return isinstance(name, str) and ZoneInfo(name.strip()) is not None
    except (ZoneInfoNotFoundError, ValueError):
        return False


#: Values OpenClaw clamps instead of rejecting (spec §5): (path of camelCase/snake_case keys, low, high, int?).
_OPENCLAW_CLAMPS: tuple[tuple[tuple[tuple[str, ...], ...], float, float | None, bool], ...] = (
    ((("query",), ("minScore", "min_score")), 0.0, 1.0, False),
    ((("query",), ("hybrid",), ("vectorWeight", "vector_weight")), 0.0, 1.0, False),
    ((("query",), ("hybrid",), ("textWeight", "text_weight")), 0.0, 1.0, False),
    ((("query",), ("hybrid",), ("candidateMultiplier", "candidate_multiplier")), 1, 20, True),
    ((("query",), ("hybrid",), ("mmr",), ("lambda", "lambda_")), 0.0, 1.0, False),
    ((("query",), ("hybrid",), ("temporalDecay", "temporal_decay"), ("halfLifeDays", "half_life_days")), 1, None, True),
)


def _clamp_like_openclaw(data: dict[str, Any]) -> None:
    """In place: bring out-of-range numbers into range as OpenClaw does when it reads its config
    (a file OpenClaw accepts must load here too), with a warning naming the key."""
    for path, lo, hi, whole in _OPENCLAW_CLAMPS:
        node: Any = data
        for names in path[:-1]:
            node = next((node[n] for n in names if isinstance(node, dict) and isinstance(node.get(n), dict)), None)
        if not isinstance(node, dict):
            continue
        for name in path[-1]:
            value = node.get(name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
                continue
            fixed: float = math.floor(value) if whole else value
            fixed = max(lo, fixed if hi is None else min(hi, fixed))
            if fixed != value:
                log.warning("memorySearch.%s = %r is out of range; using %r as OpenClaw does",
                            ".".join(p[0] for p in path[:-1]) + "." + name, value, fixed)
                node[name] = int(fixed) if whole else fixed


def _field_key(model: type[BaseModel], key: str) -> str | None:
    for name, info in model.model_fields.items():
        if key == name or key == info.alias:
            return name
    return None


def _prune_unknown(model: type[BaseModel], data: dict[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = _field_key(model, key)
        if name is None:
            log.debug("ignoring unknown config key %s%s", where, key)
            continue
        ann = model.model_fields[name].annotation
        if isinstance(value, dict) and isinstance(ann, type) and issubclass(ann, BaseModel):
            value = _prune_unknown(ann, value, f"{where}{key}.")
        out[key] = value
    return out


def _merge_settings(model: type[BaseModel], base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` merged in, sections key by key: a key of ``over`` replaces ``base``'s value of the
    same setting whichever spelling each uses (``maxResults`` overrides ``max_results`` and the other way round),
    so a camelCase OpenClaw block takes snake_case keyword overrides. Keys ``model`` does not know are kept as
    given (the model names them in its error)."""
    out = dict(base)
    for key, value in over.items():
        name = _field_key(model, key)
        section = _section_model(model, name)
        spellings = [k for k in out if name is not None and _field_key(model, k) == name] or [key]
        current = next((out[k] for k in spellings if k in out), None)
        for spelling in spellings:
            out.pop(spelling, None)
        if isinstance(value, dict) and isinstance(current, dict):
            value = _merge_settings(section, current, value) if section is not None else {**current, **value}
        out[key] = value
    return out


def _section_model(model: type[BaseModel], name: str | None) -> type[BaseModel] | None:
    """The settings model of ``model``'s field ``name`` when that field is a section (a nested model)."""
    if name is None:
        return None
    annotation = model.model_fields[name].annotation
    candidates = get_args(annotation) or (annotation,)
    return next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)


def config_error(exc: ValidationError) -> ConfigError:
    """Turn a pydantic ValidationError into a ConfigError whose message names each bad key."""
    parts = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err.get("loc", ()) if not isinstance(p, int)) or "(config)"
        # never shown: a DSN, a key, a header's value (whose key ends in the header's name)
        secret = key.startswith("store") or bool({"api_key", "apiKey", "headers"} & set(key.split(".")))
        given = err.get("input")
        url = key.lower().endswith("url")  # remote.base_url, or remote.baseUrl as openclaw.json spells it
        given = url_without_credentials(given) if url and isinstance(given, str) else given
        shown = "" if secret else redact(f" (got {given!r})")
        parts.append(f"{key}: {err.get('msg')}{shown}")
    return ConfigError("invalid memory configuration: " + "; ".join(parts))
