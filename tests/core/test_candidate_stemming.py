"""Stemming of candidate texts (``textprep.stem_tokens``): the compiled Snowball stemmer gives the Porter
stems of the pure-Python one, and the batched, cached path gives what stemming word by word gives."""

from __future__ import annotations

import random
import string

import pytest

from openclaw_memory.text import preparation as textprep

Stemmer = pytest.importorskip("Stemmer")  # PyStemmer: a dependency of the package


def _words(n: int, seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    base = ["painting", "paintings", "studies", "happiness", "relational", "generalization", "deploy", "deployed",
            "running", "caresses", "ponies", "sky", "agreed", "hopping", "conditional", "electricity", "ies", "sses"]
    out = set(base)
    while len(out) < n:
        w = "".join(rnd.choice(string.ascii_lowercase) for _ in range(rnd.randint(3, 11)))
        out.add(w)
        out.add(w + rnd.choice(("ing", "ed", "ies", "ational", "ness", "y", "ly", "s", "ization", "fulness")))
    return sorted(out)


def test_compiled_porter_stems_equal_the_python_porter_stems() -> None:
    from snowballstemmer.porter_stemmer import PorterStemmer

    words = _words(20_000)
    python = PorterStemmer()
    assert Stemmer.Stemmer("porter").stemWords(words) == [python.stemWord(w) for w in words]


def test_stem_tokens_matches_stemming_each_token(monkeypatch: pytest.MonkeyPatch) -> None:
    from snowballstemmer.porter_stemmer import PorterStemmer

    python = PorterStemmer()
    monkeypatch.setattr(textprep, "_stem_cache", {})
    monkeypatch.setattr(textprep, "_stem_words", {})
    textprep.stem_tokens.cache_clear()
    words = _words(3_000, seed=11)
    # tokens the stemmer must leave alone: short, with digits, non-ASCII, CJK characters
    others = ["ab", "a1b2", "v2", "2024", "café", "naïve", "咖", "서버", "x"]
    rnd = random.Random(3)
    for _ in range(200):
        toks = [rnd.choice(words + others) for _ in range(rnd.randint(1, 40))]
        key = " ".join(toks)
        want = " ".join(python.stemWord(t) if t.isascii() and t.isalpha() and t.islower() and len(t) >= 3 else t
                        for t in toks)
        assert textprep.stem_tokens(key) == want
        assert textprep.stem_tokens(key) == want  # cached


def test_stem_tokens_without_a_stemmer_leaves_words_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textprep, "_STEMMER", None)
    monkeypatch.setattr(textprep, "_stem_cache", {})
    monkeypatch.setattr(textprep, "_stem_words", {})
    textprep.stem_tokens.cache_clear()
    try:
        assert textprep.stem_tokens("paintings were painted") == "paintings were painted"
    finally:
        textprep.stem_tokens.cache_clear()


def test_tokens_by_stem_finds_what_the_stemmed_text_holds() -> None:
    """``" stem "`` in the stemmed text exactly when the text holds a word of ``tokens_by_stem`` (the shortcut
    coverage takes instead of stemming every candidate text)."""
    words = _words(2_000, seed=5) + ["ab", "v2", "café", "咖"]
    rnd = random.Random(9)
    keys = [" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 60))) for _ in range(300)]
    stems = sorted({textprep.stem_tokens(w) for w in rnd.sample(words, 200)})
    found = textprep.tokens_by_stem(keys, stems)
    assert set(found) == set(stems)
    for key in keys:
        stemmed = f" {textprep.stem_tokens(key)} "
        for stem in stems:
            assert (f" {stem} " in stemmed) == any(f" {w} " in f" {key} " for w in found[stem])


def test_tokens_by_stem_when_the_caches_are_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textprep, "_stem_cache", {})
    monkeypatch.setattr(textprep, "_stem_words", {})
    monkeypatch.setattr(textprep, "_STEM_CACHE_MAX", 0)
    found = textprep.tokens_by_stem(["painted walls", "painting v2"], ["paint", "wall", "v2", "none"])
    assert found == {"paint": {"painted", "painting"}, "wall": {"walls"}, "v2": {"v2"}, "none": frozenset()}


def test_a_word_starts_with_its_stem_but_the_last_stem_tail_characters() -> None:
    """What ``tokens_by_stem`` relies on to stem only the tokens that can have a query's stem: the Porter
    algorithm rewrites suffixes only, never more than ``STEM_TAIL`` characters past what the word holds."""
    words = _words(30_000, seed=13) + [b + s for b in ("sensib", "relat", "hop", "troubl", "valen", "abil", "fanc")
                                       for s in ("ility", "ilities", "ational", "ization", "ing", "ies", "y", "ency",
                                                 "ancy", "ator", "iveness", "ably", "led", "iciti", "alism")]
    for w, stem in zip(words, Stemmer.Stemmer("porter").stemWords(words)):
        assert w.startswith(stem[: len(stem) - textprep.STEM_TAIL]), (w, stem)


def test_tokens_by_stem_with_short_stems_and_new_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stems too short to narrow the tokens down (every token is then looked at), next to long ones, with
    words the caches have not seen."""
    monkeypatch.setattr(textprep, "_stem_cache", {})
    monkeypatch.setattr(textprep, "_stem_words", {})
    keys = ["the skies were sky blue", "ties tie tied", "running runs ran", "a1 v2 x"]
    found = textprep.tokens_by_stem(keys, ["ski", "ti", "run", "v2", "x"])
    assert found == {"ski": {"skies"}, "ti": {"ties", "tied"}, "run": {"running", "runs"}, "v2": {"v2"}, "x": {"x"}}
