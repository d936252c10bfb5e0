"""A LlamaIndex vector store writing its nodes into MEMORY.md (``append_path="MEMORY.md"``): consolidation and
forget leave the nodes' text alone (it is the application's data, not a memory entry), so the store reads back
what it was given."""

from __future__ import annotations

import json
from pathlib import Path

from llama_index.core.schema import TextNode

from llama_index_openclaw_memory import OpenClawVectorStore
from openclaw_memory.consolidation import consolidate, forget
from tests.helpers.consolidation import TODAY, config_for, make_workspace

NODE_TEXT = "Quarterly revenue grew by twelve percent in the third quarter."


def _workspace_with_a_node(tmp_path: Path) -> Path:
    ws = make_workspace(tmp_path)
    store = OpenClawVectorStore.from_workspace(ws, provider=None, append_path="MEMORY.md", watch=False,
                                               store={"path": str(tmp_path / "index.sqlite")})
    try:
        store.add([TextNode(text=NODE_TEXT, id_="revenue")])
    finally:
        store.close()
    assert NODE_TEXT in (ws / "MEMORY.md").read_text()
    return ws


def _supersede_the_last_entry(prompt: str) -> str:
    last = prompt.split("## Candidates")[0].rstrip().split("\n")[-1].split(":")[0]
    return json.dumps({"decisions": [{"op": "supersede", "candidate": "C1", "entry": last}]})


def test_a_sweep_offers_and_changes_no_node_the_vector_store_wrote_into_memory_md(tmp_path: Path) -> None:
    ws = _workspace_with_a_node(tmp_path)
    prompts: list[str] = []
    report = consolidate(config_for(ws), lambda prompt: prompts.append(prompt) or _supersede_the_last_entry(prompt),
                         today=TODAY)
    assert report.applied and NODE_TEXT not in prompts[0]
    text = (ws / "MEMORY.md").read_text()
    assert NODE_TEXT in text and "- Backups run nightly at 02:00." not in text
    store = OpenClawVectorStore.from_workspace(ws, provider=None, append_path="MEMORY.md", watch=False,
                                               store={"path": str(tmp_path / "index.sqlite")})
    try:
        found = store.get_nodes(node_ids=["revenue"])
    finally:
        store.close()
    assert [node.get_content() for node in found] == [NODE_TEXT]


def test_forget_by_text_leaves_a_node_the_vector_store_wrote_into_memory_md(tmp_path: Path) -> None:
    ws = _workspace_with_a_node(tmp_path)
    assert forget(config_for(ws), NODE_TEXT) == 0
    assert NODE_TEXT in (ws / "MEMORY.md").read_text()
