"""The PostgreSQL schema of the index, versioned and migrated by the library.

Every table lives in one PostgreSQL schema (default ``openclaw_memory``). A *namespace* (one agent's
memory of one workspace) is a name; each build of its index is a row of ``namespaces`` (``state``
``active``, ``building`` or ``retired``) and every row of ``files``, ``chunks`` and ``meta`` belongs to
one build, so a forced rebuild fills a new build and makes it active in one transaction. The
embedding cache is keyed by the namespace's name and shared by its builds and by every host.
``terms`` holds each build's keyword statistics (how many chunks hold each token), written in the
same transaction as the chunks, so BM25 reads document frequencies instead of counting them; its
``terms_prefix`` index (v3) finds the tokens a prefix (``"paint"*``) starts, whatever the database's collation.
A chunk's keyword tokens are kept in its row (storage ``MAIN``) and its vector out of line (``EXTERNAL``, not
compressed), so a keyword search reads each match's tokens from the row it visits anyway (instead of one TOAST
lookup per match) and rows are about half as wide; vector search walks an HNSW index from 1,000 vectors, so only
small namespaces scan every vector. The layout is not a schema version (hosts running older code read and write
the same tables); the table's owner sets it when opening the schema, and rows written before keep their layout
until they are written again (a forced rebuild rewrites them all). v4 had kept the vector in the row.
"""

from __future__ import annotations

from typing import Any

from openclaw_memory.errors import StoreError

__all__ = ["SCHEMA_VERSION", "migrate"]

#: the schema version this code writes and reads
SCHEMA_VERSION = 4

_V1 = """
CREATE TABLE IF NOT EXISTS {s}.namespaces (
  id bigserial PRIMARY KEY, name text NOT NULL, state text NOT NULL,
  n_rows bigint NOT NULL DEFAULT 0, n_tokens bigint NOT NULL DEFAULT 0, version bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now());
CREATE UNIQUE INDEX IF NOT EXISTS namespaces_active ON {s}.namespaces(name) WHERE state = 'active';
CREATE TABLE IF NOT EXISTS {s}.meta (
  ns_id bigint NOT NULL REFERENCES {s}.namespaces(id) ON DELETE CASCADE, key text NOT NULL, value text NOT NULL,
  PRIMARY KEY (ns_id, key));
CREATE TABLE IF NOT EXISTS {s}.files (
  ns_id bigint NOT NULL REFERENCES {s}.namespaces(id) ON DELETE CASCADE, path text NOT NULL,
  source text NOT NULL, hash text NOT NULL, mtime double precision NOT NULL, size bigint NOT NULL,
  PRIMARY KEY (ns_id, path));
CREATE TABLE IF NOT EXISTS {s}.chunks (
  seq bigserial NOT NULL, ns_id bigint NOT NULL REFERENCES {s}.namespaces(id) ON DELETE CASCADE,
  id text NOT NULL, path text NOT NULL, source text NOT NULL, start_line int NOT NULL, end_line int NOT NULL,
  hash text NOT NULL, model text NOT NULL, text text NOT NULL,
  tokens text NOT NULL, tsv tsvector NOT NULL,
  embedding vector, raw_embedding bytea, dims int, zero boolean NOT NULL DEFAULT false,
  updated_at bigint NOT NULL,
  PRIMARY KEY (ns_id, id));
CREATE INDEX IF NOT EXISTS chunks_path ON {s}.chunks(ns_id, path);
CREATE INDEX IF NOT EXISTS chunks_seq ON {s}.chunks(ns_id, seq);
CREATE INDEX IF NOT EXISTS chunks_tsv ON {s}.chunks USING gin (tsv);
CREATE TABLE IF NOT EXISTS {s}.embedding_cache (
  namespace text NOT NULL, provider text NOT NULL, model text NOT NULL, provider_key text NOT NULL,
  hash text NOT NULL, embedding bytea NOT NULL, dims int NOT NULL, updated_at bigint NOT NULL,
  PRIMARY KEY (namespace, provider, model, provider_key, hash));
CREATE INDEX IF NOT EXISTS embedding_cache_age ON {s}.embedding_cache(namespace, updated_at);
"""

_V2 = """
CREATE TABLE IF NOT EXISTS {s}.terms (
  ns_id bigint NOT NULL REFERENCES {s}.namespaces(id) ON DELETE CASCADE, term text NOT NULL,
  n_docs bigint NOT NULL, PRIMARY KEY (ns_id, term));
INSERT INTO {s}.terms(ns_id, term, n_docs)
  SELECT c.ns_id, x.w, count(*) FROM {s}.chunks c,
    LATERAL (SELECT DISTINCT w FROM unnest(string_to_array(c.tokens, ' ')) AS u(w) WHERE w <> '') x
  GROUP BY c.ns_id, x.w
  ON CONFLICT (ns_id, term) DO NOTHING;
"""

_V3 = """
CREATE INDEX IF NOT EXISTS terms_prefix ON {s}.terms(ns_id, term text_pattern_ops);
"""

#: v4 had kept the vector in the row: the layout below replaces it, so the step only moves the version on (its
#: ALTER TABLE, an exclusive lock, waited for every open transaction on the chunks and held every host's searches)
_V4 = ""

#: migration i (1-based) brings the schema from version i-1 to i
_MIGRATIONS = [_V1, _V2, _V3, _V4]

#: the chunks' layout (see above), set by the table's owner when it differs; a layout for speed, as _V4. Changing it
#: locks the table exclusively: only when no other session uses it (NOWAIT), so that an open neither waits for a
#: sync nor holds every host's searches behind it; a busy table keeps its layout until a later open
_LAYOUT = """
DO $$ BEGIN
  IF pg_has_role((SELECT relowner FROM pg_class WHERE oid = '{s}.chunks'::regclass), 'USAGE') AND EXISTS (
      SELECT 1 FROM pg_attribute WHERE attrelid = '{s}.chunks'::regclass
        AND ((attname = 'embedding' AND attstorage <> 'e') OR (attname = 'tokens' AND attstorage <> 'm'))) THEN
    BEGIN
      LOCK TABLE {s}.chunks IN ACCESS EXCLUSIVE MODE NOWAIT;
      ALTER TABLE {s}.chunks ALTER COLUMN embedding SET STORAGE EXTERNAL, ALTER COLUMN tokens SET STORAGE MAIN;
    EXCEPTION WHEN lock_not_available OR insufficient_privilege THEN
      NULL;
    END;
  END IF;
END $$;
"""


def migrate(conn: Any, schema: str, *, read_only: bool = False) -> int:
    """Create or upgrade the schema inside ``conn``'s open transaction; returns the version found.

    Only what is missing is created: a role with USAGE and CREATE on a schema an administrator made
    (and no CREATE on the database) can open it, and a schema already at this version needs no
    privilege beyond USAGE. Serialised between processes by a transaction-level advisory lock.
    StoreError naming the missing privilege when the role cannot create what is missing (or on a
    ``read_only`` connection), or when the database holds a newer schema than this code knows."""
    quoted = f'"{schema}"'
    if read_only:
        found = _check_version(conn, schema, _found_version(conn, schema, read_only=True))
        if found < SCHEMA_VERSION:
            raise StoreError(f"the PostgreSQL schema {schema!r} is at version {found} and this connection is read-only: "
                             f"open it once from a host with a read-write connection to upgrade it to {SCHEMA_VERSION}")
        return found
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s), 0)", (schema + ":schema",))
    if conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone() is None:
        _require(conn, "SELECT has_database_privilege(current_database(), 'CREATE')", (),
                 f"the schema {schema!r} does not exist and this role may not create it: grant it CREATE on the "
                 f"database, or have an administrator run CREATE SCHEMA {quoted} and grant this role USAGE and "
                 "CREATE on it")
        conn.execute(f"CREATE SCHEMA {quoted}")
    _require(conn, "SELECT has_schema_privilege(%s, 'USAGE')", (schema,),
             f"this role has no USAGE privilege on the schema {schema!r}: GRANT USAGE ON SCHEMA {quoted} TO it")
    found = _check_version(conn, schema, _found_version(conn, schema, read_only=False))
    if found < SCHEMA_VERSION:
        _require(conn, "SELECT has_schema_privilege(%s, 'CREATE')", (schema,),
                 f"the schema {schema!r} needs its tables created or upgraded (version {found} → {SCHEMA_VERSION}) "
                 f"and this role has no CREATE privilege on it: GRANT CREATE ON SCHEMA {quoted} TO it, or open it "
                 "once with a role that has")
        conn.execute(f"CREATE TABLE IF NOT EXISTS {quoted}.schema_version (version int NOT NULL)")
        for version in range(found + 1, SCHEMA_VERSION + 1):
            if _MIGRATIONS[version - 1]:
                conn.execute(_MIGRATIONS[version - 1].format(s=quoted))
        conn.execute(f"DELETE FROM {quoted}.schema_version")  # one row: the version the schema is at
        conn.execute(f"INSERT INTO {quoted}.schema_version(version) VALUES (%s)", (SCHEMA_VERSION,))
    conn.execute(_LAYOUT.format(s=quoted))
    return found


def _found_version(conn: Any, schema: str, *, read_only: bool) -> int:
    """The version the schema is at (0: no tables yet); StoreError on a read-only connection to a schema
    that is not set up."""
    table = f'"{schema}".schema_version'
    exists = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()[0] is not None
    if not exists:
        if read_only:
            raise StoreError(f"the PostgreSQL schema {schema!r} holds no memory index yet and this connection is "
                             "read-only: index once from a host with a read-write connection")
        return 0
    _require(conn, "SELECT has_table_privilege(%s, 'SELECT')", (table,),
             f"this role has no SELECT privilege on the tables of the schema {schema!r}: GRANT SELECT ON ALL "
             f'TABLES IN SCHEMA "{schema}" TO it')
    row = conn.execute(f"SELECT max(version) FROM {table}").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _check_version(conn: Any, schema: str, found: int) -> int:
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"the PostgreSQL schema {schema!r} is at version {found}, newer than this openclaw-memory supports "
            f"({SCHEMA_VERSION}); upgrade openclaw-memory on this host (pip install -U 'openclaw-memory[postgres]')")
    return found


def _require(conn: Any, check: str, args: tuple[Any, ...], message: str) -> None:
    """StoreError(``message``) unless the privilege ``check`` (a SELECT of one boolean) holds."""
    if not conn.execute(check, args).fetchone()[0]:
        raise StoreError(message)
