"""Running a library's test suite in a prepared environment, walled, into a report.

Results come over the scorer's channel (`cogolf.evaluation.channel`), never from a
file the run could write; a few canary tests are planted per run. The library's
own `addopts` are dropped so that plugins it expects (coverage, xdist) are not
required; reference ids are recorded under the same settings. The tree under
test is read-only during the run: only a scratch folder is writable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import structlog

from cogolf.evaluation.channel import CANARIES_PER_RUN, plant_canaries, run_pytest
from cogolf.evaluation.pyenv import PythonEnv
from cogolf.evaluation.reports import TestReport
from cogolf.evaluation.walled import Walls

log = structlog.get_logger(__name__)

SUITE_MAX_PROCESSES = 16  # some suites start threads or a helper process


@dataclass
class SuiteRun:
    report: TestReport | None
    status: str  # ok | timeout | no_report | tampered
    walled: bool
    notes: list[str]
    tampered: list[str] = field(default_factory=list)
    calls: dict[str, str] = field(default_factory=dict)  # node id -> call-phase outcome
    collect_errors: list[str] = field(default_factory=list)
    collected: list[str] = field(default_factory=list)  # node ids


def pytest_argv(env: PythonEnv, tests: list[Path], scratch: Path, work: Path,
                plugins: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> list[str]:
    """No test path: pytest's own discovery (its `testpaths`, else the whole tree)."""
    return [
        str(env.python), "-P", "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider",
        *(arg for plugin in plugins for arg in ("-p", plugin)),
        "--continue-on-collection-errors", "-o", "addopts=",
        # pytest's log file defaults to /dev/null, which is not writable inside the walls
        "-o", f"log_file={scratch / 'pytest-log.txt'}",
        *(f"--ignore={work / i}" for i in ignore),
        "--rootdir", str(work), *map(str, tests),
    ]


async def run_suite(env: PythonEnv, work: Path, tests_paths: tuple[str, ...], out: Path,
                    wall_seconds: float, *, plugins: tuple[str, ...] = (),
                    canaries: bool = True, ignore: tuple[str, ...] = ()) -> SuiteRun:
    """Run the suite at `work/<each tests path>` (none: pytest discovers the tests);
    `out` is a fresh folder for the run's files."""
    scratch, plugin = out / "scratch", out / "plugin"
    scratch.mkdir(parents=True, exist_ok=True)
    tests = [work / t for t in tests_paths]
    planted: set[str] = set()
    if canaries:
        for i, unit in enumerate(tests):
            # three in all, spread over the test paths
            planted |= plant_canaries(unit, work, count=CANARIES_PER_RUN if i == 0 else 1)
    walls = Walls(readable=(work, scratch, env.root, env.toolbox), writable=(scratch,),
                  drop_uid=env.any_uid, max_processes=SUITE_MAX_PROCESSES,
                  env=(("PYTHONDONTWRITEBYTECODE", "1"),))
    argv = pytest_argv(env, tests, scratch, work, plugins, ignore)
    run, channel = await run_pytest(argv, cwd=work, walls=walls, wall_seconds=wall_seconds,
                                    plugin_dir=plugin, trusted_tests=tests or [work],
                                    canaries=planted)
    # the run's own output is for the operator's log only: it may quote hidden tests
    log.debug("suite_ran", returncode=run.returncode, reason=run.reason,
             output_tail=(run.stdout[-3000:] + run.stderr[-2000:]).decode("utf-8", "replace"))
    notes = [run.reason] if run.reason else []
    if channel.tampered:
        return SuiteRun(None, "tampered", run.walled, [*notes, *channel.tampered],
                        channel.tampered)
    if run.timed_out:
        return SuiteRun(None, "timeout", run.walled, notes or ["time limit reached"])
    if not channel.started:
        return SuiteRun(None, "no_report", run.walled,
                        [*notes, f"pytest did not start (exit code {run.returncode})"])
    if not channel.finished:
        notes.append(f"pytest stopped before the end of its session (exit code "
                     f"{run.returncode}); tests without a result count as not passed")
    return SuiteRun(channel.report, "ok", run.walled, notes, calls=channel.calls,
                    collect_errors=channel.collect_errors, collected=channel.collected)
