"""`go test -json` event streams (test2json).

Test id: `<package>::<test>` with subtests as Go names them (`TestParse/quoted_comma`).
A test that started (`run`) but never reached `pass`, `fail` or `skip` — the
panic that kills the test binary, a `-timeout` — has no result. Tests that
never started are simply absent. Build failures (`build-fail`, or a package
`fail` with `FailedBuild`) and package-level failures are kept as notes; a
package without a final `pass`/`fail`/`skip` event marks the run incomplete.
"""

from __future__ import annotations

from cogolf.evaluation.reports.model import Outcome, TestReport, check_size, json_lines, worst

_TERMINAL = {"pass": Outcome.PASSED, "fail": Outcome.FAILED, "skip": Outcome.SKIPPED}


def parse_go_test_json(data: bytes) -> TestReport:
    check_size(data)
    report = TestReport()
    started: dict[str, None] = {}  # ordered set of ids seen running
    finished: dict[str, Outcome] = {}
    packages_open: dict[str, None] = {}
    packages_done: dict[str, None] = {}
    for event in json_lines(data, report):
        action = event.get("Action")
        if not isinstance(action, str):
            continue
        package = _text(event.get("Package")) or _text(event.get("ImportPath"))
        test = _text(event.get("Test"))
        if action == "build-fail":
            report.note(f"build failed: {package}")
            continue
        if not package:
            continue
        if not test:
            _package_event(action, package, event, report, packages_open, packages_done)
            continue
        test_id = f"{package}::{test}"
        if action == "run":
            started[test_id] = None
        elif action in _TERMINAL:
            started[test_id] = None
            outcome = _TERMINAL[action]
            previous = finished.get(test_id)
            finished[test_id] = outcome if previous is None else worst(previous, outcome)
        elif action == "output":
            line = _text(event.get("Output")).strip()
            if line.startswith("panic:"):
                report.note(f"{test_id}: {line}")
    for test_id in started:
        report.record(test_id, finished.get(test_id, Outcome.NO_RESULT))
    unfinished = [t for t in started if t not in finished]
    if unfinished:
        report.complete = False
        names = ", ".join(unfinished[:5])
        report.note(f"{len(unfinished)} test(s) started without a result: {names}")
    open_packages = [p for p in packages_open if p not in packages_done]
    if open_packages:
        report.complete = False
        report.note(f"package(s) without a final result: {', '.join(open_packages[:5])}")
    return report


def _package_event(
    action: str,
    package: str,
    event: dict[str, object],
    report: TestReport,
    packages_open: dict[str, None],
    packages_done: dict[str, None],
) -> None:
    if action in ("start", "run", "output"):
        packages_open[package] = None
        if action == "output":
            line = _text(event.get("Output")).strip()
            if line.startswith("panic:") or "[build failed]" in line or "[setup failed]" in line:
                report.note(f"{package}: {line}")
    elif action in _TERMINAL:
        packages_open[package] = None
        packages_done[package] = None
        if action == "fail":
            failed_build = _text(event.get("FailedBuild"))
            report.note(
                f"build failed: {failed_build}" if failed_build else f"package failed: {package}"
            )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
