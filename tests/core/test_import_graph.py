"""The package's folders follow its stages, and imports only go down the stages (issue 33, item 4).

The graph is read from the source with ``ast`` (every ``import``, including those inside functions), so a
lazy import cannot hide an upward dependency. The order, lowest first, is drawn in docs/development.md.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_memory._moved import MOVED_MODULES

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "core" / "openclaw_memory"

#: The stages, lowest first: a module may import modules of its own stage or of a lower one, never a higher one.
STAGES: list[tuple[str, set[str]]] = [
    ("leaves", {"openclaw_memory.errors", "openclaw_memory.types", "openclaw_memory.redaction",
                "openclaw_memory._moved"}),
    ("text", {"openclaw_memory.text"}),
    ("config", {"openclaw_memory.config"}),  # reads one constant of text.note_dates
    ("files", {"openclaw_memory.files"}),
    ("providers", {"openclaw_memory.providers"}),
    ("storage", {"openclaw_memory.storage"}),
    ("indexing", {"openclaw_memory.indexing"}),
    ("retrieval", {"openclaw_memory.retrieval"}),
    ("backends", {"openclaw_memory.backends"}),  # MemoryIndex picks the QMD backend or the builtin search
    ("index", {"openclaw_memory.index"}),
    ("consolidation", {"openclaw_memory.consolidation"}),  # sweeps a MemoryIndex's notes into MEMORY.md
    ("long_term", {"openclaw_memory.long_term"}),  # a forget also forgets what a sweep promoted
    ("agent", {"openclaw_memory.agent"}),
    ("entry points", {"openclaw_memory", "openclaw_memory.__main__", "openclaw_memory.cli"}),
]

#: Upward imports that exist on purpose: (importer, imported) -> why. None today.
UPWARD_EXCEPTIONS: dict[tuple[str, str], str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


MODULES = _sources()


def _imports(name: str, path: Path) -> Iterator[str]:
    """Every module ``name`` imports (absolute dotted names, ``from a import b`` as ``a.b`` when that is a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES)


def _graph() -> dict[str, set[str]]:
    return {name: {target for target in _imports(name, path) if target.split(".")[0] == "openclaw_memory"
                   and target != name}
            for name, path in MODULES.items()}


GRAPH = _graph()


def _stage(module: str) -> int:
    """The index in :data:`STAGES` of the stage holding ``module`` (the longest matching prefix wins)."""
    best: tuple[int, int] | None = None
    for rank, (_, prefixes) in enumerate(STAGES):
        for prefix in prefixes:
            if module == prefix or (module.startswith(prefix + ".") and prefix != "openclaw_memory"):
                if best is None or len(prefix) > best[1]:
                    best = (rank, len(prefix))
    assert best is not None, f"{module} belongs to no stage: add it to STAGES"
    return best[0]


def test_every_module_belongs_to_a_stage():
    for module in MODULES:
        _stage(module)


def test_no_module_imports_a_framework():
    for name, path in MODULES.items():
        frameworks = {target for target in _imports(name, path)
                      if target.split(".")[0].startswith(("langchain", "langgraph", "llama_index"))}
        assert not frameworks, f"{name} imports {sorted(frameworks)}: the core never imports a framework"


@pytest.mark.parametrize(("leaf", "allowed"), [
    ("openclaw_memory.types", set()),
    ("openclaw_memory.redaction", set()),
    ("openclaw_memory._moved", set()),
    ("openclaw_memory.errors", {"openclaw_memory.redaction"}),  # error messages are redacted of secrets
])
def test_leaf_modules_import_nothing_else_from_the_package(leaf: str, allowed: set[str]):
    assert GRAPH[leaf] <= allowed, f"{leaf} imports {sorted(GRAPH[leaf] - allowed)}"


def test_no_import_goes_up_the_stages():
    upward = sorted(f"{source} ({STAGES[_stage(source)][0]}) imports {target} ({STAGES[_stage(target)][0]})"
                    for source, targets in GRAPH.items() for target in targets
                    if _stage(target) > _stage(source) and (source, target) not in UPWARD_EXCEPTIONS)
    assert not upward, "\n".join(upward)


def test_the_upward_exceptions_still_exist():
    for source, target in UPWARD_EXCEPTIONS:
        assert target in GRAPH[source], f"{source} no longer imports {target}: drop the exception"


def test_the_stage_graph_has_no_cycle():
    stages: dict[int, set[int]] = {}
    for source, targets in GRAPH.items():
        stages.setdefault(_stage(source), set()).update(_stage(t) for t in targets if _stage(t) != _stage(source))
    done: set[int] = set()

    def visit(stage: int, path: tuple[int, ...]) -> None:
        assert stage not in path, " -> ".join(STAGES[s][0] for s in (*path, stage))
        if stage not in done:
            for lower in stages.get(stage, ()):
                visit(lower, (*path, stage))
            done.add(stage)

    for stage in stages:
        visit(stage, ())


def test_every_folder_of_modules_is_a_package():
    """``pyproject.toml`` finds the packages by their ``__init__.py``: a folder without one is left out of the wheel."""
    folders = {path.parent for path in PACKAGE.rglob("*.py")}
    assert all((folder / "__init__.py").is_file() for folder in folders), sorted(
        str(f.relative_to(PACKAGE)) for f in folders if not (f / "__init__.py").is_file())


_OLD = "|".join(re.escape(old.removeprefix("openclaw_memory.")) for old in sorted(MOVED_MODULES, key=len, reverse=True))
_OLD_IMPORT = re.compile(rf"^\s*(?:from|import)\s+openclaw_memory\.(?:{_OLD})\b"
                         rf"|^\s*from\s+openclaw_memory\s+import\s+.*\b(?:{_OLD})\b", re.MULTILINE)


def _repo_texts() -> Iterator[tuple[Path, str]]:
    for pattern in ("core/**/*.py", "langchain_openclaw_memory/**/*.py", "llama_index_openclaw_memory/**/*.py",
                    "tests/**/*.py", "bench/**/*.py", "docs/**/*.md", "README.md", "notebooks/*.ipynb"):
        for path in ROOT.glob(pattern):
            if path.name == "test_moved_modules.py" or any(part.startswith(".") for part in path.relative_to(ROOT).parts):
                continue
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".ipynb":
                text = "\n".join("".join(cell["source"]) for cell in json.loads(text)["cells"])
            yield path, text


def test_nothing_in_the_repository_imports_an_old_module_path():
    """The old paths work for one release (tests/core/test_moved_modules.py), but the code, tests, bench, docs
    and notebooks use the new ones (a branch merged after the move may bring old ones back)."""
    old = [f"{path.relative_to(ROOT)}: {match.group(0).strip()}"
           for path, text in _repo_texts() for match in _OLD_IMPORT.finditer(text)]
    assert not old, "\n".join(old)
