"""Pure ranking: BM25 mapping, weighted / rank-fusion merge, keyword rescue, temporal decay, MMR,
snippets and the injected-characters clamp (citations live in :mod:`openclaw_memory.text.citations`).

Keyword scores and the rescue rule
----------------------------------
The original maps BM25 to 0..1 on an absolute scale and merges with ``0.7·vector + 0.3·text``,
so a chunk found only by keyword scores at most 0.3 and can never pass ``min_score`` 0.35: an
exact ID or error string that the embedding misses is invisible. Absolute BM25 is also unstable
on small indexes (a term in most chunks gets an IDF near zero). Here the text score is computed
per query instead: ``text_score = (0.1 + 0.9·coverage²)·(0.5 + 0.5·bm25 / best bm25 of this query)``, where
coverage is the weighted share of the query's informative terms the chunk contains (see
:meth:`openclaw_memory.text.query_analysis.QueryAnalysis.coverage`; a word found only in another form of the same
stem counts half). Coverage multiplies, and squared, so a chunk sharing one incidental word with a
paraphrased question gets a small keyword score however well BM25 ranks it among the few keyword
hits: half the query's words earn a quarter of the credit of all of them (an additive form, and with
stemming a linear one, let such hits outvote the embedding). Then a **rescue rule** lifts chunks whose
text contains an *exact* piece of the query — a distinctive token (``a828e60``, ``sqlite-vec``,
``memorySearch.query.hybrid``, camelCase, ALLCAPS), the whole query as a phrase, or every
informative term — to ``score = max(weighted, EXACT_MATCH_WEIGHT · text_score)``
(``EXACT_MATCH_WEIGHT`` = 0.6). The best exact hit therefore scores 0.6 and passes the default
floor; a chunk that shares only one incidental word with the question is not an exact match, keeps
``0.3·text_score`` < 0.3, and cannot flood the results. With ``text_weight`` 0 the rescue is off.

Coverage dilutes an identifier asked about inside a longer question ("what happened with commit
a828e60 during the january migration?" covers a fifth of the question), so **needles** get more:
a chunk containing an identifier-like term of the query (letters with digits, camelCase, names
joined by ``.`` ``_`` ``/`` ``:``; not acronyms such as ``API`` nor hyphenated words) that at most
the candidate limit of chunks contain scores ``max(weighted, EXACT_MATCH_WEIGHT)``. The rarity
condition keeps an identifier that most of the index mentions from lifting every chunk.

Under rank fusion (``merge="rrf"``) every top vector hit scores about 0.65–0.7 whatever its
cosine, so there an exact match scores as if the vector list had ranked it where the keyword list
did (``text_score·(k+1)/(k+text_rank)``, a needle counting ``text_score`` as 1). Because RRF scores
only reflect ranks, ``min_score`` is compared with each hit's ``relevance`` — the weighted score
with the rescue above — under both merges; RRF decides the order and the reported score.

Temporal decay multiplies score and relevance, except a needle's relevance: decay moves an old
note holding the identifier asked for down the list but never under ``min_score``.

Both sides score every candidate
--------------------------------
Each side fetches its best ``max_results·candidate_multiplier`` chunks. A keyword candidate outside
the vector side's list used to count 0 on the vector side, so a chunk holding the question's words
but ranked 25th by cosine lost to chunks that merely sit in both lists. Under the weighted merge,
the search now gives such a candidate its real (calibrated) cosine, from the vector stored with it
(``query.hybrid.score_both_sides``, on by default): a candidate's score no longer depends on whether
it made the other side's cut. The other direction (a BM25 score for vector candidates the keyword side
did not return) measured worse and is not done (figures: ``docs/design/retrieval-decisions.md``).

The file a candidate comes from
-------------------------------
The vector side of a small model puts most chunks of a conversation in a narrow band of cosines (the
bundled e5 model: the 24 best chunks of a question often lie within 0.1), so the weighted merge often
decides between near-ties. Under the weighted merge each candidate therefore also earns
``file_coverage_weight · c²`` (``query.hybrid.file_coverage_weight``, default 0.04), where ``c`` is the
query coverage (:meth:`openclaw_memory.text.query_analysis.QueryAnalysis.coverage`, with the query's words weighted by
their rarity in the index as the keyword side weighs them, ``query.keyword.rarity_weights``) of the texts of
all candidates of both sides that come from its file, taken together: a chunk whose note (a session, a day)
holds the question's words in its retrieved parts wins a near-tie against a chunk of a note that only
resembles the question, and the name every note of a conversation mentions counts little. Squared, like the keyword score, so a note sharing one incidental word earns little. It is added
before the exact-match rescue (which still lifts an exact match to ``0.6·text_score``, a needle to 0.6) and is
used only when both sides have a weight (with ``vector_weight`` 0 a hybrid search scores as keyword-only
search does) and not under rank fusion. Keyword-only search does not use it: there it concentrates the six
hits in fewer notes and lost multi-hop evidence.

Hits from several notes
-----------------------
A question about a person's habits or a list of things ("Where has Melanie camped?") finds its evidence in
several notes (sessions, days), but the best chunks of one note often resemble the question alike and take two or
three of the six places, with the chunks around them (neighbours share their overlap). Under the weighted merge
each candidate can therefore pay ``file_repeat_penalty`` (``query.hybrid.file_repeat_penalty``, opt-in: 0 by default) for
each better-scored candidate of the same note, after the exact-match rescue: a second chunk of a note keeps its
place when it leads the next note's best by more than the penalty, a third by more than twice it. The order within a note
never changes. ``min_score`` is judged on the score before the penalty (it orders, it does not filter).
A record (the LlamaIndex vector store's node, the LangGraph store's item) is a note of its own, for this rule and
the file-coverage rule alike: each stands alone, not as a passage of the file that holds it. With
``query.merge_overlapping`` a chunk overlapping a better hit of its note is folded into that hit (its new lines
take line budget, not a place); the penalty applies to it too, so the line budget goes to a neighbouring chunk
only when it leads the next note's best by more than the penalty.

MMR similarity
--------------
MMR uses Jaccard similarity over token sets (words, plus CJK/kana/Hangul/Thai characters and
their bigrams), as the original does, rather than embedding cosine: it is defined for every
candidate (keyword-only hits carry no embedding, and mixing two similarity scales in one pass
would be inconsistent); it measures textual near-duplication (overlapping chunks, a note pasted
into two files), which is what MMR is for here, whereas embedding cosine is high for any two
chunks on the same topic and would push out related-but-different facts.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from openclaw_memory.text import citations as _citations
from openclaw_memory.text import note_dates as _note_dates
from openclaw_memory.text.chunker import RECORD_OPEN_PREFIX, indexed_text
from openclaw_memory.text.citations import citation_footer
from openclaw_memory.types import Candidate, SearchHit

__all__ = [
    "EXACT_MATCH_WEIGHT",
    "apply_file_coverage",
    "apply_file_repeat_penalty",
    "apply_keyword_rescue",
    "apply_mmr",
    "apply_temporal_decay",
    "bound_score",
    "calibrate_similarity",
    "clamp_injected",
    "decay_multiplier",
    "jaccard",
    "keyword_text_scores",
    "merge_rrf",
    "merge_weighted",
    "mmr_tokens",
    "relative_bm25",
    "truncate_snippet",
]

#: Scale applied to ``text_score`` for exact keyword matches (the rescue rule, see module docs).
EXACT_MATCH_WEIGHT = 0.6

# ---- BM25 ---------------------------------------------------------------------------------------


def relative_bm25(ranks: Sequence[float]) -> list[float]:
    """Each rank relative to the best one of the same query: best → 1.0, others in (0, 1]."""
    finite = [r for r in ranks if math.isfinite(r)]
    best = min(finite, default=0.0)
    if best >= 0:  # no real BM25 (e.g. LIKE-only matches): every hit is equally good
        return [1.0 if math.isfinite(r) else 0.0 for r in ranks]
    return [max(0.0, min(1.0, r / best)) if math.isfinite(r) and r < 0 else 0.0 for r in ranks]


def keyword_text_scores(ranks: Sequence[float], coverages: Sequence[float]) -> list[float]:
    """``(0.1 + 0.9·coverage²)·(0.5 + 0.5·relative_bm25)`` per keyword hit (see the module docstring)."""
    return [(0.1 + 0.9 * max(0.0, min(1.0, c)) ** 2) * (0.5 + 0.5 * r) for r, c in zip(relative_bm25(ranks), coverages)]


def calibrate_similarity(score: float, floor: float | None) -> float:
    """Map a raw cosine onto 0..1 for models whose unrelated texts already score near ``floor``.

    ``(score - floor) / (1 - floor)``, clipped; ``floor=None`` leaves the score unchanged. The e5
    family (the bundled default) puts almost every pair between 0.7 and 1.0, so without this its
    vector scores barely separate and ``min_score`` filters nothing.
    """
    if floor is None:
        return score
    return max(0.0, min(1.0, (score - floor) / (1.0 - floor)))


# ---- merging ------------------------------------------------------------------------------------


#: per candidate class: whether copying its ``__dict__`` is what ``dataclasses.replace`` would do
_PLAIN_COPY: dict[type, bool] = {}


def _copy(c: Candidate, **changes: Any) -> Candidate:
    """``dataclasses.replace(c, **changes)``, without running ``__init__`` again for a plain dataclass such as
    :class:`Candidate` (its fields are its instance attributes): 1.2 µs a copy instead of 2.3 µs, and a search
    copies up to ~100. A class with ``__slots__`` or a ``__post_init__`` goes through ``replace``."""
    cls = type(c)
    plain = _PLAIN_COPY.get(cls)
    if plain is None:
        plain = _PLAIN_COPY[cls] = (not hasattr(cls, "__post_init__")
                                    and not any("__slots__" in vars(k) for k in cls.__mro__ if k is not object))
    if not plain:
        return replace(c, **changes)
    out = object.__new__(cls)
    out.__dict__.update(vars(c), **changes)
    return out


def _union(vector: Sequence[Candidate], keyword: Sequence[Candidate],
           vector_scores: Mapping[str, float] | None = None) -> dict[str, Candidate]:
    out: dict[str, Candidate] = {}
    for pos, c in enumerate(vector, start=1):
        out[c.id] = _copy(c, text_score=0.0, text_rank=None, exact_match=False, needle=False,
                          vector_score=max(0.0, c.vector_score), vector_rank=pos)
    filled = vector_scores or {}
    for pos, k in enumerate(keyword, start=1):
        cur = out.get(k.id)
        if cur is None:
            out[k.id] = _copy(k, vector_score=max(0.0, filled.get(k.id, 0.0)), vector_rank=None, text_rank=pos)
        else:
            cur.text_score, cur.text_rank, cur.exact_match, cur.needle = k.text_score, pos, k.exact_match, k.needle
            if k.text:
                cur.text = k.text
    return out


def merge_weighted(
    vector: Sequence[Candidate], keyword: Sequence[Candidate], *, vector_weight: float, text_weight: float,
    vector_scores: Mapping[str, float] | None = None,
) -> list[Candidate]:
    """Union by chunk id with ``score = vector_weight·vector_score + text_weight·text_score``.

    ``vector_scores`` gives the (calibrated) similarity of keyword candidates that the vector list did
    not reach, by chunk id (see "Both sides score every candidate" in the module docs); a keyword
    candidate missing from both counts 0 on the vector side. Inputs are in their own rank order;
    outputs are copies, in no particular order.
    """
    merged = _union(vector, keyword, vector_scores)
    for c in merged.values():
        c.score = vector_weight * c.vector_score + text_weight * c.text_score
    return list(merged.values())


def merge_rrf(
    vector: Sequence[Candidate], keyword: Sequence[Candidate], *, vector_weight: float, text_weight: float,
    k: int = 60,
) -> list[Candidate]:
    """Weighted Reciprocal Rank Fusion, scaled so rank 1 in both lists scores 1.0.

    ``score = (k+1)·(vector_weight/(k+rank_v) + text_weight/(k+rank_t))`` (a missing rank adds 0).
    Scores reflect ranks only, so ``min_score`` filters less under RRF than under the weighted merge.
    """
    merged = _union(vector, keyword)
    total = (vector_weight + text_weight) or 1.0
    for c in merged.values():
        s = 0.0
        if c.vector_rank is not None:
            s += vector_weight / (k + c.vector_rank)
        if c.text_rank is not None:
            s += text_weight / (k + c.text_rank)
        c.score = s * (k + 1) / total
    return list(merged.values())


def apply_keyword_rescue(
    candidates: Iterable[Candidate], *, weight: float = EXACT_MATCH_WEIGHT, rrf_k: int | None = None
) -> None:
    """In place, for exact keyword matches: ``score = max(score, weight·text_score)``; for
    needles (a rare identifier of the query) ``score = max(score, weight)``.

    With ``rrf_k`` (rank fusion), an exact match instead scores at least as if the vector list
    had ranked it where the keyword list did: ``text_score·(k+1)/(k+text_rank)`` (a needle
    counts ``text_score`` as 1).
    """
    for c in candidates:
        if not (c.exact_match and c.text_score > 0):
            continue
        strength = 1.0 if c.needle else c.text_score
        if rrf_k is not None and c.text_rank is not None:
            c.score = max(c.score, strength * (rrf_k + 1) / (rrf_k + c.text_rank))
        else:
            c.score = max(c.score, weight * strength)


def _note_of(c: Candidate) -> tuple[str, ...]:
    """The note a candidate is a passage of, for the per-note rules: its source and path; a record (a block a
    program wrote between markers: the LlamaIndex vector store's node, the LangGraph store's item) stands alone,
    not as a passage of the file that holds it, so it is a note of its own."""
    return (c.source, c.path, c.id) if c.text.startswith(RECORD_OPEN_PREFIX) else (c.source, c.path)


def apply_file_coverage(
    candidates: Sequence[Candidate], coverage: Callable[[Sequence[str]], Sequence[float]], *, weight: float
) -> None:
    """In place: add ``weight · c²`` to each candidate's score (and record it as ``file_bonus``), where ``c``
    is ``coverage`` of the texts of all ``candidates`` of the same note (source and path; a record is its own)
    joined together (see "The file a candidate comes from" in the module docs). ``coverage`` maps texts to their
    coverage of the query in 0..1. Nothing happens with ``weight`` 0 or no candidates."""
    if weight <= 0 or not candidates:
        return
    by_file: dict[tuple[str, ...], list[Candidate]] = {}
    for c in candidates:
        by_file.setdefault(_note_of(c), []).append(c)
    files = list(by_file)
    texts = ["\n".join(c.text for c in sorted(by_file[f], key=lambda c: (c.start_line, c.id))) for f in files]
    for f, cov in zip(files, coverage(texts)):
        bonus = weight * max(0.0, min(1.0, cov)) ** 2
        for c in by_file[f]:
            c.file_bonus = bonus
            c.score += bonus


def apply_file_repeat_penalty(candidates: Sequence[Candidate], *, penalty: float) -> None:
    """In place: lower each candidate's score by ``penalty`` × the number of candidates of the same source and
    path that score higher (floored at 0), so the hits of one note (a session, a day) make room for the next
    note's best chunk unless they lead by more than ``penalty`` (see "Hits from several notes" in the module
    docs). A record (the LlamaIndex vector store's node, the LangGraph store's item) is a note of its own, so it
    pays for no other record of its file. Ties keep their input order. Nothing happens with ``penalty`` 0."""
    if penalty <= 0 or not candidates:
        return
    seen: dict[tuple[str, ...], int] = {}
    for c in sorted(candidates, key=lambda c: -c.score):
        key = _note_of(c)
        n = seen.get(key, 0)
        if n:
            c.score = max(0.0, c.score - penalty * n)
        seen[key] = n + 1


def bound_score(score: float, headroom: float) -> float:
    """``score`` brought back into 0..1 after a bonus of at most ``headroom`` (the file-coverage rule's
    weight) may have lifted it up to ``1 + headroom``: unchanged up to ``1 - headroom``, and
    ``[1 - headroom, 1 + headroom]`` halved onto ``[1 - headroom, 1]``. Strictly increasing, so applied to
    every score of a search it keeps their order; ``min_score`` cuts below ``1 - headroom`` are unchanged."""
    knee = 1.0 - headroom
    if headroom <= 0 or score <= knee:
        return score
    return min(1.0, knee + (score - knee) / 2)


# ---- temporal decay -----------------------------------------------------------------------------

def decay_multiplier(age_days: float, half_life_days: float) -> float:
    """``exp(-ln2/half_life · max(0, age))``; the half-life is floored to a whole day, min 1."""
    half = max(1, math.floor(half_life_days))
    return math.exp(-math.log(2) / half * max(0.0, age_days))


def apply_temporal_decay(
    candidates: Iterable[Candidate],
    timestamp_of: Callable[[Candidate], datetime | None],
    *,
    now: datetime,
    half_life_days: float,
) -> None:
    """In place: multiply each score and relevance by its decay (None from ``timestamp_of``: no decay).

    A needle's relevance is left as it is: decay moves an old note that holds the identifier asked
    for down the list but does not drop it under ``min_score``.
    """
    now = now if now.tzinfo else now.replace(tzinfo=timezone.utc)
    cache: dict[tuple[str, str], datetime | None] = {}
    for c in candidates:
        key = (c.source, c.path) if c.source != "sessions" else (c.source, f"{c.path}#{c.start_line}-{c.end_line}")
        if key not in cache:
            cache[key] = timestamp_of(c)
        ts = cache[key]
        if ts is None:
            continue
        ts = ts if ts.tzinfo else ts.replace(tzinfo=timezone.utc)
        factor = decay_multiplier((now - ts).total_seconds() / 86400.0, half_life_days)
        c.score *= factor
        if not c.needle:
            c.relevance *= factor


# ---- MMR ----------------------------------------------------------------------------------------

_MMR_WORD = re.compile(r"[^\W_]+|_+")
_MMR_CJK = re.compile(
    "[\u0e00-\u0eff\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)


def mmr_tokens(text: str) -> frozenset[str]:
    """Lowercased word tokens, plus each CJK/kana/Hangul/Thai character and adjacent-pair bigram."""
    out: set[str] = set()
    low = text.lower()
    prev_end, prev = -1, ""
    for m in _MMR_CJK.finditer(low):
        ch = m.group(0)
        out.add(ch)
        if m.start() == prev_end:
            out.add(prev + ch)
        prev_end, prev = m.end(), ch
    for w in _MMR_WORD.findall(_MMR_CJK.sub(" ", low)):
        if w.strip("_"):
            out.add(w)
    return frozenset(out)


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    """|a∩b| / |a∪b|; two empty sets are identical (1.0), one empty set shares nothing (0.0)."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def apply_mmr(candidates: Sequence[Candidate], lambda_: float = 0.7) -> list[Candidate]:
    """Maximal-marginal-relevance order of score-sorted ``candidates`` (scores are unchanged).

    Picks ``argmax λ·rel(x) − (1−λ)·max_sim(x, selected)`` with ``rel`` the min-max normalised
    score; ties go to the higher original score, then to the earlier candidate. Texts are compared as they are
    indexed (:func:`~openclaw_memory.text.chunker.indexed_text`: without record marker lines).
    """
    lam = max(0.0, min(1.0, lambda_))
    items = list(candidates)
    if len(items) <= 1 or lam >= 1.0:
        return sorted(items, key=lambda c: -c.score) if lam >= 1.0 else items
    scores = [c.score for c in items]
    lo, hi = min(scores), max(scores)
    rel = [(s - lo) / (hi - lo) if hi > lo else 1.0 for s in scores]
    toks = [mmr_tokens(indexed_text(c.text)) for c in items]  # what is indexed: no record marker lines
    max_sim = [0.0] * len(items)
    remaining = list(range(len(items)))
    order: list[int] = []
    while remaining:
        best = max(remaining, key=lambda i: (lam * rel[i] - (1 - lam) * max_sim[i], scores[i], -i))
        order.append(best)
        remaining.remove(best)
        for i in remaining:
            max_sim[i] = max(max_sim[i], jaccard(toks[i], toks[best]))
    return [items[i] for i in order]


# ---- snippets, clamp -------------------------------------------------------------------------

_ZWJ = "\u200d"


def _extends_previous(ch: str) -> bool:
    """True for characters that belong to the preceding character's grapheme."""
    cp = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Mc", "Me")
        or ch == _ZWJ
        or 0xFE00 <= cp <= 0xFE0F
        or 0x1F3FB <= cp <= 0x1F3FF  # skin tones
        or 0xE0020 <= cp <= 0xE007F  # tag sequences
        or 0xDC00 <= cp <= 0xDFFF  # a lone low surrogate
    )


def truncate_snippet(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` characters without splitting a character.

    Never ends inside a combining sequence, an emoji ZWJ/skin-tone/flag sequence or a surrogate
    pair; no ellipsis is added.
    """
    if max_chars <= 0:
        return ""
    if len(text) <= max_chars:
        return text
    cut = max_chars
    while cut > 0 and (_extends_previous(text[cut]) or text[cut - 1] == _ZWJ):
        cut -= 1
    # regional-indicator flags come in pairs
    ri = 0
    while cut - ri > 0 and 0x1F1E6 <= ord(text[cut - 1 - ri]) <= 0x1F1FF:
        ri += 1
    if ri % 2 == 1 and 0x1F1E6 <= ord(text[cut]) <= 0x1F1FF:
        cut -= 1
    if cut > 0 and 0xD800 <= ord(text[cut - 1]) <= 0xDBFF:
        cut -= 1
    return text[:cut]


def clamp_injected(hits: Sequence[SearchHit], max_chars: int | None) -> list[SearchHit]:
    """Keep whole snippets while they fit ``max_chars`` in total, cut the first that does not, drop the rest.

    A cut snippet keeps its ``Source:`` footer whole (the text before it is shortened); when not even
    the footer fits, that hit is dropped.
    """
    if max_chars is None:
        return list(hits)
    out: list[SearchHit] = []
    left = max(0, int(max_chars))
    for h in hits:
        if len(h.snippet) <= left:
            out.append(h)
            left -= len(h.snippet)
            continue
        footer = citation_footer(h.citation) if h.citation else ""
        footer = footer if footer and h.snippet.endswith(footer) else ""
        body = h.snippet[: len(h.snippet) - len(footer)] if footer else h.snippet
        cut = truncate_snippet(body, left - len(footer)).rstrip() if left > len(footer) else ""
        if cut:
            out.append(replace(h, snippet=cut + footer))
        break
    return out


# ---- deprecated names ---------------------------------------------------------------------------

_MOVED_TO_CITATIONS = frozenset({"ChatType", "chat_type", "citations_enabled", "decorate_citation", "format_citation"})
_MOVED_TO_NOTE_DATES = frozenset({"dated_path_timestamp", "is_evergreen"})


def __getattr__(name: str) -> Any:
    """The citation helpers moved to :mod:`openclaw_memory.text.citations` and the note-date helpers to
    :mod:`openclaw_memory.text.note_dates`; the old names still work and warn."""
    for moved, module in ((_MOVED_TO_CITATIONS, _citations), (_MOVED_TO_NOTE_DATES, _note_dates)):
        if name in moved:
            import warnings

            warnings.warn(f"openclaw_memory.retrieval.ranking.{name} moved to {module.__name__}.{name}",
                          DeprecationWarning, stacklevel=2)
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
