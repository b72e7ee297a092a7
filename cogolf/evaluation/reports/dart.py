"""The Dart/Flutter JSON reporter (`dart test --reporter json`, `flutter test --machine`).

Test id: `<suite path>::<test name>` (the name already carries its group prefix).
Tests the runner marks `hidden` (the synthetic "loading ..." test, `setUpAll`,
`tearDownAll`) are not tests; a hidden one that fails means its suite failed to
load or set up, which is noted. An `error` event that arrives after the test's
`testDone` still fails the test. A test that started without `testDone`, or a
stream without the final `done` event, means the run was cut short.
"""

from __future__ import annotations

from dataclasses import dataclass

from cogolf.evaluation.reports.model import Outcome, TestReport, check_size, json_lines, worst


@dataclass
class _Test:
    name: str
    suite_id: int | str | None
    outcome: Outcome | None = None
    hidden: bool = False
    late_error: Outcome | None = None


def parse_dart_json(data: bytes) -> TestReport:
    check_size(data)
    report = TestReport()
    suites: dict[int | str | None, str] = {}
    tests: dict[int | str | None, _Test] = {}
    saw_done = False
    for event in json_lines(data, report):
        kind = event.get("type")
        if kind == "suite":
            suite = event.get("suite")
            if isinstance(suite, dict):
                suites[_key(suite.get("id"))] = str(suite.get("path") or "")
        elif kind == "testStart":
            test = event.get("test")
            if isinstance(test, dict) and isinstance(test.get("name"), str):
                tests[_key(test.get("id"))] = _Test(test["name"], _key(test.get("suiteID")))
        elif kind == "testDone":
            found = tests.get(_key(event.get("testID")))
            if found is not None:
                _done(found, event)
        elif kind == "error":
            found = tests.get(_key(event.get("testID")))
            if found is not None:
                failure = Outcome.FAILED if event.get("isFailure") is True else Outcome.ERROR
                if found.outcome is not None:
                    found.late_error = failure  # reported after testDone: still a failure
                    report.note(f"error after testDone in {found.name!r}")
        elif kind == "done":
            saw_done = True
    for test in tests.values():
        path = suites.get(test.suite_id, "")
        if test.hidden:
            if test.outcome is not Outcome.PASSED or test.late_error is not None:
                report.note(f"{path}: {test.name!r} failed; the suite's tests did not all run")
            continue
        if test.outcome is None and _is_loader(test.name, path):
            report.note(f"{path}: loading never finished")
            continue
        outcome = test.outcome or Outcome.NO_RESULT
        if test.late_error is not None:
            outcome = worst(outcome, test.late_error)
        report.record(f"{path}::{test.name}", outcome)
    unfinished = sum(1 for t in tests.values() if t.outcome is None)
    if not saw_done or unfinished:
        report.complete = False
        report.note(
            f"run cut short: {'no final done event' if not saw_done else 'done seen'}, "
            f"{unfinished} test(s) without testDone"
        )
    return report


def _done(test: _Test, event: dict[str, object]) -> None:
    test.hidden = event.get("hidden") is True
    result = event.get("result")
    if event.get("skipped") is True:
        test.outcome = Outcome.SKIPPED
    elif result == "success":
        test.outcome = Outcome.PASSED
    elif result == "failure":
        test.outcome = Outcome.FAILED
    else:
        test.outcome = Outcome.ERROR


def _key(value: object) -> int | str | None:
    """Ids in the stream are ints; anything unhashable or odd maps to no id."""
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def _is_loader(name: str, path: str) -> bool:
    return name == f"loading {path}"
