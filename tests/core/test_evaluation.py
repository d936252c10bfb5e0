"""`MemoryIndex.evaluate` and `openclaw-memory eval`: recall/hit/MRR/lines on labelled questions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from openclaw_memory import MemoryIndex
from openclaw_memory.cli import main
from openclaw_memory.errors import ConfigError
from openclaw_memory.retrieval.evaluation import load_questions

# Each day file is long enough to be several chunks, so a search returns narrow line ranges.
FILLER = "".join(f"- Routine note {i}: nothing special happened with the garden hose.\n" for i in range(60))
NOTES = {
    "memory/2026-03-01.md": "# 2026-03-01\n\n- We chose PostgreSQL for the billing ledger.\n" + FILLER,
    "memory/2026-03-02.md": "# 2026-03-02\n\n" + FILLER + "- Priya adopted a greyhound named Comet.\n",
}
QUESTIONS = [
    {"id": "db", "question": "which database for the billing ledger", "category": "decisions",
     "evidence": [{"path": "memory/2026-03-01.md", "line": 3}]},
    {"id": "dog", "question": "greyhound Comet", "category": "pets",
     "evidence": [{"path": "./memory/2026-03-02.md", "start_line": 63, "end_line": 63}]},
    {"id": "both", "question": "PostgreSQL greyhound",
     "evidence": [{"path": "memory/2026-03-01.md", "line": 3}, {"path": "memory/2026-03-02.md", "lines": [63, 63]}]},
    {"id": "absent", "question": "zebra xylophone", "category": "pets",
     "evidence": [{"path": "memory/2026-03-01.md", "line": 3}]},
]


@pytest.fixture
def qfile(write, tmp_path) -> Path:
    write(NOTES)
    p = tmp_path / "questions.jsonl"
    p.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return p


def test_evaluate_scores_recall_hit_mrr_and_lines(workspace, qfile, tmp_path):
    with MemoryIndex(workspace=str(workspace), store={"path": str(tmp_path / "i.sqlite")}, provider=None,
                     watch=False) as memory:
        reports = memory.evaluate(qfile, ks=[1, 6], modes=["keyword"])
    rep = reports["keyword"]
    per = {r["id"]: r for r in rep.per_question}
    assert per["db"]["recall@1"] == 1.0 and per["dog"]["recall@1"] == 1.0
    assert per["both"]["recall@6"] == 1.0 and per["both"]["hit@6"] == 1.0
    assert per["absent"]["recall@6"] == 0.0 and per["absent"]["hit@6"] == 0.0
    assert rep.overall[6].n == 4 and rep.overall[6].recall == pytest.approx(0.75)
    assert rep.overall[1].mrr <= rep.overall[6].mrr
    assert rep.by_category["pets"][6].n == 2 and rep.by_category["pets"][6].recall == pytest.approx(0.5)
    assert "decisions" in rep.by_category and None not in rep.by_category
    assert 0 < rep.overall[1].lines < rep.overall[6].lines  # lines actually returned, growing with k


def test_compare_modes_on_one_index(workspace, qfile, tmp_path, fake_provider):
    with MemoryIndex(workspace=str(workspace), store={"path": str(tmp_path / "i.sqlite")}, provider=fake_provider,
                     watch=False) as memory:
        reports = memory.evaluate(qfile, ks=[3], modes=["keyword", "vector", "hybrid"])
    assert list(reports) == ["keyword", "vector", "hybrid"]
    assert reports["keyword"].overall[3].recall == pytest.approx(0.75)
    assert all(r.overall[3].n == 4 for r in reports.values())


def test_malformed_questions_name_the_line(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text(json.dumps(QUESTIONS[0]) + "\n\n" + json.dumps({"question": "x", "evidence": [{"path": "a.md"}]}) + "\n")
    with pytest.raises(ConfigError, match=r"line 3.*line"):
        load_questions(p)
    p.write_text("")
    with pytest.raises(ConfigError, match="no questions"):
        load_questions(p)


def test_cli_eval_table_and_json(workspace, qfile, tmp_path):
    base = ["--workspace", str(workspace), "--store", str(tmp_path / "cli.sqlite"), "--provider", "none"]
    res = CliRunner().invoke(main, [*base, "eval", str(qfile), "--k", "1,6"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "R@6" in res.output and "decisions" in res.output and "keyword" in res.output
    res = CliRunner().invoke(main, [*base, "eval", str(qfile), "--json", "--compare", "--questions"],
                             catch_exceptions=False)
    payload = json.loads(res.output)
    assert list(payload) == ["keyword"]  # keyword-only index: nothing else to compare
    assert payload["keyword"]["overall"]["6"]["recall"] == pytest.approx(0.75)
    assert {q["id"] for q in payload["keyword"]["questions"]} == {"db", "dog", "both", "absent"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    res = CliRunner().invoke(main, [*base, "eval", str(bad)])
    assert res.exit_code != 0 and "line 1" in res.output
