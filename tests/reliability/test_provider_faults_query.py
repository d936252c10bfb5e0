"""Long queries and slow in-process models: only the first ``query_max_chars`` characters are
embedded (the keyword side reads the whole query), and query embeddings that a search stopped
waiting for cannot pile up and keep burning CPU."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.providers.base import BaseEmbeddingProvider, EmbedKind
from openclaw_memory.providers.fake import FakeEmbeddingProvider


class RecordingProvider(FakeEmbeddingProvider):
    def __init__(self) -> None:
        super().__init__()
        self.query_lengths: list[int] = []

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        if kind == "query":
            self.query_lengths += [len(t) for t in texts]
        return super()._embed(texts, kind)


class StuckModel(BaseEmbeddingProvider):
    """An in-process model whose query calls take ``delay`` seconds; counts calls running at once."""

    id = "stuck"
    in_process = True

    def __init__(self, delay: float) -> None:
        super().__init__(model="stuck", dims=4)
        self.delay = delay
        self.request_timeout = 60.0
        self.active = self.peak = self.calls = 0
        self._lock = threading.Lock()

    def _embed(self, texts: list[str], kind: EmbedKind) -> list[Sequence[float]]:
        with self._lock:
            self.active += 1
            self.calls += 1
            self.peak = max(self.peak, self.active)
        try:
            if kind == "query":
                time.sleep(self.delay)
            return [[1.0, float(len(t) % 7), 0.5, 1.0] for t in texts]
        finally:
            with self._lock:
                self.active -= 1


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Prefs\n\nThe user prefers tea over coffee.\n")
    (ws / "memory" / "2026-01-10.md").write_text("# Deploy\n\nWe deployed the zephyr billing service.\n")
    return ws


def test_only_the_head_of_a_long_query_is_embedded_but_all_of_it_is_searched(tmp_path: Path) -> None:
    provider = RecordingProvider()
    ws = _ws(tmp_path)
    with MemoryIndex(workspace=str(ws), store={"path": str(tmp_path / "i.sqlite")}, provider=provider,
                     provider_limits={"query_max_chars": 500}, watch=False) as m:
        m.sync()
        query = "lorem ipsum " * 3000 + " zephyr"  # 36k characters; the only useful word is at the end
        res = m.search(query, min_score=0)
    assert provider.query_lengths == [500]
    assert res.mode == "hybrid" and any(h.path == "memory/2026-01-10.md" for h in res.hits)


def test_timed_out_query_embeddings_do_not_pile_up(tmp_path: Path) -> None:
    model = StuckModel(delay=1.5)
    ws = _ws(tmp_path)
    with MemoryIndex(workspace=str(ws), store={"path": str(tmp_path / "i.sqlite")}, provider=model,
                     provider_limits={"query_timeout_seconds": 0.1, "breaker_failures": 0}, watch=False) as m:
        m.sync()
        calls_before = model.calls
        reasons = []
        start = time.monotonic()
        for i in range(6):  # distinct queries: no query-cache hits
            res = m.search(f"zephyr billing {i}")
            assert res.hits and res.mode == "keyword"
            reasons.append(res.keyword_only_reason or "")
        assert time.monotonic() - start < 3  # no search waited for the stuck model
        assert model.calls - calls_before == 2 and model.peak <= 2  # the rest were not started
        assert all("timed out" in r or "still running" in r for r in reasons), reasons
        time.sleep(1.6)  # the stuck calls end; the model is asked again
        m.search("zephyr billing again")
        assert model.calls - calls_before == 3
