"""Recall, hit and lines of ranked chunk ids against a development set's evidence.

The scoring is :func:`openclaw_memory.retrieval.evaluation.score_hits`: the bench only turns its ids
(``path#start-end``) and question objects into the evaluation's types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from openclaw_memory.retrieval.evaluation import parse_question, score_hits
from openclaw_memory.types import SearchHit


def chunk_hit(chunk_id: str) -> SearchHit:
    """The hit a ``path#start-end`` id names (no text or score: scoring reads only the range)."""
    path, span = chunk_id.rsplit("#", 1)
    start, end = (int(x) for x in span.split("-"))
    return SearchHit(path=path, start_line=start, end_line=end, score=0.0, snippet="", chunk_id=chunk_id)


def score(results: Sequence[Sequence[str]], questions: Sequence[Mapping[str, Any]],
          k: int) -> tuple[float, float, float]:
    """recall@k, hit@k, lines@k summed over ``questions`` (each with its ranked ids in ``results``)."""
    recall = hit = lines = 0.0
    for number, (ids, question) in enumerate(zip(results, questions), start=1):
        r, h, _, ln = score_hits(parse_question(question, default_id=str(number)), [chunk_hit(i) for i in ids[:k]])
        recall += r
        hit += h
        lines += ln
    return recall, hit, lines
