"""`cogolf golf ...`: score a folder of golf files, play a solo match, rank, time courses."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

import msgspec

from cogolf.bots.policy import PolicyError, builtin_names, load_policy, seat_name
from cogolf.commands.common import add_json_option, add_replays_option
from cogolf.games.golf import leaderboard, live, tables
from cogolf.games.golf.bench import bench
from cogolf.games.golf.courses import COURSES, get_course
from cogolf.games.golf.holes import ROOT, GolfDataError, load_holes
from cogolf.games.golf.play import SubmissionError, read_submissions, score_course
from cogolf.games.golf.results import (
    ResultError,
    check_model,
    new_result,
    read_results,
    write_result,
)
from cogolf.games.golf.runners.base import DEFAULT_LIMITS, RunLimits
from cogolf.games.golf.settings import GolfSettings
from cogolf.games.golf.toolchains import ToolchainError
from cogolf.games.golf.wire import (
    DEFAULT_HOLE_DEADLINE_SECONDS,
    DEFAULT_MODEL,
    DEFAULT_RETRY_DEADLINE_SECONDS,
    GolfConfig,
)
from cogolf.logs import configure
from cogolf.matchid import MatchIdError, check_match_id, new_match_id
from cogolf.replay import ReplayError
from cogolf.server.play import BotStartError
from cogolf.server.requests import MAX_DEADLINE, MIN_DEADLINE, RequestError

DEFAULT_RESULTS = Path("results") / "golf"
DEFAULT_REPLAYS = Path("replays")
DEFAULT_SOLUTIONS = ROOT / "tests" / "games" / "golf" / "solutions"


COLUMNS = """\
the tables' columns:
  Bytes, Raw Bytes  the submission's size in UTF-8 bytes (raw: summed over every hole)
  Penalty           the hole's penalty x (1 - correctness)^2: what failed tests cost
  Score, Total      bytes + penalty (summed over holes, then courses); lower is better
  Correctness       tests passed / tests, public and private together
  Tests             tests passed/total; Holes Passed: holes passing every test
  official bytes    (after `score`) the bytes of the holes that pass every test only"""


def register(subparsers: argparse._SubParsersAction) -> None:
    golf = subparsers.add_parser(
        "golf", help="code golf as a solo game: 18 holes in python, racket and rust",
        description="Code golf: score = bytes + penalty x (1 - correctness)^2 per hole.",
        epilog=COLUMNS, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = golf.add_subparsers(dest="golf_command", metavar="SUBCOMMAND", required=True)

    score = sub.add_parser("score", help="score a folder of submissions and write a result file",
                           description="Files are named after the holes (reverse-string.py, "
                           ".rkt, .rs); a folder <hole>/ holds several attempts.")
    _course_arg(score)
    score.add_argument("--model", required=True, help="name the result is ranked under")
    score.add_argument("submissions", type=Path, metavar="SUBMISSIONS_DIR",
                       help="a folder of files named after the holes")
    add_json_option(score, "the result document as JSON")
    _common(score)
    score.set_defaults(func=_score)

    play = sub.add_parser(
        "play", help="play a course as a live solo match over websockets",
        description="One seat, 18 holes: per hole an observation (course, task, signature, "
        "public tests), a reply {type: submission, hole, source}, deadlines, one retry, and "
        "no submission (the full penalty) as the fallback. --bot FILE.py:NAME or MODULE:NAME "
        "plays a policy (observation dict -> {'source': ...} or the source text) as a "
        "separate `cogolf bot` process over real websockets on a loopback port. --bot wait "
        "hosts the match on a free loopback port and waits for an external bot at the "
        "printed seat URL; --bot ws://HOST:PORT does the same, listening on that address. "
        "Writes DIR/<match_id>.ndjson and the result document.")
    _course_arg(play)
    play.add_argument("--bot", required=True, metavar="POLICY|wait|ws://HOST:PORT",
                      help="FILE.py:NAME or MODULE:NAME plays that policy; wait or "
                      "ws://HOST:PORT waits for an external bot")
    play.add_argument("--model", help="name for the result (default: the policy reference)")
    play.add_argument("--hole-deadline", type=float, default=DEFAULT_HOLE_DEADLINE_SECONDS,
                      metavar="S", help="seconds per hole (default %(default)g)")
    play.add_argument("--retry-deadline", type=float, default=DEFAULT_RETRY_DEADLINE_SECONDS,
                      metavar="S", help="seconds for the retry (default %(default)g)")
    play.add_argument("--connect-timeout", type=float, default=600.0, metavar="S",
                      help="wait/ws://: seconds to wait for the bot (default %(default)g)")
    play.add_argument("--match-id", help="default: golf-<course>-<timestamp>")
    add_replays_option(play, DEFAULT_REPLAYS)
    play.add_argument("--in-process", action="store_true",
                      help="run the policy in this process instead of as a websocket bot")
    play.add_argument("-v", "--verbose", action="store_true", help="log every hole to stderr")
    _common(play)
    play.set_defaults(func=_play)

    board = sub.add_parser("leaderboard", help="rank the result files of a folder",
                           description="Per-course tables, the combined table and, with "
                           "--model, that model's page; --json writes all of it as JSON.")
    board.add_argument("results", type=Path, metavar="RESULTS_DIR",
                       help="the folder of result files")
    board.add_argument("--courses", default=",".join(COURSES),
                       help="comma-separated courses (default: all)")
    board.add_argument("--model", help="also show this model's page, hole by hole")
    board.add_argument("--json", nargs="?", const="-", default=None, metavar="FILE",
                       help="print the tables as JSON instead of text; with FILE, write "
                       "them there as well as printing the text")
    board.set_defaults(func=_leaderboard)

    # The old spelling of `cogolf bench golf`, kept working but no longer listed.
    timing = sub.add_parser("bench", description="Deprecated: use `cogolf bench golf`.")
    add_bench_arguments(timing)
    timing.set_defaults(func=_deprecated_bench)


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `cogolf bench golf`."""
    parser.add_argument("--courses", default=",".join(COURSES),
                        help="comma-separated courses (default: all)")
    parser.add_argument("--solutions", type=Path, default=DEFAULT_SOLUTIONS, metavar="DIR",
                        help="the reference solutions, a folder per course "
                        "(default: the project's own)")
    parser.add_argument("--jobs", type=int, default=2, help="holes run at the same time")
    add_json_option(parser, "JSON")


def _deprecated_bench(args: argparse.Namespace) -> int:
    print("cogolf: `cogolf golf bench` is deprecated: use `cogolf bench golf`", file=sys.stderr)
    return run_bench(args)


def _course_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--course", required=True, choices=sorted(COURSES),
                        help="the course: its language")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS,
                        help=f"folder for result files (default: {DEFAULT_RESULTS})")
    parser.add_argument("--jobs", type=int, default=2, help="holes run at the same time")
    parser.add_argument("--per-test-seconds", type=float, default=DEFAULT_LIMITS.per_test_seconds,
                        metavar="S", help="seconds per test (default %(default)g)")
    parser.add_argument("--per-hole-seconds", type=float, default=DEFAULT_LIMITS.per_hole_seconds,
                        metavar="S", help="wall seconds, all tests of a hole (default %(default)g)")


def _limits(args: argparse.Namespace) -> RunLimits:
    return RunLimits(per_test_seconds=args.per_test_seconds,
                     per_hole_seconds=args.per_hole_seconds)


def _fail(message: str) -> int:
    print(f"cogolf golf: {message}", file=sys.stderr)
    return 2


def _score(args: argparse.Namespace) -> int:
    configure("warning")
    try:
        check_model(args.model)
        holes = load_holes()
        course = get_course(args.course)
        subs = read_submissions(args.submissions, course, holes)
        runner = course.runner(_limits(args))
        try:
            results = asyncio.run(score_course(holes, runner, subs, jobs=args.jobs))
        finally:
            runner.close()
        doc = new_result(args.model, course.name, holes.version, results)
        path = write_result(args.results, doc)
    except (GolfDataError, SubmissionError, ResultError, ToolchainError, ValueError) as exc:
        return _fail(str(exc))
    if args.json:
        sys.stdout.write(path.read_text(encoding="utf-8"))
        return 0
    print(tables.hole_table(results))
    t = doc.totals
    print(f"\n{course.name}: score {t.score:.2f}, holes passed {t.holes_passed}/{t.holes_total}, "
          f"tests {t.tests_passed}/{t.tests_total}, raw bytes {t.raw_bytes}, "
          f"penalty {t.penalty:.2f}, official bytes {t.official_bytes}")
    print(f"result: {path}")
    return 0


def _play(args: argparse.Namespace) -> int:
    configure("info" if args.verbose else "warning")
    try:
        listen = live.parse_listen(args.bot)
        if listen is None:
            if args.bot in builtin_names():
                return _fail(f"--bot {args.bot}: a Cogolf policy; golf needs FILE.py:NAME, "
                             "MODULE:NAME, wait or ws://HOST:PORT")
            policy = load_policy(args.bot)  # fail here, not in the bot process
        elif args.in_process:
            return _fail("--in-process needs a policy, not wait or a ws:// address")
        default = seat_name(args.bot) if listen is None else DEFAULT_MODEL  # llm:x.toml -> llm:x
        model = check_model(args.model or default)
        get_course(args.course).runner(_limits(args))  # a missing toolchain fails before play
        for name in ("hole_deadline", "retry_deadline"):
            if not MIN_DEADLINE <= getattr(args, name) <= MAX_DEADLINE:
                return _fail(f"--{name.replace('_', '-')}: between {MIN_DEADLINE} and "
                             f"{MAX_DEADLINE} seconds")
    except (PolicyError, live.BotAddressError, ResultError, ToolchainError, ValueError) as exc:
        return _fail(str(exc))
    limits = _limits(args)
    config = GolfConfig(course=args.course, model=model,
                        hole_deadline_seconds=args.hole_deadline,
                        retry_deadline_seconds=args.retry_deadline,
                        per_test_seconds=limits.per_test_seconds,
                        per_hole_seconds=limits.per_hole_seconds)
    settings = GolfSettings(results_dir=args.results, limits=limits)
    try:  # the id names the journal; the random part keeps two runs in one second apart
        match_id = check_match_id(args.match_id, "--match-id") if args.match_id else (
            new_match_id(f"golf-{args.course}-{time.strftime('%Y%m%d-%H%M%S')}"))
    except MatchIdError as exc:
        return _fail(str(exc))
    try:
        if listen is not None:
            played = asyncio.run(live.host_and_wait(
                config, listen, settings, args.replays, lambda line: print(line, flush=True),
                match_id=match_id, connect_timeout=args.connect_timeout))
        elif args.in_process:
            played = asyncio.run(live.play_in_process(config, policy, settings, args.replays,
                                                      match_id))
        else:
            played = asyncio.run(live.play_with_bot_process(config, args.bot, settings,
                                                            args.replays, match_id=match_id))
    except (BotStartError, RequestError, OSError, ReplayError) as exc:
        return _fail(str(exc))
    result = played.result
    if result is None:
        return _fail(f"the match did not finish; replay: {played.replay_path}")
    if result.document is not None:
        print(tables.hole_table(result.document.holes))
    print(f"\n{result.course}: score {result.score:.2f}, holes played {result.holes_played}, "
          f"end: {result.reason}")
    if result.document is not None and result.document.totals.fallbacks:
        print(f"fallbacks: {result.document.totals.fallbacks} holes were not the bot's own play "
              f"(see `cogolf replay {played.replay_path} --explain`)")
    if result.result_file:
        print(f"result: {result.result_file}")
    print(f"replay: {played.replay_path}")
    return 0 if result.reason == "complete" else 1


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
    text: list[str] = []
    for c in courses:
        rows = leaderboard.course_board(loaded.docs, c)
        out["courses"][c] = rows  # type: ignore[index]
        text.append(f"== {c} ==\n{tables.course_table(rows)}\n")
    combined = leaderboard.combined_board(loaded.docs, courses)
    out["combined"] = combined
    text.append(f"== combined ({', '.join(courses)}) ==\n"
                f"{tables.combined_table(combined, courses)}")
    if args.model:
        page = leaderboard.model_page(loaded.docs, args.model, courses)
        out["model"] = {"model": args.model, "courses": page}
        text.append(f"\n== {args.model} ==\n{tables.model_table(page)}")
        for entry in page:
            text.append(f"\n-- {args.model} / {entry.course} --\n"
                        f"{tables.hole_table(entry.result.holes)}")
    encoded = msgspec.json.format(msgspec.json.encode(out), indent=1) + b"\n"
    if args.json == "-":
        sys.stdout.write(encoded.decode())
        return 0
    print("\n".join(text))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encoded)
        print(f"\njson: {path}")
    return 0


def run_bench(args: argparse.Namespace) -> int:
    configure("warning")
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
