"""Running a library's test suite in a prepared environment, walled, into a report.

Results come over the scorer's channel (`cogolf.evaluation.channel`), never from a
file the run could write; twins (`cogolf.evaluation.pytest_twins`) and a few canary
tests are planted per run. The library's
own `addopts` are dropped so that plugins it expects (coverage, xdist) are not
required; reference ids are recorded under the same settings. The tree under
test is read-only during the run; the run's working folder (and HOME) is a
writable copy of it in the scratch, so tests that write files where they are run
(the benchmark's containers allow it) can, while the hidden tests pytest imports
stay as they are. Each test has a time limit (`cogolf.evaluation.channel`), and a
run stopped by the suite's overall limit still counts what finished.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from cogolf.evaluation.channel import CANARIES_PER_RUN, plant_canaries, run_pytest
from cogolf.evaluation.pyenv import PythonEnv
from cogolf.evaluation.pytest_twins import Planted, TwinPlan, plant_twins
from cogolf.evaluation.reports import Outcome, TestReport
from cogolf.evaluation.walled import Walls

log = structlog.get_logger(__name__)

SUITE_MAX_PROCESSES = 16  # some suites start threads or a helper process
OUTPUT_TAIL_BYTES = 4000
EXIT_CODES = {
    0: "all tests passed",
    1: "some tests failed",
    2: "interrupted: a test or conftest raised KeyboardInterrupt or called pytest.exit",
    3: "an internal error of pytest",
    4: "a usage error: an unknown option, or a conftest that could not be imported",
    5: "no tests were collected",
}


def explain_exit(code: int | None) -> str:
    """pytest's exit code in words."""
    if code is None:
        return "no exit code: the run did not end by itself"
    if code < 0:
        return f"exit code {code}: killed by signal {-code}"
    meaning = EXIT_CODES.get(code, "not one of pytest's own codes")
    return f"exit code {code}: {meaning}"


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
    twins: int = 0  # twin tests planted
    planted: Planted = field(default_factory=Planted)
    twin_originals: dict[str, str] = field(default_factory=dict)  # twin report id -> original's
    twin_outcomes: dict[str, Outcome] = field(default_factory=dict)
    # what the process said, for the operator of a trusted run (prepare) only: the
    # exception line of each collection error and the tail of pytest's output
    collect_messages: dict[str, str] = field(default_factory=dict)
    output: str = ""
    exitstatus: int | None = None
    time_limited: list[str] = field(default_factory=list)  # tests stopped at the limit
    seconds: dict[str, float] = field(default_factory=dict)  # node id -> all phases
    timed_out: bool = False  # the suite's overall limit stopped it
    stopped: bool = False  # ended before its session's end otherwise (killed, crashed)

    @property
    def not_run(self) -> int:
        """Collected tests without a result (the run ended before them)."""
        tests = self.report.tests.values() if self.report else ()
        return max(0, len(self.collected) - sum(1 for o in tests if o is not Outcome.NO_RESULT))


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
                    canaries: bool = True, ignore: tuple[str, ...] = (),
                    twins: TwinPlan | None = None, test_seconds: float | None = None,
                    writable_tree: bool = False) -> SuiteRun:
    """Run the suite at `work/<each tests path>` (none: pytest discovers the tests);
    `out` is a fresh folder for the run's files. `writable_tree`: `work` is a copy
    made for this run alone, written where it is (prepare's runs of the original);
    otherwise the run works in a writable copy of it."""
    scratch, plugin = out / "scratch", out / "plugin"
    scratch.mkdir(parents=True, exist_ok=True)
    tests = [work / t for t in tests_paths]
    cwd = work
    if not writable_tree:
        # before twins and canaries: the working copy holds the tests as they are
        cwd = out / "cwd"
        shutil.copytree(work, cwd, symlinks=True)
    # twins first: they copy the hidden tests as measured, before any canary is added
    twinned = (plant_twins(work, twins.eligible, twins.count, dry_run=twins.dry_run)
               if twins else Planted())
    planted: set[str] = set()
    if canaries:
        for i, unit in enumerate(tests):
            # three in all, spread over the test paths
            planted |= plant_canaries(unit, work, count=CANARIES_PER_RUN if i == 0 else 1)
    # the scratch stays last: it is the run's TMPDIR
    walls = Walls(readable=(work, scratch, env.root, env.toolbox),
                  writable=(cwd, scratch),
                  drop_uid=env.any_uid, max_processes=SUITE_MAX_PROCESSES,
                  # a suite's local servers (tornado's, pytest-httpbin's) on a `lo` of its own
                  loopback=True,
                  # programs driven through a terminal (pexpect's suite)
                  terminals=True,
                  env=(("PYTHONDONTWRITEBYTECODE", "1"), ("PYTHONNOUSERSITE", "1")))
    argv = pytest_argv(env, tests, scratch, work, plugins, ignore)
    run, channel = await run_pytest(argv, cwd=cwd, walls=walls, wall_seconds=wall_seconds,
                                    plugin_dir=plugin, trusted_tests=tests or [work],
                                    canaries=planted, twins=twinned.twins,
                                    originals=twins.originals if twins else None,
                                    test_seconds=test_seconds)
    output = (run.stdout[-OUTPUT_TAIL_BYTES:] + run.stderr[-OUTPUT_TAIL_BYTES // 2:]).decode(
        "utf-8", "replace")
    # the run's own output is for the operator's log only: it may quote hidden tests
    log.debug("suite_ran", returncode=run.returncode, reason=run.reason, output_tail=output)
    notes = [run.reason] if run.reason else []
    said = {"collect_messages": channel.collect_messages, "output": output}
    if channel.tampered:
        return SuiteRun(None, "tampered", run.walled, [*notes, *channel.tampered],
                        channel.tampered, twins=len(twinned.twins), **said)
    if not channel.started:
        status = "timeout" if run.timed_out else "no_report"
        return SuiteRun(None, status, run.walled, [
            *notes, f"pytest did not start ({explain_exit(run.returncode)})"], **said)
    notes += channel.suspicions + channel.report.notes
    if channel.time_limited:
        notes.append(f"{len(channel.time_limited)} test(s) ran over the per-test time limit "
                     f"of {test_seconds:g}s and failed")
    if run.timed_out:
        done = sum(1 for o in channel.report.tests.values() if o is not Outcome.NO_RESULT)
        notes.append(f"the suite's time limit of {wall_seconds:g}s was reached after {done} "
                     f"of {len(channel.collected)} tests; tests without a result count as "
                     "not passed")
    elif not channel.finished:
        after = (f", after collection errors in {', '.join(channel.collect_errors[:3])}"
                 if channel.collect_errors else "")
        notes.append(f"pytest stopped before the end of its session ("
                     f"{explain_exit(run.returncode)}{after}); tests without a result count "
                     "as not passed")
    elif channel.exitstatus in (2, 3, 4):
        notes.append(f"pytest ended early ({explain_exit(channel.exitstatus)})")
    return SuiteRun(channel.report, "ok", run.walled, list(dict.fromkeys(notes)),
                    calls=channel.calls,
                    collect_errors=channel.collect_errors, collected=channel.collected,
                    twins=len(twinned.twins), planted=twinned,
                    twin_originals=channel.twin_originals, twin_outcomes=channel.twin_outcomes,
                    exitstatus=channel.exitstatus, time_limited=channel.time_limited,
                    seconds=channel.seconds, timed_out=run.timed_out,
                    stopped=not channel.finished and not run.timed_out, **said)
