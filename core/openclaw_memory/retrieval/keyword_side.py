"""The keyword side of a search (spec §5): FTS5 candidates of a query, best first, with per-query keyword scores.

:func:`keyword_candidates` counts the query's terms, runs MATCH expressions from strict to loose until enough
chunks are found, and scores each by how much of the query it covers (:mod:`openclaw_memory.retrieval.ranking`).
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Hashable, Iterable, Sequence
from typing import Generic, Literal, TypeVar, overload

from openclaw_memory.retrieval.ranking import keyword_text_scores
from openclaw_memory.storage import MemoryStore
from openclaw_memory.text.instructions import MARKER_MATCH
from openclaw_memory.text.note_dates import note_date_words
from openclaw_memory.text.query_analysis import QueryAnalysis, QueryTerm, match_rows
from openclaw_memory.types import Candidate

__all__ = ["COMMON_MATCHES", "RANK_WINDOW", "RECENT_CHUNKS", "KeywordCandidates", "chunk_total",
           "keyword_candidates"]

#: A term found in more chunks than this is *common*. FTS5 computes BM25 for every row a MATCH selects
#: and scans each phrase's whole posting list for its IDF (about 1.5 µs per row here), so expressions
#: with a common term list their most recently indexed matches instead of ranking them all.
COMMON_MATCHES = 1000
#: No MATCH ranks more rows than this (reached only by combinations of several mid-frequency words).
RANK_WINDOW = 4000
#: Common-word expressions look at about this many most recently indexed chunks first and widen to
#: the whole index only when those do not hold enough matches.
RECENT_CHUNKS = 20_000


#: The standing instructions of at most this many of the newest chunks that may hold one are compared with a query.
INSTRUCTION_CHUNKS = 200

#: At most this many substring (LIKE) scans per query for short terms in a trigram index: each reads every chunk.
_MAX_LIKE_SCANS = 3

_Order = Literal["rank", "recent", "recent-first"]

#: one plain lower-case ASCII token as an FTS5 phrase, and as a prefix phrase (one token either way)
_PLAIN_WORD = re.compile(r'"([a-z0-9]+)"')
_PLAIN_PREFIX = re.compile(r'"([a-z0-9]+)"\*')

_T = TypeVar("_T")


def _round_trips(store: MemoryStore) -> bool:
    """Whether each call to ``store`` is a round trip to a server (False for a store written before the protocol
    said, which then needs no :meth:`~openclaw_memory.storage.MemoryStore.keyword_search_many`)."""
    return bool(getattr(store, "round_trips", False))


def _generation_counted(store: MemoryStore) -> str | None:
    """The store's generation as this search's counts read it, from a store behind a server (its
    ``search_generation``: no round trip of its own); None for the others (read when needed)."""
    return store.search_generation() if _round_trips(store) else None


class _MatchCounter:
    """Capped match counts of FTS5 expressions, each asked of the store once per search."""

    def __init__(self, store: MemoryStore, tokenizer: str = "unicode61") -> None:
        self.store = store
        self._prefix_shortcut = tokenizer == "unicode61"  # tokens are the lower-cased words themselves
        self._seen: dict[str, int] = {}
        self._rows: dict[str, frozenset[object]] = {}  # the chunks of the expressions counted below the cap
        self.asked_store = False  # whether match_sets_many ran

    def __call__(self, match: str | None) -> int:
        if not match:
            return 0
        if match not in self._seen:
            self._seen[match] = self._capped_by_word(match) or self.store.count_matches(match, cap=COMMON_MATCHES + 1)
        return self._seen[match]

    def prefetch(self, matches: Sequence[str | None]) -> None:
        """Count ``matches`` now, in two calls to the store at most (whole words, then the prefixes the words
        do not settle; one call to a store behind a server), instead of one call each as the search asks for
        them; the same counts."""
        todo = [m for m in dict.fromkeys(matches) if m and m not in self._seen]
        if _round_trips(self.store):  # one call for all: the prefixes' counts cost no extra round trip
            words, prefixes = todo, []
        else:
            prefix = [bool(self._prefix_shortcut and _PLAIN_PREFIX.fullmatch(m)) for m in todo]
            words = [m for m, is_prefix in zip(todo, prefix) if not is_prefix]
            prefixes = [m for m, is_prefix in zip(todo, prefix) if is_prefix]
        for batch in (words, prefixes):
            batch = [m for m in batch if not self._capped_by_word(m)]
            if batch:
                self.asked_store = True
                for m, (n, rows) in zip(batch, self.store.match_sets_many(batch, cap=COMMON_MATCHES + 1)):
                    self._seen[m] = n
                    if rows is not None:
                        self._rows[m] = rows

    def rows(self, match: str) -> frozenset[object] | None:
        """The chunks ``match`` (an AND/OR of counted phrases) selects, when every phrase's are known."""
        return match_rows(match, self._rows.get)

    def rows_within(self, match: str) -> frozenset[object] | None:
        """Chunks all of ``match``'s matches are among (those of its AND's operands whose chunks are known), or
        None."""
        return match_rows(match, self._rows.get, within=True)

    def _capped_by_word(self, match: str) -> int:
        """The cap for a prefix ``"stem"*`` when a word it prefixes already reached it (every chunk with
        the word has the prefix, so its capped count is the cap too): FTS5 reads a prefix's whole posting
        lists to count even one match, the word's count stops at the cap. 0 when unknown."""
        m = _PLAIN_PREFIX.fullmatch(match) if self._prefix_shortcut else None
        if m is None:
            return 0
        stem = m.group(1)
        for seen, n in self._seen.items():
            w = _PLAIN_WORD.fullmatch(seen)
            if n > COMMON_MATCHES and w is not None and w.group(1).startswith(stem):
                return n
        return 0

    def common(self, match: str | None) -> bool:
        return self(match) > COMMON_MATCHES


def _keyword_plan(analysis: QueryAnalysis, count: _MatchCounter) -> list[tuple[str, _Order]]:
    """The MATCH expressions to try after the phrase, strict to loose, each with how to order it.

    Terms are counted first (each count stops after ``COMMON_MATCHES + 1``). Groups without any
    matching term are left out, so an impossible AND is never run. The first expression ANDs every
    present group (a chunk with every query word ranks first); the combination tiers are built over
    the rare groups only, and the loose OR takes terms from the rarest up while their matches stay
    within ``COMMON_MATCHES``, so a rare word's chunks are ranked in full instead of drowning among
    a frequent word's. Expressions with a common term are not BM25-ranked.
    """
    if analysis.fallback:
        # only stop words: after the phrase, every word in any order ("what is this" → "this is what")
        every = analysis.match_all()
        return [(every, "recent-first")] if every else []
    n = {t: count(analysis.fts_phrase(t)) for t in analysis.terms if t.kind != "phrase"}
    present = [t for t in n if n[t] > 0]
    if not present:
        return []
    rare = {t for t in present if n[t] <= COMMON_MATCHES}
    # every present group; with a rare one among them the matches are few however common the rest
    plan: list[tuple[str | None, _Order]] = [
        (analysis.match_all(lambda t: n.get(t, 0) > 0), "rank" if len(rare) == len(present) else
         "recent" if rare else "recent-first")]
    if rare:  # combinations of the rarer groups (combinations of common words cost too much to evaluate)
        plan += [(m, "rank") for m in analysis.match_tiers(include=lambda t: t in rare)[:-1]]
    loose: set[QueryTerm] = set()
    total = 0
    for t in sorted(present, key=lambda t: n[t]):
        if loose and total + n[t] > COMMON_MATCHES:
            break
        loose.add(t)
        total += n[t]
    plan.append((" OR ".join(q for t in present if t in loose and (q := analysis.fts_phrase(t))),
                 "rank" if loose & rare else "recent-first"))
    out: dict[str, _Order] = {}
    for match, order in plan:
        if match and match not in out:
            out[match] = order
    return list(out.items())


def _first_search(match: str, order: _Order, *, limit: int, sources: Sequence[str] | None) -> dict[str, object]:
    """The keyword arguments of :meth:`~openclaw_memory.storage.MemoryStore.keyword_search` :func:`_run` asks
    for first."""
    if order == "rank":
        return {"match": match, "limit": limit, "sources": sources, "window": RANK_WINDOW}
    if order == "recent-first":
        return {"match": match, "limit": limit, "sources": sources, "order": "recent", "newest": RECENT_CHUNKS}
    return {"match": match, "limit": limit, "sources": sources, "order": "recent"}


def _searches_of(match: str, order: _Order, *, limit: int, sources: Sequence[str] | None) -> list[dict[str, object]]:
    """The keyword searches :func:`_run` asks of ``match``: the first one and, after "recent-first", the whole
    index's newest matches."""
    first = _first_search(match, order, limit=limit, sources=sources)
    if order != "recent-first":
        return [first]
    return [first, {"match": match, "limit": limit, "sources": sources, "order": "recent"}]


class _Searches:
    """The store's keyword searches of one query, answered from those asked in advance (:meth:`prefetch`)."""

    def __init__(self, store: MemoryStore, *, vectors: bool = True) -> None:
        self.store = store
        self.vectors = vectors  # whether the search scores the candidates by their stored vectors next
        self._done: dict[str, list[tuple[Candidate, float]]] = {}

    @staticmethod
    def _key(query: dict[str, object]) -> str:
        return repr(sorted(query.items()))

    def prefetch(self, queries: Sequence[dict[str, object]]) -> None:
        """Run ``queries`` now, in one call to the store."""
        todo = [q for q in queries if self._key(q) not in self._done]
        asked = [{**q, "vectors": self.vectors} for q in todo]
        for q, rows in zip(todo, self.store.keyword_search_many(asked) if todo else []):
            self._done[self._key(q)] = rows

    def __call__(self, query: dict[str, object]) -> list[tuple[Candidate, float]]:
        got = self._done.pop(self._key(query), None)
        if got is not None:
            return list(got)
        return self.store.keyword_search(**query, vectors=self.vectors)  # type: ignore[arg-type]


def _run(search: _Searches, match: str, order: _Order, *, limit: int, sources: Sequence[str] | None,
         need: int) -> list[tuple[Candidate, float]]:
    """One MATCH: BM25-ranked, or its most recently indexed matches ("recent-first" looks at the
    newest chunks first and at the whole index only when those hold fewer than ``need``)."""
    rows = search(_first_search(match, order, limit=limit, sources=sources))
    if order != "recent-first" or len(rows) >= min(need, limit):
        return rows
    return search({"match": match, "limit": limit, "sources": sources, "order": "recent"})


def _rare_needles(analysis: QueryAnalysis, count: _MatchCounter, limit: int) -> set[int]:
    """The query's identifier-like groups (see :class:`~openclaw_memory.text.query_analysis.TermGroup`) found in
    at least one and at most ``limit`` chunks: a chunk containing one is what the query asks for."""
    out: set[int] = set()
    for gi, group in enumerate(analysis.groups):
        if not group.needle:
            continue
        counts = [count(q) for t in analysis.terms if t.group == gi and (q := analysis.fts_phrase(t))]
        if counts and 0 < min(counts) <= limit:
            out.add(gi)
    return out


class _PerGeneration(Generic[_T]):
    """Values derived from a store's chunks, by store (and key), kept while the store's
    :meth:`~openclaw_memory.storage.MemoryStore.generation` is the one they were derived at (a write from any
    process, a rebuild changes it). A store that cannot be weakly referenced or hashed keeps nothing."""

    def __init__(self) -> None:
        self._values: weakref.WeakKeyDictionary[MemoryStore, dict[Hashable, tuple[str, _T]]] = \
            weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self, store: MemoryStore, generation: str, key: Hashable = None) -> _T | None:
        try:
            with self._lock:
                entry = self._values.get(store, {}).get(key)
        except TypeError:
            return None
        return entry[1] if entry is not None and entry[0] == generation else None

    def put(self, store: MemoryStore, generation: str, value: _T, key: Hashable = None) -> None:
        try:
            with self._lock:
                self._values.setdefault(store, {})[key] = (generation, value)
        except TypeError:
            pass


#: The index's chunk count (the N of the rarity weights' inverse document frequency): counting 100k chunks takes
#: tens of milliseconds, reading the generation a few microseconds.
_CHUNK_TOTALS: _PerGeneration[int] = _PerGeneration()


def chunk_total(store: MemoryStore, *, generation: str | None = None) -> int:
    """The store's number of chunks, exact: counted again only once the store's
    :meth:`~openclaw_memory.storage.MemoryStore.generation` changed (a write from any process, a rebuild).
    ``generation``: that token as read earlier in the same search (None: read now)."""
    if generation is None:  # read before counting: a write in between only makes the next call recount
        generation = store.generation()
    total = _CHUNK_TOTALS.get(store, generation)
    if total is None:
        total = sum(v.get("chunks", 0) for v in store.counts().values())
        _CHUNK_TOTALS.put(store, generation, total)
    return total


class KeywordCandidates(Sequence[Candidate]):
    """The keyword side's candidates, best first (an immutable sequence), with the analysis that scored them:
    ``ranking`` is the query's analysis with each word weighted by its rarity in the index when
    ``rarity_weights`` was on (else the query's own), so that later rules measure coverage with the same weights
    (the file-coverage rule). A slice is a ``KeywordCandidates`` with the same ``ranking``."""

    def __init__(self, candidates: Iterable[Candidate] = (), *, ranking: QueryAnalysis,
                 instruction_chunks: Sequence[Candidate] = ()) -> None:
        self._candidates = list(candidates)
        self.ranking = ranking
        #: the newest chunks that may hold standing instructions, when asked for (``instructions``)
        self.instruction_chunks = list(instruction_chunks)

    @overload
    def __getitem__(self, index: int) -> Candidate: ...

    @overload
    def __getitem__(self, index: slice) -> KeywordCandidates: ...

    def __getitem__(self, index: int | slice) -> Candidate | KeywordCandidates:
        if isinstance(index, slice):
            return KeywordCandidates(self._candidates[index], ranking=self.ranking,
                                     instruction_chunks=self.instruction_chunks)
        return self._candidates[index]

    def __len__(self) -> int:
        return len(self._candidates)

    def __repr__(self) -> str:
        return f"KeywordCandidates({self._candidates!r}, ranking={self.ranking!r})"


def keyword_candidates(
    store: MemoryStore, analysis: QueryAnalysis, *, limit: int, sources: Sequence[str] | None = None,
    enough: int | None = None, window_lines: int = 0, rarity_weights: bool = False, note_dates: bool = False,
    instructions: bool = False, vectors: bool = True,
) -> KeywordCandidates:
    """FTS candidates with per-query ``text_score``, ``exact_match`` and ``needle`` set, best first.

    Searches the query phrase, then the expressions of :func:`_keyword_plan` from strict to loose
    until ``enough`` (default ``limit``) chunks are found. Expressions of rare terms are ranked by
    BM25; an expression with a word found in more than ``COMMON_MATCHES`` chunks lists its most
    recently indexed matches (their order then comes from query coverage, then recency). A query
    FTS5 rejects contributes nothing (the store logs it); a database failure raises StoreError.
    Coverage is measured on each chunk's best run of ``window_lines`` lines (0: the whole chunk) and, with
    ``rarity_weights``, weights the query's words by their rarity in the index; with ``note_dates``, a dated
    note's date counts as words of each of its lines there (``query.keyword``; exactness is judged without it).
    With ``instructions``, the result's ``instruction_chunks`` lists the newest chunks that may hold standing
    instructions (:mod:`openclaw_memory.retrieval.standing_instructions`), asked in the same call as the first
    expressions of a store behind a server. ``vectors`` False: the search will not score the candidates by their
    stored vectors (keyword-only), so the store need not read them.
    """
    want = max(1, min(limit, enough or limit))
    count = _MatchCounter(store, analysis.tokenizer)
    batches: list[list[tuple[Candidate, float]]] = []
    seen: set[str] = set()
    phrase = analysis.phrase_match
    if not analysis.fallback:  # every count the plan below asks for, in one or two calls to the store
        count.prefetch([*(f'"{w}"' for t in analysis.terms if t.kind == "phrase" and analysis.tokenizer != "trigram"
                          for w in t.key.split()),
                        *(analysis.fts_phrase(t) for t in analysis.terms if t.kind != "phrase")])
    # read once for every use below (a store behind a server gives the generation its counts read only once)
    generation = _generation_counted(store) if count.asked_store else None
    if generation is None and instructions and not _round_trips(store):
        generation = store.generation()
    instructions_known = (_INSTRUCTION_CHUNKS.get(store, generation, _sources_key(sources))
                          if instructions and generation is not None else None)
    search = _Searches(store, vectors=vectors)
    order: _Order = "rank"
    if phrase:
        key = next(t.key for t in analysis.terms if t.kind == "phrase")
        words = [f'"{w}"' for w in key.split()] if analysis.tokenizer != "trigram" else []
        order = "recent-first" if words and all(count.common(w) for w in words) else "rank"
    tiers = _keyword_plan(analysis, count)

    def skipped(i: int, match: str) -> bool:
        """An expression whose matches, with the phrase's, cannot reach ``want`` chunks is not run (its rows would not
        be kept): known from the counts, the chunks of its rarer words bounding an AND with a common one."""
        if i == len(tiers) - 1 or sources:
            return False
        within = count.rows_within(match)
        return within is not None and len(seen) + len(within) < want

    if _round_trips(store):  # the phrase and the first expression run when the phrase finds nothing, in one call
        first = next(((m, how) for i, (m, how) in enumerate(tiers) if not skipped(i, m)), None)
        search.prefetch([q for m, how in ([(phrase, order)] if phrase else []) + ([first] if first else [])
                         for q in _searches_of(m, how, limit=limit, sources=sources)]
                        + ([_instruction_search(sources)] if instructions and instructions_known is None else []))
    if phrase:
        batches.append(_run(search, phrase, order, limit=limit, sources=sources, need=1 if analysis.fallback else want))
        seen.update(c.id for c, _ in batches[-1])
    for i, (match, how) in enumerate(tiers):  # strict to loose
        if skipped(i, match):
            continue
        rows = _run(search, match, how, limit=limit, sources=sources, need=want)
        if i == len(tiers) - 1 or len(seen | {c.id for c, _ in rows}) >= want:
            batches.append([(c, r) for c, r in rows if c.id not in seen])
            seen.update(c.id for c, _ in batches[-1])
            break
    if analysis.tokenizer == "trigram":
        # A trigram index cannot MATCH terms under 3 characters (项目, 서버): one substring scan each.
        short = [t.text for t in analysis.terms if t.group is not None and analysis.fts_phrase(t) is None]
        for term in sorted(dict.fromkeys(short), key=len, reverse=True)[:_MAX_LIKE_SCANS]:
            rows = store.keyword_search("", limit=limit, sources=sources, like_terms=[term])
            batches.append([(c, r) for c, r in rows if c.id not in seen])
            seen.update(c.id for c, _ in batches[-1])
    needles = _rare_needles(analysis, count, limit)
    ranking = analysis
    if rarity_weights and len(analysis.groups) > 1 and any(batches):
        matches = [max((count(q) for t in analysis.terms if t.group == gi and (q := analysis.fts_phrase(t))),
                       default=0) for gi in range(len(analysis.groups))]
        total = chunk_total(store, generation=generation)
        ranking = analysis.weighted_by_rarity(matches, total)
    cands: list[Candidate] = []
    scores: list[float] = []
    ranks: list[float] = []
    for batch in batches:  # BM25 is only comparable within one MATCH expression
        if not batch:
            continue
        texts = [c.text for c, _ in batch]
        stats = analysis.coverage_detail(texts)  # exactness and needles: the words as the query has them
        dates = [note_date_words(c.path) for c, _ in batch] if note_dates else None
        if window_lines > 0:
            covs = ranking.window_coverage(texts, window_lines, context=dates)
        elif ranking is not analysis or (dates and any(dates)):
            covs = [cov for cov, _ in ranking.coverage([t if not d else f"{t}\n{d}" for t, d in
                                                         zip(texts, dates or [None] * len(texts))])]
        else:
            covs = [cov for cov, _, _ in stats]
        for (c, rank), (_, exact, groups), score in zip(batch, stats, keyword_text_scores([r for _, r in batch], covs)):
            c.exact_match = exact
            c.needle = bool(needles & groups)
            cands.append(c)
            scores.append(score)
            ranks.append(rank)
    order = sorted(range(len(cands)), key=lambda i: (-scores[i], ranks[i], i))
    out: list[Candidate] = []
    for pos, i in enumerate(order[:limit], start=1):
        c = cands[i]
        c.text_score, c.text_rank = scores[i], pos
        out.append(c)
    held = instructions_known
    if instructions and held is None:
        held = _instruction_chunks(store, search, sources, generation)
    return KeywordCandidates(out, ranking=ranking, instruction_chunks=held or ())


def _instruction_search(sources: Sequence[str] | None) -> dict[str, object]:
    """The keyword search for the newest chunks that may hold standing instructions."""
    return {"match": MARKER_MATCH, "limit": INSTRUCTION_CHUNKS, "sources": sources, "order": "recent"}


#: The chunks that may hold standing instructions, by the sources asked for (a local store's generation costs
#: nothing to read, a store behind a server's comes with the search's counts).
_INSTRUCTION_CHUNKS: _PerGeneration[list[Candidate]] = _PerGeneration()


def _sources_key(sources: Sequence[str] | None) -> tuple[str, ...] | None:
    return tuple(sources) if sources is not None else None


def _instruction_chunks(store: MemoryStore, search: _Searches, sources: Sequence[str] | None,
                        generation: str | None) -> list[Candidate]:
    """The newest chunks that may hold standing instructions, read now (with the first expressions, for a store
    behind a server) and kept with the generation they were read at (when known)."""
    chunks = [c for c, _ in search(_instruction_search(sources))]
    if generation is not None:
        _INSTRUCTION_CHUNKS.put(store, generation, chunks, _sources_key(sources))
    return chunks
