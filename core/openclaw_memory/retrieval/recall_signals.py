"""Reinforcement signals: how often searches surfaced each line of the memory, and for how many
distinct queries. A returned chunk counts for the lines that hold words of the query (for all of
its lines when none does: a match by meaning). Kept in SQLite in the state directory (never in the Markdown); consolidation's
gates read them.

A query is stored as a hash only, so the signals file holds no query text.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from openclaw_memory.config import MemoryConfig
from openclaw_memory.text.query_analysis import QueryAnalysis, analyze_query
from openclaw_memory.types import SearchHit, SearchResult

__all__ = ["RecallSignals", "RecallStats", "recalled_lines", "record_recalls", "state_dir"]

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS recalls (
    path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    query_hash TEXT NOT NULL, score REAL NOT NULL, at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS recalls_path ON recalls(path, start_line, end_line);
"""


def state_dir(config: MemoryConfig) -> Path:
    """Where consolidation keeps its state for this agent: ``<state_dir>/dreaming/<agent_id>``."""
    return config.resolved_state_dir() / "dreaming" / config.agent_id


@dataclass(frozen=True)
class RecallStats:
    """What searches said about some lines: times surfaced, distinct queries, best score."""

    recall_count: int = 0
    unique_queries: int = 0
    max_score: float = 0.0


_CONNECTIONS: dict[Path, sqlite3.Connection] = {}
_LAST_PRUNE: dict[Path, float] = {}
_GUARD = threading.Lock()
#: Signals older than what a consolidation can still use are removed at most this often (seconds).
PRUNE_INTERVAL = 3600.0


def _connection(path: Path) -> sqlite3.Connection:
    """One open connection per signals file and process (WAL, no fsync per search: a signal lost in a
    crash only delays a promotion). Callers hold ``_GUARD``."""
    connection = _CONNECTIONS.get(path)
    if connection is not None and not path.is_file():  # the file was removed: start a new one
        connection.close()
        connection = None
    if connection is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, timeout=10, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.executescript(_SCHEMA)
        _CONNECTIONS[path] = connection
    return connection


class RecallSignals:
    """The recall signals file of one agent (``recalls.sqlite`` in :func:`state_dir`).

    With ``keep_days``, recording also removes the signals older than that many days (at most once an
    hour per process), so the file stays as small as the window consolidation reads.
    """

    def __init__(self, path: Path, *, keep_days: int | None = None) -> None:
        self.path = path
        self.keep_days = keep_days

    def record(self, query: str, hits: Iterable[tuple[str, int, int, float]]) -> None:
        """Record that ``query`` surfaced each ``(path, start_line, end_line, score)``."""
        digest = hashlib.sha256(" ".join(query.lower().split()).encode("utf-8", "surrogatepass")).hexdigest()[:32]
        now = time.time()
        rows = [(path, start, end, digest, float(score), now) for path, start, end, score in hits]
        if not rows:
            return
        with _GUARD:
            connection = _connection(self.path)
            with connection:
                connection.executemany("INSERT INTO recalls VALUES (?, ?, ?, ?, ?, ?)", rows)
                self._prune(connection, now)

    def _prune(self, connection: sqlite3.Connection, now: float) -> None:
        if self.keep_days is None or now - _LAST_PRUNE.get(self.path, float("-inf")) < PRUNE_INTERVAL:
            return
        connection.execute("DELETE FROM recalls WHERE at < ?", (now - self.keep_days * 86_400,))
        _LAST_PRUNE[self.path] = now

    def stats(self, path: str, start_line: int, end_line: int) -> RecallStats:
        """The signals of the chunks of ``path`` that overlap lines ``start_line``..``end_line``."""
        if not self.path.is_file():
            return RecallStats()
        with _GUARD:
            count, unique, best = _connection(self.path).execute(
                "SELECT COUNT(*), COUNT(DISTINCT query_hash), COALESCE(MAX(score), 0) FROM recalls "
                "WHERE path = ? AND start_line <= ? AND end_line >= ?", (path, end_line, start_line),
            ).fetchone()
        return RecallStats(int(count), int(unique), float(best))


def recalled_lines(query: QueryAnalysis, hit: SearchHit) -> list[tuple[str, int, int, float]]:
    """The ranges of ``hit`` a search recalled: each line holding words of the query, or the whole
    hit when none does (a match by meaning) or its text does not map to its lines."""
    lines = hit.text.split("\n") if hit.text else []
    whole = [(hit.path, hit.start_line, hit.end_line, hit.score)]
    if len(lines) != hit.end_line - hit.start_line + 1:
        return whole
    matched = [hit.start_line + i for i, (share, _) in enumerate(query.coverage(lines)) if share > 0]
    return [(hit.path, line, line, hit.score) for line in matched] or whole


def record_recalls(config: MemoryConfig, result: SearchResult) -> SearchResult:
    """Record the memory hits of a search (when ``dreaming.record_recalls``) and return the
    result unchanged; a failure to record is logged, never raised."""
    hits = [hit for hit in result.hits if hit.source == "memory"]
    if not config.dreaming.record_recalls or not hits or not result.query.strip():
        return result
    analysis = analyze_query(result.query, stemming=True)  # "deploy" recalls the line saying "Deploys"
    try:
        ranges = [found for hit in hits for found in recalled_lines(analysis, hit)]
        keep_days = config.dreaming.lookback_days + 1  # a line older than the lookback is never a candidate
        RecallSignals(state_dir(config) / "recalls.sqlite", keep_days=keep_days).record(result.query, ranges)
    except Exception as exc:  # the signals serve consolidation: never a reason for a search to fail
        log.warning("could not record recall signals: %s", exc)
    return result
