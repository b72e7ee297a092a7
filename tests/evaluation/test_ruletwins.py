"""Twins made by rule for the shipped PHPUnit and Go evaluators: which checks the
rules twin and which they refuse, how a run's twins are planted and judged, the
task field, and each shipped evaluator's K. That the reference fails every
possible twin is a real run of each stack (tests/games/project)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cogolf.evaluation.reports import Outcome, TestReport
from cogolf.evaluation.ruletwins import RULES, Planted, judge, plant
from cogolf.evaluation.ruletwins.lexer import LexError, tokens
from cogolf.evaluation.ruletwins.plant import read_sources, twinnable
from cogolf.evaluation.ruletwins.variants import fresh_name, int_variants, string_variants
from cogolf.games.project.task import MAX_TWINS, TaskError, load_task, parse_task
from tests.stacks import needs

REPO = Path(__file__).resolve().parents[2]
PROJECTS = REPO / "references" / "projects"
TASKS = ("laravel_csv_import", "laravel_offline_sync", "shipping_quotes")
NEVER_TWINNED = {  # scored tests no twin can be made of, and the skipped (slow) ones
    "laravel_csv_import": {"Eval.CsvImportEvalTest::test_large_file_imports_completely"},
    "laravel_offline_sync": {
        "Tests.Eval.CursorEvalTest::test_invalid_cursor_is_rejected_cleanly",
        "Tests.Eval.CursorEvalTest::test_feed_pages_are_capped_and_complete",
        "Tests.Eval.ScaleEvalTest::test_thousand_mutation_batch",
    },
    "shipping_quotes": {  # each waits out a timeout or a big fan-out before its first check
        "shippingquotes/evaluator_tests::TestOverallTimeout",
        "shippingquotes/evaluator_tests::TestCoalescedIndependentCancellation",
        "shippingquotes/evaluator_tests::TestLargeCarrierSet",
    },
}


def task_ids(task: str) -> list[str]:
    spec = json.loads((PROJECTS / task / "task.json").read_text())
    return [t for c in spec["checks"] for t in c["tests"]]


# --- the shipped evaluators -------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_every_scored_test_but_the_slow_ones_is_twinned_every_run(task: str) -> None:
    spec = load_task(PROJECTS / task).twins
    assert spec is not None
    sources = read_sources(PROJECTS / task / "evaluator", RULES[spec.rule])
    ids = task_ids(task)
    found = twinnable(sources, ids, spec.skip)
    # K is every twinnable test: none of them can be forged without a twin beside it
    assert len(found) == spec.count >= 8
    assert set(ids) - {test_id for _, _, test_id in found} == NEVER_TWINNED[task]


@pytest.mark.parametrize("task", TASKS)
def test_each_possible_twin_changes_one_value_of_its_first_check(task: str) -> None:
    spec = load_task(PROJECTS / task).twins
    assert spec is not None
    sources = read_sources(PROJECTS / task / "evaluator", RULES[spec.rule])
    for _, unit, _ in twinnable(sources, task_ids(task)):
        source = next(s for s in sources.values() if unit in s.units)
        lines = {source.text.count("\n", 0, e.start) for e in unit.variants}
        assert len(lines) == 1 or spec.rule == "go"  # a Go check may span lines
        for edit in unit.variants:
            old = source.text[edit.start:edit.end]
            assert edit.new.strip("'\"") != old.strip("'\""), (unit.name, old)
            assert unit.start <= edit.start < edit.end <= unit.end


def planted_copy(tmp_path: Path, task: str, seed: int) -> tuple[Path, Planted]:
    spec = load_task(PROJECTS / task).twins
    assert spec is not None
    copy = tmp_path / f"{task}-{seed}"
    shutil.copytree(PROJECTS / task / "evaluator", copy)
    planted = plant(copy, RULES[spec.rule], task_ids(task), count=spec.count,
                    rng=random.Random(seed), skip=spec.skip)
    return copy, planted


def _blocks(copy: Path, rule: str) -> dict[str, tuple[list[str], str]]:
    """Each test of the planted copy: its tokens with its name blanked, and its file."""
    out = {}
    for name, source in read_sources(copy, RULES[rule]).items():
        for unit in source.units:
            text = source.text[unit.start:unit.end].replace(unit.name, "NAME", 1)
            lang = "php" if rule == "phpunit" else "go"
            out[unit.name] = ([t.text for t in tokens(text, lang) if t.kind != "nl"], name)
    return out


@pytest.mark.parametrize("task", TASKS)
def test_a_run_plants_k_twins_beside_renamed_originals(tmp_path: Path, task: str) -> None:
    spec = load_task(PROJECTS / task).twins
    assert spec is not None
    copy, planted = planted_copy(tmp_path, task, seed=7)
    assert planted.count == spec.count
    assert set(planted.renamed.values()) == planted.hidden and len(planted.hidden) == spec.count
    blocks = _blocks(copy, spec.rule)
    for twin, original in planted.twins.items():
        twin_name, original_name = twin.rpartition("::")[2], original.rpartition("::")[2]
        (a, file_a), (b, file_b) = blocks[twin_name], blocks[original_name]
        assert file_a == file_b and len(a) == len(b)
        assert sum(x != y for x, y in zip(a, b, strict=True)) == 1  # one value, nothing else
    for hidden in planted.hidden:  # no test of this run carries a real name
        assert hidden.rpartition("::")[2] not in blocks
    assert len(blocks) == len(task_ids(task)) + spec.count
    other = planted_copy(tmp_path, task, seed=8)[1]
    assert set(other.twins) != set(planted.twins)  # drawn afresh each run


@needs(shutil.which("php") is not None, "Debian's php-cli")
@pytest.mark.parametrize("task", ["laravel_csv_import", "laravel_offline_sync"])
def test_planted_php_files_are_valid_php(tmp_path: Path, task: str) -> None:
    copy, _ = planted_copy(tmp_path, task, seed=11)
    for path in sorted(copy.glob("*.php")):
        done = subprocess.run(["php", "-n", "-l", str(path)], capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stdout + done.stderr


@needs(shutil.which("gofmt") is not None, "Debian's golang-go")
def test_planted_go_files_are_valid_gofmt_clean_go(tmp_path: Path) -> None:
    copy, _ = planted_copy(tmp_path, "shipping_quotes", seed=11)
    done = subprocess.run(["gofmt", "-l", "-e", str(copy)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr
    shipped = subprocess.run(["gofmt", "-l", str(PROJECTS / "shipping_quotes" / "evaluator")],
                             capture_output=True, text=True, check=False)
    assert shipped.stdout == ""  # the rule reads gofmt's layout of the shipped evaluator


# --- what the rules refuse to twin -----------------------------------------------------

PHP_CASES = r"""<?php
class CasesTest extends TestCase
{
    protected function assertShape(array $expected, array $got): void {}
    protected function assertLoose(array $wanted, array $got): void {}

    public function test_returns_early(): void
    {
        if ($this->x()) {
            return;
        }
        $this->assertSame(1, $this->y());
    }

    public function test_yields(): void
    {
        yield 1;
        $this->assertSame(1, $this->y());
    }

    public function test_only_in_a_loop(): void
    {
        foreach ([1, 2] as $i) {
            $this->assertSame(1, $i);
        }
    }

    public function test_closure_return_is_fine(): void
    {
        $f = function () { return 1; };
        $this->assertSame(1, $f());
    }

    public function test_repeated_key(): void
    {
        $this->assertSame(['a' => 1, 'a' => 2], $this->y());
    }

    public function test_numeric_string_key_repeats(): void
    {
        $this->assertSame(['1' => 'x', 1 => 'y'], $this->y());
    }

    public function test_interpolated_and_escaped(): void
    {
        $this->assertSame("a$b", $this->y());
        $this->assertSame('it\'s', $this->y());
    }

    public function test_expression_float_loose_and_bound(): void
    {
        $this->assertSame(1 + 1, $this->y());
        $this->assertSame(1.5, $this->y());
        $this->assertEquals(3, $this->y());
        $this->assertGreaterThan(3, $this->y());
        $this->assertLoose(['k' => 3], $this->y());
    }

    public function test_inverted(): void
    {
        $this->assertTrue($this->y());
    }

    public function test_helper_with_expected(): void
    {
        $this->assertShape(['k' => 3], $this->y());
    }

    public function test_keys_never_change(): void
    {
        $this->assertSame(['status' => true], $this->y());
    }
}
"""

GO_CASES = """package p

import (
\tsq "shippingquotes"
\t"testing"
)

var reasons = []string{sq.ReasonPanic, sq.ReasonNil}

//twins:fields
func mk(a int, s string) int { return a }

func same[T comparable](t *testing.T, what string, got, want T) {}

func sameish(t *testing.T, got, expected int) {}

func TestEarlyReturn(t *testing.T) {
\tif t == nil {
\t\treturn
\t}
\tsame(t, "x", f(), 1)
}

func TestLiteralReturnIsFine(t *testing.T) {
\tg := func() int { return 1 }
\tsame(t, "x", g(), 2)
}

func TestOnlyInALoop(t *testing.T) {
\tfor i := 0; i < 3; i++ {
\t\tsame(t, "x", i, 1)
\t}
}

func TestOperandUnmarkedCallRawAndVariable(t *testing.T) {
\tsame(t, "x", f(), 2*3)
\tsame(t, "x", f(), len("abc"))
\tsame(t, "x", f(), `raw`)
\tsame(t, "x", f(), want)
\tsameish(t, f(), 1)
}

func TestMapKeysAndArrayLengthsNeverChange(t *testing.T) {
\tsame(t, "x", f(), m[[3]int{1}]{"a": 7})
}

func TestMarkedCall(t *testing.T) {
\tsame(t, "x", f(), mk(4, "a"))
}

func TestFamily(t *testing.T) {
\tsame(t, "x", f(), sq.ReasonTimeout)
}
"""


def _variants(rule: str, text: str, file: str) -> dict[str, list[str]]:
    source = RULES[rule].parse({file: text})[file]
    return {u.name: [text[e.start:e.end] + "->" + e.new for e in u.variants] for u in source.units}


def test_the_php_rule_twins_only_checks_that_run_once_with_exact_literals() -> None:
    assert _variants("phpunit", PHP_CASES, "CasesTest.php") == {
        "test_returns_early": [],
        "test_yields": [],
        "test_only_in_a_loop": [],
        "test_closure_return_is_fine": ["1->0", "1->2"],
        "test_repeated_key": [],
        "test_numeric_string_key_repeats": [],
        "test_interpolated_and_escaped": [],
        "test_expression_float_loose_and_bound": [],
        "test_inverted": ["assertTrue->assertFalse"],
        "test_helper_with_expected": ["3->2", "3->4"],
        "test_keys_never_change": ["true->false"],
    }


def test_the_go_rule_twins_only_checks_that_run_once_with_exact_literals() -> None:
    assert _variants("go", GO_CASES, "cases_test.go") == {
        "TestEarlyReturn": [],
        "TestLiteralReturnIsFine": ["2->1", "2->3"],
        "TestOnlyInALoop": [],
        "TestOperandUnmarkedCallRawAndVariable": [],
        "TestMapKeysAndArrayLengthsNeverChange": ["7->6", "7->8"],
        "TestMarkedCall": ["4->3", "4->5"],
        "TestFamily": ["sq.ReasonTimeout->sq.ReasonNil", "sq.ReasonTimeout->sq.ReasonPanic"],
    }


@pytest.mark.parametrize(
    ("language", "text"),
    [("php", "<?php\n$x = <<<EOT\nhi\nEOT;\n"), ("php", "<?php $x = 'open"),
     ("go", "package p\nvar x = \"open\n")],
)
def test_a_source_the_lexer_cannot_read_gets_no_twins(
    tmp_path: Path, language: str, text: str
) -> None:
    with pytest.raises(LexError, match=r"line \d+: (heredoc|cannot read)"):
        tokens(text, language)
    rule = "phpunit" if language == "php" else "go"
    (tmp_path / ("CasesTest.php" if rule == "phpunit" else "cases_test.go")).write_text(text)
    assert read_sources(tmp_path, RULES[rule]) == {}


def test_near_values_differ_and_stay_plausible() -> None:
    assert int_variants("0") == ["1"] and int_variants("7", ["3", "9", "12"]) == ["6", "8", "9"]
    pool = ["applied", "conflict", "rejected", "create", "ada@example.com"]
    assert string_variants("applied", [["conflict", "rejected"], pool]) == ["conflict", "rejected"]
    assert string_variants("bob@example.com", [[], pool]) == ["ada@example.com"]
    assert string_variants("555-0109", [[], pool]) == ["555-0100"]
    assert string_variants("Groceries", [[], pool]) == []  # no typo a reader would spot


def test_no_twin_takes_the_name_of_another_function(tmp_path: Path) -> None:
    source = ("package p\n\nimport \"testing\"\n\nfunc same(t *testing.T, got, want int) {}\n\n"
              "func TestAlphaBeta() {}\n\n"
              "func TestAlphaBetaGamma(t *testing.T) {\n\tsame(t, f(), 7)\n}\n")
    names = set()
    for seed in range(40):  # dropping "gamma" would name a twin TestAlphaBeta
        (tmp_path / "a_test.go").write_text(source)
        planted = plant(tmp_path, RULES["go"], ["p::TestAlphaBetaGamma"], count=1,
                        rng=random.Random(seed))
        names |= {t.rpartition("::")[2] for t in [*planted.twins, *planted.renamed]}
    assert len(names) > 10 and "TestAlphaBeta" not in names


def test_names_stay_free_however_crowded() -> None:
    taken: set[str] = set()
    rng = random.Random(3)
    names = [fresh_name(["a"], ["a", "b"], taken, lambda w: "test_" + "_".join(w), rng)
             for _ in range(200)]
    assert len(set(names)) == 200 and taken == set(names)


# --- judging a report ---------------------------------------------------------------


def _planted() -> Planted:
    return Planted(
        twins={"C::test_b_x": "C::test_x_a", "C::test_q": "C::test_p"},
        renamed={"C::test_x_a": "C::test_a", "C::test_p": "C::test_real_p"},
        hidden=frozenset({"C::test_a", "C::test_real_p"}),
    )


def _report(**outcomes: Outcome) -> TestReport:
    return TestReport(tests={f"C::{k}": v for k, v in outcomes.items()})


P, F = Outcome.PASSED, Outcome.FAILED


def test_an_honest_report_comes_back_in_task_ids_without_twins() -> None:
    report = _report(test_x_a=P, test_b_x=F, test_p=F, test_q=P, test_c=F)
    report.notes = ["C::test_b_x: panic: boom", "2 test(s) started without a result: C::test_p"]
    verdict = judge(report, _planted())
    assert (verdict.forged, verdict.ghosts) == (0, 0)  # a twin passing alone proves nothing
    assert verdict.report.tests == {"C::test_a": P, "C::test_real_p": F, "C::test_c": F}
    assert verdict.report.notes == ["2 test(s) started without a result: C::test_real_p"]


def test_twins_passed_with_their_originals_are_forgery() -> None:
    verdict = judge(_report(test_x_a=P, test_b_x=P, test_p=P, test_q=P), _planted())
    assert verdict.forged == 2 and verdict.ghosts == 0
    one = judge(_report(test_x_a=P, test_b_x=P, test_p=P, test_q=F), _planted())
    assert one.forged == 1


def test_a_real_name_this_run_renamed_is_a_ghost() -> None:
    # a forger who learnt the real names from earlier results reports them passed
    verdict = judge(_report(test_a=P, test_real_p=P, test_c=P), _planted())
    assert verdict.ghosts == 2 and verdict.forged == 0
    assert verdict.report.tests == {"C::test_c": P}


def test_subtests_and_data_sets_go_with_their_test() -> None:
    report = _report(**{"test_x_a/case": P, "test_b_x/case": F, "test_a with data set #1": P,
                        "test_c/case": F})
    verdict = judge(report, _planted())
    assert verdict.ghosts == 1  # a real name this run did not have, even as a data set
    assert verdict.report.tests == {"C::test_a/case": P, "C::test_c/case": F}


def test_a_package_failed_only_by_its_twins_is_not_noted() -> None:
    report = _report(test_x_a=P, test_b_x=F, test_p=P, test_q=F)
    report.notes = ["package failed: p"]
    assert judge(report, _planted()).report.notes == []
    report.tests["C::test_c"] = F
    assert judge(report, _planted()).report.notes == ["package failed: p"]


# --- the task field ----------------------------------------------------------------


def _task(twins: Any) -> dict[str, Any]:
    return {"name": "t", "report_format": "junit", "twins": twins,
            "checks": [{"id": "a", "label": "floor", "tests": ["C::test_a"]}]}


@pytest.mark.parametrize(
    ("twins", "message"),
    [
        ({"rule": "phpunit", "count": 0}, r"count must be an integer in \[1, 1000\]"),
        ({"rule": "phpunit", "count": MAX_TWINS + 1}, "count must be an integer"),
        ({"rule": "phpunit", "count": True}, "count must be an integer"),
        ({"rule": "phpunit"}, "count must be an integer"),
        ({"rule": "pytest", "count": 3}, "rule 'pytest' is not one of phpunit, go"),
        ({"count": 3}, "expected an object with rule, count"),
        ({"rule": "go", "count": 3, "every": True}, "expected an object with rule, count"),
        ({"rule": "go", "count": 3, "skip": "C::test_a"}, "skip must be a list of test ids"),
        ({"rule": "go", "count": 3, "skip": ["C::test_z"]}, "'C::test_z', which no check lists"),
        ([], "expected an object"),
    ],
)
def test_bad_twins_fields_name_the_field(tmp_path: Path, twins: Any, message: str) -> None:
    with pytest.raises(TaskError, match=message):
        parse_task(_task(twins), tmp_path)


def test_twin_counts_at_the_bounds_are_accepted(tmp_path: Path) -> None:
    for count in (1, MAX_TWINS):
        spec = parse_task(_task({"rule": "go", "count": count, "skip": ["C::test_a"]}),
                          tmp_path).twins
        assert spec is not None and (spec.count, spec.skip) == (count, ("C::test_a",))
    assert parse_task({k: v for k, v in _task(None).items() if k != "twins"}, tmp_path).twins \
        is None
