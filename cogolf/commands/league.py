"""`cogolf league`: run a night from its TOML file, recompute standings from replays, benchmark."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from cogolf.commands.common import (
    add_deck_options,
    add_json_option,
    add_replays_option,
    add_sandbox_options,
    load_deck_or_exit,
)
from cogolf.commands.league_publish import register_publish
from cogolf.deck import Deck
from cogolf.game import NightJob
from cogolf.league.bench import add_bench_arguments, format_bench, run_bench
from cogolf.league.checks import check_night
from cogolf.league.night import Night, NightError, parse_night
from cogolf.league.nightfields import Problems
from cogolf.league.plan import night_plan
from cogolf.league.planfile import PLAN_NAME, PlanError
from cogolf.league.proof import Checks
from cogolf.league.publish import default_standings_path, standings_for_dir, write_standings
from cogolf.league.ray_executor import IN_FLIGHT as RAY_IN_FLIGHT
from cogolf.league.ray_executor import RayAttempt, RayUnavailable
from cogolf.league.resume import VerifyUnavailable
from cogolf.league.runner import RunOptions, run_night
from cogolf.league.schedule import schedule
from cogolf.league.table import render
from cogolf.logs import configure
from cogolf.replay import ReplayError
from cogolf.sandbox import make_sandbox

DEFAULT_REPLAYS = Path("replays")
DEFAULT_LEAGUE = Path("league")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "league",
        help="run a league night and compute its standings",
        description=(
            "League nights: every pairing of a night file's entrants in both seat orders, "
            "played in parallel, ranked from the replay files alone."
        ),
    )
    lsub = p.add_subparsers(dest="league_command", metavar="SUBCOMMAND", required=True)

    run = lsub.add_parser(
        "run",
        help="play every match of a night not yet played, then write its standings",
        description=(
            "Play the round-robin of NIGHT (a TOML night file), writing "
            "REPLAYS/<night>/<match_id>.ndjson, then LEAGUE/<night>/standings.json. "
            "Matches whose complete replay already exists, matches the night and verifies "
            "(every hole re-resolved) are kept, so running a night again resumes it. "
            "A match whose infrastructure fails twice is recorded as void and not scored. "
            "Then the night's solo games ([golf], [commit0], [project] sections) are played "
            "for every entrant with a submission path, each result written under "
            "REPLAYS/<night>/<game>/ and kept on the next run. "
            "Exit status: 0, 1 when some match or solo result is void, 2 for a bad night file, "
            "3 when the sandbox or Ray cannot start."
        ),
    )
    run.add_argument("night", type=Path, metavar="NIGHT", help="the night file, e.g. league/x.toml")
    _add_output_options(run)
    run.add_argument(
        "--parallel", type=int, default=None, metavar="N", help="override the night's parallel"
    )
    add_sandbox_options(run)
    run.add_argument(
        "--no-verify",
        action="store_true",
        help="keep finished replays on a header check alone, without re-resolving their holes",
    )
    add_json_option(run, "the standings as JSON")
    run.set_defaults(func=run_command)

    st = lsub.add_parser(
        "standings",
        help="recompute a night's standings from its replay folder",
        description=(
            "Read every replay (and void marker) in DIR and write the standings: "
            "table, head-to-head margins and Bradley-Terry ratings anchored at literalist = 1000; "
            "the solo games' tables (golf per course and combined, Commit-0 mean pass rate, "
            "project points per task) from DIR/golf, DIR/commit0 and DIR/project; and the "
            "combined table: entrants with a result in every game, ranked by their mean "
            "per-game rank. The same folder always gives byte-identical standings.json."
        ),
    )
    st.add_argument("replays", type=Path, metavar="DIR", help="e.g. replays/example/")
    st.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE",
        help="where to write (default: league/<night>/standings.json)",
    )
    st.add_argument(
        "--anchor",
        default=None,
        metavar="NAME",
        help="entrant rated 1000 (default: the night's manifest, else literalist)",
    )
    add_json_option(st, "the standings as JSON")
    add_deck_options(st)
    add_sandbox_options(st)
    st.add_argument("--parallel", type=int, default=1, metavar="N",
                    help="replays verified at once (default: 1)")
    st.set_defaults(func=standings_command)

    ck = lsub.add_parser(
        "check",
        help="validate a night file and print its schedule",
        description="Parse NIGHT, load its pack and every policy, and list the matches it plays.",
    )
    ck.add_argument("night", type=Path, metavar="NIGHT", help="the night file, e.g. league/x.toml")
    add_json_option(ck, "the schedule as JSON")
    ck.set_defaults(func=check_command)

    # The old spelling of `cogolf bench league`, kept working but no longer listed.
    bench = lsub.add_parser("bench", description="Deprecated: use `cogolf bench league`.")
    bench_arguments(bench)
    bench.set_defaults(func=_deprecated_bench)

    register_publish(lsub)


def _add_output_options(p: argparse.ArgumentParser) -> None:
    add_replays_option(p, DEFAULT_REPLAYS)
    p.add_argument(
        "--league-dir",
        type=Path,
        default=DEFAULT_LEAGUE,
        metavar="DIR",
        help="where standings go (default: league)",
    )


def _fail(message: str, code: int = 2) -> int:
    print(f"cogolf: {message}", file=sys.stderr)
    return code


def _print_standings(doc: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        print(render(doc))


def play_llm_golf(night: Any, replays: Path, report: Any) -> Any:
    """LLM entrants play the night's golf courses live first (see `llm_golf`)."""
    from cogolf.commands.llm_golf import play_llm_golf as play

    return play(night, replays, report)


def _print_llm_usage(night_dir: Path, as_json: bool) -> None:
    """LLM entrants' tokens and cost: written beside their transcripts, shown under the table."""
    from cogolf.llm.usage import night_usage, render_usage, write_usage

    doc = night_usage(night_dir)
    if doc is None:
        return
    path = write_usage(doc, night_dir)
    if not as_json:
        print("\n" + render_usage(doc))
    print(f"\n  llm usage: {path}", file=sys.stderr)


async def _preflight(mode: str, accept_weak: bool) -> None:
    """Start one sandbox before the night, so a machine that cannot run matches fails
    once with the reason instead of voiding every match."""
    sandbox = make_sandbox(mode, accept_weak=accept_weak)
    try:
        await sandbox.start()
    finally:
        await sandbox.close()


def run_command(args: argparse.Namespace) -> int:
    configure(level=args.log_level)
    if args.parallel is not None and args.parallel < 1:
        return _fail(f"--parallel must be at least 1, got {args.parallel}")
    try:
        night, _ = checked_night(args.night)
        night = play_llm_golf(night, args.replays, lambda line: print(line, file=sys.stderr))
        deck = check_night(night)  # again: the golf an LLM entrant played is now its files
    except NightError as exc:
        return _fail(str(exc))
    options = RunOptions(
        replays_root=args.replays,
        league_root=args.league_dir,
        sandbox=args.sandbox,
        accept_weak_sandbox=args.accept_weak_sandbox,
        parallel=args.parallel,
        verify=not args.no_verify,
    )
    if night.executor == "local":
        try:
            asyncio.run(_preflight(args.sandbox, args.accept_weak_sandbox))
        except Exception as exc:  # whatever stops the sandbox stops the night
            return _fail(f"the sandbox cannot start: {exc}", 3)
    try:
        if night.executor == "ray":
            with RayAttempt(night.address, options.parallel or night.parallel) as attempt:
                result = asyncio.run(
                    run_night(
                        night, deck, options, sys.stderr, attempt=attempt,
                        in_flight=RAY_IN_FLIGHT, agents=attempt.agents,
                    )
                )
        else:
            result = asyncio.run(run_night(night, deck, options, sys.stderr))
    except (RayUnavailable, VerifyUnavailable) as exc:
        return _fail(str(exc), 3)
    except PlanError as exc:
        return _fail(str(exc))
    _print_standings(result.standings, args.json)
    _print_llm_usage(result.replays_dir, args.json)
    print(f"\n  standings: {result.standings_path}", file=sys.stderr)
    if result.plan is not None:
        grew = f", {result.plan_added} added by this run" if result.plan_added else ""
        print(f"  plan: {result.replays_dir / PLAN_NAME} (revision {result.plan.revision}, "
              f"{len(result.plan.matches)} matches{grew})", file=sys.stderr)
    if result.skipped:
        print(f"  resumed: {len(result.skipped)} matches already played", file=sys.stderr)
    solo = result.solo
    if solo.played or solo.skipped or solo.void:
        print(f"  solo results: {len(solo.played)} played, {len(solo.skipped)} kept, "
              f"{len(solo.void)} void", file=sys.stderr)
    return 1 if result.void or solo.void else 0


def standings_command(args: argparse.Namespace) -> int:
    """Only what the folder can prove counts: replays are re-resolved (verdicts cached,
    signed, in the folder) and solo results must carry the night runner's signature."""
    configure("warning")
    if args.parallel < 1:
        return _fail(f"--parallel must be at least 1, got {args.parallel}")
    checks = Checks(load_deck_or_exit(args), args.sandbox, args.accept_weak_sandbox, args.parallel)
    try:
        doc = standings_for_dir(args.replays, args.anchor, checks=checks)
    except (ReplayError, OSError) as exc:
        return _fail(str(exc))
    except VerifyUnavailable as exc:
        return _fail(str(exc), 3)
    out = args.out or default_standings_path(DEFAULT_LEAGUE, doc["night"])
    write_standings(doc, out, night_dir=args.replays)
    _print_standings(doc, args.json)
    _print_llm_usage(args.replays, args.json)
    print(f"\n  standings: {out}", file=sys.stderr)
    return 0


def checked_night(path: Path) -> tuple[Night, Deck]:
    """The night file parsed and checked in one pass: NightError lists every problem
    found, the file's and those only the deck, the policies and the plan show."""
    problems = Problems(path)
    night = parse_night(path, problems=problems)
    deck = check_night(night, problems)
    for line in problems.warning_lines():
        print(line, file=sys.stderr)
    problems.raise_any()
    assert deck is not None
    return night, deck


def check_command(args: argparse.Namespace) -> int:
    try:
        night, deck = checked_night(args.night)
    except NightError as exc:
        return _fail(str(exc))
    jobs = schedule(night, deck.digest)
    plan = night_plan(night)
    if args.json:
        print(json.dumps({
            "night": night.name, "entrants": [e.name for e in night.entrants],
            "holes": night.holes, "executor": night.executor, "parallel": night.parallel,
            "schedule": night.schedule, "budget": night.budget,
            "matches": [{"round": j.round, "match_id": j.match_id, "seed": j.seed,
                         "names": list(j.names)} for j in jobs],
            "solo": [{"game": s.game, "entrant": s.entrant, "item": s.item,
                      "attempt": s.attempt, "submission": _source(s)}
                     for s in plan.jobs],
        }, indent=2))
        return 0
    print(
        f"night {night.name}: {len(night.entrants)} entrants, {len(jobs)} matches of "
        f"{night.holes} holes, executor {night.executor} (parallel {night.parallel})"
    )
    if night.schedule == "adaptive":
        print(f"adaptive schedule: {night.budget} of these matches, pairings chosen as "
              "results come in")
    for job in jobs:
        print(f"  round {job.round:2d}  {job.match_id}  seed {job.seed}")
    if plan.games:
        print(f"solo games: {', '.join(plan.games)}, {len(plan.jobs)} results")
        for solo_job in plan.jobs:
            print(f"  {solo_job.label}  <- {_source(solo_job)}")
    return 0


def _source(job: NightJob) -> str:
    """What a solo job scores: a submission's path, or the agent that plays it."""
    return str(job.submission) if job.submission is not None else f"agent {job.agent.name}"


def bench_arguments(p: argparse.ArgumentParser) -> None:
    """Options of the league benchmark, shared with `cogolf bench league`."""
    add_bench_arguments(p)
    add_sandbox_options(p)


def _deprecated_bench(args: argparse.Namespace) -> int:
    print("cogolf: `cogolf league bench` is deprecated: use `cogolf bench league`",
          file=sys.stderr)
    return bench_command(args)


def bench_command(args: argparse.Namespace) -> int:
    configure(level="warning")
    try:
        numbers = run_bench(
            args.entrants,
            holes=args.holes,
            parallel=args.parallel,
            sandbox=args.sandbox,
            accept_weak_sandbox=args.accept_weak_sandbox,
            pooled=not args.process_per_seat,
            executor=args.executor,
        )
    except RayUnavailable as exc:
        return _fail(str(exc), 3)
    except ValueError as exc:
        return _fail(str(exc))
    print(json.dumps(numbers, sort_keys=True) if args.json else format_bench(numbers))
    return 0
