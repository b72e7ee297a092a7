"""Every report parser on committed, hand-written samples of its format."""

from __future__ import annotations

from pathlib import Path

import pytest

from cogolf.evaluation.reports import Outcome, ReportError, parse_report

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "reports"


def load(fmt: str, name: str):
    return parse_report(fmt, (FIXTURES / name).read_bytes())


def test_pytest_junit_outcomes() -> None:
    report = load("junit", "junit/pytest.xml")
    t = report.tests
    assert t["::tests.test_broken"] is Outcome.ERROR  # collection error
    assert t["tests.test_parse::test_plain_row"] is Outcome.PASSED
    assert t["tests.test_parse::test_quoted_comma"] is Outcome.FAILED
    assert t["tests.test_parse::test_split[a,b-expected0]"] is Outcome.PASSED
    assert t['tests.test_parse::test_split["x,y",z-expected1]'] is Outcome.FAILED
    assert t["tests.test_parse.TestSalvage::test_keeps_valid_rows"] is Outcome.PASSED
    assert t["tests.test_parse.TestSalvage::test_reports_bad_rows"] is Outcome.ERROR
    assert t["tests.test_parse.TestSalvage::test_temp_cleanup"] is Outcome.ERROR
    assert t["tests.test_parse::test_large_file"] is Outcome.SKIPPED
    assert t["tests.test_parse::test_bom_in_header"] is Outcome.SKIPPED  # xfail
    assert t["tests.test_parse::test_crlf"] is Outcome.PASSED  # system-out only
    assert len(t) == 11
    assert report.complete


def test_phpunit_nested_suites_and_data_sets() -> None:
    report = load("junit", "junit/phpunit.xml")
    t = report.tests
    cls = "Tests.Unit.ContactImporterTest"
    assert t[f"{cls}::test_imports_plain_rows"] is Outcome.PASSED
    assert t[f"{cls}::test_rejects_bad_email with data set #0"] is Outcome.PASSED
    assert t[f"{cls}::test_rejects_bad_email with data set #1"] is Outcome.PASSED
    assert t[f'{cls}::test_rejects_bad_email with data set "no at sign"'] is Outcome.FAILED
    assert t[f"{cls}::test_strips_bom"] is Outcome.ERROR
    assert t[f"{cls}::test_large_file"] is Outcome.SKIPPED
    assert t[f"{cls}::test_crlf_line_endings"] is Outcome.SKIPPED
    assert t[f"{cls}::test_formula_injection_is_neutralised"] is Outcome.PASSED
    assert len(t) == 8


def test_pest_data_sets() -> None:
    t = load("junit", "junit/pest.xml").tests
    cls = "Tests.Feature.ContactImportTest"
    assert t[f"{cls}::it imports a csv upload"] is Outcome.PASSED
    assert t[f"{cls}::it rejects rows without email with data set \"('Ada,,London')\""] is (
        Outcome.PASSED
    )
    assert t[f"{cls}::it rejects rows without email with data set \"(' ,ada@example.com,')\""] is (
        Outcome.FAILED
    )
    assert t[f"{cls}::it handles a 50k row file"] is Outcome.SKIPPED
    assert len(t) == 5


def test_junit_empty_file_is_an_empty_incomplete_report() -> None:
    report = load("junit", "junit/empty.xml")
    assert report.empty
    assert not report.complete


def test_junit_truncated_file_is_a_clear_error() -> None:
    with pytest.raises(ReportError, match="not well-formed XML"):
        load("junit", "junit/truncated.xml")


def test_junit_refuses_doctype_and_wrong_root() -> None:
    bomb = b'<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "aaaa">]><testsuites/>'
    with pytest.raises(ReportError, match="DOCTYPE"):
        parse_report("junit", bomb)
    with pytest.raises(ReportError, match="root is <html>"):
        parse_report("junit", b"<html><body/></html>")


def test_junit_duplicate_ids_keep_the_worst_outcome() -> None:
    xml = (
        b'<testsuite name="s"><testcase classname="c" name="t"/>'
        b'<testcase classname="c" name="t"><failure message="x"/></testcase>'
        b'<testcase name="bare"/></testsuite>'
    )
    t = parse_report("junit", xml).tests
    assert t == {"c::t": Outcome.FAILED, "s::bare": Outcome.PASSED}


def test_go_subtests_skip_and_no_test_files() -> None:
    report = load("go-test-json", "go/subtests.json")
    t = report.tests
    pkg = "example.com/importer"
    assert t[f"{pkg}::TestParse"] is Outcome.FAILED
    assert t[f"{pkg}::TestParse/plain_row"] is Outcome.PASSED
    assert t[f"{pkg}::TestParse/quoted_comma"] is Outcome.FAILED
    assert t[f"{pkg}::TestDedupe"] is Outcome.PASSED  # paused and continued
    assert t[f"{pkg}::TestLargeFile"] is Outcome.SKIPPED
    assert len(t) == 5
    assert report.complete
    assert "package failed: example.com/importer" in report.notes


def test_go_panic_hides_later_tests() -> None:
    report = load("go-test-json", "go/panic.json")
    assert report.tests == {
        "example.com/importer::TestPlainRow": Outcome.PASSED,
        "example.com/importer::TestInvalidRows": Outcome.FAILED,
    }
    assert any("panic: runtime error" in n for n in report.notes)


def test_go_timeout_leaves_a_test_without_result() -> None:
    report = load("go-test-json", "go/timeout.json")
    assert report.tests["example.com/importer::TestPlainRow"] is Outcome.PASSED
    assert report.tests["example.com/importer::TestLargeFile"] is Outcome.NO_RESULT
    assert not report.complete
    assert any("test timed out" in n for n in report.notes)


def test_go_build_failure() -> None:
    report = load("go-test-json", "go/build_fail.json")
    assert report.tests == {"example.com/importer/email::TestNormalise": Outcome.PASSED}
    assert "build failed: example.com/importer [example.com/importer.test]" in report.notes


def test_dart_reporter_hidden_skipped_and_late_error() -> None:
    report = load("dart-json", "dart/reporter.json")
    suite = "test/importer_test.dart"
    assert report.tests == {
        f"{suite}::parseContacts handles quoted commas": Outcome.PASSED,
        f"{suite}::parseContacts strips a BOM": Outcome.FAILED,
        f"{suite}::parseContacts salvages invalid rows": Outcome.ERROR,
        f"{suite}::parseContacts handles a 50k row file": Outcome.SKIPPED,
        f"{suite}::parseContacts keeps the first of duplicate emails": Outcome.ERROR,
        f"{suite}::neutralises formula injection": Outcome.PASSED,
    }
    assert report.complete


def test_dart_run_cut_short() -> None:
    report = load("dart-json", "dart/cut_short.json")
    assert report.tests == {
        "test/importer_test.dart::handles quoted commas": Outcome.PASSED,
        "test/importer_test.dart::handles a 50k row file": Outcome.NO_RESULT,
    }
    assert not report.complete
    assert any("test/email_test.dart" in n and "failed" in n for n in report.notes)
    assert any("not a JSON event: Resolving dependencies" in n for n in report.notes)


@pytest.mark.parametrize("fmt", ["go-test-json", "dart-json"])
def test_json_stream_parsers_survive_garbage(fmt: str) -> None:
    garbage = b'\xff\xfe{"Action": 3}\n[1,2]\n{"type": "testDone", "testID": []}\nnull\n'
    report = parse_report(fmt, garbage)
    assert report.empty


def test_unknown_format_names_the_known_ones() -> None:
    with pytest.raises(ReportError, match=r"unknown report format 'tap'.*junit"):
        parse_report("tap", b"")
