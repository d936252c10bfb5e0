"""Keyword search on PostgreSQL the way SQLite's FTS5 index does it.

The search pipeline (:mod:`openclaw_memory.retrieval.pipeline`) speaks FTS5 ``MATCH`` expressions: quoted phrases
joined by ``AND`` / ``OR`` / ``NOT`` and parentheses. Here such an expression becomes a ``tsquery``
over a ``tsvector`` whose lexemes are exactly the tokens the SQLite index holds
(:func:`~openclaw_memory.text.query_analysis.analysed_tokens`, Porter-stemmed for the ``porter`` tokenizer), written
as a literal so no PostgreSQL parser or dictionary changes them. Matches are ranked with FTS5's own
BM25 formula (k1 = 1.2, b = 0.75, every phrase of the expression counted where its subexpressions match the row),
so the per-query score mapping, the hybrid merge and ``min_score`` see the same numbers on both backends.
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Sequence
from dataclasses import dataclass

import numpy as np

from openclaw_memory.text.query_analysis import analysed_tokens
from openclaw_memory.text.preparation import stem_tokens

__all__ = ["PREFIX", "MatchSyntaxError", "Node", "bm25_scores", "counted_phrases", "index_tokens", "parse_match",
           "phrase_count", "phrases", "to_tsquery", "tsvector_literal"]

#: the largest word position a tsvector keeps (later positions are clamped to it by PostgreSQL)
_MAX_POS = 16383
#: lexemes longer than this are left out of the tsvector (PostgreSQL refuses lexemes over 2 KB)
_MAX_LEXEME = 500
_K1 = 1.2
_B = 0.75


class MatchSyntaxError(ValueError):
    """The MATCH expression is not one this translation understands (FTS5 would reject it too)."""


def index_tokens(text: str, *, porter: bool = False) -> list[str]:
    """The lexemes a chunk's text is indexed under, in order."""
    toks = analysed_tokens(text)
    if porter and toks:
        toks = stem_tokens(" ".join(toks)).split(" ")
    return toks


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(tokens: Sequence[str]) -> str:
    """A ``tsvector`` literal holding each token at its (1-based) positions."""
    positions: dict[str, list[int]] = {}
    for i, tok in enumerate(tokens, start=1):
        if len(tok) <= _MAX_LEXEME and i <= _MAX_POS:
            positions.setdefault(tok, []).append(i)
    return " ".join(f"{_quote(t)}:{','.join(map(str, p))}" for t, p in positions.items())


@dataclass(frozen=True)
class Node:
    """A parsed MATCH expression: ``op`` is ``phrase`` (with ``tokens``), ``and``, ``or`` or ``not``
    (``args[0]`` without ``args[1]``)."""

    op: str
    tokens: tuple[str, ...] = ()
    args: tuple[Node, ...] = ()


_TOKEN = re.compile(r'\s*(?:(")((?:[^"]|"")*)"(\*?)|(\()|(\))|([^\s()"]+))')
#: marks a phrase's last token as an FTS5 prefix (``"paint"*``); analysed tokens never contain it
PREFIX = "*"


def _lex(match: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(match):
        if match[pos:].strip() == "":
            break
        m = _TOKEN.match(match, pos)
        if not m:
            raise MatchSyntaxError(f"cannot parse MATCH expression near {match[pos:pos + 20]!r}")
        pos = m.end()
        if m.group(1):
            out.append(("prefix" if m.group(3) else "phrase", m.group(2).replace('""', '"')))
        elif m.group(4):
            out.append(("(", "("))
        elif m.group(5):
            out.append((")", ")"))
        else:
            word = m.group(6)
            out.append((word, word) if word in ("AND", "OR", "NOT") else ("phrase", word))
    return out


def parse_match(match: str, *, porter: bool = False) -> Node:
    """Parse an FTS5 MATCH expression (phrases, ``AND``, ``OR``, ``NOT``, parentheses; adjacent
    operands are ANDed; ``NOT`` binds tighter than ``AND``, which binds tighter than ``OR``)."""
    toks = _lex(match)
    pos = 0

    def peek() -> str | None:
        return toks[pos][0] if pos < len(toks) else None

    def take() -> tuple[str, str]:
        nonlocal pos
        if pos >= len(toks):
            raise MatchSyntaxError(f"unexpected end of MATCH expression {match!r}")
        pos += 1
        return toks[pos - 1]

    def primary() -> Node:
        kind, text = take()
        if kind == "(":
            node = or_expr()
            if take()[0] != ")":
                raise MatchSyntaxError(f"unbalanced parentheses in {match!r}")
            return node
        if kind not in ("phrase", "prefix"):
            raise MatchSyntaxError(f"unexpected {text!r} in MATCH expression {match!r}")
        tokens = index_tokens(text, porter=porter)
        if kind == "prefix" and tokens:
            tokens[-1] += PREFIX
        return Node("phrase", tuple(tokens))

    def not_expr() -> Node:
        node = primary()
        while peek() == "NOT":
            take()
            node = Node("not", args=(node, primary()))
        return node

    def and_expr() -> Node:
        parts = [not_expr()]
        while peek() not in (None, "OR", ")"):
            if peek() == "AND":
                take()
            parts.append(not_expr())
        return parts[0] if len(parts) == 1 else Node("and", args=tuple(parts))

    def or_expr() -> Node:
        parts = [and_expr()]
        while peek() == "OR":
            take()
            parts.append(and_expr())
        return parts[0] if len(parts) == 1 else Node("or", args=tuple(parts))

    if not toks:
        raise MatchSyntaxError("empty MATCH expression")
    node = or_expr()
    if pos != len(toks):
        raise MatchSyntaxError(f"unexpected {toks[pos][1]!r} in MATCH expression {match!r}")
    return node


def to_tsquery(node: Node) -> str | None:
    """The ``tsquery`` literal of ``node``; None when it can match nothing (a phrase without tokens)."""
    if node.op == "phrase":
        if not node.tokens or any(len(t) > _MAX_LEXEME for t in node.tokens):
            return None
        return "(" + " <-> ".join(_quote(t[:-1]) + ":*" if t.endswith(PREFIX) else _quote(t) for t in node.tokens) + ")"
    parts = [to_tsquery(a) for a in node.args]
    if node.op == "and":
        return None if any(p is None for p in parts) else "(" + " & ".join(p for p in parts if p) + ")"
    if node.op == "or":
        kept = [p for p in parts if p is not None]
        return "(" + " | ".join(kept) + ")" if kept else None
    base, minus = parts
    if base is None:
        return None
    return base if minus is None else f"({base} & !{minus})"


def phrases(node: Node) -> list[tuple[str, ...]]:
    """Every phrase of the expression, in order, repeats included (FTS5's BM25 sums over them all)."""
    if node.op == "phrase":
        return [node.tokens]
    return [p for a in node.args for p in phrases(a)]


def counted_phrases(node: Node, present: Sequence[bool]) -> list[bool] | None:
    """Which phrases of ``node`` (in :func:`phrases` order) FTS5's BM25 counts in a row holding phrase ``i`` when
    ``present[i]``: those whose every enclosing ``AND`` and ``NOT`` matches the row (FTS5 scores a row with the
    phrases of the subexpressions that matched it only). None when ``node`` does not match such a row."""
    position = 0

    def walk(n: Node) -> tuple[bool, list[bool]]:
        nonlocal position
        if n.op == "phrase":
            position += 1
            return present[position - 1], [True]
        parts = [walk(a) for a in n.args]
        if n.op == "or":
            return any(m for m, _ in parts), [c for _, flags in parts for c in flags]
        if n.op == "and":
            matched = all(m for m, _ in parts)
        else:  # not: the left side without the right; the right side's phrases never count
            matched = parts[0][0] and not parts[1][0]
            parts = [parts[0], (False, [False] * len(parts[1][1]))]
        return matched, [c and matched for _, flags in parts for c in flags]

    matched, flags = walk(node)
    return flags if matched else None


def _conditional(node: Node | None) -> bool:
    """Whether ``node`` holds an ``AND`` or ``NOT`` (else every phrase present in a row counts)."""
    return node is not None and node.op != "phrase" and (node.op != "or" or any(_conditional(a) for a in node.args))


def phrase_count(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    """How many times ``phrase`` occurs in ``tokens`` (overlapping occurrences counted, as FTS5 does)."""
    n = len(phrase)
    if n == 0:
        return 0
    last = phrase[-1]
    if last.endswith(PREFIX):  # the last token is a prefix: any token starting with it matches there
        head, stem = tuple(phrase[:-1]), last[:-1]
        return sum(1 for i in range(len(tokens) - n + 1)
                   if tuple(tokens[i:i + n - 1]) == head and tokens[i + n - 1].startswith(stem))
    first = phrase[0]
    if n == 1:
        return sum(1 for t in tokens if t == first)
    return sum(1 for i, t in enumerate(tokens[: len(tokens) - n + 1]) if t == first and tuple(tokens[i:i + n]) == tuple(phrase))


def token_counts(texts: Sequence[str]) -> list[int]:
    """How many tokens each of ``texts`` holds (tokens joined by single spaces, as the ``tokens`` column stores
    them; none in an empty one), counted in one pass over all of them: a third of the time of counting each."""
    if not texts:
        return []
    data = np.frombuffer("\n".join(texts).encode("utf-8") + b"\n", dtype=np.uint8)  # a token holds no newline
    ends = np.flatnonzero(data == 10)  # each text's newline: its segment holds at least that byte
    starts = np.concatenate(([0], ends[:-1] + 1))
    spaces = np.add.reduceat((data == 32).view(np.uint8), starts, dtype=np.int64)
    return [int(n) + 1 if text else 0 for n, text in zip(spaces.tolist(), texts)]


def bm25_scores(docs: Sequence[str | Sequence[str]], phrase_list: Sequence[tuple[str, ...]], hits: Sequence[int],
                n_rows: int, avg_tokens: float, same: Sequence[int | None] | None = None, *,
                within: Sequence[Container[object] | None] | None = None,
                keys: Sequence[object] | None = None, node: Node | None = None) -> list[float]:
    """FTS5's ``bm25()`` of each document (negative: lower is better).

    Each document is its tokens joined by single spaces (as the ``tokens`` column stores them; the
    fastest form) or a sequence of tokens;
    ``hits[i]`` is how many rows of the whole index contain ``phrase_list[i]``; ``n_rows`` and
    ``avg_tokens`` describe the whole index, as FTS5 counts them. ``same[i]``: the index of another phrase (one
    with no ``same`` of its own) that occurs exactly as often as ``phrase_list[i]`` in every document (a repeat, or
    the token a prefix is known to start alone), whose count is then taken instead of counting again.
    ``within[i]``: the ``keys`` (one per document) of every document that may hold ``phrase_list[i]`` (None: any);
    the phrase is counted in those only. ``node``: the expression ``phrase_list`` comes from (:func:`phrases`); a
    phrase then counts in a document only where its enclosing subexpressions match (:func:`counted_phrases`)."""
    idf = []
    for n_hit in hits:
        v = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5)) if n_rows > 0 else 0.0
        idf.append(v if v > 0 else 1e-6)
    avg = avg_tokens if avg_tokens > 0 else 1.0
    # " token " counted in the document between two spaces counts the token exactly, without splitting the
    # document, unless it stands twice in a row (the two share a space): then it is counted in a doubled-space
    # copy, where every token stands between spaces of its own
    needles = [[f" {t} " for t in p] for p in phrase_list]
    twice = [f" {p[0]} {p[0]} " if len(p) == 1 else "" for p in phrase_list]
    alias = list(same) if same is not None else [None] * len(phrase_list)
    counted = [j for j, k in enumerate(alias) if k is None]
    copied = [(j, k) for j, k in enumerate(alias) if k is not None]
    texts = [item if isinstance(item, str) else " ".join(item) for item in docs]
    lengths = token_counts(texts)
    padded = [" " + doc + " " for doc in texts]
    split: list[list[str] | None] = [None] * len(texts)
    # a tsvector leaves out lexemes over _MAX_LEXEME characters and positions past _MAX_POS: ``within`` (the chunks
    # its index finds) bounds the others only
    bounded = within is not None and keys is not None
    unbounded = [i for i, n in enumerate(lengths) if n > _MAX_POS] if bounded else []
    freqs = [[0] * len(phrase_list) for _ in texts]
    for j in counted:  # phrase by phrase, in the documents that may hold it
        p, needle, pair = phrase_list[j], needles[j], twice[j]
        holding = within[j] if bounded and all(len(t) <= _MAX_LEXEME for t in p) else None  # type: ignore[index]
        if holding is None:
            rows: Sequence[int] = range(len(texts))
        else:
            rows = [i for i, key in enumerate(keys) if key in holding]  # type: ignore[arg-type]
            if unbounded:
                rows = sorted({*rows, *unbounded})
        for i in rows:
            doc, pad = texts[i], padded[i]
            if len(p) == 1 and p[0].endswith(PREFIX):  # a token starts with the prefix where " prefix" occurs
                f = pad.count(needle[0][:-2])  # " paint" (tokens hold no spaces: no overlaps to miss)
            elif p and p[-1].endswith(PREFIX):  # a prefix matches every token it starts: counted on the tokens
                toks = split[i]
                if toks is None:
                    toks = split[i] = doc.split(" ") if doc else []
                f = phrase_count(toks, p)
            elif len(p) == 1:
                f = pad.count(needle[0])
                if f and pair in pad:
                    f = (" " + doc.replace(" ", "  ") + " ").count(needle[0])
            elif p and all(x in pad for x in needle):
                toks = split[i]
                if toks is None:
                    toks = split[i] = doc.split(" ") if doc else []
                f = phrase_count(toks, p)
            else:
                f = 0
            freqs[i][j] = f
    out = []
    conditional = _conditional(node)
    masks: dict[tuple[bool, ...], list[bool] | None] = {}  # by the phrases a document holds: few distinct ones
    for i, n_tokens in enumerate(lengths):
        norm = _K1 * (1 - _B + _B * n_tokens / avg)
        row = freqs[i]
        for j, k in copied:
            row[j] = row[k]
        if conditional:
            present = tuple(f > 0 for f in row)
            if present not in masks:
                masks[present] = counted_phrases(node, present)  # type: ignore[arg-type]
            if (mask := masks[present]) is not None:
                row = [f if counted else 0 for f, counted in zip(row, mask)]
        score = 0.0
        for f, w in zip(row, idf):
            if f:
                score += w * (f * (_K1 + 1)) / (f + norm)
        out.append(-score)
    return out
