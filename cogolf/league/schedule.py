"""The round-robin schedule of a night, by the circle method.

Every pairing is played in both seat orders on the same seed, so seat bias (Ash
moves first in every listing, the deck draw is shared) cancels within the pair.
Seeds and match ids depend only on the night seed, the two names and the seat
order, never on the entrant list's order or size: adding an entrant to a night
leaves every existing match, and so every finished replay, valid.
"""

from __future__ import annotations

import hashlib

from cogolf.league.jobs import MatchJob, Seat
from cogolf.league.night import Night

SEED_BITS = 63


def circle_rounds(count: int) -> list[list[tuple[int, int]]]:
    """Rounds of (seat0, seat1) index pairs in which every two of `count` entrants meet once.

    One entrant stays fixed while the others rotate around it; with an odd count a
    bye joins the circle and whoever meets it sits the round out."""
    ring: list[int | None] = list(range(count))
    if count % 2:
        ring.append(None)
    size = len(ring)
    rounds: list[list[tuple[int, int]]] = []
    for r in range(size - 1):
        pairs: list[tuple[int, int]] = []
        for i in range(size // 2):
            a, b = ring[i], ring[size - 1 - i]
            if a is None or b is None:
                continue
            # The fixed entrant would otherwise always take seat 0 in the first leg.
            if i == 0 and r % 2 == 1:
                a, b = b, a
            pairs.append((a, b))
        rounds.append(pairs)
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return rounds


def double_round_robin(count: int) -> list[list[tuple[int, int]]]:
    """The circle rounds, then the same rounds with the seats swapped."""
    first = circle_rounds(count)
    return first + [[(b, a) for a, b in pairs] for pairs in first]


def match_seed(night_seed: int, a: str, b: str) -> int:
    """The seed shared by both seat orders of the pairing {a, b}."""
    lo, hi = sorted((a, b))
    digest = hashlib.sha256(f"cogolf-league\0{night_seed}\0{lo}\0{hi}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def match_id(night: str, seat0: str, seat1: str) -> str:
    return f"{night}-{seat0}-vs-{seat1}"


def schedule(
    night: Night,
    deck_digest: str,
    *,
    sandbox: str = "fork",
    accept_weak_sandbox: bool = False,
) -> list[MatchJob]:
    """Every match of the night, in round order."""
    seats = [
        Seat(e.name, e.policy, e.command, str(night.workdir(e)), tuple(sorted(e.env.items())))
        for e in night.entrants
        if e.plays_cogolf
    ]
    jobs = []
    for rnd, pairs in enumerate(double_round_robin(len(seats)), start=1):
        for a, b in pairs:
            s0, s1 = seats[a], seats[b]
            jobs.append(
                MatchJob(
                    match_id=match_id(night.name, s0.name, s1.name),
                    night=night.name,
                    round=rnd,
                    seats=(s0, s1),
                    seed=match_seed(night.seed, s0.name, s1.name),
                    holes=night.holes,
                    hole_deadline=night.hole_deadline,
                    retry_deadline=night.retry_deadline,
                    match_deadline=night.match_deadline,
                    deck=str(night.deck),
                    references=str(night.references),
                    deck_digest=deck_digest,
                    sandbox=sandbox,
                    accept_weak_sandbox=accept_weak_sandbox,
                )
            )
    return jobs
