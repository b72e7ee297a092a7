"""The league benchmark: an N-entrant night of instant scripted bots, timed.

It measures the league's own overhead around real matches (scheduling, the
parallel executor, replay checks, standings with bootstrap ratings), so it uses
bots that answer at once. `cogolf bench league` and `cogolf league bench` both
call `run_bench`.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import itertools
import tempfile
import time
from pathlib import Path
from typing import Any

from cogolf.deck import DEFAULT_DECK, DEFAULT_REFERENCES, load
from cogolf.engine import rules
from cogolf.league.night import MIN_ENTRANTS, Entrant, Night, default_parallel
from cogolf.league.publish import standings_for_dir
from cogolf.league.runner import RunOptions, run_night

BENCH_POLICIES = (
    "literalist",
    "pedant",
    "cogolf.league.sample_bots:Hybrid",
    "cogolf.league.sample_bots:parrot",
)
BENCH_SEED = 1


def bench_night(entrants: int, holes: int, parallel: int) -> Night:
    policies = itertools.cycle(BENCH_POLICIES)
    return Night(
        path=Path("bench.toml"),
        name=f"bench-{entrants}",
        seed=BENCH_SEED,
        holes=holes,
        hole_deadline=rules.HOLE_DEADLINE_SECONDS,
        retry_deadline=rules.RETRY_DEADLINE_SECONDS,
        match_deadline=1800.0,
        deck=DEFAULT_DECK,
        references=DEFAULT_REFERENCES,
        entrants=tuple(
            Entrant(name=f"bot{i:02d}", policy=next(policies), command=None, line=0)
            for i in range(1, entrants + 1)
        ),
        executor="local",
        parallel=parallel,
        address=None,
        lines={},
    )


def run_bench(
    entrants: int,
    *,
    holes: int = rules.DEFAULT_HOLES,
    parallel: int | None = None,
    sandbox: str = "fork",
    accept_weak_sandbox: bool = False,
    workdir: Path | None = None,
) -> dict[str, Any]:
    """Play the night in `workdir` (a fresh temporary folder by default) and time it."""
    if entrants < MIN_ENTRANTS:
        raise ValueError(f"--entrants must be at least {MIN_ENTRANTS}, got {entrants}")
    parallel = parallel or default_parallel()
    night = bench_night(entrants, holes, parallel)
    deck = load(night.deck, night.references)
    with tempfile.TemporaryDirectory(prefix="cogolf-bench-league-") as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        options = RunOptions(
            replays_root=root / "replays",
            league_root=root / "league",
            sandbox=sandbox,
            accept_weak_sandbox=accept_weak_sandbox,
        )
        started = time.perf_counter()
        run = asyncio.run(run_night(night, deck, options, io.StringIO()))
        total = time.perf_counter() - started
        t0 = time.perf_counter()
        standings_for_dir(run.replays_dir)
        standings_seconds = time.perf_counter() - t0
    played = len(run.outcomes) - len(run.void)
    return {
        "entrants": entrants,
        "holes": holes,
        "parallel": parallel,
        "matches": len(run.jobs),
        "played": played,
        "void": len(run.void),
        "total_seconds": round(total, 3),
        "matches_per_second": round(len(run.jobs) / total, 3) if total > 0 else None,
        "standings_seconds": round(standings_seconds, 3),
    }


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--entrants", type=int, default=8, metavar="N", help="default 8")
    parser.add_argument("--holes", type=int, default=rules.DEFAULT_HOLES, help="default 9")
    parser.add_argument(
        "--parallel", type=int, default=None, metavar="N", help="default: the number of cores"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def format_bench(numbers: dict[str, Any]) -> str:
    return (
        f"league bench: {numbers['entrants']} entrants, {numbers['matches']} matches "
        f"({numbers['played']} played, {numbers['void']} void) of {numbers['holes']} holes, "
        f"parallel {numbers['parallel']}\n"
        f"  total {numbers['total_seconds']:.2f} s, {numbers['matches_per_second']} matches/s, "
        f"standings {numbers['standings_seconds']:.2f} s"
    )
