"""`cogolf bench ladder`: how few matches the adaptive pairing needs, and what the ladder
costs a server.

Entrants of known strength: each plays, hole by hole, one of three plays at its own
rates (`mix`): a blank play (implements nothing, writes no tests), the literalist
and the pedant, each beating the one before, so strength is a real mix of real plays.
A narrow field mixes only the literalist and the pedant (close neighbours: the hard
case); a wide field runs from blank to pedant, as a field of broken and working bots.
Every hole of every pair of plays on every spec of the core deck is resolved once
through the real engine and sandbox; a simulated match then draws its holes as a
real match does (`Random(seed).sample`) and each seat's play per hole from its
mix, and adds the real hole scores. That makes thousands of matches cheap while
every score is one the engine gave.

For 8, 16 and 32 entrants: the round-robin (every pair in both seat orders on one
seed) gives the reference order (the Bradley–Terry fit of its matches); the
adaptive schedule then plays pairings (`cogolf.league.pairing`) a few at a time
(`batch_of`), refitting after every batch, and the number of matches it took for
its order to reach Kendall's tau >= 0.9 against the round-robin's (and stay there
to the end of the budget) is reported as a share of the round-robin's matches,
over several trials, beside random pairings of the same count.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cogolf.league.pairing import Candidate, belief, pick
from cogolf.league.ratings import Game, fit
from cogolf.league.schedule import circle_rounds

PLAYS = ("blank", "literalist", "pedant")  # weakest first
FIELDS = ("narrow", "wide")
TAU_GOAL = 0.9


@dataclass(frozen=True)
class HoleTable:
    """score[key][x][y]: seat 0's hole score when seat 0 plays PLAYS[x] and seat 1 PLAYS[y]."""

    keys: tuple[str, ...]
    score: dict[str, list[list[int]]]


async def hole_table(sandbox_mode: str = "fork", accept_weak: bool = False) -> HoleTable:
    """Every baseline-against-baseline hole of the core deck, resolved for real."""
    from cogolf.deck import load
    from cogolf.deck_check import _accepted
    from cogolf.runtime.resolve import resolve_hole
    from cogolf.sandbox import make_sandbox
    from cogolf.sandbox.api import Limits

    deck = load()
    sandbox = make_sandbox(sandbox_mode, accept_weak=accept_weak)
    await sandbox.start()
    try:
        table: dict[str, list[list[int]]] = {}
        for key in deck.spec_keys():
            plays = [_blank(deck, key)] + [_accepted(deck, key, name) for name in PLAYS[1:]]
            rows = []
            for x in range(len(PLAYS)):
                row = []
                for y in range(len(PLAYS)):
                    out = await resolve_hole(
                        sandbox, deck.spec(key), deck.hidden[key], [plays[x], plays[y]], Limits()
                    )
                    row.append(int(out.score[0]))
                rows.append(row)
            table[key] = rows
    finally:
        await sandbox.close()
    return HoleTable(tuple(sorted(table)), table)


def _blank(deck: Any, key: str) -> Any:
    """A play that implements nothing (returns None) and writes no tests: it loses."""
    from cogolf.bots.policy import complete_play
    from cogolf.engine.intake import accept, encode_play

    params = ", ".join(p.name for p in deck.spec(key).signature.params)
    play = {"impl": f"def solve({params}):\n    return None\n", "tests": [], "note": ""}
    text = encode_play(complete_play(play, 1))
    assert isinstance(text, str)
    return accept(text, 1)


Mix = tuple[float, float, float]  # the chances of each of PLAYS, per hole


def mix(strength: float) -> Mix:
    """An entrant of strength 0..2: blank to literalist over 0..1, literalist to pedant
    over 1..2 (its expected score against anyone grows with it)."""
    if strength <= 1.0:
        return (1.0 - strength, strength, 0.0)
    return (0.0, 2.0 - strength, strength - 1.0)


def strengths(field: str, n: int) -> list[float]:
    """Evenly spaced: `narrow` mixes literalist and pedant only (neighbours about 1/n of a
    point a hole apart: the hard case), `wide` runs from blank to pedant (most pairs'
    order plain, as in a field of broken and working bots)."""
    low = 1.0 if field == "narrow" else 0.0
    return [low + (2.0 - low) * k / (n - 1) for k in range(n)]


def _draw(rates: Mix, u: float) -> int:
    return 0 if u < rates[0] else 1 if u < rates[0] + rates[1] else 2


def play_match(
    table: HoleTable, rates: tuple[Mix, Mix], seed: int, rng: random.Random, holes: int = 9
) -> int:
    """Seat 0's margin in one simulated match (the holes drawn from `seed` as a real
    match draws them, each seat's play from its mix)."""
    margin = 0
    for key in random.Random(seed).sample(table.keys, min(holes, len(table.keys))):
        margin += table.score[key][_draw(rates[0], rng.random())][_draw(rates[1], rng.random())]
    return margin


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-a of two score vectors over the same entrants."""
    n = len(a)
    concordant = discordant = 0
    for i in range(n):
        for j in range(i + 1, n):
            s = (a[i] - a[j]) * (b[i] - b[j])
            if s > 0:
                concordant += 1
            elif s < 0:
                discordant += 1
    pairs = n * (n - 1) // 2
    return (concordant - discordant) / pairs if pairs else 1.0


def _pairing(table: HoleTable, rates: Sequence[Mix], i: int, j: int, rng: random.Random
             ) -> list[Game]:
    seed = rng.getrandbits(63)
    return [
        Game(i, j, play_match(table, (rates[i], rates[j]), seed, rng)),
        Game(j, i, play_match(table, (rates[j], rates[i]), seed, rng)),
    ]


def _round_robin(table: HoleTable, rates: Sequence[Mix], rng: random.Random) -> list[Game]:
    n = len(rates)
    games: list[Game] = []
    for rnd in circle_rounds(n):
        for a, b in rnd:
            games += _pairing(table, rates, a, b, rng)
    return games


def batch_of(n: int) -> int:
    """Pairings chosen at once (a refit after each batch): as a ladder whose bots free up
    a few at a time, or a night playing n/4 matches at once."""
    return max(1, n // 8)


def trial(table: HoleTable, n: int, seed: int, *, marks: Sequence[float] = (0.3,),
          field: str = "narrow") -> dict[str, Any]:
    """One round-robin and one adaptive run (up to as many matches) on the same entrants."""
    rng = random.Random(seed)
    truth = strengths(field, n)
    rng.shuffle(truth)
    rates = [mix(x) for x in truth]
    rr_games = _round_robin(table, rates, rng)
    rr_fit = fit(n, rr_games)
    rr_matches = len(rr_games)
    rr_truth = kendall_tau(rr_fit, truth)
    games: list[Game] = []
    history: list[tuple[int, int]] = []
    first = settled = as_good = None
    at_marks: dict[float, float] = {}
    b = belief(n, games)
    while len(games) < rr_matches:
        pairs = pick(b, [Candidate(i) for i in range(n)], history, most=batch_of(n))
        if not pairs:
            break
        for i, j in pairs:
            games += _pairing(table, rates, i, j, rng)
            history.append((i, j))
        b = belief(n, games, b.theta)
        now = b.theta
        tau = kendall_tau(now, rr_fit)
        if tau >= TAU_GOAL:
            first = len(games) if first is None else first
            settled = len(games) if settled is None else settled
        else:
            settled = None
        if as_good is None and kendall_tau(now, truth) >= rr_truth:
            as_good = len(games)
        for m in marks:
            if len(games) <= m * rr_matches:
                at_marks[m] = tau  # the order after the last pairing within the mark
    # The same number of matches with pairings drawn at random (each pair at most once, as
    # a sample of the round-robin), for what the choice itself is worth.
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    rng.shuffle(pairs)
    random_at: dict[float, float] = {}
    for m in marks:
        drawn = [g for i, j in pairs[: int(m * rr_matches) // 2]
                 for g in _pairing(table, rates, i, j, rng)]  # fmt: skip
        random_at[m] = kendall_tau(fit(n, drawn), rr_fit)
    return {
        "entrants": n,
        "round_robin_matches": rr_matches,
        "random_tau_at": random_at,
        "round_robin_vs_truth": rr_truth,
        "first": first,
        "settled": settled,
        "as_good": as_good,
        "tau_at": at_marks,
    }


def bench_pairing(
    table: HoleTable, sizes: Sequence[int], trials: int, *, mark: float = 0.3
) -> list[dict[str, Any]]:
    """Per size: the shares of the round-robin's matches the adaptive schedule needed, as
    the median over the trials that got there (and how many did)."""
    out = []
    for field, n in ((f, n) for f in FIELDS for n in sizes):
        runs = [trial(table, n, 1000 * n + t, marks=(mark,), field=field) for t in range(trials)]
        rr = runs[0]["round_robin_matches"]

        def summary(key: str, runs: list[dict[str, Any]] = runs, rr: int = rr) -> dict[str, Any]:
            shares = sorted(r[key] / rr for r in runs if r[key] is not None)
            return {"reached": len(shares),
                    "median_share": shares[len(shares) // 2] if shares else None}

        out.append(
            {
                "field": field,
                "entrants": n,
                "round_robin_matches": rr,
                "trials": trials,
                "round_robin_vs_truth_tau": sum(r["round_robin_vs_truth"] for r in runs) / trials,
                "tau_vs_round_robin_at_mark": sum(r["tau_at"].get(mark, 0.0) for r in runs)
                / trials,
                "random_tau_vs_round_robin_at_mark": sum(
                    r["random_tau_at"].get(mark, 0.0) for r in runs
                )
                / trials,
                "mark": mark,
                "reach_0.9": summary("first"),
                "settle_0.9": summary("settled"),
                "as_close_to_truth": summary("as_good"),
            }
        )
    return out


# ---------------------------------------------------------------- the ladder's own cost


async def _instant_ladder_bot(url: str, key: str, concurrent: int, deck: Any,
                              seats: list[asyncio.Task[None]]) -> None:
    import json

    import websockets

    from cogolf.server.bench import _instant_bot

    async with websockets.connect(
        url, additional_headers={"Authorization": f"Bearer {key}"}
    ) as ws:
        await ws.send(json.dumps({"type": "ready", "concurrent": concurrent}))
        async for frame in ws:
            msg = json.loads(frame)
            if msg.get("type") == "seat":
                seats.append(asyncio.create_task(_instant_bot(msg["url"], deck)))


async def bench_ladder_server(
    deck: Any,
    *,
    games: Any,
    bots: int,
    concurrent: int,
    matches: int,
    holes: int,
    sandbox_mode: str,
    accept_weak: bool,
) -> dict[str, Any]:
    """Matches per second of a ladder server (SQLite) whose bots answer at once, in its
    steady state: from the moment a first `bots` results are counted (every bot off
    probation) until `matches` more are; with the matches at once sampled meanwhile."""
    import tempfile
    import time
    from pathlib import Path

    from cogolf.ladder.service import MatchSettings, open_ladder
    from cogolf.server.run import ServeOptions, start_server

    with tempfile.TemporaryDirectory(prefix="cogolf-bench-ladder-") as tmp:
        ladder = open_ladder(Path(tmp), None, settings=MatchSettings(holes=holes), poll=0.2)
        keys = [ladder.store.add_bot(f"bot{i}") for i in range(bots)]
        server = await start_server(
            ServeOptions(
                games=games, data_dir=Path(tmp), decks={deck.name: deck}, port=0,
                sandbox_mode=sandbox_mode, accept_weak_sandbox=accept_weak, resume=False,
                max_connections=4 * bots * concurrent + 64,
                max_connections_per_address=4 * bots * concurrent + 64,
                addons=[ladder],
            )
        )
        seats: list[asyncio.Task[None]] = []
        clients = [
            asyncio.create_task(
                _instant_ladder_bot(f"{server.ws_url}/ladder", key, concurrent, deck, seats)
            )
            for key in keys
        ]
        try:
            warm = 0
            while warm < bots:
                await asyncio.sleep(0.02)
                warm = await asyncio.to_thread(ladder.store.seq)
            start = time.perf_counter()
            counted, samples = 0, []
            while counted < matches:
                await asyncio.sleep(0.02)
                counted = await asyncio.to_thread(ladder.store.seq) - warm
                samples.append(
                    sum(h.status != "finished" for h in server.registry.matches.values())
                )
            elapsed = time.perf_counter() - start
        finally:
            for task in clients + seats:
                task.cancel()
            await asyncio.gather(*clients, *seats, return_exceptions=True)
            await server.stop()
            ladder.store.engine.dispose()
    return {
        "bots": bots,
        "concurrent": concurrent,
        "matches": counted,
        "holes_per_match": holes,
        "seconds": round(elapsed, 3),
        "matches_per_second": round(counted / elapsed, 3),
        "matches_at_once": round(sum(samples) / len(samples), 2) if samples else 0.0,
    }


def _share(summary: dict[str, Any], trials: int) -> str:
    share = summary["median_share"]
    if share is None:
        return f"not reached (0/{trials})"
    return f"{100 * share:5.1f}% ({summary['reached']}/{trials})"


def format_ladder(doc: dict[str, Any]) -> str:
    lines = [
        "cogolf bench ladder: adaptive pairing against the round-robin (both seat orders per "
        "pairing; entrants mix the pedant and the literalist (narrow field), or a blank play, "
        "the literalist and the pedant (wide), at known rates)",
        f"  {'field':<6} {'entrants':>8} {'RR matches':>10} {'RR tau vs truth':>15}  "
        f"{'tau>=0.9 vs RR: first':>22} {'settled':>16}  {'as close to truth as RR':>24}  "
        "tau vs RR at 30%: adaptive  random",
    ]
    for p in doc["pairing"]:
        t = p["trials"]
        lines.append(
            f"  {p['field']:<6} {p['entrants']:>8} {p['round_robin_matches']:>10} "
            f"{p['round_robin_vs_truth_tau']:>15.3f}  {_share(p['reach_0.9'], t):>22} "
            f"{_share(p['settle_0.9'], t):>16}  {_share(p['as_close_to_truth'], t):>24}  "
            f"{p['tau_vs_round_robin_at_mark']:>25.3f}  "
            f"{p['random_tau_vs_round_robin_at_mark']:.3f}"
        )
    lines.append(
        "  (shares: median over the trials that got there; goal <= 30%. RR tau vs truth is "
        "what the true order itself scores against the round-robin's: where it is under 0.9, "
        "no schedule's order reaches 0.9 but by chance)"
    )
    for run in doc["server"]:
        lad, plain = run["ladder"], run["bench_server"]
        ratio = lad["matches_per_second"] / plain["matches_per_second"]
        lines.append(
            f"  ladder server: {lad['matches_per_second']:.3f} matches/s "
            f"({lad['matches']} results, {lad['matches_at_once']:.1f} at once, {lad['bots']} "
            f"bots)   bench server: {plain['matches_per_second']:.3f} matches/s "
            f"({plain['matches']} at once)   ladder/server {ratio:.2f}"
        )
    return "\n".join(lines)
