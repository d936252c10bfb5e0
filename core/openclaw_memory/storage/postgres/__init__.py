"""The PostgreSQL backend (``pip install "openclaw-memory[postgres]"``): one memory index shared by many
processes and hosts. Select it with ``store.url: "postgresql://..."``."""

from openclaw_memory.storage.postgres.store import PostgresStore, is_postgres_url, redact_url

__all__ = ["PostgresStore", "is_postgres_url", "redact_url"]
