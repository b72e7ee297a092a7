"""`cogolf project ...`: project attempts (run one, ingest a report, tabulate a folder)."""

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
from cogolf.games.project.attempt import ingest, run_attempt
from cogolf.games.project.results import (
    ATTEMPTS_PER_TASK,
    AttemptResult,
    ResultError,
    attempt_cells,
    load_records,
    project_table,
)
from cogolf.games.project.task import TaskError, load_task
from cogolf.logs import configure


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "project",
        help="project attempts: harden a workspace, scored by hidden evaluator checks",
        description="Project attempts. An attempt applies an entrant's changes to a fresh copy "
        "of the task's template, runs the hidden evaluator, counts failed checks and turns "
        "them into points on the task's scale (0..1 per attempt, five attempts per task).",
    )
    sub = parser.add_subparsers(dest="project_command", metavar="ACTION", required=True)

    attempt = sub.add_parser("attempt", help="run one attempt and print its result (JSON)")
    attempt.add_argument("task_dir", type=Path, metavar="TASK_DIR", help="the task's folder")
    attempt.add_argument("changes", type=Path, metavar="CHANGES",
                         help="an overlay directory, or a unified diff file")
    _identity(attempt)
    attempt.set_defaults(func=_attempt)

    ing = sub.add_parser("ingest", help="score a report from an evaluator that ran elsewhere")
    ing.add_argument("task_dir", type=Path, metavar="TASK_DIR", help="the task's folder")
    ing.add_argument("report", type=Path, metavar="REPORT",
                     help="the evaluator's report file")
    _identity(ing)
    ing.set_defaults(func=_ingest)

    add_table_parser(sub, "points per task (out of 5) and total, from result files", _table)


def _identity(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--entrant", default="", help="who made the changes (stored in the result)")
    parser.add_argument("--attempt", type=int, default=1, choices=range(1, ATTEMPTS_PER_TASK + 1),
                        metavar=f"1..{ATTEMPTS_PER_TASK}", help="attempt number (default 1)")
    add_result_out_option(parser)


def _emit(result: AttemptResult, out: Path | None) -> int:
    return emit_result(result.to_json(), out)


def _attempt(args: argparse.Namespace) -> int:
    configure(args.log_level)
    try:
        task = load_task(args.task_dir)
        if not args.changes.exists():
            raise TaskError(f"{args.changes}: no such changes directory or patch")
        result = asyncio.run(run_attempt(task, args.changes, entrant=args.entrant,
                                         attempt=args.attempt))
    except TaskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _emit(result, args.out)


def _ingest(args: argparse.Namespace) -> int:
    configure(args.log_level)
    try:
        task = load_task(args.task_dir)
    except TaskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _emit(ingest(task, args.report, entrant=args.entrant, attempt=args.attempt), args.out)


def _table(args: argparse.Namespace) -> int:
    configure(args.log_level)
    try:
        rows = project_table(load_records(args.folder))
    except ResultError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=2))
        return 0
    tasks = sorted({t for r in rows for t in r.per_task})
    out_of = ATTEMPTS_PER_TASK * len(tasks)
    print_table(
        args,
        ["entrant", *[f"{t} (/{ATTEMPTS_PER_TASK})" for t in tasks], f"total (/{out_of})"],
        [[r.entrant, *[f"{r.per_task[t]:.2f}" for t in tasks], f"{r.total:.2f}"] for r in rows],
    )
    if rows:
        # per attempt: points, floor (F) and signal (S) checks passed/total
        print()
        if not args.tsv:
            print("Per attempt: points (F floor checks passed/total, S signal checks passed/total)")
        print_table(
            args,
            ["entrant", "task", *[f"#{n}" for n in range(1, ATTEMPTS_PER_TASK + 1)]],
            [
                [r.entrant, t, *attempt_cells([a.breakdown() for a in r.breakdown.get(t, [])],
                                              ATTEMPTS_PER_TASK)]
                for r in rows
                for t in tasks
            ],
            left=2,
        )
    return 0
