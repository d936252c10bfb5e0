"""`python -m bench quality` on two tiny labelled sets of its own: per-set tables and the paired comparison.

The development sets are never copied here; ``OPENCLAW_DEVSETS`` (folders separated by ``:``) runs the same
check on them keyword-only, and the test is skipped without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEVSETS = os.environ.get("OPENCLAW_DEVSETS", "")  # read at collection: the test fixtures clear OPENCLAW_* variables


def _make_set(folder: Path, body: str, question: dict) -> Path:
    notes = folder / "ws-1" / "memory"
    notes.mkdir(parents=True)
    filler = "".join(f"Someone: routine chatter {i} about the weather and lunch.\n" for i in range(40))
    (notes / "2026-03-01.md").write_text("# 2026-03-01\n\n" + body + filler, encoding="utf-8")
    (folder / "questions.jsonl").write_text(json.dumps({"workspace": "ws-1", **question}) + "\n", encoding="utf-8")
    return folder


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench", "quality", *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, env=env)


def test_two_sets_each_reported_and_compared_question_by_question(tmp_path: Path) -> None:
    chat = _make_set(tmp_path / "chat", "Ana: I adopted a greyhound named Comet.\n",
                     {"id": "c1", "question": "greyhound Comet", "category": "single-hop",
                      "evidence": [{"path": "memory/2026-03-01.md", "line": 3}]})
    project = _make_set(tmp_path / "project", "User: the ledger uses PostgreSQL\nAssistant: PostgreSQL it is.\n",
                        {"id": "p1", "question": "which database for the ledger", "category": "decisions",
                         "evidence": [{"path": "memory/2026-03-01.md", "start_line": 3, "end_line": 4}]})
    out = tmp_path / "b.json"
    r = _run("--data", str(chat), "--data", str(project), "--engines", "keyword", "--state", str(tmp_path / "s"),
             "--against", '{"query": {"stemming": false}}', "--json", str(out))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "### chat (B)" in r.stdout and "### project (B)" in r.stdout
    assert "chat, keyword: B − A" in r.stdout and "project, keyword: B − A" in r.stdout
    assert "| decisions | 1 | 1.000 | 1.000 | +0.000 |" in r.stdout
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["sets"]["project"]["keyword"]["all"]["recall"] == 1.0
    assert saved["sets"]["chat"]["keyword"]["questions"][0]["id"] == "c1"
    # a stored run as the baseline: the same figures, a zero difference
    again = _run("--data", str(chat), "--engines", "keyword", "--state", str(tmp_path / "s"), "--baseline", str(out))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "| all | 1 | 1.000 | 1.000 | +0.000 | 0.000 |" in again.stdout


@pytest.mark.skipif(not DEVSETS, reason="OPENCLAW_DEVSETS (dev-set folders) not set")
def test_development_sets_keyword_only(tmp_path: Path) -> None:
    r = _run("--engines", "keyword", "--json", str(tmp_path / "dev.json"), env={**os.environ, "OPENCLAW_DEVSETS": DEVSETS})
    assert r.returncode == 0, r.stderr[-3000:]
    saved = json.loads((tmp_path / "dev.json").read_text(encoding="utf-8"))
    for name in saved["sets"]:
        assert saved["sets"][name]["keyword"]["all"]["n"] > 0
