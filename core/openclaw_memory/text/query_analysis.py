"""Query analysis for keyword search: multilingual keyword extraction and safe FTS5 MATCH building.

* :func:`analyze_query` turns any user text into terms: stop words of EN/ES/PT/AR/KO/JA/ZH
  (spec §5.4) removed, CJK bigrams, Korean particles stripped. Its :attr:`QueryAnalysis.match` is
  a MATCH expression that is an ``OR`` of quoted phrases, so FTS5 syntax typed by the user
  (``"``, ``*``, ``NEAR``, ``:``, ``^``, parentheses, ``AND/OR/NOT``) is only ever searched for as text.
  Chunks containing more of the query's informative terms rank higher (BM25 sums over terms) but no
  term is required. With ``stemming``, English words are also searched by their Porter stem as a prefix.
  Exact tokens stay findable: ``memorySearch.query.hybrid`` and ``sqlite-vec`` become phrases,
  and the longest run of informative words is OR-ed in as a phrase so an exact error string
  ranks first.
* The terms are grouped by concept: the search uses
  :meth:`QueryAnalysis.match_tiers` (all concepts, then all but one, …, then any) to keep FTS5
  from ranking most of the index for frequent words, and :meth:`QueryAnalysis.coverage` to
  measure how much of the query a chunk covers and whether it contains an exact token of it.

Text in scripts written without spaces is indexed one character per token
(:func:`~openclaw_memory.text.preparation.segment_for_fts`), so such terms are searched as phrases of
their characters: Chinese and kanji runs as bigrams, Thai runs as character trigrams plus the
whole run, Korean words plus their particle-stripped stems.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from openclaw_memory.text.preparation import (
    SEGMENTED_SCRIPTS,
    nonblank_lines,
    segment_for_fts,
    stem_tokens,
    tokens_by_stem,
)

__all__ = ["MAX_TERMS", "STEM_MATCH_WEIGHT", "STOP_WORDS", "QueryAnalysis", "QueryTerm", "TermGroup", "analysed_tokens",
           "analyze_query", "match_rows"]

#: Share of a query word's coverage weight that a chunk earns with another word of the same stem only.
STEM_MATCH_WEIGHT = 0.5
#: Upper bound on the phrases OR-ed into one MATCH expression.
MAX_TERMS = 32
_MAX_PHRASE_TOKENS = 16

# ---- stop words (spec §5.4, verbatim) -----------------------------------------------------------

_EN = """a an the this that these those i me my we our you your he she it they them is are was were be
been being have has had do does did will would could should can may might in on at to for of with by from
about into through during before after above below between under over and or but if then because as while
when where what which who how why yesterday today tomorrow earlier later recently before ago just now thing
things stuff something anything everything nothing please help find show get tell give"""
_ES = """el la los las un una unos unas este esta ese esa yo me mi nosotros nosotras tu tus usted ustedes
ellos ellas de del a en con por para sobre entre y o pero si porque como es son fue fueron ser estar haber
tener hacer ayer hoy mañana antes despues después ahora recientemente que qué cómo cuando cuándo donde dónde
porqué favor ayuda"""
_PT = """o a os as um uma uns umas este esta esse essa eu me meu minha nos nós você vocês ele ela eles elas
de do da em com por para sobre entre e ou mas se porque como é são foi foram ser estar ter fazer ontem hoje
amanhã antes depois agora recentemente que quê quando onde porquê favor ajuda"""
_AR = """ال و أو لكن ثم بل أنا نحن هو هي هم هذا هذه ذلك تلك هنا هناك من إلى الى في على عن مع بين ل ب ك كان
كانت يكون تكون صار أصبح يمكن ممكن بالأمس امس اليوم غدا الآن قبل بعد مؤخرا لماذا كيف ماذا متى أين هل من فضلك
فضلا ساعد"""
_KO = """은 는 이 가 을 를 의 에 에서 로 으로 와 과 도 만 까지 부터 한테 에게 께 처럼 같이 보다 마다 밖에 대로 나
나는 내가 나를 너 우리 저 저희 그 그녀 그들 이것 저것 그것 여기 저기 거기 있다 없다 하다 되다 이다 아니다 보다 주다
오다 가다 것 거 등 수 때 곳 중 분 잘 더 또 매우 정말 아주 많이 너무 좀 그리고 하지만 그래서 그런데 그러나 또는
그러면 왜 어떻게 뭐 언제 어디 누구 무엇 어떤 어제 오늘 내일 최근 지금 아까 나중 전에 제발 부탁"""
_JA = """これ それ あれ この その あの ここ そこ あそこ する した して です ます いる ある なる できる の こと
もの ため そして しかし また でも から まで より だけ なぜ どう 何 いつ どこ 誰 どれ 昨日 今日 明日 最近 今
さっき 前 後"""
_ZH = """我 我们 你 你们 他 她 它 他们 这 那 这个 那个 这些 那些 的 了 着 过 得 地 吗 呢 吧 啊 呀 嘛 啦 是 有 在
被 把 给 让 用 到 去 来 做 说 看 找 想 要 能 会 可以 和 与 或 但 但是 因为 所以 如果 虽然 而 也 都 就 还 又 再
才 只 之前 以前 之后 以后 刚才 现在 昨天 今天 明天 最近 东西 事情 事 什么 哪个 哪些 怎么 为什么 多少 请 帮 帮忙
告诉"""

#: Not in the spec's list (this library's addition): English possessive and object pronouns. A question
#: about a person asks "what did Melanie do with her kids?"; "her" then matched every chunk that says
#: "her" instead of the chunks about Melanie's kids. ("us" stays: "US" is also a country.)
_EN_PRONOUNS = "her hers his him its their theirs"
#: Also this library's addition: the verbs with which a question about a conversation reports it, and "both".
#: "What did Maria mention on 3 June?" asks for what Maria said that day; the note holds her words, not
#: "mention", and a chunk where someone happens to say "I have to say" is not closer to it. ("discussed"
#: stays a search word: the spec's own example keeps it.)
_EN_REPORTING = "say says said mention mentions mentioned describe describes described both"

STOP_WORDS: frozenset[str] = frozenset(" ".join((_EN, _EN_PRONOUNS, _EN_REPORTING, _ES, _PT, _AR, _KO, _JA, _ZH)).split())
#: Multi-character CJK stop words, cut out of a run before its bigrams are taken.
_CJK_MULTI_STOPS = sorted(
    (w for w in (_JA + " " + _ZH).split() if len(w) >= 2 and all("\u4e00" <= ch <= "\u9fff" for ch in w)),
    key=len, reverse=True,
)
_KO_PARTICLES = sorted("에서 으로 에게 한테 처럼 같이 보다 까지 부터 마다 밖에 대로 은 는 이 가 을 를 의 에 로 와 과 도 만".split(),
                       key=len, reverse=True)

# ---- character classes --------------------------------------------------------------------------


def _category_classes(*prefixes: str) -> dict[str, str]:
    """Regex class bodies of the BMP characters whose Unicode category starts with each prefix."""
    cps: dict[str, list[int]] = {p: [] for p in prefixes}
    for cp in range(0x80, 0x10000):
        cat = unicodedata.category(chr(cp))[0]
        if cat in cps:
            cps[cat].append(cp)
    out = {}
    for p, points in cps.items():
        runs = (list(g) for _, g in itertools.groupby(enumerate(points), key=lambda x: x[1] - x[0]))
        out[p] = "".join(f"{re.escape(chr(r[0][1]))}-{re.escape(chr(r[-1][1]))}" for r in runs)
    return out


_CLASSES = _category_classes("M")
_MARKS = _CLASSES["M"]
# A token as SQLite's unicode61 sees words: letters and digits (no underscore), kept together with
# combining marks so that Thai/Indic words are not cut at their vowel signs.
_WORD = re.compile(rf"(?:[^\W_]|[{_MARKS}])+")
_PIECE_SPLIT = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u200b\u2028\u2029\u2060\ufeff]+")
_SEG = re.compile(f"[{SEGMENTED_SCRIPTS}]")
_HANGUL = "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\ua960-\ua97f"
_HIRAGANA = "\u3040-\u309f"
_KATAKANA = "\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_THAI = "\u0e00-\u0eff"
_HAN = "\u2e80-\u2fdf\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_SCRIPT_RUN = re.compile(
    rf"(?P<hangul>[{_HANGUL}]+)|(?P<hira>[{_HIRAGANA}]+)|(?P<kata>[{_KATAKANA}]+)|(?P<thai>[{_THAI}]+)"
    rf"|(?P<han>[{_HAN}]+)|(?P<other>[^{SEGMENTED_SCRIPTS}]+)"
)
_THAI_UNIT = re.compile(r".[\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ecd]*", re.S)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_STEMMABLE_WORD = re.compile(r"[a-z]{3,}")


def _fold_text(text: str) -> str:
    """``text`` segmented, lowercased and stripped of Latin diacritics (C-speed, whole text at once)."""
    t = segment_for_fts(text).lower()
    if not t.isascii():
        t = unicodedata.normalize("NFC", re.sub("[\u0300-\u036f]", "", unicodedata.normalize("NFD", t)))
    return t


_ASCII_WORD_BYTES = bytes(c if chr(c).isascii() and chr(c).isalnum() else 32 for c in range(256))


def _key(text: str) -> str:
    """Normalised token sequence of ``text`` (segmented scripts split per character)."""
    folded = _fold_text(text)
    if folded.isascii():  # the same tokens as _WORD finds, at C speed
        return " ".join(folded.encode("ascii").translate(_ASCII_WORD_BYTES).decode("ascii").split())
    return " ".join(_WORD.findall(folded))


_ASCII_LINE_BYTES = _ASCII_WORD_BYTES[:10] + b"\n" + _ASCII_WORD_BYTES[11:]


def _keys(texts: Sequence[str]) -> list[str]:
    """:func:`_key` of each of ``texts`` (lines: no "\\n"); the ASCII ones folded and split together, at C speed."""
    if not texts or any("\n" in t for t in texts):
        return [_key(t) for t in texts]
    joined = "\n".join(texts)
    if joined.isascii():  # folding ASCII text is lowercasing it
        return _ascii_keys(joined.lower())
    out = [t if t.isascii() else _key(t) for t in texts]
    ascii_at = [i for i, t in enumerate(texts) if t.isascii()]
    if ascii_at:
        for i, k in zip(ascii_at, _ascii_keys("\n".join(texts[i] for i in ascii_at).lower())):
            out[i] = k
    return out


def _ascii_keys(folded: str) -> list[str]:
    """:func:`_key` of each line of the folded ASCII text ``folded`` (lines joined by "\\n")."""
    words = folded.encode("ascii").translate(_ASCII_LINE_BYTES).decode("ascii")
    while "  " in words:  # runs of spaces to one (a few C-speed passes; a regex is ten times slower here)
        words = words.replace("  ", " ")
    return words.replace(" \n", "\n").replace("\n ", "\n").strip(" ").split("\n")


def analysed_tokens(text: str) -> list[str]:
    """The keyword index's tokens of ``text``: CJK/Thai/Korean characters split out, lowercased, Latin
    diacritics removed, split into runs of letters and digits (as FTS5's ``unicode61`` tokenizer does).
    Backends without FTS5 index these tokens so that their keyword search matches SQLite's."""
    return _key(text).split()


def _strip_particle(word: str) -> str:
    for p in _KO_PARTICLES:
        if len(word) > len(p) and word.endswith(p):
            return word[: -len(p)]
    return word


# ---- query analysis for FTS ---------------------------------------------------------------------------


@dataclass(frozen=True)
class QueryTerm:
    """One quoted phrase of the MATCH expression.

    ``text`` is what is searched (tokens separated by spaces, original case); ``key`` its
    normalised form; ``kind`` one of ``phrase`` (the whole query), ``exact`` (identifier-like),
    ``word``, ``stem`` (the Porter stem of a word, searched as a prefix), ``ngram`` (CJK/Thai piece)
    or ``recall`` (low-priority part); ``group`` indexes :attr:`QueryAnalysis.groups` (None for terms
    that only boost or widen recall).
    """

    text: str
    key: str
    kind: str
    group: int | None = None
    prefix: bool = False  # searched as an FTS5 prefix (``"paint"*``): the stem of an English word


@dataclass
class TermGroup:
    """A concept of the query: alternative normalised keys (a Korean word and its stem, …).

    ``distinctive`` groups (identifiers, tokens with digits, camelCase, dotted names) make a chunk
    that contains them an exact match; ``needle`` groups are the identifier-like subset (letters
    with digits, camelCase, names joined by ``.`` ``_`` ``/`` ``:`` ``#`` ``@``, not acronyms or
    hyphenated words), which the search treats as the point of the query when they are rare in the
    index; ``ngram`` groups only count toward coverage when some candidate contains them (most
    CJK/Thai n-grams of a sentence are not words).
    """

    keys: list[str]
    weight: float = 1.0
    distinctive: bool = False
    ngram: bool = False
    needle: bool = False


_FTS_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
_PRIORITY = {"phrase": 0, "exact": 1, "word": 2, "ngram": 2, "stem": 3, "recall": 4}


@dataclass
class QueryAnalysis:
    """The parsed query: MATCH expression, terms, coverage groups and the whole-query phrase key."""

    query: str
    terms: list[QueryTerm] = field(default_factory=list)
    groups: list[TermGroup] = field(default_factory=list)
    phrase_key: str | None = None
    tokenizer: str = "unicode61"

    fallback: bool = False  # every token was a stop word: the query is searched as typed
    stemming: bool = False  # English words also match by their Porter stem (see :func:`analyze_query`)
    #: Presence of the query's groups in each line this analysis has measured (see :meth:`_line_presence`): a
    #: search measures every candidate line once, whatever asks (the whole text, its line windows, its file).
    #: Shared by the copies :meth:`weighted_by_rarity` makes (presence does not depend on weights); kept apart
    #: by what presence depends on (the groups' keys, stemming), should a copy change those.
    _lines: dict[tuple[object, ...], dict[str, tuple[str, set[int], set[int]]]] = field(
        default_factory=dict, repr=False, compare=False)

    @property
    def stemmed(self) -> bool:
        """Whether coverage compares English words by their stems (stemmed terms or a porter index)."""
        return self.stemming or self.tokenizer == "porter"

    def fts_phrase(self, t: QueryTerm) -> str | None:
        """``t`` as one quoted FTS5 phrase (None when the tokenizer cannot search it)."""
        if self.tokenizer == "trigram":
            if len(t.text.replace(" ", "")) < 3:
                return None
            body = t.text
        else:
            body = " ".join(segment_for_fts(t.text).split())
        if not body:
            return None
        return '"' + body.replace('"', '""') + '"' + ("*" if t.prefix else "")

    @property
    def match(self) -> str | None:
        """The FTS5 MATCH expression: every term OR-ed (None when nothing is searchable)."""
        parts = [q for q in map(self.fts_phrase, self.terms) if q]
        return " OR ".join(parts) if parts else None

    @property
    def phrase_match(self) -> str | None:
        """The query's longest informative phrase as a MATCH expression (None if under 2 tokens)."""
        return next((q for t in self.terms if t.kind == "phrase" and (q := self.fts_phrase(t))), None)

    def _group_alternatives(self, include: Callable[[QueryTerm], bool] | None) -> list[str] | None:
        """One MATCH operand per group that has an included term (None if a group cannot be quoted)."""
        alts: list[str] = []
        for gi in range(len(self.groups)):
            members = [t for t in self.terms if t.group == gi]
            kept = [t for t in members if include is None or include(t)]
            if members and not kept:
                continue  # the caller left this group out
            qs = [q for t in kept if (q := self.fts_phrase(t))]
            if not qs:
                return None
            alts.append(qs[0] if len(qs) == 1 else "(" + " OR ".join(qs) + ")")
        return alts

    def match_all(self, include: Callable[[QueryTerm], bool] | None = None) -> str | None:
        """AND of every group (of the groups with an ``include``-d term): None under two groups."""
        alts = self._group_alternatives(include)
        if self.tokenizer == "trigram" or alts is None or len(alts) < 2:
            return None
        return "(" + " AND ".join(alts) + ")"

    def match_tiers(self, max_combinations: int = 10, include: Callable[[QueryTerm], bool] | None = None) -> list[str]:
        """MATCH expressions from strict to loose, without the phrase (see :attr:`phrase_match`).

        Strict tiers require all groups, then all but one, … (as long as that takes at most
        ``max_combinations`` AND-clauses); the last tier OR-s every term. A search can stop at the
        first tier that yields enough rows, so frequent words never make FTS5 rank most of the
        index. A stop-word-only query of several tokens has no tier: only its phrase is searched.
        ``include`` limits every tier to the terms it accepts (groups without one are left out).
        """
        kept = [t for t in self.terms if t.kind != "phrase" and (include is None or include(t))]
        loose = [q for t in kept if (q := self.fts_phrase(t))]
        if not loose or (self.fallback and self.phrase_match):
            return []
        full = " OR ".join(loose)
        alts = self._group_alternatives(include)
        if self.tokenizer == "trigram" or alts is None or len(alts) < 2:
            return [full]
        tiers: list[str] = []
        n = len(alts)
        for k in range(n, 1, -1):
            if math.comb(n, k) > max_combinations:
                break
            tiers.append(" OR ".join("(" + " AND ".join(c) + ")" for c in itertools.combinations(alts, k)))
        return [*tiers, full]

    def coverage(self, texts: Sequence[str]) -> list[tuple[float, bool]]:
        """For each text: (weighted share of the query's groups it contains, exact match?).

        N-gram groups that no text contains are left out of the denominator. A text is an exact
        match when it contains a distinctive group, the whole query phrase, or every group while
        those groups carry at least half of the query's weight.
        """
        return [(cov, exact) for cov, exact, _ in self.coverage_detail(texts)]

    def coverage_detail(self, texts: Sequence[str]) -> list[tuple[float, bool, set[int]]]:
        """As :meth:`coverage`, plus the indexes (into :attr:`groups`) of the groups each text contains.

        When :attr:`stemmed`, a group also counts for coverage when the text holds a word of the same
        stem ("painting" covers "paints"), with :data:`STEM_MATCH_WEIGHT` of its weight, and exactness
        (the whole phrase, every group) still needs the words as written: a stemmed match widens recall,
        ranks under the word as written and never triggers the exact-match rescue.
        """
        lines, surface, present = self._text_presence(texts)
        phrase = f" {self.phrase_key} " if self.phrase_key else None
        considered, total = self._considered(present)
        raw_total = sum(g.weight for g in self.groups) or 1.0
        out: list[tuple[float, bool, set[int]]] = []
        for line, have, exact_have in zip(lines, present, surface):
            cov = self._share(considered, total, have, exact_have)
            got_exact = sum(self.groups[i].weight for i in considered if i in exact_have)
            exact = any(self.groups[i].distinctive for i in exact_have)
            exact = exact or (phrase is not None and phrase in line)
            exact = exact or (bool(exact_have) and total > 0 and got_exact >= total - 1e-9
                              and got_exact / raw_total >= 0.5)
            out.append((cov, exact, have))
        return out

    def _presence(self, texts: Sequence[str]) -> tuple[list[str], list[set[int]], list[set[int]]]:
        """Per text: its padded token sequence, the groups it contains as written, and those it contains
        as written or (when :attr:`stemmed`) by stem."""
        # Keys are token sequences joined by spaces: a key occurs in a text exactly when " key " occurs
        # in the text's own token sequence, padded the same way (no per-query regex to compile).
        owner = {k: i for i, g in enumerate(self.groups) for k in g.keys}
        keys = _keys(texts)
        lines = [f" {k} " for k in keys]
        every = "\n".join(lines)  # keys and words no text holds are not looked for text by text
        padded = [(f" {k} ", i) for k, i in owner.items() if f" {k} " in every]
        surface = [{i for k, i in padded if k in line} for line in lines]
        if not self.stemmed:
            return lines, surface, surface
        stem_owner = {stem_tokens(k): i for k, i in owner.items()}
        if any(" " in k for k in stem_owner):
            stem_lines = [f" {stem_tokens(k)} " for k in keys]
            present = [s | {i for k, i in stem_owner.items() if f" {k} " in line}
                       for s, line in zip(surface, stem_lines)]
            return lines, surface, present
        # one-word keys: a text holds a key's stem when it holds a word of that stem (each word stemmed once)
        words = tokens_by_stem(keys, stem_owner)
        alts = [(i, [w for w in (f" {w} " for w in words[k]) if w in every]) for k, i in stem_owner.items()]
        alts = [(i, ws) for i, ws in alts if ws]
        present = [s | {i for i, ws in alts if i not in s and any(w in line for w in ws)}
                   for s, line in zip(surface, lines)]
        return lines, surface, present

    def measure(self, texts: Sequence[str]) -> None:
        """Measure the lines of ``texts`` now; any coverage of them by this analysis (or a copy of it) later
        reads the answer. A hybrid search measures its vector candidates while the keyword side runs."""
        self._line_presence([ln for t in texts for ln in nonblank_lines(t)])

    def _line_presence(self, lines: Sequence[str]) -> tuple[list[str], list[set[int]], list[set[int]]]:
        """:meth:`_presence` of each line, each distinct line measured once per analysis (the lines of a
        search's candidates are asked for several times: whole texts, line windows, files)."""
        memo = self._lines.setdefault((self.stemmed, *(tuple(g.keys) for g in self.groups)), {})
        missing = [ln for ln in dict.fromkeys(lines) if ln not in memo]
        if missing:
            for ln, *got in zip(missing, *self._presence(missing)):
                memo[ln] = tuple(got)  # type: ignore[assignment]
        found = [memo[ln] for ln in lines]
        return [f[0] for f in found], [f[1] for f in found], [f[2] for f in found]

    def _text_presence(self, texts: Sequence[str]) -> tuple[list[str], list[set[int]], list[set[int]]]:
        """:meth:`_presence` of whole texts, derived from their lines: a text's token sequence is its lines'
        token sequences joined (tokens never span a line break), so it holds a one-token key exactly when
        one of its lines does; a key of several tokens is also looked for in the joined sequence, where
        it may span a line break. The same answer as measuring the texts themselves."""
        per_text = [nonblank_lines(t) for t in texts]
        padded, surface, present = self._line_presence([ln for ls in per_text for ln in ls])
        owner = {k: i for i, g in enumerate(self.groups) for k in g.keys}
        spanning = [(k, i) for k, i in owner.items() if " " in k]
        stem_spanning: list[tuple[str, int]] = []
        if self.stemmed:
            stem_owner = {stem_tokens(k): i for k, i in owner.items()}
            stem_spanning = [(k, i) for k, i in stem_owner.items() if " " in k]
        keys: list[str] = []
        surf_out: list[set[int]] = []
        pres_out: list[set[int]] = []
        pos = 0
        for ls in per_text:
            if len(ls) == 1:  # one line: its own padded sequence and groups
                keys.append(padded[pos])
                surf_out.append(set(surface[pos]))
                pres_out.append(surf_out[-1] if not self.stemmed else surf_out[-1] | present[pos])
                pos += 1
                continue
            span = range(pos, pos + len(ls))
            pos += len(ls)
            key = " ".join(k for j in span if (k := padded[j][1:-1]))
            line = f" {key} "
            surf = set().union(*(surface[j] for j in span))
            if spanning and len(ls) > 1:
                surf.update(i for k, i in spanning if i not in surf and f" {k} " in line)
            if not self.stemmed:
                pres = surf
            else:
                pres = surf.union(*(present[j] for j in span))
                if stem_spanning and len(ls) > 1:
                    stemmed = f" {stem_tokens(key)} "
                    pres.update(i for k, i in stem_spanning if i not in pres and f" {k} " in stemmed)
            keys.append(line)
            surf_out.append(surf)
            pres_out.append(pres)
        return keys, surf_out, pres_out

    def _considered(self, present: Sequence[set[int]]) -> tuple[list[int], float]:
        """The groups coverage is measured against (n-gram groups only when some text has them), and their
        total weight."""
        seen = set().union(*present) if present else set()
        considered = [i for i, g in enumerate(self.groups) if not g.ngram or i in seen]
        return considered, sum(self.groups[i].weight for i in considered)

    def _share(self, considered: Sequence[int], total: float, have: set[int], exact_have: set[int]) -> float:
        got = sum(self.groups[i].weight * (1.0 if i in exact_have else STEM_MATCH_WEIGHT)
                  for i in considered if i in have)
        return got / total if total > 0 else 0.0

    def window_coverage(self, texts: Sequence[str], lines: int,
                        context: Sequence[str | None] | None = None) -> list[float]:
        """For each text, the best :meth:`coverage` of a run of ``lines`` consecutive non-blank lines of it
        (of the whole text when it has fewer): a chunk whose matching words stand together on neighbouring
        lines (one turn of a conversation, one bullet) beats one where they are scattered over the chunk.
        A key of several words counts in a run only when one of its lines holds it whole. ``context[i]``
        (optional) is text that belongs to every run of ``texts[i]`` (a dated note's date)."""
        size = max(1, lines)
        per_text = [nonblank_lines(t) for t in texts]
        flat = [ln for ls in per_text for ln in ls]
        _, surface, present = self._line_presence(flat)
        no_groups: set[int] = set()
        ctx_surface, ctx_present = [no_groups] * len(texts), [no_groups] * len(texts)
        distinct = list(dict.fromkeys(c for c in context or () if c))
        if distinct:
            _, cs, cp = self._line_presence(distinct)
            found = {c: (s, p) for c, s, p in zip(distinct, cs, cp)}
            ctx_surface = [found[c][0] if c else no_groups for c in context]  # type: ignore[union-attr]
            ctx_present = [found[c][1] if c else no_groups for c in context]  # type: ignore[union-attr]
        considered, total = self._considered([*present, *ctx_present])
        out: list[float] = []
        pos = 0
        for ls, c_surface, c_present in zip(per_text, ctx_surface, ctx_present):
            n = len(ls)
            best = 0.0
            for start in range(max(1, n - size + 1)):
                span = range(pos + start, pos + min(n, start + size))
                have = set().union(*(present[j] for j in span))
                exact = set().union(*(surface[j] for j in span))
                if n:
                    have, exact = have | c_present, exact | c_surface
                best = max(best, self._share(considered, total, have, exact))
            out.append(best)
            pos += n
        return out

    def weighted_by_rarity(self, matches: Sequence[int], total: int) -> QueryAnalysis:
        """A copy whose group weights are multiplied by their inverse document frequency
        ``ln(1 + (total - n + 0.5) / (n + 0.5))`` (BM25's), where ``matches[i]`` is how many of the index's
        ``total`` chunks group ``i`` matches: a word found in most chunks (the speakers' names of a
        conversation) then earns little coverage, a rare one much. A group no chunk matches (a typo, a word
        the notes never use) tells no chunk from another: it weighs the mean of the others, as every word
        weighed the same without rarity weights."""
        total = max(total, 1)
        idf = [math.log(1 + (total - min(n, total) + 0.5) / (min(n, total) + 0.5)) if n > 0 else None for n in matches]
        known = [w for w in idf if w is not None]
        mean = sum(known) / len(known) if known else 1.0
        groups = [replace(g, keys=list(g.keys), weight=g.weight * (mean if w is None else w))
                  for g, w in zip(self.groups, idf)]
        return replace(self, groups=groups)


def _opaque(ch: str) -> bool:
    """Not a word character here, yet not plain punctuation/space: a symbol, format or unassigned char."""
    if ch.isascii() or _WORD.match(ch):
        return False
    return unicodedata.category(ch) not in ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Zs", "Zl", "Zp", "Cs", "Cc")


def _identifier(token: str) -> bool:
    """Letters with digits, or camelCase: an ID, hash, version or code symbol (not an acronym)."""
    if any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token):
        return True
    return any(a.islower() and b.isupper() for a, b in zip(token, token[1:]))


_NEEDLE_CONNECTORS = frozenset("._/:#@\\")


def _distinctive(token: str) -> bool:
    has_digit = any(ch.isdigit() for ch in token)
    has_alpha = any(ch.isalpha() for ch in token)
    if has_digit and has_alpha:
        return True
    if any(a.islower() and b.isupper() for a, b in zip(token, token[1:])):
        return True  # camelCase
    return token.isupper() and len(token) >= 3 and token.isascii() and token not in _FTS_OPERATORS


class _Builder:
    def __init__(self, *, stemming: bool = False) -> None:
        self.terms: list[tuple[int, int, QueryTerm]] = []
        self.groups: list[TermGroup] = []
        self.keys: set[str] = set()
        self.order = 0
        self.stemming = stemming

    def add(self, text: str, kind: str, group: int | None = None, *, prefix: bool = False) -> bool:
        key = _key(text)
        if prefix:
            key = "stem:" + key  # a prefix term is not a key a text contains (coverage compares stems)
        if not key or key in self.keys:
            return False
        self.keys.add(key)
        if group is not None and not prefix:
            self.groups[group].keys.append(key)
        self.terms.append((_PRIORITY[kind], self.order, QueryTerm(text, key, kind, group, prefix)))
        self.order += 1
        return True

    def word(self, tok: str) -> None:
        """An ordinary word as its own concept; with stemming, its Porter stem is OR-ed in as a prefix
        ("paintings" → ``"paintings" OR "paint"*``), and a stem ending in ``i`` adds its ``y`` form
        ("studies" → ``"studies" OR "studi"* OR "study"``). Coverage then keeps only chunks with a same-stem word."""
        g = self.group()
        if not self.add(tok, "word", g):
            self.groups.pop()
            return
        low = tok.lower()
        if not (self.stemming and _STEMMABLE_WORD.fullmatch(low)):
            return
        stem = stem_tokens(low)
        # the stem as written in the word ("deploy" stems to "deploi": search "deplo"*)
        prefix = os.path.commonprefix([stem, low])
        if len(prefix) >= 3:
            self.add(prefix, "stem", g, prefix=True)
        if stem.endswith("i") and len(stem) >= 4 and low.startswith(stem) and low[len(stem):] not in ("", "e"):
            self.add(stem[:-1] + "y", "stem", g)  # "studies", "happiness": also "study", "happy"

    def group(self, *, weight: float = 1.0, distinctive: bool = False, ngram: bool = False) -> int:
        self.groups.append(TermGroup([], weight, distinctive, ngram))
        return len(self.groups) - 1

    def concept(self, text: str, kind: str, *, weight: float = 1.0, distinctive: bool = False,
                ngram: bool = False, needle: bool = False) -> None:
        """Add ``text`` as a term with its own coverage group."""
        g = self.group(weight=weight, distinctive=distinctive, ngram=ngram)
        self.groups[g].needle = needle
        if not self.add(text, kind, g):
            self.groups.pop()


def _is_stop(token: str) -> bool:
    return token.lower() in STOP_WORDS


def _han_terms(b: _Builder, run: str) -> None:
    """Chinese / kanji run: multi-char stop words cut out, then bigrams (+ unigrams for recall)."""
    parts = [run]
    for stop in _CJK_MULTI_STOPS:
        parts = [p for part in parts for p in part.split(stop)]
    parts = [p for p in parts if p]
    if len(parts) > 1 or len(run) >= 3:
        b.add(run, "recall")  # the run itself, as a phrase
    for part in parts:
        if len(part) == 1:
            if not _is_stop(part):
                b.concept(part, "word")
            continue
        for i in range(len(part) - 1):
            bigram = part[i : i + 2]
            if not _is_stop(bigram):
                b.concept(bigram, "ngram", ngram=len(part) > 2)
        if len(part) >= 3:
            b.add(part, "recall")
        for ch in part:
            if not _is_stop(ch):
                b.add(ch, "recall")


def _thai_terms(b: _Builder, run: str) -> None:
    units = _THAI_UNIT.findall(run)
    if len(units) <= 4:
        b.concept(run, "word")
        return
    b.add(run, "exact")  # whole run as a phrase: ranks exact occurrences first
    for i in range(len(units) - 2):
        b.concept("".join(units[i : i + 3]), "ngram", ngram=True)


def _hangul_terms(b: _Builder, word: str) -> None:
    stem = _strip_particle(word)
    if _is_stop(word) or _is_stop(stem):
        return
    g = b.group()
    b.add(word, "word", g)
    if stem != word and len(stem) >= 2:
        b.add(stem, "word", g)
    if len(stem) >= 3:
        b.add(stem[:2], "recall", g)  # verbs/adjectives: 배포했다 → 배포
    if not b.groups[g].keys:
        b.groups.pop()


def _run_terms(b: _Builder, run: str) -> None:
    for m in _SCRIPT_RUN.finditer(run):
        text, script = m.group(0), m.lastgroup
        if script == "other":
            for tok in _WORD.findall(text):
                if _is_stop(tok) or (len(tok) == 1 and not tok.isdigit()) or (tok.isdigit() and len(tok) < 2):
                    continue
                if _distinctive(tok):
                    b.concept(tok, "exact", weight=2.0, distinctive=True, needle=_identifier(tok))
                else:
                    b.word(tok)
        elif script == "hangul":
            _hangul_terms(b, text)
        elif script == "thai":
            _thai_terms(b, text)
        elif script == "kata":
            if not _is_stop(text):
                b.concept(text, "word")
        elif script == "hira":
            if len(text) >= 2 and not _is_stop(text):
                b.concept(text, "recall", weight=0.5)
        else:
            _han_terms(b, text)


def _longest_informative_run(tokens: Sequence[str]) -> list[str]:
    """The longest run of consecutive non-stop tokens: the FTS phrase (a phrase containing "the"
    would make FTS5 walk that word's whole posting list)."""
    best: list[str] = []
    cur: list[str] = []
    for tok in [*tokens, ""]:
        if tok and not _is_stop(tok) and (len(tok) > 1 or tok.isdigit()):
            cur.append(tok)
        else:
            best, cur = (cur if len(cur) > len(best) else best), []
    return best


def analyze_query(query: str, *, tokenizer: str = "unicode61", max_terms: int = MAX_TERMS,
                  stemming: bool = False) -> QueryAnalysis:
    """Parse ``query`` into searchable terms (see the module docstring). Never raises.

    ``stemming`` (``unicode61`` index only; a ``porter`` index stems by itself) also searches each
    English word by its Porter stem as a prefix, so "paintings" finds "painted"; a chunk with the word
    as written matches both terms and ranks above one with only a same-stem word.
    """
    stemming = stemming and tokenizer == "unicode61"
    b = _Builder(stemming=stemming)
    query = _LONE_SURROGATE.sub(" ", query or "")  # not encodable: SQLite would reject the whole query
    pieces = [p for p in _PIECE_SPLIT.split(query) if p]
    all_tokens: list[str] = []
    for piece in pieces:
        runs = _WORD.findall(piece)
        if tokenizer != "trigram" and any(_opaque(ch) for ch in piece):
            # symbols/format/unassigned characters that SQLite's older Unicode tables may treat as
            # letters: also search the piece verbatim, tokenised by FTS5 exactly like the index
            if "raw:" + piece not in b.keys:
                b.keys.add("raw:" + piece)
                b.terms.append((_PRIORITY["recall"], b.order, QueryTerm(piece, "raw:" + piece, "recall", None)))
                b.order += 1
        if not runs:
            continue
        all_tokens.extend(runs)
        seps = _WORD.split(piece)[1:-1]
        joined_by_connectors = len(runs) >= 2 and not any(set(s) <= {"'", "\u2019"} for s in seps)
        meaningful = [r for r in runs if not _is_stop(r) and len(r) > 1]
        if joined_by_connectors and meaningful and not _SEG.search(piece):
            # dotted/hyphenated identifiers, paths, versions, IPs: one exact phrase, parts for recall
            text = piece if tokenizer == "trigram" else " ".join(runs)
            needle = any(_identifier(r) for r in runs) or any(ch in _NEEDLE_CONNECTORS for sep in seps for ch in sep)
            b.concept(text, "exact", weight=2.0, distinctive=True, needle=needle)
            for r in meaningful:
                b.add(r, "recall")
            continue
        for r in runs:
            _run_terms(b, r)
    fallback = bool(all_tokens) and all(t.key.startswith("raw:") for _, _, t in b.terms)
    if fallback:  # only stop words / single letters: search them all
        for tok in all_tokens:
            b.concept(tok, "word")
    phrase_key = None
    if 2 <= len(all_tokens) <= _MAX_PHRASE_TOKENS:
        phrase_key = _key(" ".join(all_tokens))  # exactness is judged on the whole query
        best = list(all_tokens) if fallback else _longest_informative_run(all_tokens)
        phrase_text = " ".join(best)
        if tokenizer == "trigram":
            best = all_tokens if len(best) == len(all_tokens) else []
            phrase_text = " ".join(_PIECE_SPLIT.split(query.strip()))
        key = _key(" ".join(best)) if len(best) >= 2 else ""
        if key and key not in b.keys:
            b.keys.add(key)
            b.terms.append((_PRIORITY["phrase"], -1, QueryTerm(phrase_text, key, "phrase", None)))
    chosen = [t for _, _, t in sorted(b.terms, key=lambda x: (x[0], x[1]))[:max_terms]]
    # keep only groups that still have a term in the MATCH (bounds the coverage work)
    used = sorted({t.group for t in chosen if t.group is not None})
    remap = {old: new for new, old in enumerate(used)}
    groups = [b.groups[i] for i in used]
    kept_keys = {t.key for t in chosen}
    for g in groups:
        g.keys = [k for k in g.keys if k in kept_keys]
    terms = [QueryTerm(t.text, t.key, t.kind, remap.get(t.group) if t.group is not None else None, t.prefix)
             for t in chosen]
    return QueryAnalysis(query=query, terms=terms, groups=groups, phrase_key=phrase_key, tokenizer=tokenizer,
                         fallback=fallback, stemming=stemming)




_MATCH_TOKEN = re.compile(r'\s*(?:(")((?:[^"]|"")*)"(\*?)|(\()|(\))|(AND|OR)(?![^\s()"]))')


def match_rows(match: str, rows_of: Callable[[str], frozenset[object] | None], *,
               within: bool = False) -> frozenset[object] | None:
    """The chunks a MATCH expression of quoted phrases joined by ``AND`` / ``OR`` and parentheses (as this module
    builds them) selects, from ``rows_of(phrase)``, each phrase's chunks (a phrase written as in ``match``,
    with its quotes and any ``*``). FTS5 evaluates such an expression as set operations on its phrases' rows
    (``AND`` binding tighter than ``OR``), so this is exactly its answer. None when a phrase's rows are unknown
    or the expression has anything else (``NOT``, ``NEAR``, column filters, implicit AND). ``within``: chunks
    the expression's matches are all among instead (an ``AND`` with an operand whose rows are unknown is within
    its other operands' rows), None when nothing bounds them."""
    tokens: list[str] = []
    pos = 0
    while pos < len(match):
        m = _MATCH_TOKEN.match(match, pos)
        if m is None or m.end() == pos:
            if match[pos:].strip():
                return None
            break
        tokens.append(m.group(0).strip())
        pos = m.end()
    at = 0

    def operand() -> frozenset[object] | None:
        nonlocal at
        if at >= len(tokens):
            raise ValueError
        tok = tokens[at]
        at += 1
        if tok == "(":
            got = disjunction()
            if at >= len(tokens) or tokens[at] != ")":
                raise ValueError
            at += 1
            return got
        if not tok.startswith('"'):
            raise ValueError
        return rows_of(tok)

    def conjunction() -> frozenset[object] | None:
        nonlocal at
        got = operand()
        while at < len(tokens) and tokens[at] == "AND":
            at += 1
            other = operand()
            if within:
                got = other if got is None else got if other is None else got & other
            else:
                got = None if got is None or other is None else got & other
        return got

    def disjunction() -> frozenset[object] | None:
        nonlocal at
        got = conjunction()
        while at < len(tokens) and tokens[at] == "OR":
            at += 1
            other = conjunction()
            got = None if got is None or other is None else got | other
        return got

    try:
        out = disjunction()
    except ValueError:
        return None
    return out if at == len(tokens) else None
