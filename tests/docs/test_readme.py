"""Every ```python block of README.md runs, in order, in one fresh interpreter, offline: so the
README cannot rot. ``~`` is a temporary home holding copies of the bundled sample notes as
``~/notes`` and ``~/clawd`` and an empty ``~/.openclaw/openclaw.json``; model strings such as
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

from openclaw_memory.cli import sample_workspace

README = Path(__file__).resolve().parents[2] / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)

DRIVER = r"""
import json, os, sys, traceback
blocks = json.load(open(sys.argv[1]))
ns = {"__name__": "__readme__"}
for line, code in blocks:
    print(f"### block at README.md:{line}", flush=True)
    # Only blocks that build "openai:..." chat models (never called) see a key: with one, provider
    # "auto" would embed with OpenAI, which is unreachable here.
    if '"openai:' in code:
        os.environ["OPENAI_API_KEY"] = "sk-readme-test"
    else:
        os.environ.pop("OPENAI_API_KEY", None)
    try:
        exec(compile(code, f"README.md:{line}", "exec"), ns)
    except Exception:
        traceback.print_exc()
        sys.exit(f"README block at line {line} failed")
for name in ("memory",):
    obj = ns.get(name)
    if hasattr(obj, "close"):
        obj.close()
"""


def readme_blocks() -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in _BLOCK.finditer(text)]


def test_readme_has_python_blocks() -> None:
    assert len(readme_blocks()) >= 3


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_readme_python_blocks_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for name in ("notes", "clawd"):
        shutil.copytree(sample_workspace(), home / name)
    (home / ".openclaw").mkdir(parents=True)
    (home / ".openclaw" / "openclaw.json").write_text("{}\n", encoding="utf-8")
    blocks = tmp_path / "blocks.json"
    blocks.write_text(json.dumps(readme_blocks()), encoding="utf-8")
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENCLAW_", "GEMINI_", "VOYAGE_"))}
    env.update(HOME=str(home), OPENCLAW_STATE_DIR=str(home / ".openclaw"), OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    proc = subprocess.run([sys.executable, str(driver), str(blocks)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=540)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    # The quickstart's own query finds the database decision of the sample notes (issue 12, item 6).
    quickstart = proc.stdout.split("### block at")[1]
    assert "MEMORY.md#L" in quickstart, proc.stdout
    assert "# 2026-11-20" in quickstart
