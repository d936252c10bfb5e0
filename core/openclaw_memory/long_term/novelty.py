"""Whether a new memory repeats, corrects or differs from a similar stored one.

Embedding similarity alone cannot tell "the room is 4.12" from "the room is 3.07": the vectors of
a fact and its correction are nearly identical. These rules look at the words instead:

* a **repeat** adds nothing: every content word of the new text is in the old one, with the same
  values (numbers, identifiers, addresses) said of the same things (each value's clause in the new text
  has its words in a clause of the old text holding that value) and the same negation;
* an **update** states the same subject with a new value: the words before the verb agree and the
  new text changes a value or a negation, or says so (``now``, ``new``, ``actually``, ...);
* anything else is a **different** memory, kept next to the old one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Relation", "relation"]

Relation = Literal["repeat", "update", "different"]

#: Where a clause ends: a comma, semicolon or sentence end before a space, or a conjunction ("and", "but", ...).
_CLAUSE_END = re.compile(r"[,;.!?](?=\s)|\s(?:and|but|while|whereas)\s", re.IGNORECASE)
_TOKEN = re.compile(r"[+]?[\w@.'’:-]*\w|[=:]", re.UNICODE)
_NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "without", "cannot",
                        "n't", "nicht", "kein", "ne", "nie", "nikdy"})
#: the word a contraction with "n't" negates, where it is not the contraction without "n't" ("won't" is "will")
_CONTRACTED = {"wo": "will", "ca": "can", "sha": "shall"}
#: Words that announce a change and are not part of the fact itself ...
_CUES = frozenset({"now", "new", "newly", "actually", "changed", "change", "updated", "update", "correction",
                   "corrected", "instead", "anymore", "longer", "current", "currently", "moved"})
#: ... and words that only ask to remember.
_FILLERS = frozenset({"remember", "please", "note", "that"})
_VERBS = frozenset({"is", "are", "was", "were", "am", "be", "been", "=", ":", "has", "have", "had",
                    "costs", "cost", "starts", "start", "ends", "lives", "live", "works", "work", "uses", "use",
                    "prefer", "prefers", "like", "likes", "love", "loves", "hate", "hates", "want", "wants",
                    "need", "needs", "means", "equals", "je", "jsou"})
_STOP = frozenset({"a", "an", "the", "i", "my", "me", "we", "our", "us", "you", "your", "he", "she", "it", "its",
                   "they", "their", "his", "her", "of", "in", "on", "at", "for", "by", "with", "and", "or", "as",
                   "this", "these", "those", "do", "does", "did", "will", "shall", "would", "should", "can",
                   "could", "so", "very", "really", "also", "just", "all", "every", "some", "any", "user", "user's",
                   "s", "'s", "’s"})


#: Numbers written as words, read as their digits ("two cats" and "2 cats" say the same; "three cats" corrects
#: them). "one" is left out: it is as often a pronoun ("this one").
_NUMBER_WORDS = {word: str(value) for value, word in enumerate(
    "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty".split()) if word != "_"}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
                      "ninety": "90", "hundred": "100", "thousand": "1000", "million": "1000000"})


@dataclass(frozen=True)
class _Parsed:
    subject: frozenset[str]
    words: frozenset[str]
    values: frozenset[str]
    negated: bool
    cues: frozenset[str]
    has_verb: bool


def _is_value(raw: str) -> bool:
    """Numbers, dates, identifiers, e-mail addresses, codes: a token whose exact form matters."""
    if any(c.isdigit() for c in raw) or "@" in raw:
        return True
    if raw == "I" or not raw.isascii():
        return False
    return (raw.isupper() and len(raw) <= 6) or any(c.isupper() for c in raw[1:])


def _norm(raw: str) -> str:
    word = raw.lower().strip(".:'’-")
    if word.endswith("n't") or word.endswith("n’t"):
        return "n't"
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _parse(text: str) -> _Parsed:
    subject: set[str] = set()
    words: set[str] = set()
    values: set[str] = set()
    cues: set[str] = set()
    negated = has_verb = False
    for raw in _TOKEN.findall(text):
        raw = raw.rstrip(".")
        raw = _NUMBER_WORDS.get(raw.lower(), raw)
        if _is_value(raw):
            values.add(raw.lower())
            if not has_verb:
                subject.add(raw.lower())
            continue
        word = _norm(raw)
        if word == "n't":
            negated, word = True, raw.lower()[:-3]  # "don't" -> "do", "isn't" -> "is"
            word = _CONTRACTED.get(word, word)  # "won't" -> "will"
        elif word in _NEGATIONS:
            negated = True
            continue
        if word in _CUES:
            cues.add(word)
            continue
        if word in _FILLERS:
            continue
        if not has_verb and (word in _VERBS or raw.lower() in _VERBS):
            has_verb = True
            words.add(word)
            continue
        if word and word not in _STOP:
            words.add(word)
            if not has_verb:
                subject.add(word)
    return _Parsed(frozenset(subject), frozenset(words), frozenset(values), negated, frozenset(cues), has_verb)


def _values_said_alike(new: str, old: str) -> bool:
    """Whether each value of ``new`` is said of the same things in ``old``: the words of its clause in ``new`` are
    all in one clause of ``old`` holding the value ("the alarm code is 1234" is not said by "the door code is 1234
    and the alarm code is 5678")."""
    old_clauses = [_parse(clause) for clause in _CLAUSE_END.split(old)]
    for clause in map(_parse, _CLAUSE_END.split(new)):
        for value in clause.values:
            if not any(value in other.values and clause.words <= other.words for other in old_clauses):
                return False
    return True


def relation(new: str, old: str) -> Relation:
    """How ``new`` relates to the similar stored memory ``old``: repeat, update or different."""
    n, o = _parse(new), _parse(old)
    if n.negated == o.negated and n.values <= o.values and n.words <= o.words and n.cues <= o.cues \
            and _values_said_alike(new, old):
        return "repeat"
    if n.words == o.words and n.values == o.values:
        return "update"  # the same statement, negated or no longer negated
    if not (n.has_verb and o.has_verb) or n.subject != o.subject:
        return "different"
    if n.values != o.values or n.negated != o.negated or n.cues - o.cues:
        return "update"  # the subject's value changed (a room, a date, a limit), or the text says so
    return "different"
