"""The league benchmark: an N-entrant night of instant scripted bots, timed.

It measures the league's own overhead around real matches (scheduling, the
parallel executor, the night's server and pooled bots, replay checks, standings
with likelihood-interval ratings), so it uses bots that answer at once. Beside the totals
it says where the matches' time went (this process's CPU: server, journal,
league; child processes' CPU: bots and sandbox; sandbox batches running and
queued) and runs `bench server` in the same run, so the league's seconds per
match can be read against the server's alone on the same machine and load.
`cogolf bench league` and `cogolf league bench` both call `run_bench`.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import itertools
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from cogolf.deck import DEFAULT_DECK, DEFAULT_REFERENCES, Deck, load
from cogolf.engine import rules
from cogolf.games.registry import LIVE
from cogolf.league.host import NightHost
from cogolf.league.jobs import MatchJob
from cogolf.league.night import MIN_ENTRANTS, Entrant, Night, default_parallel
from cogolf.league.publish import standings_for_dir
from cogolf.league.runner import NightRun, RunOptions, run_night
from cogolf.server.bench import bench_server

BENCH_POLICIES = (
    "literalist",
    "pedant",
    "cogolf.league.sample_bots:Hybrid",
    "cogolf.league.sample_bots:parrot",
)
BENCH_SEED = 1
EXECUTORS = ("local", "ray")


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
    pooled: bool = True,
    compare_server: bool = True,
    executor: str = "local",
) -> dict[str, Any]:
    """Play the night in `workdir` (a fresh temporary folder by default) and time it:
    the whole run, the matches, where their time went, then `bench server` in the same
    run for the per-match figure of the server alone."""
    if entrants < MIN_ENTRANTS:
        raise ValueError(f"--entrants must be at least {MIN_ENTRANTS}, got {entrants}")
    if executor not in EXECUTORS:
        raise ValueError(f"--executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if executor == "ray" and not pooled:
        raise ValueError("--process-per-seat is for the local executor only")
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
        spent = _Spent()
        started = time.perf_counter()
        if executor == "ray":
            run = _ray_night(night, deck, options, spent)
        else:
            run = asyncio.run(_night(night, deck, options, spent, pooled))
        total = time.perf_counter() - started
        journal_bytes = sum(p.stat().st_size for p in run.replays_dir.glob("*.ndjson"))
        t0 = time.perf_counter()
        standings_for_dir(run.replays_dir)
        standings_seconds = time.perf_counter() - t0
    played = len(run.outcomes) - len(run.void)
    matches_wall = spent.last - spent.first if spent.first else 0.0
    out: dict[str, Any] = {
        "entrants": entrants,
        "holes": holes,
        "parallel": parallel,
        "pooled_bots": pooled,
        "executor": executor,
        "matches": len(run.jobs),
        "played": played,
        "void": len(run.void),
        "total_seconds": round(total, 3),
        "matches_per_second": round(len(run.jobs) / total, 3) if total > 0 else None,
        "standings_seconds": round(standings_seconds, 3),
        "time": {
            "matches_seconds": round(matches_wall, 3),
            "matches_per_second_while_playing": round(len(run.jobs) / matches_wall, 3)
            if matches_wall > 0 else None,
            "seconds_per_match": round(matches_wall / len(run.jobs), 4) if run.jobs else None,
            "around_matches_seconds": round(total - matches_wall, 3),  # schedule, checks, proofs
            "this_process_cpu_seconds": round(spent.cpu, 3),  # server, journal, league
            "child_cpu_seconds": round(spent.child_cpu, 3),  # bots, launchers, sandbox
            "sandbox_batches": spent.batches,
            "sandbox_busy_seconds": round(spent.busy, 3),  # summed over batches at once
            "sandbox_queue_wait_seconds": round(spent.wait, 3),
            "bot_processes_started": spent.bot_starts,
            "servers_started": spent.server_starts,
            "journal_bytes": journal_bytes,
        },
    }
    if compare_server:
        server = asyncio.run(bench_server(deck, games=LIVE, matches=parallel, holes=holes,
                                          sandbox_mode=sandbox, accept_weak=accept_weak_sandbox))
        out["server"] = {
            "matches": server["matches"],
            "matches_per_second": server["matches_per_second"],
            "seconds_per_match": round(server["seconds"] / server["matches"], 4),
        }
    return out


class _Spent:
    """What the matches of a bench night cost, filled in by `_night`."""

    first = last = cpu = child_cpu = cpu_end = child_cpu_end = busy = wait = 0.0
    batches = bot_starts = server_starts = 0


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def _night(night: Night, deck: Deck, options: RunOptions, spent: _Spent,
                 pooled: bool) -> NightRun:
    host = NightHost(options.replays_root / night.name, sandbox=options.sandbox,
                     accept_weak_sandbox=options.accept_weak_sandbox, pooled=pooled)

    async def timed(job: MatchJob, replays_dir: Path) -> Path:
        now = time.perf_counter()
        if not spent.first:
            spent.first, spent.cpu, spent.child_cpu = now, time.process_time(), _child_cpu()
        try:
            return await host.play(job, replays_dir)
        finally:
            spent.last = time.perf_counter()
            spent.cpu_end, spent.child_cpu_end = time.process_time(), _child_cpu()
            queue = host.server.registry.sandbox if host.server is not None else None
            spent.batches = getattr(queue, "batches", 0)
            spent.busy = getattr(queue, "busy_seconds", 0.0)
            spent.wait = getattr(queue, "wait_seconds", 0.0)

    try:
        run = await run_night(night, deck, options, io.StringIO(), attempt=timed)
    finally:
        spent.bot_starts, spent.server_starts = host.bot_starts, host.server_starts
        await host.close()
    # Over the matches only (a pooled bot's CPU counts once it has exited: at the end).
    spent.cpu = spent.cpu_end - spent.cpu
    spent.child_cpu = _child_cpu() - spent.child_cpu
    return run


def _ray_night(night: Night, deck: Deck, options: RunOptions, spent: _Spent) -> NightRun:
    """The bench night on a local Ray instance with `parallel` workers. The CPU figures
    are this process's only: the workers are Ray's processes, not our children."""
    from cogolf.league.ray_executor import IN_FLIGHT, RayAttempt

    cpu, child_cpu = time.process_time(), _child_cpu()
    with RayAttempt(None, night.parallel) as attempt:

        async def timed(job: MatchJob, replays_dir: Path) -> Path:
            if not spent.first:
                spent.first = time.perf_counter()
            try:
                return await attempt(job, replays_dir)
            finally:
                spent.last = time.perf_counter()

        run = asyncio.run(run_night(night, deck, options, io.StringIO(), attempt=timed,
                                    in_flight=IN_FLIGHT))
    stats = attempt.stats
    spent.cpu, spent.child_cpu = time.process_time() - cpu, _child_cpu() - child_cpu
    spent.batches = stats.get("sandbox_batches", 0)
    spent.busy = stats.get("sandbox_busy_seconds", 0.0)
    spent.wait = stats.get("sandbox_queue_wait_seconds", 0.0)
    spent.bot_starts = stats.get("bot_starts", 0)
    spent.server_starts = stats.get("server_starts", 0)
    return run


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--entrants", type=int, default=8, metavar="N", help="default 8")
    parser.add_argument("--holes", type=int, default=rules.DEFAULT_HOLES, help="default 9")
    parser.add_argument(
        "--parallel", type=int, default=None, metavar="N", help="default: the number of cores"
    )
    parser.add_argument(
        "--process-per-seat",
        action="store_true",
        help="start a bot process for every seat instead of one per policy entrant",
    )
    parser.add_argument(
        "--executor", choices=EXECUTORS, default="local",
        help="local (default: one server for the night) or ray (a local Ray instance, "
        "one worker per --parallel, a server per worker; needs cogolf[ray])",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def format_bench(numbers: dict[str, Any]) -> str:
    t = numbers["time"]
    ray = numbers["executor"] == "ray"
    around = "Ray start and stop, checks, proofs, standings" if ray else "checks, proofs, standings"
    children = "Ray's processes, not counted" if ray else f"{t['child_cpu_seconds']:.2f} s CPU"
    lines = [
        f"league bench: {numbers['entrants']} entrants, {numbers['matches']} matches "
        f"({numbers['played']} played, {numbers['void']} void) of {numbers['holes']} holes, "
        f"parallel {numbers['parallel']}, executor {numbers['executor']}"
        + ("" if numbers["pooled_bots"] else ", a bot process per seat"),
        f"  total {numbers['total_seconds']:.2f} s, {numbers['matches_per_second']} matches/s, "
        f"standings {numbers['standings_seconds']:.2f} s",
        f"  matches   {t['matches_seconds']:.2f} s, {t['matches_per_second_while_playing']} "
        f"matches/s, {t['seconds_per_match']} s per match; around them "
        f"{t['around_matches_seconds']:.2f} s ({around})",
        f"  where     this process (server, journal, league) {t['this_process_cpu_seconds']:.2f} "
        f"s CPU; child processes (bots, sandbox) {children}",
        f"  sandbox   {t['sandbox_batches']} batches, {t['sandbox_busy_seconds']:.2f} s running, "
        f"{t['sandbox_queue_wait_seconds']:.2f} s queued",
        f"  bots      {t['bot_processes_started']} pooled processes started, "
        f"{t['servers_started']} servers; "
        f"journal {t['journal_bytes'] // 1024} KiB",
    ]
    if "server" in numbers:
        srv = numbers["server"]
        lines.append(
            f"  bench server, same run: {srv['matches']} matches, {srv['matches_per_second']} "
            f"matches/s, {srv['seconds_per_match']} s per match (league: "
            f"{t['seconds_per_match']} s per match)")
    return "\n".join(lines)
