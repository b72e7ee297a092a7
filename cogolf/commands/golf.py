"""`cogolf golf ...`: score a folder of golf files, play a solo match, rank, time courses."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import msgspec

from cogolf.golf import leaderboard, tables
from cogolf.golf.bench import bench
from cogolf.golf.courses import COURSES, get_course
from cogolf.golf.holes import ROOT, GolfDataError, load_holes
from cogolf.golf.play import SubmissionError, read_submissions, score_course
from cogolf.golf.policy import PolicyError, load_policy
from cogolf.golf.results import ResultError, check_model, new_result, read_results, write_result
from cogolf.golf.runners.base import DEFAULT_LIMITS, RunLimits
from cogolf.golf.session import play_solo
from cogolf.golf.toolchains import ToolchainError

DEFAULT_RESULTS = Path("results") / "golf"
DEFAULT_SOLUTIONS = ROOT / "tests" / "golf" / "solutions"


def register(subparsers: argparse._SubParsersAction) -> None:
    golf = subparsers.add_parser(
        "golf", help="code golf as a solo game: 18 holes in python, racket and rust",
        description="Code golf: score = bytes + penalty x (1 - correctness)^2 per hole.",
    )
    sub = golf.add_subparsers(dest="golf_command", metavar="SUBCOMMAND", required=True)

    score = sub.add_parser("score", help="score a folder of submissions and write a result file",
                           description="Files are named after the holes (reverse-string.py, "
                           ".rkt, .rs); a folder <hole>/ holds several attempts.")
    _course_arg(score)
    score.add_argument("--model", required=True, help="name the result is ranked under")
    score.add_argument("submissions", type=Path, metavar="SUBMISSIONS_DIR")
    _common(score)
    score.set_defaults(func=_score)

    play = sub.add_parser("play", help="play a course as a live solo match with a policy",
                          description="--bot FILE.py:NAME or MODULE:NAME: a function from an "
                          "observation dict to {'source': ...}. (A websocket URL is not "
                          "supported yet.)")
    _course_arg(play)
    play.add_argument("--bot", required=True, metavar="POLICY")
    play.add_argument("--model", help="name for the result (default: the policy reference)")
    play.add_argument("--deadline", type=float, default=120.0, help="seconds per reply")
    play.add_argument("--replay", type=Path, help="NDJSON replay file to write")
    _common(play)
    play.set_defaults(func=_play)

    board = sub.add_parser("leaderboard", help="rank the result files of a folder",
                           description="Per-course tables, the combined table and, with "
                           "--model, that model's page; --json writes all of it as JSON.")
    board.add_argument("results", type=Path, metavar="RESULTS_DIR")
    board.add_argument("--courses", default=",".join(COURSES),
                       help="comma-separated courses (default: all)")
    board.add_argument("--model", help="also show this model's page, hole by hole")
    board.add_argument("--json", type=Path, metavar="FILE", help="write the tables as JSON")
    board.set_defaults(func=_leaderboard)

    timing = sub.add_parser("bench", help="time full courses with the reference solutions")
    add_bench_arguments(timing)
    timing.set_defaults(func=run_bench)


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """Shared with `cogolf bench golf`."""
    parser.add_argument("--courses", default=",".join(COURSES))
    parser.add_argument("--solutions", type=Path, default=DEFAULT_SOLUTIONS)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _course_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--course", required=True, choices=sorted(COURSES))


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS,
                        help=f"folder for result files (default: {DEFAULT_RESULTS})")
    parser.add_argument("--jobs", type=int, default=2, help="holes run at the same time")
    parser.add_argument("--per-test-seconds", type=float, default=DEFAULT_LIMITS.per_test_seconds)
    parser.add_argument("--per-hole-seconds", type=float, default=DEFAULT_LIMITS.per_hole_seconds)


def _limits(args: argparse.Namespace) -> RunLimits:
    return RunLimits(per_test_seconds=args.per_test_seconds,
                     per_hole_seconds=args.per_hole_seconds)


def _fail(message: str) -> int:
    print(f"cogolf golf: {message}", file=sys.stderr)
    return 2


def _score(args: argparse.Namespace) -> int:
    try:
        check_model(args.model)
        holes = load_holes()
        course = get_course(args.course)
        subs = read_submissions(args.submissions, course, holes)
        runner = course.runner(_limits(args))
        results = asyncio.run(score_course(holes, runner, subs, jobs=args.jobs))
        doc = new_result(args.model, course.name, holes.version, results)
        path = write_result(args.results, doc)
    except (GolfDataError, SubmissionError, ResultError, ToolchainError, ValueError) as exc:
        return _fail(str(exc))
    print(tables.hole_table(results))
    t = doc.totals
    print(f"\n{course.name}: score {t.score:.2f}, holes passed {t.holes_passed}/{t.holes_total}, "
          f"tests {t.tests_passed}/{t.tests_total}, raw bytes {t.raw_bytes}, "
          f"penalty {t.penalty:.2f}, official bytes {t.official_bytes}")
    print(f"result: {path}")
    return 0


def _play(args: argparse.Namespace) -> int:
    if "://" in args.bot:
        return _fail("--bot: websocket URLs are not supported yet; "
                     "give FILE.py:NAME or MODULE:NAME")
    try:
        policy = load_policy(args.bot)
        model = check_model(args.model or args.bot)
        holes = load_holes()
        course = get_course(args.course)
        limits = _limits(args)
        runner = course.runner(limits)
        results = asyncio.run(play_solo(course, holes, policy, runner, limits, model=model,
                                        deadline_seconds=args.deadline, replay=args.replay))
        doc = new_result(model, course.name, holes.version, results)
        path = write_result(args.results, doc)
    except (PolicyError, GolfDataError, ResultError, ToolchainError, ValueError) as exc:
        return _fail(str(exc))
    print(tables.hole_table(results))
    print(f"\n{course.name}: score {doc.totals.score:.2f}; result: {path}")
    if args.replay:
        print(f"replay: {args.replay}")
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    courses = [c.strip() for c in args.courses.split(",") if c.strip()]
    unknown = [c for c in courses if c not in COURSES]
    if unknown or not courses:
        return _fail(f"--courses: unknown course(s) {unknown}; choose from {', '.join(COURSES)}")
    try:
        loaded = read_results(args.results)
    except ResultError as exc:
        return _fail(str(exc))
    for err in loaded.errors:
        print(f"skipped: {err}", file=sys.stderr)
    out: dict[str, object] = {"courses": {}, "combined": [], "errors": loaded.errors}
    for c in courses:
        rows = leaderboard.course_board(loaded.docs, c)
        out["courses"][c] = rows  # type: ignore[index]
        print(f"== {c} ==\n{tables.course_table(rows)}\n")
    combined = leaderboard.combined_board(loaded.docs, courses)
    out["combined"] = combined
    print(f"== combined ({', '.join(courses)}) ==\n{tables.combined_table(combined, courses)}")
    if args.model:
        page = leaderboard.model_page(loaded.docs, args.model, courses)
        out["model"] = {"model": args.model, "courses": page}
        print(f"\n== {args.model} ==\n{tables.model_table(page)}")
        for entry in page:
            print(f"\n-- {args.model} / {entry.course} --\n{tables.hole_table(entry.result.holes)}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_bytes(msgspec.json.format(msgspec.json.encode(out), indent=1) + b"\n")
        print(f"\njson: {args.json}")
    return 0


def run_bench(args: argparse.Namespace) -> int:
    courses = [c.strip() for c in args.courses.split(",") if c.strip()]
    try:
        rows = bench(load_holes(), courses, args.solutions, DEFAULT_LIMITS, args.jobs)
    except (GolfDataError, SubmissionError, ToolchainError, ValueError) as exc:
        return _fail(str(exc))
    if args.json:
        print(json.dumps(rows))
    else:
        print(tables.render(["Course", "Seconds", "Holes Passed", "Bytes"],
                            [[str(r["course"]), f"{r['seconds']:.3f}",
                              f"{r['holes_passed']}/{r['holes']}", str(r["bytes"])] for r in rows]))
    return 0
