"""The CLI, driven through click's CliRunner: one-line errors, JSON output, batch queries."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from openclaw_memory.cli import main

NOTES = {
    "MEMORY.md": "# Memory\n\n- Priya runs the deployment pipeline.\n- Coffee order: 美式咖啡.\n",
    "memory/2026-11-20.md": "# 2026-11-20\n\n- Root cause was commit a828e60 racing the watcher.\n",
}


@pytest.fixture
def ws(write) -> Path:
    return write(NOTES)


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def base(ws: Path, tmp_path: Path) -> list[str]:
    return ["--workspace", str(ws), "--store", str(tmp_path / "cli.sqlite"), "--provider", "none"]


def test_index_then_status_json(ws, tmp_path):
    res = run(*base(ws, tmp_path), "index")
    assert res.exit_code == 0, res.output
    assert "2 files scanned, 2 indexed" in res.output
    assert "keyword-only" in res.output  # never silently degraded
    res = run(*base(ws, tmp_path), "status", "--json")
    st = json.loads(res.output)
    assert st["files"] == 2 and st["search_mode"] == "keyword" and st["provider"] == "none"
    assert st["fts"]["available"] and st["vector"]["path"] in {"sqlite-vec", "numpy"}
    res = run(*base(ws, tmp_path), "index")
    assert "0 indexed, 2 unchanged" in res.output


def test_status_text_names_driver_and_vector_path(ws, tmp_path):
    res = run(*base(ws, tmp_path), "status")
    assert res.exit_code == 0
    assert "Store:" in res.output and "driver" in res.output and "Vector:" in res.output
    assert "Search mode: keyword" in res.output


def test_search_human_and_json(ws, tmp_path):
    res = run(*base(ws, tmp_path), "search", "a828e60")
    assert res.exit_code == 0
    assert "memory/2026-11-20.md#L1-L3" in res.output and "a828e60" in res.output
    res = run(*base(ws, tmp_path), "search", "咖啡", "--json")
    payload = json.loads(res.output)
    assert payload["mode"] == "keyword" and payload["results"][0]["path"] == "MEMORY.md"
    res = run(*base(ws, tmp_path), "search", "zebra xylophone")
    assert "No matches" in res.output


def test_human_output_shows_the_lines_that_match(write, tmp_path):
    body = [f"- Filler line {i} about lunch and plants." for i in range(1, 13)]
    body[10] = "- Decided: the index lives in SQLite with FTS5."
    ws = write({"MEMORY.md": "# Memory\n" + "\n".join(body) + "\n"})
    res = run(*base(ws, tmp_path), "search", "which database holds the SQLite index?")
    assert res.exit_code == 0, res.output
    assert "MEMORY.md#L1-" in res.output and "the index lives in SQLite" in res.output
    assert "    …" in res.output  # lines before the shown window are elided, not hidden silently
    assert "Filler line 1 " not in res.output


def test_no_sync_on_an_empty_index_builds_it_and_is_not_stale(ws, tmp_path):
    res = run(*base(ws, tmp_path), "search", "a828e60", "--no-sync", "--json")
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    assert payload["results"] and not payload.get("stale") and not payload.get("stale_files")
    res = run(*base(ws, tmp_path), "search", "a828e60", "--no-sync")
    assert "out of date" not in res.output


def test_search_queries_file_prints_one_json_line_per_query(ws, tmp_path):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text('{"id": "q1", "query": "deployment pipeline"}\nwho owns deployments\n\n', encoding="utf-8")
    res = run(*base(ws, tmp_path), "search", "--queries", str(qfile))
    lines = [json.loads(line) for line in res.output.splitlines()]
    assert [row["id"] for row in lines] == ["q1", 2]
    assert lines[0]["results"][0]["path"] == "MEMORY.md"
    res = run(*base(ws, tmp_path), "search", "--queries", "-", input="a828e60\n")
    assert json.loads(res.output)["results"][0]["path"] == "memory/2026-11-20.md"


def test_get_reads_lines_and_refuses_other_paths(ws, tmp_path):
    res = run(*base(ws, tmp_path), "get", "MEMORY.md", "--from", "3", "--lines", "1")
    assert res.output == "- Priya runs the deployment pipeline.\n"
    res = run(*base(ws, tmp_path), "get", "../etc/passwd")
    assert res.exit_code == 1
    assert res.output.startswith("Error: ") and len(res.output.strip().splitlines()) == 1
    assert "Traceback" not in res.output


def test_user_mistakes_are_one_line_errors(ws, tmp_path):
    bad = tmp_path / "openclaw.json"
    bad.write_text('{agents: {defaults: {memorySearch: {query: {minScore: "high"}}}}}', encoding="utf-8")
    res = run("--workspace", str(ws), "--config", str(bad), "status")
    assert res.exit_code == 1 and "query.minScore" in res.output and "Traceback" not in res.output
    res = run(*base(ws, tmp_path), "search")
    assert res.exit_code == 2 and "give a QUERY" in res.output


def test_config_file_is_used_unchanged(ws, tmp_path):
    cfg = tmp_path / "openclaw.json"
    cfg.write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws), "memorySearch": {
        "provider": "none", "store": {"path": str(tmp_path / "{agentId}.sqlite")}}}}}), encoding="utf-8")
    res = run("--config", str(cfg), "--agent", "ops", "index")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "ops.sqlite").exists()


def _first_hit(output: str, query: str) -> str:
    block = output.split(f'$ openclaw-memory search "{query}"', 1)[1]
    return next(line for line in block.splitlines() if line[:1].isdigit())


@pytest.mark.local_model
def test_demo_runs_on_the_embedded_default(tmp_path):
    res = run("demo")
    assert res.exit_code == 0, res.output
    assert "with local (" in res.output and "vector path: sqlite-vec" in res.output
    assert "memory/2026-11-20.md#L1-L6" in _first_hit(res.output, "a828e60")
    assert "MEMORY.md#L1-L15" in _first_hit(res.output, "咖啡")
    assert "MEMORY.md#L1-L15" in _first_hit(res.output, "what database did we choose for the index?")


# ---- one-shot search keeps the index fresh ------------------------------------------------------


@pytest.fixture
def sync_runs(monkeypatch) -> list[tuple[str, str]]:
    """Every sync the CLI's index runs: (reason, outcome), outcome "ok" or the exception's class name."""
    import openclaw_memory.index.sync_runner as runner_mod

    runs: list[tuple[str, str]] = []
    real = runner_mod.run_sync

    def spy(*args, **kw):
        try:
            report = real(*args, **kw)
        except BaseException as exc:
            runs.append((kw.get("reason", "?"), type(exc).__name__))
            raise
        runs.append((kw.get("reason", "?"), "ok"))
        return report

    monkeypatch.setattr(runner_mod, "run_sync", spy)
    return runs


def test_search_indexes_edits_first_and_leaves_no_sync_behind(ws, tmp_path, sync_runs):
    assert run(*base(ws, tmp_path), "index").exit_code == 0
    with (ws / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write("- The launch codename is zanzibar.\n")
    for _ in range(3):
        res = run(*base(ws, tmp_path), "search", "zanzibar", "--json")
        assert res.exit_code == 0, res.output
        payload = json.loads(res.stdout)
        assert payload["results"] and "zanzibar" in payload["results"][0]["snippet"], payload
        assert payload["empty_reason"] is None and payload["sync_error"] is None
        assert "cancelled" not in res.stderr and "failed" not in res.stderr
    res = run(*base(ws, tmp_path), "search", "zanzibar")
    assert "MEMORY.md#L1-L5" in res.stdout and res.stderr == ""  # no progress noise on stdout or stderr
    assert sync_runs == [("cli", "ok")] + [("cli-search", "ok")] * 4  # all in the foreground, none cancelled


def test_queries_batch_syncs_once_at_start(ws, tmp_path, sync_runs):
    assert run(*base(ws, tmp_path), "index").exit_code == 0
    (ws / "memory" / "2026-11-21.md").write_text("- Ordered new kiwi crates.\n", encoding="utf-8")
    qfile = tmp_path / "q.txt"
    qfile.write_text("kiwi crates\na828e60\n", encoding="utf-8")
    res = run(*base(ws, tmp_path), "search", "--queries", str(qfile))
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert rows[0]["results"][0]["path"] == "memory/2026-11-21.md"
    assert sync_runs == [("cli", "ok"), ("cli-search", "ok")]


def test_no_sync_flag_and_config_label_stale_results(ws, tmp_path):
    assert run(*base(ws, tmp_path), "index").exit_code == 0
    (ws / "memory" / "2026-11-21.md").write_text("- Ordered new kiwi crates.\n", encoding="utf-8")
    res = run(*base(ws, tmp_path), "search", "--no-sync", "kiwi crates", "--json")
    payload = json.loads(res.stdout)
    assert payload["results"] == [] and payload["stale"] is True
    assert payload["stale_files"] == ["memory/2026-11-21.md"]
    res = run(*base(ws, tmp_path), "search", "--no-sync", "kiwi crates")
    assert "out of date" in res.stdout and "memory/2026-11-21.md" in res.stdout
    res = run(*base(ws, tmp_path), "search", "--no-sync", "a828e60")
    assert "a828e60" in res.stdout and "out of date" in res.stdout  # hits, labelled too

    cfg = tmp_path / "openclaw.json"
    cfg.write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws), "memorySearch": {
        "provider": "none", "store": {"path": str(tmp_path / "cli.sqlite")}, "sync": {"onSearch": False}}}}}),
        encoding="utf-8")
    res = run("--config", str(cfg), "search", "kiwi crates", "--json")
    assert json.loads(res.stdout)["stale"] is True
    res = run("--config", str(cfg), "search", "--queries", "-", input="kiwi crates\n")
    row = json.loads(res.stdout)
    assert row["stale"] is True and row["results"] == [] and row["empty_reason"] == "no_match"
    res = run(*base(ws, tmp_path), "search", "kiwi crates", "--json")  # a normal search syncs first
    payload = json.loads(res.stdout)
    assert payload["results"] and "stale" not in payload


def test_sync_failure_is_shown_not_reported_as_empty(ws, tmp_path, monkeypatch, sync_runs):
    import openclaw_memory.cli as cli_mod
    from openclaw_memory import MemoryIndex
    from openclaw_memory.errors import ProviderError
    from openclaw_memory.providers.fake import FakeEmbeddingProvider

    provider = FakeEmbeddingProvider()
    provider.fail_with = ProviderError("HTTP 401 invalid api key")
    monkeypatch.setattr(cli_mod, "MemoryIndex", lambda config, **kw: MemoryIndex(config, provider=provider, **kw))
    res = run(*base(ws, tmp_path), "search", "a828e60")
    assert res.exit_code == 0, res.output
    # issue 20: a first index whose embedding fails still builds the keyword index; the failure is shown
    assert "a828e60" in res.stdout and "Note: the last sync failed" in res.stdout and "401" in res.stdout
    assert sync_runs == [("cli-search", "IndexingError")]  # the search itself did not run it again
    res = run(*base(ws, tmp_path), "search", "a828e60", "--json")
    payload = json.loads(res.stdout)
    assert payload["results"] and "401" in payload["sync_error"]


# ---- --queries: one bad line does not stop the batch ----------------------------------------------


def test_queries_file_reports_bad_lines_and_continues(ws, tmp_path):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        "deployment pipeline\n"
        "\n"
        '{"id": "j1", "query": "a828e60"}\n'
        "{bad json\n"
        '{"query": "coffee"}\n'
        '{"id": 5, "query": 42}\n'
        '{"id": null, "query": "Priya"}\n'
        '{"id": "nq"}\n'
        '{"id": 7.5, "query": "   "}\n'
        '["list", "line"]\n'
        '{"id": false, "query": "watcher", "expected": ["x"]}\n',
        encoding="utf-8",
    )
    res = run(*base(ws, tmp_path), "search", "--queries", str(qfile))
    assert res.exit_code == 1
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert [r["id"] for r in rows] == [1, "j1", 4, 5, 5, None, "nq", 7.5, 10, False]
    errors = {r["id"]: r["error"] for r in rows if "error" in r}
    assert set(errors) == {4, 5, "nq", 7.5} and len([r for r in rows if "error" in r]) == 4
    assert "invalid JSON" in errors[4] and "query" in errors["nq"] and "string" in errors[5]
    assert "query required" in errors[7.5]
    ok = [r for r in rows if "error" not in r]
    assert all({"mode", "took_ms", "results", "query"} <= r.keys() for r in ok)
    assert all(r["keyword_only_reason"] for r in ok)  # --provider none: keyword-only, and says why
    assert next(r for r in ok if r["id"] == "j1")["results"][0]["path"] == "memory/2026-11-20.md"
    assert next(r for r in ok if r["id"] == 10)["empty_reason"] == "no_match"  # a JSON-looking text query
    assert "4 of 10 queries failed" in res.stderr


def test_query_and_queries_together_is_a_usage_error(ws, tmp_path):
    qfile = tmp_path / "q.txt"
    qfile.write_text("x\n", encoding="utf-8")
    res = run(*base(ws, tmp_path), "search", "coffee", "--queries", str(qfile))
    assert res.exit_code == 2 and "not both" in res.output


def test_search_help_documents_the_queries_format():
    res = run("search", "--help")
    assert "{" in res.output and "JSON" in res.output and "--no-sync" in res.output


# ---- issue 12 (item 6 and the CLI bullet of item 7) -------------------------------------------------


def test_global_options_work_after_the_subcommand_too(ws, tmp_path):
    store = str(tmp_path / "cli.sqlite")
    res = run("index", "--workspace", str(ws), "--store", store, "--provider", "none")
    assert res.exit_code == 0, res.output
    assert "2 files scanned" in res.output
    res = run("search", "a828e60", f"--workspace={ws}", "--json", "--store", store, "-p", "none")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["results"][0]["path"] == "memory/2026-11-20.md"
    res = run("--workspace", str(ws), "get", "memory/2026-11-20.md", "--store", store, "--lines", "1")
    assert res.exit_code == 0 and res.output == "# 2026-11-20\n"
    # an option the subcommand has itself stays the subcommand's (demo's -q is its own --query)
    res = run("search", "--workspace", str(ws), "--store", store, "-p", "none", "--no-sync", "zebra")
    assert res.exit_code == 0 and "No matches" in res.output


def test_get_of_a_missing_file_is_an_error(ws, tmp_path):
    res = CliRunner().invoke(main, [*base(ws, tmp_path), "get", "memory/nope.md"])
    assert res.exit_code == 1
    assert "memory/nope.md does not exist" in res.output


def test_get_past_the_last_line_says_the_file_is_shorter(ws, tmp_path):
    """`get MEMORY.md --from 100` printed an empty line and exited 0, as if the lines were blank."""
    res = CliRunner().invoke(main, [*base(ws, tmp_path), "get", "MEMORY.md", "--from", "100"])
    assert res.exit_code == 1, res.output
    assert "MEMORY.md has no line 100: the file is shorter" in res.output
    empty = ws / "memory" / "2026-11-21.md"
    empty.write_text("", encoding="utf-8")
    res = CliRunner().invoke(main, [*base(ws, tmp_path), "get", "memory/2026-11-21.md"])
    assert res.exit_code == 0 and res.output == "\n"  # an empty file reads as empty
    res = CliRunner().invoke(main, [*base(ws, tmp_path), "get", "MEMORY.md#L3-L3"])
    assert res.exit_code == 0 and res.output == "- Priya runs the deployment pipeline.\n"


def test_status_right_after_index_is_not_dirty_in_a_fresh_process(ws, tmp_path):
    assert run(*base(ws, tmp_path), "index").exit_code == 0
    res = run(*base(ws, tmp_path), "status")
    assert "Dirty: no" in res.output
    assert json.loads(run(*base(ws, tmp_path), "status", "--json").output)["dirty"] is False
    (ws / "MEMORY.md").write_text("# Memory\n\n- changed by hand\n", encoding="utf-8")
    assert "Dirty: yes" in run(*base(ws, tmp_path), "status").output


def test_citations_end_at_the_last_line_of_the_file(ws, tmp_path):
    payload = json.loads(run(*base(ws, tmp_path), "search", "a828e60", "--json").output)
    hit = payload["results"][0]
    lines = (ws / hit["path"]).read_text(encoding="utf-8").splitlines()
    assert hit["end_line"] == len(lines) == 3


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_a_missing_workspace_is_an_error_unless_created(tmp_path):
    missing = tmp_path / "notse"
    for command in (["search", "coffee"], ["index"], ["status"]):
        res = run("-w", str(missing), "-p", "none", *command)
        assert res.exit_code == 1 and "notse does not exist" in res.output and "--create" in res.output, res.output
        assert "No matches" not in res.output and "files scanned" not in res.output
    assert not missing.exists()
    res = run("-w", str(missing), "-p", "none", "--create", "index")
    assert res.exit_code == 0 and missing.is_dir(), res.output


@pytest.mark.parametrize("command", [["status"], ["index"], ["search", "coffee"], ["mcp"]])
def test_without_a_workspace_the_error_says_none_was_given_and_what_to_pass(command):
    """A first `openclaw-memory status` with no --workspace said "workspace: <state dir>/workspace does not exist;
    ... pass create=True (CLI: --create)": neither that this is the default nor which option to give."""
    default = Path(os.environ["OPENCLAW_STATE_DIR"]) / "workspace"
    res = run("-p", "none", *command)
    assert res.exit_code == 1, res.output
    assert f"no --workspace given, and the default workspace {default.resolve()} does not exist" in res.output
    assert "--workspace FOLDER" in res.output and "--create" in res.output
    assert "create=True" not in res.output and not default.exists()


def test_a_missing_workspace_names_the_cli_options_not_python_arguments(tmp_path):
    res = run("-w", str(tmp_path / "notse"), "-p", "none", "status")
    assert res.exit_code == 1 and "create=True" not in res.output and "--create" in res.output, res.output
    config = tmp_path / "openclaw.json"
    config.write_text('{"agents": {"list": [{"id": "bob", "workspace": "%s"}]}}' % (tmp_path / "bobnotes"))
    res = run("-c", str(config), "-a", "bob", "-p", "none", "status")
    assert res.exit_code == 1, res.output
    assert f"workspace {tmp_path / 'bobnotes'} of agent 'bob' (from {config}) does not exist" in res.output
    assert "create=True" not in res.output and "--create" in res.output


def test_an_unreachable_postgresql_server_is_a_one_line_error_without_the_password(ws):
    """psycopg's message has a second line ("\tIs the server running on that host ..."), which the CLI printed as is;
    the manual says CLI errors are one line."""
    pytest.importorskip("psycopg")
    res = run("-w", str(ws), "-p", "none", "--store", "postgresql://memory:hunter2@127.0.0.1:9/agents", "status")
    assert res.exit_code == 1, res.output
    assert res.output.startswith("Error: cannot open the memory index in PostgreSQL")
    assert res.output.count("\n") == 1 and "hunter2" not in res.output


def test_a_two_part_error_keeps_where_the_first_part_ends_on_its_one_line(ws, tmp_path):
    """A failed fallback's message is two paragraphs; joined with a bare space the CLI printed "... or
    OPENAI_API_KEY Fallback to gemini failed: ...", as if the variable's name ran on into the next sentence."""
    config = tmp_path / "openclaw.json"
    config.write_text('{"agents": {"defaults": {"memorySearch": {"provider": "openai", "fallback": "gemini"}}}}')
    res = run("-w", str(ws), "-c", str(config), "--store", str(tmp_path / "cli.sqlite"), "search", "coffee")
    assert res.exit_code == 1 and res.output.count("\n") == 1, res.output
    assert "set remote.api_key or OPENAI_API_KEY; Fallback to gemini failed: No API key found for provider gemini" \
        in res.output


@pytest.mark.parametrize("agent", ["../evil", "../../escaped", "a/b"])
def test_an_agent_id_naming_another_path_is_refused_and_nothing_created(ws, tmp_path, agent):
    state = Path(os.environ["OPENCLAW_STATE_DIR"])
    before, state_before = _tree(tmp_path), _tree(state)
    res = run("-w", str(ws), "-a", agent, "-p", "none", "index")
    assert res.exit_code == 1 and "not a valid agent id" in res.output and "Traceback" not in res.output
    assert _tree(tmp_path) == before and _tree(state) == state_before


def test_two_workspaces_keep_their_own_default_index(ws, tmp_path):
    other = tmp_path / "other"
    (other / "memory").mkdir(parents=True)
    (other / "MEMORY.md").write_text("# Memory\n\n- The launch codename is Bluebird.\n", encoding="utf-8")
    assert run("-w", str(ws), "-p", "none", "index").exit_code == 0
    res = run("-w", str(other), "-p", "none", "index")
    assert res.exit_code == 0 and "0 removed" in res.output, res.output
    res = run("-w", str(ws), "-p", "none", "search", "launch codename", "--no-sync", "--json")
    assert json.loads(res.output)["results"] == []
    res = run("-w", str(ws), "-p", "none", "search", "a828e60", "--no-sync", "--json")
    assert [r["path"] for r in json.loads(res.output)["results"]] == ["memory/2026-11-20.md"]


def test_the_state_dir_config_is_read_only_when_named_and_status_names_it(ws, tmp_path, monkeypatch):
    state = Path(os.environ["OPENCLAW_STATE_DIR"])
    cfg = state / "openclaw.json"  # points the search elsewhere: read, it would hide the note
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cfg.write_text(json.dumps({"agents": {"defaults": {"workspace": str(elsewhere)}}}), encoding="utf-8")
    res = run("-w", str(ws), "-p", "none", "search", "a828e60", "--json")
    assert [r["path"] for r in json.loads(res.output)["results"]] == ["memory/2026-11-20.md"]
    res = run("-w", str(ws), "-p", "none", "status")
    assert "Config file: none" in res.output
    res = run("-w", str(ws), "-p", "none", "-c", str(cfg), "status", "--json")
    assert json.loads(res.output)["config_file"] == str(cfg)
    monkeypatch.setenv("OPENCLAW_CONFIG_PATH", str(cfg))
    res = run("-p", "none", "status")
    assert f"Config file: {cfg}" in res.output and str(elsewhere) in res.output
    assert "OPENCLAW_CONFIG_PATH" in run("--help").output


def test_search_of_the_sessions_corpus_when_none_are_indexed_is_an_error(ws, tmp_path):
    """``--corpus sessions`` without indexed transcripts says so (it printed "No matches (nothing matched).")."""
    res = CliRunner().invoke(main, [*base(ws, tmp_path), "search", "a828e60", "--corpus", "sessions"])
    assert res.exit_code == 1
    assert "session transcripts are not indexed" in res.output and "No matches" not in res.output


def test_get_reads_the_citation_search_prints(ws, tmp_path):
    """``get`` takes a hit's citation as ``search`` prints it (it answered "is not a Markdown (.md) file")."""
    found = run(*base(ws, tmp_path), "search", "a828e60")
    citation = found.output.split()[1]
    assert citation == "memory/2026-11-20.md#L1-L3"
    res = CliRunner().invoke(main, [*base(ws, tmp_path), "get", citation])
    assert res.exit_code == 0, res.output
    assert res.output == NOTES["memory/2026-11-20.md"]
    res = CliRunner().invoke(main, [*base(ws, tmp_path), "get", "memory/2026-11-20.md#L3", "--json"])
    assert json.loads(res.output)["text"] == "- Root cause was commit a828e60 racing the watcher."
