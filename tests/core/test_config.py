"""Configuration: OpenClaw defaults, both key spellings, OpenClaw JSON5 files, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import ConfigError, MemoryConfig


def test_defaults_match_openclaw():
    c = MemoryConfig()
    assert (c.chunking.tokens, c.chunking.overlap) == (400, 80)
    assert (c.query.max_results, c.query.min_score) == (6, 0.35)
    h = c.query.hybrid
    assert (h.enabled, h.vector_weight, h.text_weight, h.candidate_multiplier) == (True, 0.7, 0.3, 4)
    assert (h.mmr.enabled, h.mmr.lambda_, h.temporal_decay.enabled, h.temporal_decay.half_life_days) == (
        False, 0.7, False, 30)
    assert c.cache.enabled and c.cache.max_entries is None
    assert c.store.vector.enabled and c.sync.watch and c.sync.watch_debounce_ms == 1500
    assert (c.sync.sessions.delta_bytes, c.sync.sessions.delta_messages) == (100_000, 50)
    assert c.sync.on_search and c.sync.on_session_start and c.sync.interval_minutes == 0
    assert c.provider == "auto" and c.fallback == "none" and c.sources == ["memory"]
    assert c.compaction.reserve_tokens_floor == 20_000
    assert c.compaction.memory_flush.soft_threshold_tokens == 4000
    assert not c.remote.batch.enabled and c.remote.batch.concurrency == 2


def test_store_path_default_token_and_tilde(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path / "state"))
    default = MemoryConfig(agent_id="ops").resolved_store_path()
    # one per agent and workspace, never OpenClaw's ops.sqlite
    assert default.parent == tmp_path / "state" / "memory"
    assert default.name.startswith("ops.") and default.name.endswith(".openclaw-memory.sqlite")
    monkeypatch.setenv("HOME", str(tmp_path))
    c = MemoryConfig(agent_id="ops", store={"path": "~/idx/{agent_id}.db"})
    assert c.resolved_store_path() == tmp_path / "idx" / "ops.db"
    c = MemoryConfig(agent_id="ops", store={"path": "~/idx/{agentId}.db"})
    assert c.resolved_store_path() == tmp_path / "idx" / "ops.db"


def test_weights_are_normalised_to_sum_one():
    h = MemoryConfig(query={"hybrid": {"vector_weight": 0.6, "text_weight": 0.6}}).query.hybrid
    assert h.vector_weight == pytest.approx(0.5) and h.text_weight == pytest.approx(0.5)
    h = MemoryConfig(query={"hybrid": {"vectorWeight": 0, "textWeight": 0}}).query.hybrid
    assert (h.vector_weight, h.text_weight) == (0.7, 0.3)


def test_camel_and_snake_case_are_both_accepted():
    a = MemoryConfig.from_dict({"query": {"maxResults": 9, "hybrid": {"mmr": {"enabled": True, "lambda": 0.5}}}})
    b = MemoryConfig(query={"max_results": 9, "hybrid": {"mmr": {"enabled": True, "lambda_": 0.5}}})
    assert a.query == b.query


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"query": {"minScore": 2}}, "query.minScore"),
        ({"chunking": {"tokens": 0}}, "chunking.tokens"),
        ({"provider": "cohere"}, "provider"),
        ({"sync": {"watchDebounceMs": -1}}, "sync.watchDebounceMs"),
        ({"query": {"maxResult": 3}}, "query.maxResult"),
    ],
)
def test_invalid_values_name_the_key(data, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        MemoryConfig.from_dict(data)


def test_overlap_is_clamped_below_tokens():
    assert MemoryConfig(chunking={"tokens": 10, "overlap": 50}).chunking.overlap == 9


def test_openclaw_json5_file(tmp_path: Path):
    cfg = tmp_path / "openclaw.json"
    cfg.write_text(
        """// an OpenClaw config, unchanged
        {
          agents: {
            defaults: {
              workspace: "~/clawd",
              memorySearch: {
                provider: "openai", model: "text-embedding-3-large",
                extraPaths: ["../team-docs"],
                query: { maxResults: 8, hybrid: { vectorWeight: 0.6, textWeight: 0.4, mmr: { enabled: true } } },
                store: { path: "idx/{agentId}.sqlite", vector: { enabled: true } },
                multimodal: { enabled: false },   // not supported here: ignored
                remote: { headers: { "X-Team": "a" } },
              },
              compaction: { reserveTokensFloor: 30000, memoryFlush: { softThresholdTokens: 6000 } },
            },
            list: [
              { id: "main", default: true },
              { id: "ops", workspace: "/srv/ops", memorySearch: { extraPaths: ["runbooks"], chunking: { tokens: 200 } } },
            ],
          },
          memory: { citations: "off" },
        }
        """,
        encoding="utf-8",
    )
    main = MemoryConfig.from_openclaw_file(cfg)
    assert main.agent_id == "main" and main.provider == "openai" and main.model == "text-embedding-3-large"
    assert main.query.max_results == 8 and main.query.hybrid.mmr.enabled
    assert main.query.hybrid.vector_weight == pytest.approx(0.6)
    assert main.compaction.reserve_tokens_floor == 30000
    assert main.compaction.memory_flush.soft_threshold_tokens == 6000
    assert main.citations == "off" and main.remote.header_values() == {"X-Team": "a"}
    assert main.resolved_store_path() == tmp_path / "idx" / "main.sqlite"
    assert str(main.workspace) == "~/clawd"
    ops = MemoryConfig.from_openclaw_file(cfg, agent_id="ops", query={"min_score": 0.2})
    assert ops.workspace == Path("/srv/ops") and ops.chunking.tokens == 200
    assert ops.extra_paths == ["../team-docs", "runbooks"]
    assert ops.query.min_score == 0.2 and ops.query.max_results == 8


def test_openclaw_file_errors(tmp_path: Path):
    with pytest.raises(ConfigError, match="not found"):
        MemoryConfig.from_openclaw_file(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{ agents: ", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid JSON5"):
        MemoryConfig.from_openclaw_file(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{agents: {defaults: {memorySearch: {query: {minScore: "high"}}}}}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"query\.minScore"):
        MemoryConfig.from_openclaw_file(wrong)


def test_extra_paths_resolve_against_workspace(tmp_path: Path):
    c = MemoryConfig(workspace=tmp_path / "ws", extra_paths=[" ../docs ", "/abs/notes.md", "../docs", ""])
    assert c.resolved_extra_paths() == [tmp_path / "docs", Path("/abs/notes.md")]


def test_sources_always_include_memory():
    assert MemoryConfig(sources=["sessions"]).sources == ["memory", "sessions"]


def test_reloading_a_config_does_not_drift():
    c = MemoryConfig(query={"hybrid": {"vector_weight": 0.5}})
    for _ in range(3):
        c = MemoryConfig.load(c, agent_id="x")
    assert c.query.hybrid.vector_weight == pytest.approx(0.625) and c.query.hybrid.text_weight == pytest.approx(0.375)
    assert MemoryConfig.load(c) is c
