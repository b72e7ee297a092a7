"""In CI a skipped test is a failure, unless its reason is on the allow-list below.

`.ci/run` installs every stack the tests need and runs as root, so a test that skips
there lost its coverage without a word: a missing package, a lost privilege, a
condition that quietly stopped holding. With `CI` set, the session fails at its end
and names each such test with its reason. Deselecting (`-m "not network"`) is not
skipping and is not counted.
"""

from __future__ import annotations

import os
import re

import pytest

# Each depends on the machine's kernel or distribution, which .ci/run cannot install.
ALLOWED_IN_CI: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"no \S+ hierarchy on this machine$"), "the cgroup layout is the kernel's"),
    (
        re.compile(r"no freezer hierarchy to make a task unkillable with$"),
        "cgroup v1's freezer is absent on a unified-only kernel",
    ),
    (
        re.compile(r"no toolchain configuration directory on this machine$"),
        "the distribution decides whether one exists",
    ),
)


def skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def allowed(reason: str) -> bool:
    return any(pattern.search(reason) for pattern, _why in ALLOWED_IN_CI)


class SkipGate:
    """Collects the skips of a session and fails it in CI on any not allowed."""

    def __init__(self) -> None:
        self.refused: list[tuple[str, str]] = []

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        reason = skip_reason(report)
        if not allowed(reason):
            self.refused.append((report.nodeid, reason))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.refused and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.refused:
            return
        terminalreporter.section("skipped in CI (a failure: see tests/skips.py)", red=True)
        for nodeid, reason in self.refused:
            terminalreporter.line(f"{nodeid}: {reason}")


def register(config: pytest.Config) -> None:
    # xdist's workers forward their reports to the controller, which alone decides.
    if os.environ.get("CI") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(SkipGate(), "cogolf-ci-skip-gate")
