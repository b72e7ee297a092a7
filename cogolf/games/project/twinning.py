"""The hidden twins of a project attempt whose evaluator is one of ours (PHPUnit, Go).

A task with `twins` names the rule its evaluator is written for. Each run plants
the task's count of twins in its own copy of the evaluator, drawn from the
system's randomness (a fresh secret per run, never stored), and its report is
judged against them (`cogolf.evaluation.ruletwins`): a twin reported passed with
its original, or a test reported under a name the run did not have, makes the
run `tampered`. Otherwise the report goes on in the task's test ids without the
twins, so they never count in a score, a check or a test total.

`TwinMode.OFF` is for benchmarks only, and the result's notes say so;
`TwinMode.EVERY` plants every possible twin beside its original, the check that
the reference fails each of them.
"""

from __future__ import annotations

import random
from enum import StrEnum
from pathlib import Path

from cogolf.evaluation.reports import Outcome, TestReport
from cogolf.evaluation.ruletwins import RULES, Planted, judge, plant
from cogolf.evaluation.twins import tamper_reason
from cogolf.games.project.scoring import AttemptStatus
from cogolf.games.project.task import ProjectTask


class TwinMode(StrEnum):
    DRAWN = "drawn"  # the task's count, drawn afresh: every scored attempt
    OFF = "off"  # none: benchmarks only, and the result says so
    EVERY = "every"  # every possible twin beside its original


OFF_NOTE = "hidden twin tests were off for this run (a benchmark)"


def plant_twins(task: ProjectTask, tests_dir: Path, mode: TwinMode) -> Planted | None:
    spec = task.twins
    if spec is None or mode is TwinMode.OFF:
        return None
    return plant(
        tests_dir,
        RULES[spec.rule],
        [t for c in task.checks for t in c.tests],
        count=None if mode is TwinMode.EVERY else spec.count,
        rng=random.SystemRandom(),
        skip=spec.skip,
    )


def judged(
    task: ProjectTask,
    mode: TwinMode,
    planted: Planted | None,
    outcome: tuple[AttemptStatus, TestReport | None, list[str]],
) -> tuple[AttemptStatus, TestReport | None, list[str]]:
    """The outcome of a run after its twins have been read out of its report."""
    status, report, notes = outcome
    if task.twins is not None and mode is TwinMode.OFF:
        return status, report, [*notes, OFF_NOTE]
    if planted is None or report is None:
        return outcome
    verdict = judge(report, planted)
    extra = [_every_note(report, planted)] if mode is TwinMode.EVERY else []
    reasons = []
    if verdict.forged:
        reasons.append(tamper_reason(verdict.forged, planted.count))
    if verdict.ghosts:
        reasons.append(
            f"{verdict.ghosts} test(s) were reported under a name this run's evaluator "
            "did not have (its tests are renamed every run)"
        )
    if reasons:
        return AttemptStatus.TAMPERED, None, [*notes, *reasons, *extra]
    return status, verdict.report, [*notes, *extra]


def _every_note(report: TestReport, planted: Planted) -> str:
    outcomes = [report.tests.get(t) for t in planted.twins]
    failed = sum(1 for o in outcomes if o in (Outcome.FAILED, Outcome.ERROR))
    passed = sum(1 for o in outcomes if o is Outcome.PASSED)
    return (f"every possible twin planted: {planted.count}; {failed} reported failed, "
            f"{passed} passed, {planted.count - failed - passed} without a failure")
