"""Running a library's test suite in a prepared environment, walled, into a report.

pytest writes JUnit XML (the same parser the project game uses), keeps going
past collection errors, and runs under the evaluator walls with a time limit.
The library's own `addopts` are dropped so that plugins it expects (coverage,
xdist) are not required; reference ids are recorded under the same settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cogolf.evaluation.pyenv import PythonEnv
from cogolf.evaluation.reports import ReportError, TestReport, parse_report, read_report
from cogolf.evaluation.walled import Walls, run_evaluator

REPORT_NAME = "pytest-report.xml"
SUITE_MAX_PROCESSES = 16  # some suites start threads or a helper process


@dataclass
class SuiteRun:
    report: TestReport | None
    status: str  # ok | timeout | no_report | bad_report
    walled: bool
    notes: list[str]


def pytest_argv(env: PythonEnv, tests: Path, report: Path, work: Path) -> list[str]:
    return [
        str(env.python), "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "--continue-on-collection-errors", "-o", "addopts=", "-o", "junit_family=xunit2",
        # pytest's log file defaults to /dev/null, which is not writable inside the walls
        "-o", f"log_file={report.parent / 'pytest-log.txt'}",
        "--rootdir", str(work), "--junitxml", str(report), str(tests),
    ]


async def run_suite(env: PythonEnv, work: Path, tests_path: str, out: Path,
                    wall_seconds: float) -> SuiteRun:
    out.mkdir(parents=True, exist_ok=True)
    report_path = out / REPORT_NAME
    walls = Walls(readable=(work, out, env.root, env.toolbox), writable=(work, out),
                  drop_uid=env.any_uid, max_processes=SUITE_MAX_PROCESSES)
    run = await run_evaluator(pytest_argv(env, work / tests_path, report_path, work), cwd=work,
                              walls=walls, wall_seconds=wall_seconds)
    notes = [run.reason] if run.reason else []
    if run.timed_out:
        return SuiteRun(None, "timeout", run.walled, notes or ["time limit reached"])
    try:
        report = parse_report("junit", read_report(report_path))
    except FileNotFoundError:
        tail = (run.stdout + run.stderr).decode("utf-8", "replace").strip().splitlines()[-5:]
        return SuiteRun(None, "no_report", run.walled, [*notes, "pytest wrote no report", *tail])
    except ReportError as exc:
        return SuiteRun(None, "bad_report", run.walled, [*notes, str(exc)])
    return SuiteRun(report, "ok", run.walled, notes)
