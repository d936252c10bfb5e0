"""The user's own messages among the hits of a user–assistant transcript.

A sync also indexes each message of the user's in such a transcript as a chunk of its own
(:func:`~openclaw_memory.text.turns.user_turn_chunks`): in the transcript's regular chunks a one-line message sits
among the assistant's long answers, and what the user said (their project, their choices, their corrections) is
what later questions ask about. A search keeps up to two thirds of its hits (:data:`USER_TURN_SHARE`, 4 of 6) for
the best of those messages and gives the rest to the best other chunks, in score order; with no such message among
the candidates (notes that are no transcript) nothing changes. ``query.user_turns`` turns this off.
"""

from __future__ import annotations

from collections.abc import Sequence

from openclaw_memory.text.turns import is_user_turn
from openclaw_memory.types import Candidate

__all__ = ["USER_TURN_SHARE", "user_turn_quota", "with_user_turns"]

#: The share of a search's hits kept for the user's own messages.
USER_TURN_SHARE = 2 / 3


def user_turn_quota(max_results: int) -> int:
    """How many of ``max_results`` hits are kept for the user's messages (4 of 6; none of 1, where the ranking
    decides alone)."""
    return int(max_results * USER_TURN_SHARE)


def with_user_turns(ranked: Sequence[Candidate], max_results: int) -> list[Candidate]:
    """``ranked`` (best first) with its best :func:`user_turn_quota` user messages among the first ``max_results``
    beside the best other chunks, each in its place in ``ranked``, then the other chunks and the other messages as
    ranked; ``ranked`` as it is when it holds no user message or the quota is 0."""
    quota = user_turn_quota(max_results)
    is_turn = [is_user_turn(c.text) for c in ranked] if quota else []
    turns = [c for c, turn in zip(ranked, is_turn) if turn]
    if not turns:
        return list(ranked)
    kept = turns[:quota]
    others = [c for c, turn in zip(ranked, is_turn) if not turn]
    first = {id(c) for c in [*kept, *others[:max(0, max_results - len(kept))]]}
    return [c for c in ranked if id(c) in first] + [c for c in ranked if id(c) not in first]
