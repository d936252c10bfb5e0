"""``openclaw-memory ltm list|search|stats|forget`` through click's CliRunner on a real LanceDB folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from openclaw_memory.cli import main
from openclaw_memory.long_term import LongTermMemory
from openclaw_memory.providers.fake import FakeEmbeddingProvider


@pytest.fixture
def config(tmp_path: Path) -> Path:
    cfg = tmp_path / "openclaw.json"
    cfg.write_text(json.dumps({"agents": {"defaults": {"memorySearch": {"provider": "fake"}}}}), encoding="utf-8")
    return cfg


def run(config: Path, db: Path, *args: str, agent: str = "main") -> Result:
    return CliRunner().invoke(main, ["--config", str(config), "--agent", agent, "ltm", "--db", str(db), *args],
                              catch_exceptions=False)


@pytest.fixture
def seeded(db_path: Path) -> dict[str, str]:
    memory = LongTermMemory(db_path, FakeEmbeddingProvider(), agent_id="main")
    ids = {
        "tea": memory.store("The user prefers green tea", category="preference").record.id,
        "atlas": memory.store("The deploy server is called atlas", category="entity").record.id,
    }
    LongTermMemory(db_path, FakeEmbeddingProvider(), agent_id="other").store("other agent's secret note")
    return ids


def test_list_and_stats(config: Path, db_path: Path, seeded: dict[str, str]) -> None:
    res = run(config, db_path, "list")
    assert res.exit_code == 0, res.output
    assert "Total memories: 2" in res.output and "secret" not in res.output
    assert res.output.index("atlas") < res.output.index("green tea")  # newest first
    rows = json.loads(run(config, db_path, "list", "--json", "--category", "entity").output)
    assert [r["id"] for r in rows] == [seeded["atlas"]]
    stats = json.loads(run(config, db_path, "stats", "--json").output)
    assert stats["count"] == 2 and stats["by_category"]["preference"] == 1
    assert "Total memories: 1" in run(config, db_path, "stats", agent="other").output


def test_search(config: Path, db_path: Path, seeded: dict[str, str]) -> None:
    rows = json.loads(run(config, db_path, "search", "deploy server atlas", "--json").output)
    assert rows[0]["id"] == seeded["atlas"] and rows[0]["score"] > 0.5
    assert "[entity] The deploy server is called atlas" in run(config, db_path, "search", "deploy server").output


def test_forget_by_id_and_ambiguous_query(config: Path, db_path: Path, seeded: dict[str, str]) -> None:
    res = run(config, db_path, "forget", "--id", seeded["tea"][:8])
    assert res.exit_code == 0 and "Forgotten" in res.output
    res = run(config, db_path, "forget", "--id", seeded["tea"])
    assert res.exit_code == 1 and "No matching memory" in res.output
    assert run(config, db_path, "forget").exit_code == 2
    res = run(config, db_path, "forget", "--id", "' OR 1=1 --")
    assert res.exit_code == 1 and "not a memory id" in res.output
    assert "Total memories: 1" in run(config, db_path, "list").output


def test_errors_are_one_line(config: Path, tmp_path: Path) -> None:
    afile = tmp_path / "not-a-folder"
    afile.write_text("x")
    res = run(config, afile, "list")
    assert res.exit_code == 1 and "not a folder" in res.output and "Traceback" not in res.output
    res = run(config, tmp_path / "db", "list", agent="bad agent")
    assert res.exit_code == 1 and "agent_id" in res.output


def test_list_marks_a_superseded_memory_and_search_leaves_it_out(config: Path, db_path: Path) -> None:
    memory = LongTermMemory(db_path, FakeEmbeddingProvider(), agent_id="main")
    memory.store("The quarterly planning meeting on Thursday is in room 4.12 on the fourth floor")
    new = memory.store("The quarterly planning meeting on Thursday is in room 3.07 on the fourth floor").record
    listed = run(config, db_path, "list").output
    assert f"room 4.12 on the fourth floor (superseded by {new.id[:8]})" in listed
    found = json.loads(run(config, db_path, "search", "quarterly planning meeting room", "--min-score", "0",
                           "--json").output)
    assert [r["id"] for r in found] == [new.id]  # not the old room
