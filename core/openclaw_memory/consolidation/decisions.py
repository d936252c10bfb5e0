"""What the model is asked and what it may answer: decisions about candidates, never memory prose.

The model sees MEMORY.md's entries (``E1``..) and the candidates (``C1``..) and answers a JSON
object ``{"decisions": [...]}`` (or the bare array); each decision is one of

* ``{"op": "add", "candidate": "C1", "triggers": [...], "importance": 1-10}``
* ``{"op": "merge", "candidate": "C2", "entry": "E3", ...}``: the candidate adds to entry E3
* ``{"op": "supersede", "candidate": "C3", "entry": "E1", ...}``: the candidate replaces E1
* ``{"op": "skip", "candidate": "C4"}``

:func:`parse_decisions` validates the answer (pydantic, then every id against the prompt) and
raises :class:`InvalidDecisions` for anything else.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from openclaw_memory.consolidation.candidates import Candidate
from openclaw_memory.text.entries import MAX_TRIGGERS, clipped
from openclaw_memory.errors import OpenClawMemoryError

__all__ = ["Decision", "Decisions", "InvalidDecisions", "build_prompt", "parse_decisions"]

Operation = Literal["add", "merge", "supersede", "skip"]


class InvalidDecisions(OpenClawMemoryError):
    """The model's answer is not valid decisions (consolidation then promotes append-only)."""


class Decision(BaseModel):
    """One decision about one candidate."""

    model_config = ConfigDict(extra="ignore")

    op: Operation
    candidate: str
    entry: str | None = None
    triggers: list[str] = Field(default_factory=list)
    importance: int = 5

    @field_validator("candidate", "entry", mode="before")
    @classmethod
    def _id(cls, value: object, info: ValidationInfo) -> object:
        """``C3``/``E2`` as the prompt writes them, also from ``3``, ``"c3"`` or ``" C3 "``."""
        prefix = "C" if info.field_name == "candidate" else "E"
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{prefix}{value}"
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("op", mode="before")
    @classmethod
    def _operation(cls, value: object) -> object:
        """``"add"`` also from ``"Add"`` or ``" SKIP "``."""
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("triggers", mode="before")
    @classmethod
    def _at_most_three(cls, value: object) -> object:
        """At most three phrases; one phrase given as a string is a list of one, null (or a null phrase) none."""
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            return value  # the schema's error
        phrases = [t for t in value if isinstance(t, str | int | float) and not isinstance(t, bool)]
        return [str(t) for t in phrases if str(t).strip()][:MAX_TRIGGERS]

    @field_validator("importance", mode="before")
    @classmethod
    def _bounded(cls, value: object) -> int:
        if value is None:  # a model filling every field, on a skip say
            return 5
        if isinstance(value, str):  # "8": a number a model put in quotes
            try:
                value = float(value.strip())
            except ValueError:
                raise ValueError("importance must be a number from 1 to 10") from None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError("importance must be a number from 1 to 10")
        return min(10, max(1, int(value)))


class Decisions(BaseModel):
    """The model's whole answer."""

    model_config = ConfigDict(extra="ignore")

    decisions: list[Decision]


_INSTRUCTIONS = """You curate an agent's long-term memory file, MEMORY.md.
Below are its current entries (E1, E2, ...) and candidate memories from recent daily notes (C1, C2, ...).
For each candidate decide ONE operation:
- "add": a durable fact, preference or decision worth keeping that MEMORY.md does not hold yet;
- "merge": it refines or extends an existing entry (give that entry's id in "entry");
- "supersede": it makes an existing entry outdated or wrong (give that entry's id in "entry");
- "skip": transient, trivial, or already covered.
Do not write memory text yourself. Give at most 3 short trigger phrases (what a later question about it
would mention) and an importance from 1 (trivia) to 10 (critical) for each non-skip decision.
Answer with JSON only, no prose, in this shape (one object per candidate):
{"decisions": [{"op": "add|merge|supersede|skip", "candidate": "C<n>", "entry": "E<n> for merge/supersede",
"triggers": ["phrase"], "importance": <1-10>}]}
"""


def build_prompt(entries: Sequence[str], candidates: Sequence[Candidate], *, max_chars: int = 640) -> str:
    """The prompt: instructions, then the numbered entries and candidates, each on one line cut to
    ``max_chars`` (a promoted entry's bound), so a very long line cannot crowd out the rest."""
    lines = [_INSTRUCTIONS, "## Current MEMORY.md entries"]
    lines += [f"E{i}: {clipped(text, max_chars)}" for i, text in enumerate(entries, start=1)] or ["(none)"]
    lines.append("\n## Candidates")
    lines += [f"{c.id} ({c.source}): {clipped(c.text, max_chars)}" for c in candidates]
    return "\n".join(lines) + "\n"


def _json_objects(answer: str) -> tuple[list[dict[str, object]], json.JSONDecodeError | None]:
    """The JSON objects in ``answer`` outside one another, in order, and the first error met."""
    decoder = json.JSONDecoder()
    found: list[dict[str, object]] = []
    error: json.JSONDecodeError | None = None
    start = answer.find("{")
    while start >= 0:
        try:
            value, end = decoder.raw_decode(answer, start)
        except json.JSONDecodeError as exc:
            error, end = error or exc, start + 1
        else:
            if isinstance(value, dict):
                found.append(value)
        start = answer.find("{", end)
    return found, error


def _json_object(answer: str) -> object:
    """The answer's decisions object: the last JSON object holding ``decisions`` (a model that
    reasons before answering may show braces first); else, when every object is a decision (a bare
    array of them), those; else the last object at all."""
    found, error = _json_objects(answer)
    if not found:
        if error is not None:
            raise InvalidDecisions(f"the model's answer is not valid JSON: {error}")
        raise InvalidDecisions("the model's answer holds no JSON object")
    with_decisions = [value for value in found if "decisions" in value]
    if not with_decisions and all("op" in value and "candidate" in value for value in found):
        return {"decisions": found}
    return (with_decisions or found)[-1]


def parse_decisions(answer: str, *, entry_count: int, candidates: Sequence[Candidate]) -> list[Decision]:
    """The validated decisions in ``answer``: known candidate ids, each decided once; ``merge`` and
    ``supersede`` name an existing entry, and no entry is both merged into and superseded."""
    try:
        parsed = Decisions.model_validate(_json_object(answer))
    except ValidationError as exc:
        raise InvalidDecisions(f"the model's answer does not match the decisions schema: {exc.errors()[0]['msg']}") \
            from None
    known = {c.id for c in candidates}
    entries = {f"E{i}" for i in range(1, entry_count + 1)}
    decided: set[str] = set()
    superseded: set[str] = set()
    merged: set[str] = set()
    for decision in parsed.decisions:
        if decision.candidate not in known or decision.candidate in decided:
            raise InvalidDecisions(f"unknown or repeated candidate {decision.candidate!r}")
        decided.add(decision.candidate)
        if decision.op in ("merge", "supersede"):
            if decision.entry not in entries:
                raise InvalidDecisions(f"{decision.op} of {decision.candidate} names no existing entry")
            if decision.entry in superseded or (decision.op == "supersede" and decision.entry in merged):
                raise InvalidDecisions(f"entry {decision.entry} is both superseded and changed otherwise")
            (superseded if decision.op == "supersede" else merged).add(decision.entry)
    return parsed.decisions
