"""One project attempt end to end: workspace, evaluator run, report, score.

Also `ingest`, for tasks whose evaluator runs elsewhere (a PHP, Flutter or Go
toolchain): the same scoring applied to a report file produced outside.
"""

from __future__ import annotations

import time
from pathlib import Path

import structlog

from cogolf.project.pyenv import build_toolbox, create_env, shared_tempdir
from cogolf.project.reports import ReportError, TestReport, parse_report, read_report
from cogolf.project.results import AttemptResult
from cogolf.project.scoring import AttemptStatus, score_attempt
from cogolf.project.task import ProjectTask, TaskError
from cogolf.project.walled import DEFAULT_MAX_PROCESSES, EvaluatorRun, Walls, run_evaluator
from cogolf.project.workspace import (
    ChangesError,
    build_workspace,
    install_evaluator,
    same_tree,
)

log = structlog.get_logger(__name__)


async def run_attempt(
    task: ProjectTask, changes: Path, *, entrant: str = "", attempt: int = 1
) -> AttemptResult:
    if not task.runnable:
        raise TaskError(
            f"task {task.name} has no template, evaluator_tests or command: "
            "its evaluator runs elsewhere, score its report with `cogolf project ingest`"
        )
    assert task.template is not None and task.evaluator_tests is not None
    start = time.monotonic()
    with shared_tempdir("cogolf-attempt-") as tmp:
        root = Path(tmp)
        workspace, out = root / "workspace", root / "out"
        out.mkdir()
        try:
            build_workspace(task.template, changes, workspace)
        except ChangesError as exc:
            return _result(task, AttemptStatus.BAD_CHANGES, None, [str(exc)], entrant, attempt,
                           start, None)
        if same_tree(task.template, workspace):
            return _result(task, AttemptStatus.NO_CHANGE, None, ["no candidate change"], entrant,
                           attempt, start, None)
        tests = install_evaluator(task.evaluator_tests, workspace, task.evaluator_dest)
        # {python}: a fresh venv with pytest, on an interpreter the run's uid may execute.
        env = create_env(root / "env", build_toolbox(root / "toolbox", task.toolbox))
        report_path = out / "report"
        argv = [
            a.format(python=env.python, workspace=workspace, tests=tests, report=report_path)
            for a in task.command
        ]
        walls = Walls(
            readable=(workspace, out, env.root, env.toolbox, *task.walls.readable),
            writable=(workspace, out),
            # a toolbox extra may ship a program (playwright's driver) the evaluator starts
            executable=(env.toolbox,) if task.toolbox else (),
            drop_uid=env.any_uid,
            max_processes=task.walls.max_processes or DEFAULT_MAX_PROCESSES,
            unix_listen=task.walls.unix_listen,
        )
        run = await run_evaluator(argv, cwd=workspace, walls=walls,
                                  wall_seconds=task.time_limit_seconds)
        log.info("attempt_ran", task=task.name, entrant=entrant, attempt=attempt,
                 returncode=run.returncode, timed_out=run.timed_out, walled=run.walled)
        status, report, notes = read_outcome(task, run, report_path)
        return _result(task, status, report, notes, entrant, attempt, start, run)


def read_outcome(
    task: ProjectTask, run: EvaluatorRun, report_path: Path
) -> tuple[AttemptStatus, TestReport | None, list[str]]:
    notes = [run.reason] if run.reason else []
    if run.timed_out:
        return AttemptStatus.TIMEOUT, None, notes or ["time limit reached"]
    if run.returncode is None:
        return AttemptStatus.HARNESS_ERROR, None, notes
    try:
        data = read_report(report_path)
    except FileNotFoundError:
        tail = (run.stdout + run.stderr).decode("utf-8", "replace").strip().splitlines()[-3:]
        return AttemptStatus.NO_REPORT, None, [*notes, "evaluator wrote no report", *tail]
    except ReportError as exc:
        return AttemptStatus.BAD_REPORT, None, [*notes, str(exc)]
    return ingest_bytes(task, data, notes)


def ingest_bytes(
    task: ProjectTask, data: bytes, notes: list[str] | None = None
) -> tuple[AttemptStatus, TestReport | None, list[str]]:
    notes = list(notes or [])
    try:
        report = parse_report(task.report_format, data)
    except ReportError as exc:
        return AttemptStatus.BAD_REPORT, None, [*notes, str(exc)]
    if report.empty:
        return AttemptStatus.EMPTY_REPORT, report, notes
    return AttemptStatus.OK, report, notes


def ingest(task: ProjectTask, report_file: Path, *, entrant: str = "",
           attempt: int = 1) -> AttemptResult:
    start = time.monotonic()
    try:
        data = read_report(report_file)
    except ReportError as exc:
        return _result(task, AttemptStatus.BAD_REPORT, None, [str(exc)], entrant, attempt, start,
                       None)
    except OSError as exc:
        return _result(task, AttemptStatus.NO_REPORT, None, [f"{report_file}: {exc}"], entrant,
                       attempt, start, None)
    status, report, notes = ingest_bytes(task, data)
    return _result(task, status, report, notes, entrant, attempt, start, None)


def _result(
    task: ProjectTask,
    status: AttemptStatus,
    report: TestReport | None,
    notes: list[str],
    entrant: str,
    attempt: int,
    start: float,
    run: EvaluatorRun | None,
) -> AttemptResult:
    score = score_attempt(task, status, report, notes)
    return AttemptResult(
        task=task.name,
        entrant=entrant,
        attempt=attempt,
        scale=task.scale.name,
        score=score,
        seconds=round(time.monotonic() - start, 3),
        walled=run.walled if run is not None else None,
    )
