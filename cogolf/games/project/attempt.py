"""One project attempt end to end: workspace, evaluator run, report, score.

A `python -m pytest` evaluator reports over the scorer's channel
(`cogolf.evaluation.channel`: results streamed from a plugin loaded before any
candidate code, canaries, tripwires) and gets twins of its check tests
(`cogolf.evaluation.pytest_twins`, at every check that is a statement of a test's
own body: the shipped tasks' tests prove each such twin fails on the reference);
its report file is ignored. Any other
evaluator writes its report into a file the scorer made for it in a folder only
root may change, read without following links; a task with `twins` gets hidden
twins in its copy of the evaluator, and its report is judged with them
(`twinning`). The workspace is read-only during the run; only a scratch folder is
writable. Nothing the run prints reaches the result.

Also `ingest`, for tasks whose evaluator runs elsewhere (a PHP, Flutter or Go
toolchain): the same scoring applied to a report file produced outside.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import structlog

from cogolf.evaluation.channel import ChannelResult, plant_canaries, run_pytest, runs_pytest
from cogolf.evaluation.pyenv import build_toolbox, create_env, shared_tempdir
from cogolf.evaluation.pytest_twins import default_sites, function_of, run_count
from cogolf.evaluation.pytest_twins import plant_twins as plant_pytest_twins
from cogolf.evaluation.reports import ReportError, TestReport, parse_report, read_report
from cogolf.evaluation.walled import DEFAULT_MAX_PROCESSES, EvaluatorRun, Walls, run_evaluator
from cogolf.games.project.gocache import is_go_task, seed_cache
from cogolf.games.project.results import AttemptResult
from cogolf.games.project.scoring import AttemptStatus, score_attempt
from cogolf.games.project.task import ProjectTask, TaskError
from cogolf.games.project.twinning import TwinMode, judged, plant_twins
from cogolf.games.project.workspace import (
    ChangesError,
    build_workspace,
    install_evaluator,
    same_tree,
)

log = structlog.get_logger(__name__)

# the pytest generator's `twins` argument for each mode (see `run_count`)
_PYTEST_MODES: dict[TwinMode, bool | None] = {
    TwinMode.DRAWN: True, TwinMode.OFF: False, TwinMode.EVERY: None}


async def run_attempt(
    task: ProjectTask,
    changes: Path,
    *,
    entrant: str = "",
    attempt: int = 1,
    twins: TwinMode = TwinMode.DRAWN,
) -> AttemptResult:
    """`twins=TwinMode.OFF` (no twins) is for `cogolf bench project` only; EVERY plants
    one at every eligible check (the proof that the reference fails them all). The
    result's `twins` says how many a run had."""
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
        try:
            folders = workspace_folders(workspace, task.walls.writable)
        except ChangesError as exc:
            return _result(task, AttemptStatus.BAD_CHANGES, None, [str(exc)], entrant, attempt,
                           start, None)
        # {python}: a fresh venv with pytest, on an interpreter the run's uid may execute.
        env = create_env(root / "env", build_toolbox(root / "toolbox", task.toolbox))
        scratch = out / "scratch"
        scratch.mkdir()
        pytest_run = runs_pytest(task.command)
        # Other evaluators write their report into a file made for them in a folder
        # only root may change: the run can write the file, not replace it with a link.
        report_path = (scratch if pytest_run else out) / "report"
        if not pytest_run:
            report_path.touch()
        argv = [
            a.format(python=env.python, workspace=workspace, tests=tests, report=report_path)
            for a in task.command
        ]
        walls = Walls(
            readable=(workspace, out, env.root, env.toolbox, *task.walls.readable),
            writable=(
                *folders,
                *((scratch,) if pytest_run else (report_path, scratch)),
            ),
            # compiled evaluators (`go test`) run the binaries they build in TMPDIR; a
            # toolbox extra may ship a program (playwright's driver) the evaluator starts
            executable=(out, *((env.toolbox,) if task.toolbox else ())),
            drop_uid=env.any_uid,
            max_processes=task.walls.max_processes or DEFAULT_MAX_PROCESSES,
            unix_listen=task.walls.unix_listen,
            env=(("PYTHONDONTWRITEBYTECODE", "1"),),
        )
        if pytest_run:
            checked = frozenset(t for c in task.checks for t in c.tests)
            eligible = check_twins(task, tests, workspace)
            planted = plant_pytest_twins(workspace, eligible,
                                         run_count(eligible, _PYTEST_MODES[twins]))
            planted_count: int | None = len(planted.twins)
            canaries = plant_canaries(tests, workspace)
            run, channel = await run_pytest(argv, cwd=workspace, walls=walls,
                                            wall_seconds=task.time_limit_seconds,
                                            plugin_dir=root / "plugin", trusted_tests=[tests],
                                            canaries=canaries, twins=planted.twins,
                                            originals=checked)
        else:
            by_rule = plant_twins(task, tests, twins)
            planted_count = by_rule.count if by_rule is not None else None
            if is_go_task(task):
                # TMPDIR is the last writable folder; the Go task's GOCACHE lives there
                await asyncio.to_thread(seed_cache, task, walls.writable[-1])
            run = await run_evaluator(argv, cwd=workspace, walls=walls,
                                      wall_seconds=task.time_limit_seconds)
        # the run's own output is for the operator's log only: it may quote hidden tests
        log.info("attempt_ran", task=task.name, entrant=entrant, attempt=attempt,
                 returncode=run.returncode, timed_out=run.timed_out, walled=run.walled)
        log.debug("attempt_output", output_tail=run.stderr[-2000:].decode("utf-8", "replace"))
        if pytest_run:
            status, report, notes = channel_outcome(run, channel)
        else:
            status, report, notes = judged(task, twins, by_rule,
                                           read_outcome(task, run, report_path))
        return _result(task, status, report, notes, entrant, attempt, start, run,
                       twins=planted_count)


def check_twins(task: ProjectTask, tests: Path, workspace: Path) -> dict[str, list[int]]:
    """The checks of a pytest evaluator's tests a twin may change: every check that is
    a statement of a check test's own body (never nested, so any passing run reaches it)."""
    return default_sites([tests], workspace, {function_of(t) for c in task.checks
                                              for t in c.tests})


def workspace_folders(workspace: Path, names: tuple[str, ...]) -> list[Path]:
    """The task's writable folders inside the workspace, made when missing. The
    workspace holds no links (it is copied without following any), and each part is
    checked again so a folder handed to the run's uid is always inside it."""
    folders = []
    for name in names:
        path = workspace
        for part in Path(name).parts:
            path = path / part
            if path.is_symlink():
                raise ChangesError(f"{name}: {path.relative_to(workspace)} is a link")
            path.mkdir(exist_ok=True)
        folders.append(path)
    return folders


def channel_outcome(
    run: EvaluatorRun, channel: ChannelResult
) -> tuple[AttemptStatus, TestReport | None, list[str]]:
    notes = [*([run.reason] if run.reason else []), *channel.suspicions]
    if channel.tampered:
        return AttemptStatus.TAMPERED, None, [*notes, *channel.tampered]
    if run.timed_out:
        return AttemptStatus.TIMEOUT, None, notes or ["time limit reached"]
    if run.returncode is None:
        return AttemptStatus.HARNESS_ERROR, None, notes
    if not channel.started:
        return AttemptStatus.NO_REPORT, None, [
            *notes, f"pytest did not start (exit code {run.returncode})"]
    if not channel.finished:
        notes.append(f"pytest stopped before the end of its session (exit code "
                     f"{run.returncode}); tests without a result count as not passed")
    if channel.report.empty:
        return AttemptStatus.EMPTY_REPORT, channel.report, notes
    return AttemptStatus.OK, channel.report, notes


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
        return AttemptStatus.NO_REPORT, None, [
            *notes, f"evaluator wrote no report (exit code {run.returncode})"]
    except ReportError as exc:
        return AttemptStatus.BAD_REPORT, None, [*notes, str(exc)]
    if not data:
        return AttemptStatus.NO_REPORT, None, [
            *notes, f"evaluator wrote no report (exit code {run.returncode})"]
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
    twins: int | None = None,
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
        twins=twins,
    )
