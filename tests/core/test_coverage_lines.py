"""Query coverage measures each candidate line once per search, and gives the answer measuring each text whole
gives: a text holds a one-token key when one of its lines does, and a key of several tokens (a phrase, a dotted
name, a CJK bigram) is still found where it spans a line break."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from openclaw_memory.text.query_analysis import QueryAnalysis, _key, _keys, analyze_query


def _texts(seed: int) -> list[str]:
    rnd = random.Random(seed)
    words = ["paint", "painting", "paintings", "painted", "Melanie", "kids", "sqlite", "vec", "deploy", "deployed",
             "café", "Ωμέγα", "ΣΟΦΟΣ", "咖啡", "咖", "啡", "สวัสดี", "서버에서", "서버", "the", "and", "E7", "v2.1"]
    seps = ["\n", "\n\n", " \n", "\r\n", "\u2028", ". ", ", ", " "]
    return ["".join(rnd.choice(words) + rnd.choice(seps) for _ in range(rnd.randint(0, 14))) for _ in range(300)]


def test_keys_of_lines_equal_each_key() -> None:
    lines = [ln for t in _texts(1) for ln in t.splitlines()] + ["", "  ", "ΣΑΣ.", "x\u0301y"]
    assert _keys(lines) == [_key(ln) for ln in lines]
    assert _keys([]) == []
    assert _keys(["a\nb", "c"]) == ["a b", "c"]  # texts with line breaks are measured one by one


@pytest.mark.parametrize("query", ["painting kids", "paint the walls", "painted Melanie", "sqlite.vec deploy",
                                   "Melanie kids sqlite", "咖啡 deploy", "서버에서 E7", "v2.1 café Ωμέγα",
                                   "kids\nsqlite vec deployed"])
@pytest.mark.parametrize("stemming", [False, True])
def test_coverage_from_lines_equals_measuring_whole_texts(query: str, stemming: bool) -> None:
    texts = _texts(2)
    fast = analyze_query(query, stemming=stemming)
    whole = analyze_query(query, stemming=stemming)
    whole._text_presence = whole._presence  # type: ignore[method-assign]  # each text measured whole
    assert fast.coverage_detail(texts) == whole.coverage_detail(texts)
    files = ["\n".join(texts[i : i + 5]) for i in range(0, len(texts), 5)]
    assert fast.coverage(files) == whole.coverage(files)


def test_a_key_of_several_tokens_across_a_line_break_is_found() -> None:
    a = analyze_query("sqlite.vec deploy")  # "sqlite vec": one exact (distinctive) group
    [(cov, exact, groups)] = a.coverage_detail(["we use sqlite\nvec here"])
    assert exact and groups == {0} and cov > 0
    [(cov, exact, groups)] = a.coverage_detail(["we use sqlite\nand vec here"])
    assert not exact and groups == set() and cov == 0
    [(_, _, groups)] = analyze_query("咖啡").coverage_detail(["喝咖\n啡了"])  # a bigram across the break
    assert groups == {0}


def test_each_line_is_measured_once_per_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    measured: list[str] = []
    plain = QueryAnalysis._presence

    def spy(self: QueryAnalysis, texts: Sequence[str]) -> tuple[list[str], list[set[int]], list[set[int]]]:
        measured.extend(texts)
        return plain(self, texts)

    monkeypatch.setattr(QueryAnalysis, "_presence", spy)
    a = analyze_query("painting kids", stemming=True)
    chunks = ["Melanie painted\nthe kids", "kids paint", "Melanie painted\nsqlite"]
    a.coverage_detail(chunks)
    a.weighted_by_rarity([3, 40], 100).window_coverage(chunks, 3)  # the rarity-weighted copy shares the lines
    a.coverage(["\n".join(chunks[:2]), chunks[2]])  # the files of those chunks
    assert sorted(measured) == sorted({"Melanie painted", "the kids", "kids paint", "sqlite"})


def test_a_copy_with_other_keys_does_not_reuse_the_lines() -> None:
    from dataclasses import replace

    a = analyze_query("painting kids", stemming=True)
    [(_, _, groups)] = a.coverage_detail(["Melanie painted the walls"])
    assert groups == {0}  # by stem
    plain = replace(a, stemming=False)  # shares the memo, but measures by the words as written
    [(_, _, groups)] = plain.coverage_detail(["Melanie painted the walls"])
    assert groups == set()
