"""`cogolf commit0 ...`: build a task from a library, score a submission, tabulate."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from cogolf.commands.common import (
    add_json_option,
    add_result_out_option,
    add_table_parser,
    emit_result,
    print_table,
)
from cogolf.evaluation.pyenv import EnvBuildError
from cogolf.games.commit0.full import FULL
from cogolf.games.commit0.layout import SourceError
from cogolf.games.commit0.lite import LITE
from cogolf.games.commit0.official import IdFileError
from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.results import ResultError, commit0_table, load_records
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.split import MAX_JOBS, GitSource, format_table, run_split
from cogolf.games.commit0.task import (
    DEFAULT_TEST_TIME_LIMIT_SECONDS,
    DEFAULT_TIME_LIMIT_SECONDS,
    TaskError,
    load_task,
)
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
    prep.add_argument("--test-time-limit", type=float, default=DEFAULT_TEST_TIME_LIMIT_SECONDS,
                      metavar="SECONDS", help="limit of one test in a run (setup, call and "
                      "teardown); a test over it fails alone")
    prep.add_argument("--git", type=Path, metavar="REPO",
                      help="take the source from this local git repository at --commit "
                      "(SOURCE then only names the task)")
    prep.add_argument("--commit", metavar="SHA", help="the commit of --git to take")
    prep.add_argument("--official-ids", type=Path, metavar="FILE",
                      help="the benchmark's id list (`<library>.bz2` or plain text, one "
                      "`tests/x.py::Class::test` per line): its rate is reported beside ours")
    prep.add_argument("--with", action="append", dest="requirements", default=[],
                      metavar="REQ", help="a further test requirement, always taken "
                      "(repeatable; `--with 'pytest<8'` picks the pytest the tests run on)")
    prep.add_argument("--extra", action="append", dest="extras", default=[], metavar="NAME",
                      help="an extra of the library whose requirements the tests need "
                      "(repeatable; test extras are taken anyway)")
    prep.add_argument("--accept-partial-reference", action="store_true",
                      help="accept a reference that loses tests to collection errors")
    prep.set_defaults(func=_prepare)

    for split, size, what in (("lite", 16, "the benchmark's lite split"),
                              ("full", 54, "the benchmark's whole split (`all`)")):
        parser_ = sub.add_parser(
            split, help=f"prepare and check {what}",
            description=f"For each of the {size} libraries whose source can be had (the PyPI "
            "release closest to the benchmark's pin, or --git NAME=REPO@SHA), prepare a task, "
            "score the original (1.0 expected) and the skeleton (near 0, status ok), and print "
            "reference ids beside the benchmark's counts, with times and, for every library "
            "that does not come through, the reason.",
        )
        parser_.add_argument("--out", type=Path, required=True, metavar="DIR",
                             help=f"where each library's task folder and {split}.json are "
                             "written")
        parser_.add_argument("--only", metavar="NAMES", help="comma-separated subset of the split")
        parser_.add_argument("--git", action="append", default=[], metavar="NAME=REPO@SHA",
                             help="a library's pinned source as a local git repository "
                             "(repeatable)")
        parser_.add_argument("--ids", type=Path, metavar="DIR",
                             help="a folder of the benchmark's id files (`<library>.bz2`)")
        parser_.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT_SECONDS,
                             metavar="SECONDS", help="wall-clock limit of one suite run")
        parser_.add_argument("--test-time-limit", type=float,
                             default=DEFAULT_TEST_TIME_LIMIT_SECONDS, metavar="SECONDS",
                             help="limit of one test in a run")
        parser_.add_argument("--accept-partial-reference", action="store_true",
                             help="keep a library whose original loses tests to collection "
                             "errors")
        parser_.add_argument("--jobs", type=int, default=1, metavar="N",
                             help=f"libraries prepared and checked at once (1 to {MAX_JOBS}; "
                             "about one busy core each)")
        add_json_option(parser_, "the rows as JSON")
        parser_.set_defaults(func=_split, split=split)

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
                                   time_limit_seconds=args.time_limit,
                                   test_time_limit_seconds=args.test_time_limit, git=args.git,
                                   commit=args.commit, official_ids=args.official_ids,
                                   requirements=tuple(args.requirements),
                                   extras=tuple(args.extras),
                                   accept_partial_reference=args.accept_partial_reference))
    except (SourceError, TaskError, IdFileError, EnvBuildError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    found = task.prepare
    print(f"task {task.name} written to {task.root}: {len(task.reference_ids)} reference ids, "
          f"{sum(len(v) for v in task.stubbed.values())} functions stubbed, "
          f"{sum(len(v) for v in task.kept.values())} kept for import")
    print(f"tests: {', '.join(task.tests_paths)}; library: {', '.join(task.package_paths)}")
    print(f"original: {found['collected']} collected, {found['failed']} failed, "
          f"{found['errors']} errors, {found['skipped']} skipped, {found['xfailed']} xfailed, "
          f"{len(found['collect_errors'])} collection errors, "
          f"{len(found['over_test_time_limit'])} over the per-test time limit of "
          f"{task.test_time_limit_seconds:g}s, {len(found['flaky'])} flaky, "
          f"{len(found['unstable_ids'])} ids not the same in both runs")
    for what in ("collect_errors", "over_test_time_limit", "flaky", "unstable_ids"):
        for node in found[what][:10]:
            message = found.get("collect_messages", {}).get(node, "")
            print(f"  {what.replace('_', ' ')}: {node}" + (f": {message}" if message else ""))
    check = found["check"]
    print(f"scored as a submission: {check['status']}, {check['passed']} of {check['total']} "
          f"passed in {check['seconds']}s with {check['twins']} twins")
    deps = found["dependencies"]
    runs_on = deps.get("pytest") or "the runner's own"
    print(f"pytest: {runs_on}" + (f" ({found['pytest_retry']})" if found.get("pytest_retry")
                                  else ""))
    for skipped in deps["skipped"]:
        print(f"  test requirement not available: {skipped}")
    twins = found.get("twins", {})
    print(f"twins: {twins.get('tests', 0)} tests eligible ({twins.get('checks', 0)} checks) of "
          f"{twins.get('measured_tests', 0)} measured on the original in "
          f"{twins.get('seconds', 0)}s" + (f"; {twins['error']}" if twins.get("error") else ""))
    if "official" in found:
        o = found["official"]
        print(f"official ids: {o['listed']} listed, {o['in_reference']} in the reference, "
              f"{o['not_collected']} not collected; the original's official rate "
              f"{o['original_rate']['rate']:.3f}")
    return 0


def _split(args: argparse.Namespace) -> int:
    configure(args.log_level)
    libraries = LITE if args.split == "lite" else FULL
    try:
        git = dict(_git_source(spec) for spec in args.git)
        names = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
        rows = asyncio.run(run_split(args.split, libraries, args.out, names=names, git=git,
                                     ids_dir=args.ids, time_limit_seconds=args.time_limit,
                                     test_time_limit_seconds=args.test_time_limit,
                                     accept_partial_reference=args.accept_partial_reference,
                                     jobs=args.jobs, log_level=args.log_level))
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps([r.to_json() for r in rows], indent=2) if args.json else format_table(rows))
    return 0 if all(r.status in ("ok", "unavailable") for r in rows) else 1


def _git_source(spec: str) -> tuple[str, GitSource]:
    name, sep, rest = spec.partition("=")
    repo, at, commit = rest.rpartition("@")
    if not sep or not at or not name or not repo or not commit:
        raise SourceError(f"--git {spec!r}: expected NAME=REPO@SHA")
    return name, GitSource(Path(repo), commit)


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
