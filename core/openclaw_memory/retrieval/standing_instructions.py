"""Standing instructions as hits of their own: the instruction that matches a question comes with its answer.

A line such as ``User: Always include version numbers when I ask about libraries.``
(:mod:`openclaw_memory.text.instructions`) says how to answer every later question on its topic, but it sits in a
chunk about something else and that chunk rarely ranks for "Which libraries does the project use?". The keyword
side therefore also lists the newest chunks that may hold such lines (:func:`instruction_lines_of` finds them),
and the instruction that matches the question best becomes a one-line hit, in place of the weakest hit when the
results are full, when it matches by its words (it holds at least :data:`MIN_COVERAGE` of the question's
weighted words, more than any other instruction does) or, with embeddings, by meaning (its similarity to the
question is within :data:`SIMILARITY_MARGIN` of the best hit's). It is judged by ``min_score`` like any hit and
left out when a hit already holds its line. ``query.standing_instructions`` turns this off.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from openclaw_memory.providers.base import EmbeddingProvider
from openclaw_memory.redaction import redact
from openclaw_memory.retrieval.passage_vectors import passage_vectors
from openclaw_memory.retrieval.ranking import calibrate_similarity
from openclaw_memory.text.chunker import text_weight
from openclaw_memory.text.instructions import instruction_lines
from openclaw_memory.text.query_analysis import QueryAnalysis
from openclaw_memory.types import Candidate

__all__ = ["MIN_COVERAGE", "SIMILARITY_MARGIN", "InstructionLine", "instruction_lines_of", "matching_instruction",
           "with_instruction"]

log = logging.getLogger(__name__)

#: The share of the question's weighted words an instruction holds to match by its words.
MIN_COVERAGE = 0.2
#: How far below the best hit's (calibrated) similarity an instruction's may be to match by meaning.
SIMILARITY_MARGIN = 0.1
#: At most this many instructions are compared with a question (the newest chunks' first).
MAX_INSTRUCTIONS = 64


@dataclass(frozen=True)
class InstructionLine:
    """A standing instruction of the index: the chunk that holds it, its line number in the note, its text."""

    chunk: Candidate
    line: int
    text: str


@functools.lru_cache(maxsize=4096)
def _instruction_lines(text: str) -> tuple[tuple[int, str], ...]:
    """:func:`~openclaw_memory.text.instructions.instruction_lines` of a chunk's text, remembered: every search
    reads the same chunks that may hold instructions."""
    return tuple(instruction_lines(text))


def instruction_lines_of(chunks: Sequence[Candidate], *, chunk_tokens: int = 400) -> list[InstructionLine]:
    """The standing instructions in Markdown memory ``chunks`` (a transcript's text does not map onto its file's
    lines), each line once, at most :data:`MAX_INSTRUCTIONS`, in the order of ``chunks``; lines longer than a chunk
    of ``chunk_tokens`` are left out (a chunk may hold only a piece of them)."""
    longest = max(32, chunk_tokens * 4)
    out: dict[tuple[str, int], InstructionLine] = {}
    for chunk in chunks:
        if chunk.source != "memory" or len(out) >= MAX_INSTRUCTIONS:
            continue
        if chunk.text.count("\n") != chunk.end_line - chunk.start_line:
            continue  # text that is not the note's lines as written
        for offset, text in _instruction_lines(chunk.text):
            key = (chunk.path, chunk.start_line + offset)
            if key not in out and len(out) < MAX_INSTRUCTIONS and text_weight(text) + 1 <= longest:
                out[key] = InstructionLine(chunk, key[1], text)
    return list(out.values())


def _similarities(provider: EmbeddingProvider, query_vector: np.ndarray, texts: Sequence[str]) -> list[float] | None:
    """The calibrated similarity of each of ``texts`` to the query; None when they cannot be embedded (logged: the
    instructions are then matched by their words only)."""
    try:
        found = passage_vectors(provider, texts)
    except Exception as exc:  # noqa: BLE001 - any provider failure leaves the words to match
        log.warning("embedding the standing instructions failed; matched by their words only: %s",
                    redact(f"{type(exc).__name__}: {exc}"))
        return None
    q = np.asarray(query_vector, dtype=np.float32).ravel()
    rows = np.stack([found[text] if found[text].size == q.size else np.zeros_like(q) for text in texts])
    norms = np.linalg.norm(rows, axis=1) * float(np.linalg.norm(q))
    raw = np.divide(rows @ q, norms, out=np.zeros(len(texts), dtype=np.float32), where=norms > 0)
    return [calibrate_similarity(float(r), provider.similarity_floor) for r in raw]


def matching_instruction(
    lines: Sequence[InstructionLine], analysis: QueryAnalysis, chosen: Sequence[Candidate] = (), *,
    provider: EmbeddingProvider | None = None, query_vector: np.ndarray | None = None, vector_weight: float = 0.0,
) -> Candidate | None:
    """The instruction of ``lines`` that matches the question (see the module's docstring) given the hits
    ``chosen`` so far, as a one-line candidate with ``score`` and ``relevance`` set (``vector_weight`` of its
    similarity plus the rest of its word coverage; its coverage alone without embeddings), or None."""
    best_similarity = max((c.vector_score for c in chosen), default=0.0)
    if not lines:
        return None
    said = [line.text.strip() for line in lines]
    coverage = [share for share, _ in analysis.coverage(said)]
    similarity = None
    if provider is not None and query_vector is not None:
        similarity = _similarities(provider, query_vector, said)
    by_words = max(range(len(lines)), key=lambda i: coverage[i])
    runner_up = max((c for i, c in enumerate(coverage) if i != by_words), default=0.0)
    pick: int | None = None
    if coverage[by_words] >= MIN_COVERAGE and coverage[by_words] > runner_up:
        pick = by_words
    elif similarity is not None:
        by_meaning = max(range(len(lines)), key=lambda i: similarity[i])
        if similarity[by_meaning] >= best_similarity - SIMILARITY_MARGIN:
            pick = by_meaning
    if pick is None:
        return None
    line = lines[pick]
    vector_score = similarity[pick] if similarity is not None else 0.0
    score = (vector_weight * vector_score + (1.0 - vector_weight) * coverage[pick] if similarity is not None
             else coverage[pick])
    return Candidate(id=line.chunk.id, path=line.chunk.path, start_line=line.line, end_line=line.line,
                     text=line.text, source=line.chunk.source, vector_score=vector_score,
                     text_score=coverage[pick], score=score, relevance=score)


def with_instruction(chosen: Sequence[Candidate], instruction: Candidate | None, max_results: int) -> list[Candidate]:
    """``chosen`` with ``instruction`` among them, in score order, in place of the last when they are
    ``max_results`` already; unchanged when there is none or a chosen hit of its note already holds its line."""
    out = list(chosen)
    if instruction is None or any(c.path == instruction.path and c.start_line <= instruction.start_line <= c.end_line
                                  for c in out):
        return out
    if len(out) >= max_results:
        out = out[:max_results - 1]
    position = next((i for i, c in enumerate(out) if c.score < instruction.score), len(out))
    out.insert(position, instruction)
    return out
