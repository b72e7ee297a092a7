"""`cogolf commit0 ...`: build a task from a library, score a submission, tabulate."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from cogolf.commands.common import (
    add_result_out_option,
    add_table_parser,
    emit_result,
    print_table,
)
from cogolf.games.commit0.layout import SourceError
from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.results import ResultError, commit0_table, load_records
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.task import DEFAULT_TIME_LIMIT_SECONDS, TaskError, load_task
from cogolf.logs import configure


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "commit0",
        help="Commit-0: implement a whole library from its stubs",
        description="Commit-0. A task is a library skeleton (bodies stubbed, signatures and "
        "docstrings kept) plus its hidden test suite; a submission scores the fraction of the "
        "reference test ids that pass against it.",
    )
    sub = parser.add_subparsers(dest="commit0_command", metavar="ACTION", required=True)

    prep = sub.add_parser(
        "prepare", help="build a task from a source tree or a PyPI requirement",
        description="Build a task: stub every function body, move the tests aside, and record "
        "the ids that pass on the original. SOURCE is a local directory or a requirement "
        "such as cachetools==5.5.0 (its sdist must ship its tests).",
    )
    prep.add_argument("source", metavar="SOURCE",
                      help="a source directory or a requirement such as cachetools==5.5.0")
    prep.add_argument("--out", type=Path, required=True, metavar="TASK_DIR",
                      help="where the task is written")
    prep.add_argument("--tests", help="test directory inside the source (default: tests or test)")
    prep.add_argument("--package", action="append", dest="packages", metavar="PATH",
                      help="library path inside the source (repeatable; default: detected)")
    prep.add_argument("--name", help="task name (default: the source directory's name)")
    prep.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT_SECONDS,
                      metavar="SECONDS", help="wall-clock limit of one suite run")
    prep.set_defaults(func=_prepare)

    score = sub.add_parser(
        "score", help="score a submission (a copy of the skeleton with bodies filled in)",
        description="Install the submission into a fresh venv, put the hidden tests back, run "
        "pytest walled and print the result JSON: pass rate over the reference ids, with ruff "
        "and mypy counts beside it.",
    )
    score.add_argument("task_dir", type=Path, metavar="TASK_DIR", help="a prepared task")
    score.add_argument("submission", type=Path, metavar="SUBMISSION_DIR",
                       help="a copy of the skeleton with the bodies filled in")
    score.add_argument("--entrant", default="", help="stored in the result")
    add_result_out_option(score)
    score.add_argument("--no-quality", action="store_true", help="skip the ruff and mypy runs")
    score.set_defaults(func=_score)

    add_table_parser(sub, "mean pass rate per entrant, from result files", _table)


def _prepare(args: argparse.Namespace) -> int:
    configure(args.log_level)
    try:
        task = asyncio.run(prepare(args.source, args.out, tests=args.tests,
                                   packages=args.packages, name=args.name,
                                   time_limit_seconds=args.time_limit))
    except (SourceError, TaskError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"task {task.name} written to {task.root}: {len(task.reference_ids)} reference ids, "
          f"{sum(len(v) for v in task.stubbed.values())} functions stubbed, "
          f"{sum(len(v) for v in task.kept.values())} kept for import")
    return 0


def _score(args: argparse.Namespace) -> int:
    configure(args.log_level)
    try:
        task = load_task(args.task_dir)
    except TaskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = asyncio.run(score_submission(task, args.submission, entrant=args.entrant,
                                          quality=not args.no_quality))
    return emit_result(result.to_json(), args.out)


def _table(args: argparse.Namespace) -> int:
    configure(args.log_level)
    try:
        rows = commit0_table(load_records(args.folder))
    except ResultError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=2))
        return 0
    tasks = sorted({t for r in rows for t in r.per_task})
    print_table(args, ["entrant", "mean", *tasks], [
        [r.entrant, f"{r.mean_pass_rate:.3f}",
         *("-" if r.per_task[t] is None else f"{r.per_task[t]:.3f}" for t in tasks)]
        for r in rows
    ])
    return 0
