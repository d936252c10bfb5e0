"""Every ```python block of README.md and of the docs pages runs, in order, in one fresh interpreter per
document set, offline: so neither can rot. ``~`` is a temporary home holding copies of the bundled sample notes
as ``~/notes`` and ``~/clawd`` and a ``~/.openclaw/openclaw.json`` naming ``~/clawd``; model strings such as
``"openai:gpt-4.1"`` are built (never called) with a dummy key."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from openclaw_memory.cli import sample_workspace

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_INDENTED_BLOCK = re.compile(r"^( +)```python\n(.*?)^\1```", re.S | re.M)

DRIVER = r"""
import json, os, sys, traceback
blocks = json.load(open(sys.argv[1]))
ns = {"__name__": "__manual__"}
for where, code in blocks:
    print(f"### block at {where}", flush=True)
    # Only blocks that build "openai:..." chat models (never called) see a key: with one, provider
    # "auto" would embed with OpenAI, which is unreachable here.
    if '"openai:' in code:
        os.environ["OPENAI_API_KEY"] = "sk-readme-test"
    else:
        os.environ.pop("OPENAI_API_KEY", None)
    try:
        exec(compile(code, where, "exec"), ns)
    except Exception:
        traceback.print_exc()
        sys.exit(f"block at {where} failed")
for name in ("memory",):
    obj = ns.get(name)
    if hasattr(obj, "close"):
        obj.close()
"""


def python_blocks(path: Path) -> list[tuple[str, str]]:
    """``(file:line, code)`` of each python block of ``path``, indented ones (inside a list item) too."""
    text = path.read_text(encoding="utf-8")
    found = [(m.start(), m.group(1)) for m in _BLOCK.finditer(text)]
    found += [(m.start(), re.sub(rf"^{m.group(1)}", "", m.group(2), flags=re.M)) for m in _INDENTED_BLOCK.finditer(text)]
    name = path.relative_to(ROOT)
    return [(f"{name}:{text.count(chr(10), 0, start) + 2}", code) for start, code in sorted(found)]


def docs_pages() -> list[Path]:
    """The docs pages in the order of the site's navigation."""
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]

    def walk(items: list) -> list[str]:
        pages: list[str] = []
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            pages += walk(value) if isinstance(value, list) else [value]
        return pages

    return [ROOT / "docs" / page for page in walk(nav)]


def _run(blocks: list[tuple[str, str]], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    for name in ("notes", "clawd"):
        shutil.copytree(sample_workspace(), home / name)
    (home / ".openclaw").mkdir(parents=True)
    # an OpenClaw config names its agents' workspace, as a real ~/.openclaw/openclaw.json does
    (home / ".openclaw" / "openclaw.json").write_text('{"agents": {"defaults": {"workspace": "~/clawd"}}}\n',
                                                       encoding="utf-8")
    listing = tmp_path / "blocks.json"
    listing.write_text(json.dumps(blocks), encoding="utf-8")
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENCLAW_", "GEMINI_", "VOYAGE_"))}
    env.update(HOME=str(home), OPENCLAW_STATE_DIR=str(home / ".openclaw"), OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    return subprocess.run([sys.executable, str(driver), str(listing)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=540)


def test_readme_is_short_and_its_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    assert len(python_blocks(README)) >= 3
    for target in re.findall(r"\]\(((?:docs/|CHANGELOG)[^)#]*)", text):
        assert (ROOT / target).is_file(), target


def test_every_docs_page_is_in_the_navigation() -> None:
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert pages == {p.relative_to(ROOT / "docs").as_posix() for p in docs_pages()}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_readme_python_blocks_run(tmp_path: Path) -> None:
    proc = _run(python_blocks(README), tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    # The quickstart's own query finds the database decision of the sample notes.
    quickstart = proc.stdout.split("### block at")[1]
    assert "MEMORY.md#L" in quickstart, proc.stdout
    assert "# 2026-11-20" in quickstart


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_docs_python_blocks_run(tmp_path: Path) -> None:
    blocks = [block for page in docs_pages() for block in python_blocks(page)]
    assert len(blocks) >= 10
    proc = _run(blocks, tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_docs_build_without_warnings(tmp_path: Path) -> None:
    """`make docs`: MkDocs in strict mode (a warning fails), the references generated from the code."""
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=280,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    config_page = (tmp_path / "site" / "configuration" / "index.html").read_text(encoding="utf-8")
    assert "query.hybrid.unitWeight" in config_page
    assert "mcp" in (tmp_path / "site" / "cli" / "index.html").read_text(encoding="utf-8")
