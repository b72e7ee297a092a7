"""Scoring a submission against a Commit-0 task (`cogolf commit0 score`).

Only the library's own files come from the submission: the task's skeleton is
copied fresh and each package path is replaced by the submission's version, so
build files, root conftest and test settings are always the task's own. The
library is built and installed walled and offline (`cogolf.evaluation.build`),
the hidden tests go back in, the suite runs walled with its results on the
scorer's channel, and pass rate = reference ids that passed / reference ids. A
missing, failed, errored or skipped id, one without a result or one lost to a
collection error counts as not passed, so does every test a run stopped by its
time limit did not reach; no report or a tampered run scores 0. Every run plants
twins of reference tests (`cogolf.evaluation.pytest_twins`, at the checks
`prepare` measured as sound): one reported passed with its original makes the
run tampered. Each test has the task's per-test time limit.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import structlog

from cogolf.evaluation.build import install_walled, package_tops
from cogolf.evaluation.pyenv import build_toolbox, create_env, shared_tempdir
from cogolf.evaluation.pytest_twins import TwinPlan, default_sites, function_of, run_count
from cogolf.evaluation.reports import Outcome, TestReport
from cogolf.games.commit0.layout import SubmissionError, overlay_submission, under
from cogolf.games.commit0.official import official_rate
from cogolf.games.commit0.quality import run_mypy, run_ruff
from cogolf.games.commit0.results import Commit0Result
from cogolf.games.commit0.suite import SuiteRun, run_suite
from cogolf.games.commit0.task import Commit0Task

log = structlog.get_logger(__name__)

MAX_NOTES = 50
MAX_NOTE_CHARS = 800


def package_placeholders(task: Commit0Task, build: Path) -> None:
    """Empty `__init__.py` files where a test package inside the library had them, so a
    build that lists its test package (`packages = ["pkg", "pkg.tests"]`) still finds
    it; the tests themselves never reach the build."""
    for unit in task.tests_paths:
        hidden = task.hidden_tests / unit
        if not hidden.is_dir() or not any(under(unit, (p,)) for p in task.package_paths):
            continue
        for init in hidden.rglob("__init__.py"):
            target = build / unit / init.relative_to(hidden)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("", encoding="utf-8")


def tally(task: Commit0Task, report: TestReport) -> tuple[int, dict[str, str]]:
    passed, not_passed = 0, {}
    for test_id in task.reference_ids:
        outcome = report.tests.get(test_id)
        if outcome is Outcome.PASSED:
            passed += 1
        else:
            not_passed[test_id] = str(outcome) if outcome is not None else "missing"
    return passed, not_passed


def twin_plan(task: Commit0Task, work: Path, twins: bool | None = True) -> TwinPlan:
    """The task's measured twins, or for a task prepared before them the default (every
    check that is a statement of a reference test's own body); `twins` as in
    `cogolf.evaluation.pytest_twins.run_count`."""
    eligible = task.twins if task.twins is not None else default_sites(
        [work / t for t in task.tests_paths], work, {function_of(t) for t in task.reference_ids})
    return TwinPlan(eligible, run_count(eligible, twins), frozenset(task.reference_ids))


async def score_submission(task: Commit0Task, submission: Path, *, entrant: str = "",
                           quality: bool = True, twins: bool | None = True) -> Commit0Result:
    """`twins=False` (no twins) is for `cogolf bench commit0` only; the result's
    `counts.twins` says how many a run had."""
    start = time.monotonic()
    total = len(task.reference_ids)

    def result(status: str, notes: list[str], **kw: object) -> Commit0Result:
        capped = [n[:MAX_NOTE_CHARS] for n in notes][:MAX_NOTES]  # a result stays small
        return Commit0Result(task=task.name, entrant=entrant, status=status, total=total,
                             seconds=round(time.monotonic() - start, 3), notes=capped,
                             **kw)  # type: ignore[arg-type]

    if not submission.is_dir():
        return result("bad_submission", passed=0, notes=[f"{submission}: not a directory"])
    with shared_tempdir("cogolf-commit0-") as tmp_name:
        tmp = Path(tmp_name)
        work = tmp / "work"
        shutil.copytree(task.skeleton, work)
        try:
            notes = overlay_submission(task.package_paths, submission, work)
        except SubmissionError as exc:
            return result("bad_submission", passed=0, notes=[str(exc)])
        for unit in task.tests_paths:  # the task's tests, never the submission's
            tests = work / unit
            if tests.is_dir() and not tests.is_symlink():
                shutil.rmtree(tests)
            elif tests.exists() or tests.is_symlink():
                tests.unlink()
        build = tmp / "build"  # what the build may write: a copy without the tests
        shutil.copytree(work, build)
        package_placeholders(task, build)
        env = create_env(tmp / "env", build_toolbox(tmp / "toolbox"))
        installed = await install_walled(env, build, tmp / "install",
                                         tops=package_tops(task.package_paths),
                                         wheelhouse=task.wheelhouse)
        if not installed.ok:
            return result("install_failed", passed=0, notes=[*notes, installed.log])
        for unit in task.tests_paths:
            hidden, tests = task.hidden_tests / unit, work / unit
            tests.parent.mkdir(parents=True, exist_ok=True)
            if hidden.is_dir():
                shutil.copytree(hidden, tests)
            else:
                shutil.copy2(hidden, tests)
        run = await run_suite(env, work, task.tests_paths, tmp / "out", task.time_limit_seconds,
                              plugins=task.plugins, twins=twin_plan(task, work, twins),
                              test_seconds=task.test_time_limit_seconds)
        lint = typecheck = None
        if quality:
            lint = (await run_ruff(work, task.package_paths)).to_json()
            typecheck = (await run_mypy(work, task.package_paths, tmp / "mypy")).to_json()
        notes += run.notes
        if run.report is None:
            return result(run.status, passed=0, notes=notes, lint=lint, typecheck=typecheck,
                          walled=run.walled,
                          not_passed=dict.fromkeys(task.reference_ids, run.status))
        passed, not_passed = tally(task, run.report)
    log.info("commit0_scored", task=task.name, entrant=entrant, passed=passed, total=total)
    return result("ok", passed=passed, not_passed=not_passed, lint=lint, typecheck=typecheck,
                  notes=notes, walled=run.walled, counts=counts(run),
                  official=(official_rate(list(task.official_ids), run.calls).to_json()
                            if task.official_ids else None))


def counts(run: SuiteRun) -> dict[str, int]:
    """What the run shows beside the rate: nothing shrinks silently."""
    assert run.report is not None
    outcomes = list(run.report.tests.values())
    xfailed = sum(1 for o in run.calls.values() if o == "xfailed")
    return {"collected": len(run.collected), "passed": outcomes.count(Outcome.PASSED),
            "failed": outcomes.count(Outcome.FAILED), "errors": outcomes.count(Outcome.ERROR),
            "skipped": outcomes.count(Outcome.SKIPPED) - xfailed, "xfailed": xfailed,
            "collect_errors": len(run.collect_errors), "twins": run.twins,
            "over_test_time_limit": len(run.time_limited)}
