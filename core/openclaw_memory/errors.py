"""Exceptions raised by openclaw-memory.

The tree::

    OpenClawMemoryError
    ├── ConfigError                 invalid configuration (names the offending key)
    ├── MissingDependencyError      an optional extra is not installed (names the extra)
    ├── StoreError                  the index cannot be opened, read or written (every backend)
    │   ├── IndexLockedError        another process holds the index for too long
    │   └── StoreUnavailableError   the index's database server is down, restarting or out of connections
    ├── ProviderError               an embedding provider failed or returned bad vectors
    │   ├── ProviderUnavailableError  the provider cannot start (no key, no model, no package)
    │   ├── ProviderRequestError      a request failed after retries (HTTP status in ``status_code``)
    │   │   └── RemoteRequestError      ... with the server's ``retry_after``
    │   │       └── ProviderUnresponsiveError  no answer for ``provider_limits.sync_give_up_seconds``
    │   └── BatchJobError             a vendor batch job failed (``attempts``)
    │       ├── BatchTimeoutError       it did not finish in time
    │       └── BatchUnavailableError   the endpoint has no batch API
    ├── IndexingError               a sync could not complete; the previous index is intact
    │   ├── SyncCancelled             the sync was stopped (close(), Ctrl-C)
    │   └── SyncStoreUnavailableError the database server went away mid-sync (also a StoreUnavailableError)
    ├── UnreadableFileError         a memory file cannot be read as text
    ├── MemoryPathError             ``memory_get`` / append refused a path (outside memory files)
    ├── ProtectedMemoryError        a delete would have removed hand-written memory (also PermissionError)
    ├── BackendError                the configured search backend failed (MemoryIndex falls back)
    │   └── QmdError                  the QMD sidecar: missing binary, timeout, bad output, no models
    ├── MemoryArgumentError         a tool argument has the wrong type or value (names the argument)
    │   └── MemoryArgumentTypeError   ... of the wrong type (also a TypeError)
    └── IndexClosedError            the MemoryIndex was closed (also RuntimeError)

Every class is defined here; modules that raise one may re-export it under its old import path
(``openclaw_memory.indexing.sync.SyncCancelled``, ``openclaw_memory.providers.batch.BatchJobError``, ...).
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "BatchJobError",
    "BatchTimeoutError",
    "BatchUnavailableError",
    "ConfigError",
    "IndexClosedError",
    "IndexLockedError",
    "IndexingError",
    "MemoryArgumentError",
    "MemoryArgumentTypeError",
    "MemoryPathError",
    "MissingDependencyError",
    "OpenClawMemoryError",
    "ProtectedMemoryError",
    "ProviderError",
    "ProviderRequestError",
    "ProviderUnresponsiveError",
    "ProviderUnavailableError",
    "QmdError",
    "RemoteRequestError",
    "RerankError",
    "StoreError",
    "StoreUnavailableError",
    "SyncCancelled",
    "SyncStoreUnavailableError",
    "UnreadableFileError",
]


class OpenClawMemoryError(Exception):
    """Base class of every error this library raises on purpose. Its message never holds a secret: text that an
    endpoint echoed (an API key, a header value) is redacted (:func:`openclaw_memory.redaction.redact`)."""

    def __init__(self, *args: object) -> None:
        from openclaw_memory.redaction import redact

        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class ConfigError(OpenClawMemoryError, ValueError):
    """The configuration is invalid; the message names the key and what is allowed."""


class MissingDependencyError(OpenClawMemoryError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str, purpose: str = "") -> None:
        self.package = package
        self.extra = extra
        what = f" for {purpose}" if purpose else ""
        super().__init__(
            f"{package!r} is required{what} but is not installed. "
            f"Install it with: pip install 'openclaw-memory[{extra}]'"
        )


class StoreError(OpenClawMemoryError):
    """The index database cannot be opened, read or written."""


class StoreUnavailableError(StoreError):
    """The index's database server cannot be reached now (down, restarting, out of connections); the
    Markdown files are unaffected and the next sync catches the index up once it answers."""


class IndexLockedError(StoreError):
    """Another process kept the index locked for longer than the timeout."""


class ProviderError(OpenClawMemoryError):
    """An embedding provider failed or returned unusable vectors."""


class ProviderUnavailableError(ProviderError):
    """The provider cannot start: missing API key, model file or package."""


class ProviderRequestError(ProviderError):
    """An embedding request failed (after retries where they apply)."""

    def __init__(self, message: str, *, status_code: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retryable = retryable


class RemoteRequestError(ProviderRequestError):
    """An embedding request failed; ``retry_after`` is the server's requested wait in seconds."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status_code=status_code, retryable=retryable)
        self.retry_after = retry_after


class ProviderUnresponsiveError(RemoteRequestError):
    """The provider gave no answer for ``provider_limits.sync_give_up_seconds``: indexing stops asking it (the text
    is indexed, vectors follow later) and its circuit breaker opens, so searches do not wait for it either."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


class RerankError(OpenClawMemoryError):
    """The ``query.rerank`` endpoint failed or answered outside its wire format (the search keeps its order)."""


class BatchJobError(ProviderError):
    """A provider batch job failed; ``attempts`` is how many tries it cost (counts toward the
    session's failure limit)."""

    attempts: int = 1


class BatchTimeoutError(BatchJobError):
    """A batch job did not finish within ``remote.batch.timeout_minutes``."""


class BatchUnavailableError(BatchJobError):
    """The endpoint has no batch API; batch mode is switched off for the session at once."""


class IndexingError(OpenClawMemoryError):
    """A sync could not complete. The previous index is left intact and searchable."""


class SyncCancelled(IndexingError):
    """The sync was stopped (``close()``, Ctrl-C); a rebuild in progress was discarded."""


class SyncStoreUnavailableError(IndexingError, StoreUnavailableError):
    """The index's database server went away during a sync (down, restarting, out of connections). Both an
    IndexingError (the sync did not complete) and a StoreUnavailableError (an outage: the Markdown files are
    unaffected and the next sync once the server answers catches the index up), so either ``except`` catches it."""


class UnreadableFileError(OpenClawMemoryError):
    """A memory file cannot be read as text (it looks binary, or is a symlink swapped in)."""


class MemoryPathError(OpenClawMemoryError, ValueError):
    """A path was refused: only MEMORY.md, memory.md, memory/**/*.md and extra paths are allowed."""


class ProtectedMemoryError(OpenClawMemoryError, PermissionError):
    """A delete would have removed hand-written memory. Nothing was changed."""


class MemoryArgumentError(OpenClawMemoryError, ValueError):
    """A tool argument has the wrong type or value (a line number that is not a number, ...)."""


class MemoryArgumentTypeError(MemoryArgumentError, TypeError):
    """An argument is of the wrong type (a ``MemoryIndex`` expected, another object given); also a TypeError, so
    ``except TypeError`` keeps working, and a MemoryArgumentError."""


class IndexClosedError(OpenClawMemoryError, RuntimeError):
    """The :class:`~openclaw_memory.MemoryIndex` was closed; open a new one."""


class BackendError(OpenClawMemoryError):
    """The configured search backend (``memory.backend``) failed; :class:`MemoryIndex` switches to
    the builtin index and reports why in ``fallback``."""


class QmdError(BackendError):
    """The QMD sidecar failed: command not found, timed out, crashed, printed no JSON, or lacks the
    models or vectors its search mode needs. The message says which and what to do."""
