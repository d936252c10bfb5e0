"""The keyword search's speed-ups change no result: on a generated corpus, every query's full ranked list
(ids, scores, ranks, exact and needle flags) equals the list the plain way of computing it gives.

The plain way is the same search with the shortcuts switched off: coverage by stemming every candidate text
word by word with the pure-Python Porter stemmer (instead of ``textprep.tokens_by_stem`` and the compiled
stemmer), each whole text measured on its own (instead of as the union of its lines, each line measured once
per search) and match counts asked one by one (instead of ``match_sets_many``, so no MATCH tier is skipped). The
thresholds are lowered so a few hundred chunks take the paths a 100k-chunk index takes (common words, recent-first).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory.retrieval import keyword_side
from openclaw_memory.config import MemoryConfig
from openclaw_memory.text.query_analysis import QueryAnalysis, _key
from openclaw_memory.retrieval.pipeline import run_search
from openclaw_memory.retrieval.pipeline import analyze_query, keyword_candidates
from openclaw_memory.storage.sqlite.store import SQLiteStore
from openclaw_memory.storage import StoredChunk
from openclaw_memory.types import MemoryFile

_SUFFIXES = ("", "", "s", "ing", "ed", "er", "ies", "ation", "ness", "ly")


def _corpus(rnd: random.Random, n_chunks: int) -> tuple[list[str], list[str]]:
    letters = "abcdefghiklmnoprstuvw"
    bases = sorted({"".join(rnd.choice(letters) for _ in range(rnd.randint(3, 7))) for _ in range(220)})
    words = [b + s for b in bases for s in _SUFFIXES[: rnd.randint(2, len(_SUFFIXES))]]
    weights = [1.0 / (i + 1) ** 0.8 for i in range(len(words))]
    common = ["the", "and", "we", "Melanie", "paint", "painting", "painted"]
    texts = []
    for i in range(n_chunks):
        lines = []
        for _ in range(rnd.randint(1, 7)):
            line = rnd.choices(words, weights, k=rnd.randint(3, 12))
            if rnd.random() < 0.5:
                line.insert(rnd.randrange(len(line) + 1), rnd.choice(common))
            lines.append(" ".join(line).capitalize() + rnd.choice((".", "", "?", ": ok")))
        if i % 37 == 0:
            lines.append(f"commit {i:07x} in sqlite.vec_{i % 5} (error E{i % 11})")
        texts.append("\n".join(lines))
    return texts, words


def _queries(rnd: random.Random, texts: Sequence[str], words: Sequence[str]) -> list[str]:
    out = ["what is this", "Melanie painting", "painted the paintings", "sqlite.vec_3", "commit 000025",
           "E7 error", "zzzqx unknownword"]
    for _ in range(45):
        toks = _key(rnd.choice(texts)).split()
        kind = rnd.random()
        if kind < 0.3:  # a run of consecutive words (the phrase)
            at = rnd.randrange(len(toks))
            out.append(" ".join(toks[at : at + rnd.randint(2, 4)]))
        elif kind < 0.6:  # words of the chunk, some in another form of the same stem
            picked = rnd.sample(toks, min(len(toks), rnd.randint(1, 5)))
            out.append(" ".join(w + rnd.choice(("", "s", "ing", "ed")) for w in picked))
        else:  # words from anywhere
            out.append(" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 4))))
    return out


_PLAIN_STEMS: dict[str, str] = {}


def _plain_presence(self: QueryAnalysis, texts: Sequence[str]) -> tuple[list[str], list[set[int]], list[set[int]]]:
    """Coverage presence as computed before the speed-ups: every text stemmed word by word."""
    from snowballstemmer.porter_stemmer import PorterStemmer

    porter = PorterStemmer()

    def stem(t: str) -> str:
        if t not in _PLAIN_STEMS:
            _PLAIN_STEMS[t] = porter.stemWord(t) if t.isascii() and t.isalpha() and t.islower() and len(t) >= 3 else t
        return _PLAIN_STEMS[t]

    def stem_key(key: str) -> str:
        return " ".join(map(stem, key.split(" ")))

    owner = {k: i for i, g in enumerate(self.groups) for k in g.keys}
    keys = [_key(t) for t in texts]
    lines = [f" {k} " for k in keys]
    surface = [{i for k, i in owner.items() if f" {k} " in line} for line in lines]
    if not self.stemmed:
        return lines, surface, surface
    stem_owner = {stem_key(k): i for k, i in owner.items()}
    stem_lines = [f" {stem_key(k)} " for k in keys]
    present = [s | {i for k, i in stem_owner.items() if f" {k} " in line} for s, line in zip(surface, stem_lines)]
    return lines, surface, present


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(QueryAnalysis, "_presence", _plain_presence)  # each line (line windows)
    monkeypatch.setattr(QueryAnalysis, "_text_presence", _plain_presence)  # whole texts, measured whole
    monkeypatch.setattr(keyword_side._MatchCounter, "prefetch", lambda self, matches: None)


def _ranked(store: SQLiteStore, cfg: MemoryConfig, queries: Sequence[str]) -> list[Any]:
    out: list[Any] = []
    for q in queries:
        hits = run_search(store, cfg, q, provider=None, max_results=10, min_score=0).hits
        out.append([(h.chunk_id, h.score, h.text_score) for h in hits])
        for limit, enough in ((24, 6), (48, 6), (12, 12)):  # the hybrid search's keyword side, and wider
            cands = keyword_candidates(store, analyze_query(q, stemming=True), limit=limit, enough=enough,
                                       window_lines=cfg.query.keyword.window_lines,
                                       rarity_weights=cfg.query.keyword.rarity_weights)
            out.append([(c.id, c.text_score, c.text_rank, c.exact_match, c.needle) for c in cands])
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_keyword_results_equal_the_plain_computation(seed: int, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_side, "COMMON_MATCHES", 40)
    monkeypatch.setattr(keyword_side, "RANK_WINDOW", 60)
    monkeypatch.setattr(keyword_side, "RECENT_CHUNKS", 150)
    rnd = random.Random(seed)
    texts, words = _corpus(rnd, 300)
    store = SQLiteStore(tmp_path / "i.sqlite", vector_enabled=False)
    for f in range(0, len(texts), 30):
        rel = f"memory/f{f:04d}.md"
        part = texts[f : f + 30]
        store.replace_file(MemoryFile(path=rel, abs_path=rel, mtime_ms=0.0, size=1, hash=rel), [
            StoredChunk(id=f"{rel}:{i}", path=rel, source="memory", start_line=i * 10 + 1, end_line=i * 10 + 8,
                        hash=hashlib.sha256(t.encode()).hexdigest(), model="fts-only", text=t)
            for i, t in enumerate(part)])
    cfg = MemoryConfig(workspace=str(tmp_path), citations="off")
    queries = _queries(rnd, texts, words)
    fast = _ranked(store, cfg, queries)
    with monkeypatch.context() as m:
        _plain(m)
        plain = _ranked(store, cfg, queries)
    assert sum(1 for r in fast if r) > len(fast) // 2  # most queries find something
    for q, got, want in zip([q for q in queries for _ in range(4)], fast, plain):
        assert got == want, q
    store.close()
