"""`MemoryIndex.evaluate` and `openclaw-memory eval`: recall/hit/MRR/lines on labelled questions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from openclaw_memory import MemoryIndex
from openclaw_memory.cli import main
from openclaw_memory.errors import ConfigError
from openclaw_memory.retrieval.evaluation import compare_questions, format_comparison, load_questions

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


def test_a_span_of_evidence_is_found_when_a_result_overlaps_part_of_it(workspace, qfile, tmp_path):
    # A long message as evidence (lines 40-80 of a note): a result covering only some of its lines finds it.
    span = {"id": "span", "question": "greyhound Comet", "category": "pets",
            "evidence": [{"path": "memory/2026-03-02.md", "start_line": 40, "end_line": 80}]}
    miss = {"id": "miss", "question": "greyhound Comet",
            "evidence": [{"path": "memory/2026-03-02.md", "start_line": 1, "end_line": 2}]}
    qfile.write_text(json.dumps(span) + "\n" + json.dumps(miss) + "\n", encoding="utf-8")
    with MemoryIndex(workspace=str(workspace), store={"path": str(tmp_path / "i.sqlite")}, provider=None,
                     watch=False) as memory:
        rep = memory.evaluate(qfile, ks=[1], modes=["keyword"])["keyword"]
    per = {r["id"]: r for r in rep.per_question}
    assert per["span"]["recall@1"] == 1.0 and per["miss"]["recall@1"] == 0.0
    assert 0 < per["span"]["lines@1"] < 41  # the hit is narrower than the span it was credited for


def test_compare_questions_gives_the_paired_difference_and_its_standard_error():
    a = [{"id": str(i), "category": "x" if i < 4 else "y", "recall@6": 0.0, "lines@6": 10} for i in range(8)]
    b = [{"id": str(i), "category": r["category"], "recall@6": 1.0 if i in (0, 1, 4) else 0.0, "lines@6": 12}
         for i, r in enumerate(a)][::-1]  # matched by id, not by position
    diffs = {d.group: d for d in compare_questions(a, b, 6)}
    assert list(diffs) == ["all", "x", "y"]
    everything = diffs["all"]
    assert everything.n == 8 and everything.diff == pytest.approx(3 / 8)
    # sample standard deviation of the eight differences (three 1s, five 0s) over sqrt(8)
    assert everything.se == pytest.approx((3 / 8 * 5 / 8 * 8 / 7) ** 0.5 / 8 ** 0.5)
    assert everything.lines_a == 10 and everything.lines_b == 12 and everything.verdict == "better"
    assert diffs["x"].n == 4 and diffs["x"].diff == pytest.approx(0.5)
    assert diffs["y"].diff == pytest.approx(0.25) and diffs["y"].verdict == "same"  # 0.25 ± 0.25: noise
    table = format_comparison(list(diffs.values()), 6)
    assert "| all | 8 | 0.000 | 0.375 | +0.375 |" in table
    with pytest.raises(ValueError, match="share no question"):
        compare_questions(a, [{"id": "other", "recall@6": 1.0}], 6)


def test_cli_eval_baseline_prints_the_paired_difference(workspace, qfile, tmp_path):
    base = ["--workspace", str(workspace), "--store", str(tmp_path / "cli.sqlite"), "--provider", "none"]
    res = CliRunner().invoke(main, [*base, "eval", str(qfile), "--k", "6", "--json", "--questions"],
                             catch_exceptions=False)
    before = json.loads(res.output)
    for row in before["keyword"]["questions"]:
        if row["id"] == "db":
            row["recall@6"] = 0.0  # the earlier run missed this question
    stored = tmp_path / "before.json"
    stored.write_text(json.dumps(before), encoding="utf-8")
    res = CliRunner().invoke(main, [*base, "eval", str(qfile), "--k", "6", "--baseline", str(stored)],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "| all | 4 | 0.500 | 0.750 | +0.250 |" in res.output
    assert "| decisions | 1 | 0.000 | 1.000 | +1.000 |" in res.output
    summary_only = tmp_path / "summary.json"
    summary_only.write_text(json.dumps({"keyword": {"overall": {}}}), encoding="utf-8")
    res = CliRunner().invoke(main, [*base, "eval", str(qfile), "--baseline", str(summary_only)])
    assert res.exit_code != 0 and "--questions" in res.output
