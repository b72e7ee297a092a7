"""A night's `schedule = "adaptive"`: the ladder's pairing with a match budget.

A match with an LLM seat costs money, so a night may play fewer than the round-robin's
matches and choose them as results come in: after each batch the Bradley–Terry fit
of the results so far picks the pairings expected to tell the most about the order
(`pairing.pick`, the ladder's question), until `budget` matches are scheduled. Every
pairing is one of the round-robin's, with its match ids and seeds (`schedule`), and is
played at most once (both seat orders on one seed). The night's signed plan grows by
each batch before the batch is played, so a replay counts only when its match was
chosen, and a resumed night starts from the matches its plan already holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cogolf import messages as m
from cogolf.league.jobs import MatchJob
from cogolf.league.pairing import Candidate, belief, pick
from cogolf.league.ratings import Game


def batch_pairings(parallel: int) -> int:
    """Pairings chosen at once: enough to keep `parallel` matches going, no more (a
    smaller batch learns from more results before it chooses)."""
    return max(1, parallel // 2)


def next_jobs(
    full: Sequence[MatchJob],
    chosen: Sequence[MatchJob],
    results: Mapping[str, m.MatchResult],
    *,
    room: int,
    pairings: int,
) -> list[MatchJob]:
    """The matches to schedule next: at most `pairings` pairings and `room` matches,
    both legs of each, from the round-robin's `full` list, none of them `chosen` yet."""
    names: list[str] = []
    for job in full:
        for name in job.names:
            if name not in names:
                names.append(name)
    index = {name: k for k, name in enumerate(names)}
    legs: dict[tuple[int, int], list[MatchJob]] = {}
    for job in full:
        a, b = (index[n] for n in job.names)
        legs.setdefault((min(a, b), max(a, b)), []).append(job)
    taken = {(min(a, b), max(a, b)) for a, b in ((index[n] for n in j.names) for j in chosen)}
    games = [
        Game(index[j.names[0]], index[j.names[1]], r.scores[0] - r.scores[1])
        for j in chosen
        if (r := results.get(j.match_id)) is not None
    ]
    most = min(pairings, room // 2)
    if most <= 0:
        return []
    free = max(1, -(-2 * most // len(names)))  # few entrants: each in several pairings
    b = belief(len(names), games)
    picked = pick(b, [Candidate(i, free) for i in range(len(names))], [], most=most,
                  exclude=taken)  # fmt: skip
    return [job for pair in picked for job in legs[pair]]
