"""Text preparation shared by indexing and querying for the FTS5 keyword index.

SQLite's ``unicode61`` tokenizer cannot split Chinese, Japanese, Thai (no spaces) and keeps
Korean particles glued to their nouns. Before indexing, every character of those scripts is
surrounded by spaces, so each becomes its own token; a query term in those scripts is then
searched as a phrase of its characters (``"咖 啡"``), which matches the word anywhere,
including 1–2 character words that a trigram index cannot find.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from openclaw_memory.text.chunker import indexed_text, is_record_marker

__all__ = ["CODE_FENCE", "FTS_PORTER_TOKENIZER", "FTS_TOKENIZER", "FTS_TOKENIZER_ID", "SEGMENTED_SCRIPTS",
           "has_segmented_script", "lines_outside_code", "nonblank_lines", "segment_for_fts", "stem_tokens", "tokens_by_stem"]


#: A line that opens or closes a fenced code block.
CODE_FENCE = re.compile(r"^[ \t]*(```|~~~)")


def lines_outside_code(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """``(index, line)`` of each of ``lines`` outside fenced code blocks (the fence lines left out too)."""
    fenced = False
    for index, line in enumerate(lines):
        if CODE_FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield index, line


def nonblank_lines(text: str) -> list[str]:
    """The lines of ``text`` that hold more than whitespace, in order: the lines that coverage, line windows
    and line units are measured over: those of :func:`openclaw_memory.text.chunker.indexed_text`, so a record's
    marker lines are not among them but the text its marker asks to index in their place is."""
    if "openclaw-memory:" not in text:
        return [ln for ln in text.splitlines() if ln.strip()]
    return [ln for ln in indexed_text(text).splitlines() if ln.strip() and not is_record_marker(ln)]

#: The FTS5 tokenizer of the ``unicode61`` keyword index.
FTS_TOKENIZER = "unicode61 remove_diacritics 2"
#: The ``porter`` keyword index: English words are indexed and searched by their Porter stem
#: ("painting", "paints" → "paint"); other tokens (IDs with digits, CJK/Thai/Korean characters, which
#: :func:`segment_for_fts` splits out) pass through unchanged.
FTS_PORTER_TOKENIZER = "porter " + FTS_TOKENIZER
# Bump the suffix whenever segment_for_fts or what is indexed changes: it is part of the index fingerprint,
# so an index built the old way (or with the other tokenizer) is rebuilt by the next sync.
# seg2: a record's marker lines are left out of the keyword index (chunker.indexed_text).
FTS_TOKENIZER_ID = "unicode61+seg2"

SEGMENTED_SCRIPTS = (
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2fdf"  # CJK radicals
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3100-\u312f"  # Bopomofo
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana extensions
    "\u3400-\u4dbf"  # CJK ext A
    "\u4e00-\u9fff"  # CJK unified
    "\ua960-\ua97f"  # Hangul Jamo ext A
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0002fa1f"  # CJK ext B+
)
# A base character of those scripts plus any combining marks that follow it (Thai vowels/tones).
_UNIT = re.compile(f"[{SEGMENTED_SCRIPTS}][\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ecd]*")
_ANY = re.compile(f"[{SEGMENTED_SCRIPTS}]")


def has_segmented_script(text: str) -> bool:
    """True when ``text`` contains a character that ``segment_for_fts`` splits out."""
    return not text.isascii() and _ANY.search(text) is not None


def segment_for_fts(text: str) -> str:
    """Surround each CJK/kana/Hangul/Thai character (with its combining marks) by spaces."""
    if not has_segmented_script(text):
        return text
    return _UNIT.sub(lambda m: f" {m.group(0)} ", text)


_STEMMABLE = re.compile(r"[a-z]{3,}")
_STEM_CACHE_MAX = 200_000
#: word -> its stem, and stem -> the words of ``_stem_cache`` with that stem. A word enters ``_stem_words``
#: before ``_stem_cache`` (see :func:`_remember`), so a word found in the cache is always in its stem's set,
#: whatever another thread is adding.
_stem_cache: dict[str, str] = {}
_stem_words: dict[str, set[str]] = {}


def _stems_of(words: Iterable[str]) -> dict[str, str]:
    """The stems of ``words`` (one call into the stemmer); tokens that are not stemmable map to themselves."""
    out = {w: w for w in words}
    stemmable = [w for w in out if _STEMMABLE.fullmatch(w)]
    if stemmable and _STEMMER is not None:
        out.update(zip(stemmable, _STEMMER.stemWords(stemmable)))
    return out


def _remember(stems: dict[str, str]) -> bool:
    """Add ``stems`` to the caches while they have room; False when they were full."""
    if len(_stem_cache) >= _STEM_CACHE_MAX:
        return False
    for word, stem in stems.items():
        _stem_words.setdefault(stem, set()).add(word)
    _stem_cache.update(stems)
    return True


def _stem(word: str) -> str:
    """Porter stem of an all-letter ASCII word (of at least 3 letters); any other token unchanged."""
    out = _stem_cache.get(word)
    if out is None:
        stems = _stems_of((word,))
        _remember(stems)
        out = stems[word]
    return out


@functools.lru_cache(maxsize=4096)
def stem_tokens(key: str) -> str:
    """``key`` (lowercase tokens joined by spaces) with each all-letter ASCII token replaced by its
    Porter stem, as FTS5's ``porter`` tokenizer does; other tokens are left as they are. Results are
    cached (per key, and per word): the same chunks and words come back across searches."""
    tokens = key.split(" ")
    out = list(map(_stem_cache.get, tokens))
    if None in out:  # words not seen yet: stemmed together
        stems = _stems_of(t for t, o in zip(tokens, out) if o is None)
        _remember(stems)
        out = [o if o is not None else stems[t] for t, o in zip(tokens, out)]
    return " ".join(out)  # type: ignore[arg-type]


#: How many trailing characters of a Porter stem may differ from the word it stems: the algorithm only rewrites
#: suffixes, and the rewrites add at most two characters the word does not have at that place ("-biliti" →
#: "-ble"; "-y" → "-i", "-ing" → "-e" one). So a word whose stem is ``s`` starts with ``s[:-STEM_TAIL]``.
STEM_TAIL = 2


@functools.lru_cache(maxsize=1024)
def _token_pattern(head: str) -> re.Pattern[str]:
    return re.compile(f" ({re.escape(head)}[^ ]*)(?= )")


def _tokens_starting(text: str, head: str) -> set[str]:
    """The tokens of ``text`` (tokens separated by single spaces, a space at both ends) starting with ``head``."""
    if len(head) <= 2:  # a short head starts many tokens: one regex scan (few such heads, each compiled once)
        return set(_token_pattern(head).findall(text))
    # a longer one few: each piece after a " head" holds the rest of that token up to its first space
    return {head + (rest[:end] if (end := rest.find(" ")) >= 0 else rest) for rest in text.split(" " + head)[1:]}


def tokens_by_stem(keys: Sequence[str], stems: Iterable[str]) -> dict[str, frozenset[str]]:
    """For each of ``stems`` (one token each), the tokens of ``keys`` (lowercase tokens joined by spaces)
    whose :func:`stem_tokens` it is: ``f" {stem} "`` occurs in ``f" {stem_tokens(key)} "`` exactly when
    ``f" {word} "`` occurs in ``f" {key} "`` for one of those words. Only the tokens that can have the stem
    (those starting with all but its last :data:`STEM_TAIL` characters) are stemmed, each once per process."""
    stems = list(stems)
    text = " " + " ".join(keys) + " "
    heads = {stem: stem[:len(stem) - STEM_TAIL] for stem in stems}
    if not all(heads.values()):  # a stem too short to narrow the words down: every token of the keys
        distinct = set(text.split())
        candidates = {stem: distinct for stem in stems}
    else:
        candidates = {stem: _tokens_starting(text, head) for stem, head in heads.items()}
    every = set().union(*candidates.values())
    fresh = _stems_of(every.difference(_stem_cache))
    kept = _remember(fresh) if fresh else True
    out: dict[str, frozenset[str]] = {}
    for stem in stems:
        words = candidates[stem].intersection(_stem_words.get(stem, ()))
        if not kept:  # the caches are full: the new words are only in ``fresh``
            words.update(w for w in candidates[stem] if fresh.get(w) == stem)
        out[stem] = frozenset(words)
    return out


def _load_stemmer() -> Any:
    try:
        import snowballstemmer
    except ImportError:  # coverage then compares unstemmed words; FTS5 still stems
        return None
    return snowballstemmer.stemmer("porter")


_STEMMER = _load_stemmer()
