"""The module paths of openclaw-memory before its stage folders, kept working for one release.

0.2 moved the flat modules into folders named for the stage they belong to (``text``, ``files``,
``indexing``, ``storage``, ``retrieval``, ``index``, ``agent``). An old path still imports:
``import openclaw_memory.search``, ``from openclaw_memory.search import run_search`` and
``monkeypatch.setattr("openclaw_memory.search.x", ...)`` all reach the module that now lives at
``openclaw_memory.retrieval.pipeline`` (the same module object, registered under both names in
``sys.modules``), and the first import of an old path raises a :class:`DeprecationWarning` naming
the new one. The old paths go in the next release.

``openclaw_memory.index`` and ``openclaw_memory.storage`` are packages now: their ``__init__``
re-exports what the old modules offered (see :func:`forward_to`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import pkgutil
import sys
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

__all__ = ["MOVED_MODULES", "forward_to", "install"]

#: Every old dotted module path and the module it is now.
MOVED_MODULES: dict[str, str] = {
    "openclaw_memory.append": "openclaw_memory.files.append",
    "openclaw_memory.bootstrap": "openclaw_memory.agent.bootstrap",
    "openclaw_memory.chunker": "openclaw_memory.text.chunker",
    "openclaw_memory.citations": "openclaw_memory.text.citations",
    "openclaw_memory.discovery": "openclaw_memory.files.discovery",
    "openclaw_memory.evaluation": "openclaw_memory.retrieval.evaluation",
    "openclaw_memory.fingerprint": "openclaw_memory.indexing.fingerprint",
    "openclaw_memory.flush": "openclaw_memory.agent.flush",
    "openclaw_memory.freshness": "openclaw_memory.index.freshness",
    "openclaw_memory.hybrid": "openclaw_memory.retrieval.ranking",
    "openclaw_memory.index_status": "openclaw_memory.index.status",
    "openclaw_memory.late_interaction": "openclaw_memory.retrieval.late_interaction",
    "openclaw_memory.mcp_server": "openclaw_memory.agent.mcp_server",
    "openclaw_memory.memory_writes": "openclaw_memory.files.memory_writes",
    "openclaw_memory.note_dates": "openclaw_memory.text.note_dates",
    "openclaw_memory.postgres": "openclaw_memory.storage.postgres",
    "openclaw_memory.postgres.fts": "openclaw_memory.storage.postgres.fts",
    "openclaw_memory.postgres.schema": "openclaw_memory.storage.postgres.schema",
    "openclaw_memory.postgres.store": "openclaw_memory.storage.postgres.store",
    "openclaw_memory.postgres.workspace_id": "openclaw_memory.storage.postgres.workspace_id",
    "openclaw_memory.progress": "openclaw_memory.indexing.progress",
    "openclaw_memory.provider_access": "openclaw_memory.index.provider_access",
    "openclaw_memory.query": "openclaw_memory.text.query_analysis",
    "openclaw_memory.records": "openclaw_memory.files.records",
    "openclaw_memory.rerank": "openclaw_memory.retrieval.rerank",
    "openclaw_memory.result_ranges": "openclaw_memory.retrieval.result_ranges",
    "openclaw_memory.safe_fs": "openclaw_memory.files.safe_fs",
    "openclaw_memory.scheduler": "openclaw_memory.index.scheduler",
    "openclaw_memory.search": "openclaw_memory.retrieval.pipeline",
    "openclaw_memory.session_hook": "openclaw_memory.agent.session_hook",
    "openclaw_memory.session_state": "openclaw_memory.files.session_state",
    "openclaw_memory.sessions": "openclaw_memory.files.sessions",
    "openclaw_memory.speakers": "openclaw_memory.text.speakers",
    "openclaw_memory.sqlite": "openclaw_memory.storage.sqlite",
    "openclaw_memory.sqlite.driver": "openclaw_memory.storage.sqlite.driver",
    "openclaw_memory.sqlite.rows": "openclaw_memory.storage.sqlite.rows",
    "openclaw_memory.sqlite.store": "openclaw_memory.storage.sqlite.store",
    "openclaw_memory.sqlite.vec_index": "openclaw_memory.storage.sqlite.vec_index",
    "openclaw_memory.sqlite.vector_cache": "openclaw_memory.storage.sqlite.vector_cache",
    "openclaw_memory.sync": "openclaw_memory.indexing.sync",
    "openclaw_memory.sync_runner": "openclaw_memory.index.sync_runner",
    "openclaw_memory.textprep": "openclaw_memory.text.preparation",
    "openclaw_memory.tiering": "openclaw_memory.indexing.two_tier",
    "openclaw_memory.time_ranges": "openclaw_memory.text.time_ranges",
    "openclaw_memory.tools": "openclaw_memory.agent.tools",
    "openclaw_memory.tuned_search": "openclaw_memory.index.search_options",
    "openclaw_memory.units": "openclaw_memory.indexing.line_units",
    "openclaw_memory.watch": "openclaw_memory.index.watch",
}

_IMPORT_SYSTEM_FILES = (__file__, importlib.__file__)


def _caller_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the code doing the import, past the import system
    (``warnings`` itself does not count the frames of ``importlib._bootstrap``)."""
    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None:
        name = frame.f_code.co_filename
        internal = "importlib" in name and "_bootstrap" in name
        if not internal and name not in _IMPORT_SYSTEM_FILES:
            break
        frame = frame.f_back
        level += 0 if internal else 1
    return level


def _warn_moved(old: str, new: str) -> None:
    warnings.warn(f"{old} moved to {new}; import it from there (the old path is removed in the next release)",
                  DeprecationWarning, stacklevel=_caller_stacklevel())


class _AliasLoader(importlib.abc.Loader):
    """Loads an old path as the module at its new path (the same object)."""

    def __init__(self, new: str) -> None:
        self.new = new
        self._module_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self._module_spec = module.__spec__
        _warn_moved(spec.name, self.new)
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system has just set the module's __spec__ to the old name's; it keeps its own.
        module.__spec__ = self._module_spec


class _MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old module paths of :data:`MOVED_MODULES` (and nothing else)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Make the old module paths importable (once per process; ``openclaw_memory`` calls it on import)."""
    if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedModuleFinder())


def forward_to(package: str, module: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``, formerly the module ``module`` moved into it: a name the
    package does not define (and that is not one of its submodules) is looked up in ``module``, with a
    DeprecationWarning. Old pickles and old ``from package import name`` keep working."""

    def __getattr__(name: str) -> Any:
        parent = sys.modules[package]
        submodules = {info.name for info in pkgutil.iter_modules(parent.__path__)}
        if name.startswith("__") or name in submodules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)  # AttributeError when it never existed
        warnings.warn(f"{package}.{name} moved to {module}.{name}; import it from there (the old path is "
                      "removed in the next release)", DeprecationWarning, stacklevel=2)
        return value

    return __getattr__
