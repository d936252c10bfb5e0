"""bench/ is a package run as ``python -m bench <command>``: every command imports without path tricks, the
modules import no one in a circle, and the bench scores recall with the library's evaluation."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from bench.__main__ import COMMANDS
from bench.scoring import score

ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_every_command() -> None:
    r = subprocess.run([sys.executable, "-m", "bench", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    for command in COMMANDS:
        assert f"  {command} " in r.stdout


def test_an_unknown_command_fails_and_says_which_exist() -> None:
    r = subprocess.run([sys.executable, "-m", "bench", "nope"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 2
    assert "unknown command 'nope'" in r.stderr and "compare" in r.stderr


@pytest.mark.parametrize("module", sorted({module for module, _ in COMMANDS.values()}))
def test_every_command_module_imports_as_part_of_the_package(module: str) -> None:
    assert callable(importlib.import_module(f"bench.{module}").main)


def _bench_imports(path: Path) -> set[str]:
    """The bench modules ``path`` imports, at the top or inside a function (``bench.x`` or a bare sibling ``x``)."""
    siblings = {p.stem for p in path.parent.glob("*.py")}
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module in siblings:
            out.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.module == "bench":
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bench."):
            out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out |= {alias.name.split(".")[1] for alias in node.names if alias.name.startswith("bench.")}
    return out


def test_no_bench_module_imports_itself_through_another() -> None:
    graph = {p.stem: _bench_imports(p) for p in (ROOT / "bench").glob("*.py")}

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for name in graph.get(start, ()):
            if name == target or (name not in seen and reaches(name, target, seen | {name})):
                return True
        return False

    assert [name for name in graph if reaches(name, name, set())] == []


def test_no_sys_path_changes_in_bench() -> None:
    assert [p.name for p in (ROOT / "bench").glob("*.py") if "sys.path" in p.read_text(encoding="utf-8")] == []


def test_score_counts_a_chunk_whose_lines_hold_the_evidence() -> None:
    questions = [{"question": "where?", "evidence": [{"path": "memory/a.md", "line": 5},
                                                      {"path": "memory/b.md", "line": 2}]},
                 {"question": "when?", "evidence": [{"path": "memory/a.md", "line": 40}]}]
    results = [["memory/a.md#1-10", "memory/c.md#1-3"], ["memory/a.md#1-10", "memory/a.md#38-45"]]
    assert score(results, questions, k=1) == (0.5, 1.0, 20.0)  # 2nd question: its evidence is ranked second
    assert score(results, questions, k=2) == (1.5, 2.0, 31.0)
