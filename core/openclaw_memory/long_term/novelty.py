"""Whether a new memory repeats, corrects or differs from a similar stored one.

Embedding similarity alone cannot tell "the room is 4.12" from "the room is 3.07": the vectors of
a fact and its correction are nearly identical. These rules look at the words instead:

* a **repeat** adds nothing: every content word of the new text is in the old one, with the same
  values (numbers, identifiers, addresses, weekdays, months) said of the same things (each value's clause in
  the new text has its words in a clause of the old text holding that value), the names and values they share
  in the same order ("Bob reports to Alice" is not repeated by "Alice reports to Bob") and the same negation,
  clause by clause;
* an **update** states the same subject with a new value: the words before the verb agree and the
  new text changes a value (puts another one where the old text had one: after the same word; in the same
  words, give or take some) or a negation, or says so (``now``, ``new``, ``actually``, ...); or it is the old
  text word for word with another place named after "in", "at" or "from" and a verb of where something is now
  ("the office is in Brno" -> "in Prague"), or with another time after a preposition and a verb the rules do
  not know ("the backup runs at 02:00" -> "at 03:30");
* anything else is a **different** memory, kept next to the old one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

__all__ = ["Relation", "relation", "names_a_relative_day"]

Relation = Literal["repeat", "update", "different"]

#: Where a clause ends: a comma, semicolon or sentence end before a space, or a conjunction ("and", "but", ...).
_CLAUSE_END = re.compile(r"[,;.!?](?=\s)|\s(?:and|but|while|whereas)\s", re.IGNORECASE)
_TOKEN = re.compile(r"[+]?[\w@.'’:-]*\w|[=:]", re.UNICODE)
_NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "without", "cannot",
                        "except", "excluding", "n't", "nicht", "kein", "ne", "nie", "nikdy"})
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


#: Weekdays, months and relative days: values, as a date's digits are ("on Monday" is corrected by "on Tuesday"),
#: each read as one canonical form ("Mondays", "Mon", "pondělí" are "monday").
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_RELATIVE_DAYS = ("today", "tomorrow", "yesterday", "tonight")
_DATE_WORDS = {word: word for word in (*_DAYS, *_MONTHS, *_RELATIVE_DAYS)}
_DATE_WORDS.update({day + "s": day for day in _DAYS})
_DATE_WORDS.update(zip("pondělí úterý středa čtvrtek pátek sobota neděle".split(), _DAYS))
_DATE_WORDS.update({"středu": "wednesday", "sobotu": "saturday", "neděli": "sunday"})
#: ... and their abbreviations, which count only when capitalised ("sat", "mar" are words too), as do "March"
#: and "May" ("march on", "you may"). "Sun" and "Jan" are left out: as often a star, a company or a name.
_CAPITALISED_DATE_WORDS = {name[:3]: name for name in (*_DAYS, *_MONTHS) if name not in ("sunday", "january")}
_CAPITALISED_DATE_WORDS.update({"tues": "tuesday", "thur": "thursday", "thurs": "thursday", "sept": "september"})
_CAPITALISED_DATE_WORDS.update({name: _DATE_WORDS.pop(name) for name in ("march", "may")})
#: Prepositions: the word each one leads to is part of the fact ("tea over coffee" is not "coffee over tea").
_PREPOSITIONS = frozenset({"about", "above", "after", "against", "at", "before", "behind", "below", "between", "by",
                           "except", "for", "from", "in", "into", "of", "off", "on", "onto", "over", "than",
                           "through", "to", "toward", "under", "until", "versus", "via", "with", "within"})
#: "march" and "may" next to a number or after a word that leads to a time ("14 march", "may 3", "in may") are
#: months, written in lower case or not.
_MONTH_IN_CONTEXT = re.compile(
    r"(?:(?<=\d )|\b(?:in|of|since|until|till|by|from|during|before|after|early|mid|late|next|last|this) )"
    r"(?P<month>march|may)\b|\b(?P<before_number>march|may)(?= \d)", re.IGNORECASE)
#: What ends a sentence: a capitalised word after it is not (necessarily) a name.
_SENTENCE_END = re.compile(r"[.!?:;\n]")


@dataclass(frozen=True)
class _Parsed:
    subject: frozenset[str]
    words: frozenset[str]
    values: frozenset[str]
    negated: bool
    cues: frozenset[str]
    has_verb: bool


def _date_word(raw: str) -> str | None:
    """The day or month ``raw`` names ("Mondays", "Mon" and "pondělí" are "monday"), or None."""
    word = raw.lower().removesuffix("'s").removesuffix("’s")
    if word in _DATE_WORDS:
        return _DATE_WORDS[word]
    return _CAPITALISED_DATE_WORDS.get(word) if raw[:1].isupper() else None


def _is_value(raw: str) -> bool:
    """Numbers, dates, identifiers, e-mail addresses, codes: a token whose exact form matters."""
    if any(c.isdigit() for c in raw) or "@" in raw or _date_word(raw):
        return True
    if raw == "I" or not raw.isascii():
        return False
    return (raw.isupper() and len(raw) <= 6) or any(c.isupper() for c in raw[1:])


def _dates_marked(text: str) -> str:
    """``text`` with "march" and "may" capitalised where they are months, so that they read as such."""
    def capitalised(match: re.Match[str]) -> str:  # the month ends the match: "in may" -> "in May"
        month_at = match.start(match.lastgroup or "month") - match.start()
        return match.group()[:month_at] + match.group()[month_at:].capitalize()

    return _MONTH_IN_CONTEXT.sub(capitalised, text)


def _tokens(text: str) -> Iterator[tuple[str, re.Match[str]]]:
    """The tokens of ``text`` as the rules read them (months marked, a final full stop dropped, a number word as its
    digits), each with its match in the marked text."""
    for match in _TOKEN.finditer(_dates_marked(text)):
        raw = match.group().rstrip(".")
        yield _NUMBER_WORDS.get(raw.lower(), raw), match


def _value(raw: str) -> str:
    """How a value is compared: lower case, a day or month by its canonical name."""
    return _date_word(raw) or raw.lower()


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
    for raw, _ in _tokens(text):
        if _is_value(raw):
            values.add(_value(raw))
            if not has_verb:
                subject.add(_value(raw))
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
            words.add("is" if raw in ("=", ":") else word)  # "the code: 1234" says "the code is 1234"
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


#: Words skipped when finding the slot a value fills (the word before it): articles, cue words and fillers.
_SLOT_SKIP = _CUES | _FILLERS | {"a", "an", "the", "my", "our", "your", "his", "her", "their", "its"}


def _value_slots(clause: str) -> set[tuple[str, str]]:
    """Each value of ``clause`` with the slot it fills: the word before it (any verb, ``=`` or ``:`` read as
    ``=``), so "room 4.12" and "room 3.07" fill one slot, "room 3" and "on Tuesday" two."""
    slots: set[tuple[str, str]] = set()
    previous = ""
    for raw, _ in _tokens(clause):
        if _is_value(raw):
            slots.add((previous, _value(raw)))
            previous = _value(raw)
            continue
        word = _norm(raw)
        if word in _VERBS or raw.lower() in _VERBS:
            previous = "="
        elif word not in _SLOT_SKIP:
            previous = word
    return slots


def _value_changed(new: str, old: str) -> bool:
    """Whether a clause of ``new`` puts another value in a slot a clause of ``old`` fills ("the meeting is on
    Tuesday" changes "… on Monday", not "… in room 3")."""
    old_clauses = [_value_slots(clause) for clause in _CLAUSE_END.split(old)]
    for new_slots in map(_value_slots, _CLAUSE_END.split(new)):
        new_values = {value for _, value in new_slots}
        for old_slots in old_clauses:
            old_values = {value for _, value in old_slots}
            replaced = {slot for slot, value in old_slots if value not in new_values}
            if any(slot in replaced for slot, value in new_slots if value not in old_values):
                return True
    return False


def _by_negation(text: str) -> tuple[set[str], set[str]]:
    """The words and values of ``text``'s clauses without a negation, and those of its negated clauses."""
    plain: set[str] = set()
    negated: set[str] = set()
    for clause in map(_parse, _CLAUSE_END.split(text)):
        (negated if clause.negated else plain).update(clause.words | clause.values)
    return plain, negated


def _negations_alike(new: str, old: str) -> bool:
    """Whether ``new`` negates what ``old`` negates, clause by clause: no word of a plain clause of one text is
    only in negated clauses of the other ("I eat meat, but never fish" is not "I eat fish, but never meat")."""
    new_plain, new_negated = _by_negation(new)
    old_plain, old_negated = _by_negation(old)
    return not ((new_plain & old_negated) - old_plain or (new_negated & old_plain) - old_negated)


def _names(text: str) -> list[tuple[str, str]]:
    """The tokens of ``text`` in order, as compared (values as :func:`_value` reads them, words as :func:`_norm`
    does), each with what it names: ``"value"``, ``"name"`` (a word capitalised inside a sentence) or ``""``
    (nothing: a plain word)."""
    out = []
    previous_end: int | None = None  # where the last word ended (None: no word yet)
    for raw, match in _tokens(text):
        if raw in ("=", ":"):
            continue
        inside = previous_end is not None and not _SENTENCE_END.search(match.string, previous_end, match.start())
        previous_end = match.end()
        if _is_value(raw):
            out.append((_value(raw), "value"))
            continue
        word = _norm(raw.removesuffix("'s").removesuffix("’s"))
        named = inside and raw[:1].isupper() and raw != "I" and not raw.startswith(("I'", "I’"))
        out.append((word, "name" if named else ""))
    return out


def _objects(tokens: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """Each preposition of ``tokens`` with the word it leads to (the first word after it that is not a stop word)."""
    out: set[tuple[str, str]] = set()
    for index, (token, _) in enumerate(tokens):
        if token in _PREPOSITIONS:
            following = (t for t, _ in tokens[index + 1:] if t not in _STOP and t not in _PREPOSITIONS)
            out.add((token, next(following, "")))
    return out


def _same_objects(new: set[tuple[str, str]], old: set[tuple[str, str]]) -> bool:
    """Whether each preposition of ``new`` that ``old`` uses too, or that leads to a word a preposition of ``old``
    leads to, leads there as in ``old`` ("tea over coffee" is not "coffee over tea", "works for Alice" is not
    "works with Alice")."""
    old_prepositions = {preposition for preposition, _ in old}
    old_objects = {word for _, word in old}
    return all(pair in old for pair in new if pair[0] in old_prepositions or pair[1] in old_objects)


def _same_order(new: str, old: str) -> bool:
    """Whether ``new`` arranges what it shares with ``old`` as ``old`` does: the names and values both hold come in
    the same order (a name is a value or a word capitalised inside a sentence of either text: "Bob reports to
    Alice" and "bob reports to alice" agree, "Alice reports to Bob" does not), and their prepositions lead to the
    same words (:func:`_same_objects`)."""
    new_tokens, old_tokens = _names(new), _names(old)
    named = {token for token, is_name in [*new_tokens, *old_tokens] if is_name}
    shared = named & {token for token, _ in new_tokens} & {token for token, _ in old_tokens}

    def order(tokens: list[tuple[str, str]]) -> list[str]:
        return list(dict.fromkeys(token for token, _ in tokens if token in shared))

    return _same_objects(_objects(new_tokens), _objects(old_tokens)) and order(new_tokens) == order(old_tokens)


#: Verbs saying where something is now ("the office is in Brno", "my sister lives in Berlin"): another place
#: after them corrects the old one. A past or unlisted verb may tell of several places ("I was in Rome").
_STATE_VERBS = frozenset({"is", "are", "am", "live", "lives", "work", "works"})
_PLACE_PREPOSITIONS = frozenset({"in", "at", "from"})


def _one_swapped(new: str, old: str, kind: str, *, after: frozenset[str]) -> bool:
    """Whether ``new`` is ``old`` word for word but for one token of ``kind`` (``"value"`` or ``"name"``, see
    :func:`_names`) put where ``old`` has another of that kind, right after one of the words ``after``."""
    new_tokens, old_tokens = _names(new), _names(old)
    if len(new_tokens) != len(old_tokens):
        return False
    changed = [i for i, (a, b) in enumerate(zip(new_tokens, old_tokens)) if a[0] != b[0]]
    if len(changed) != 1 or changed[0] == 0:
        return False
    at = changed[0]
    return new_tokens[at][1] == old_tokens[at][1] == kind and new_tokens[at - 1][0] in after


def _first_verb(text: str) -> str | None:
    return next((_norm(raw) for raw, _ in _tokens(text) if _norm(raw) in _VERBS or raw.lower() in _VERBS), None)


def names_a_relative_day(text: str) -> bool:
    """Whether ``text`` names a day relative to when it is said ("today", "tomorrow", "yesterday", "tonight"):
    said again on another day, it says something new."""
    return any(_date_word(raw) in _RELATIVE_DAYS for raw in _TOKEN.findall(text))


def relation(new: str, old: str) -> Relation:
    """How ``new`` relates to the similar stored memory ``old``: repeat, update or different."""
    n, o = _parse(new), _parse(old)
    if n.negated == o.negated and n.values <= o.values and n.words <= o.words and n.cues <= o.cues \
            and _values_said_alike(new, old) and _same_order(new, old) and _negations_alike(new, old):
        return "repeat"
    if n.words == o.words and n.values == o.values:
        return "update"  # the same statement, negated or no longer negated, or its names or values rearranged
    if not (n.has_verb or o.has_verb) and _one_swapped(new, old, "value", after=_PREPOSITIONS):
        return "update"  # another time or date after a preposition, in the same words (a verb the rules do not list)
    if not (n.has_verb and o.has_verb) or n.subject != o.subject:
        return "different"
    if n.negated != o.negated or n.cues - o.cues:
        return "update"  # the text negates what the old one said (or no longer does), or says it changed
    if (n.words <= o.words or o.words <= n.words) and _value_changed(new, old):
        return "update"  # the subject's value changed (a room, a date, a limit), said in the same words
    if _first_verb(new) in _STATE_VERBS and _one_swapped(new, old, "name", after=_PLACE_PREPOSITIONS):
        return "update"  # the same thing is somewhere else now: another place after in/at/from, in the same words
    return "different"
