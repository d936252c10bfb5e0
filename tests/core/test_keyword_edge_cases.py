"""Keyword search edge cases: short CJK/Hangul words in a trigram index, unpaired surrogates,
queries made only of stop words."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex

DOCS = {
    "memory/zh.md": "这个项目下周上线，进度有点紧。\n",
    "memory/ko.md": "어제 서버에서 메모리 누수가 발생했다.\n",
    "memory/en.md": "We deploy kubernetes clusters on Fridays.\n",
    "memory/agreed.md": "This is what we agreed on.\n",
    "memory/where.md": "Where was it? It was here.\n",
    "memory/pg.md": "Rotate the postgres password every month.\n",
}


@pytest.fixture(params=["unicode61", "trigram"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryIndex]:
    ws = tmp_path / "ws"
    for rel, text in DOCS.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    idx = MemoryIndex(provider=None, workspace=ws, state_dir=tmp_path / "state", watch=False,
                      store={"path": str(tmp_path / "i.sqlite"), "fts": {"tokenizer": request.param}})
    idx.sync()
    yield idx
    idx.close()


def paths(memory: MemoryIndex, query: str) -> list[str]:
    return [h.path for h in memory.search(query).hits]


@pytest.mark.parametrize(("query", "want"), [
    ("项目", "memory/zh.md"),
    ("项目 进度", "memory/zh.md"),          # two short words, not adjacent in the note
    ("项目 kubernetes", "memory/zh.md"),    # a short word next to a word the index can MATCH
    ("서버 누수", "memory/ko.md"),
])
def test_short_words_of_unspaced_scripts_are_found_with_other_terms(memory: MemoryIndex, query: str,
                                                                     want: str) -> None:
    assert want in paths(memory, query)


@pytest.mark.parametrize("query", ["postgres password \ud800", "postgres.\ud800password", "\udfff postgres"])
def test_unpaired_surrogates_are_ignored(memory: MemoryIndex, query: str) -> None:
    assert paths(memory, query)[:1] == ["memory/pg.md"]


@pytest.mark.parametrize(("query", "want"), [
    ("this is what", "memory/agreed.md"),
    ("what is this", "memory/agreed.md"),   # every word, in another order
    ("it was where", "memory/where.md"),
])
def test_stop_word_only_queries_match_every_word_in_any_order(memory: MemoryIndex, query: str, want: str) -> None:
    assert paths(memory, query) == [want]
